/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-trkdeep.c -- for t2645: calls tobj_new() of librec-trkdeep.so at the
 * bottom of a chain of LEVELS nested calls (down()), keeps one object
 * (leaked at exit) and drops the other.  With "pool" (t2646), gets 3
 * objects of 72 bytes from a pool of librec-trkdeep.so, keeps one at
 * POOL-KEPT and puts the other two back.  With "dtor" (t2647), 50
 * parents each hold a reference to a child (CHILD-REF), dropped by the
 * destructor tobj_unref() calls back (DTOR-UNREF): every child balanced;
 * and one copy made by tobj_dup() at DUP, one object by tobj_new_tail()
 * at TAIL, each dropped at once.  With "tail" (t2645), the same with
 * tpool_get_tail/tpool_put_tail (tail calls of malloc and free): one kept
 * at TAIL-KEPT, two put back at TAIL-PUT.
 *
 *   rec-trkdeep [LEVELS [pool|dtor]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tobj;
struct tobj *tobj_new(size_t n);
struct tobj *tobj_ref(struct tobj *o);
void tobj_unref(struct tobj *o);
void tobj_set_dtor(void (*fn)(struct tobj *));
struct tobj *tobj_dup(const struct tobj *o);
struct tobj *tobj_new_tail(size_t n);

struct tpool {
	unsigned long size;
	unsigned long active;
};

void *tpool_get(struct tpool *pool);
void tpool_put(void *p);
void *tpool_get_tail(struct tpool *pool);
void tpool_put_tail(void *p);

static struct tobj *kept;

static __attribute__((noinline)) void bottom(void)
{
	struct tobj *o = tobj_new(100);	/* CALL-NEW */

	kept = tobj_new(200);	/* CALL-KEPT */
	tobj_ref(o);
	tobj_unref(o);
	tobj_unref(o);
}

static __attribute__((noinline)) void down(int levels)
{
	if (levels > 1)
		down(levels - 1);	/* CALL-DOWN */
	else
		bottom();	/* CALL-BOTTOM */
	__asm__ volatile("" ::: "memory");	/* no tail call: every level keeps its frame */
}

static struct tobj *parents[50], *children[50];

static void drop_child(struct tobj *parent)
{
	for (int i = 0; i < 50; i++)
		if (parents[i] == parent)
			tobj_unref(children[i]);	/* DTOR-UNREF */
}

static void with_dtor(void)
{
	tobj_set_dtor(drop_child);
	for (int i = 0; i < 50; i++) {
		parents[i] = tobj_new(8);
		children[i] = tobj_new(8);
		tobj_ref(children[i]);	/* CHILD-REF */
		tobj_unref(children[i]);
	}
	tobj_unref(tobj_dup(parents[0]));	/* DUP */
	tobj_unref(tobj_new_tail(8));	/* TAIL */
	for (int i = 0; i < 50; i++)
		tobj_unref(parents[i]);
}

static void *pool_kept;

static void pool_use(void)
{
	struct tpool pool = { 72, 0 };
	void *a = tpool_get(&pool), *b = tpool_get(&pool);

	pool_kept = tpool_get(&pool);	/* POOL-KEPT */
	tpool_put(a);
	tpool_put(b);
}

static void pool_tail(void)
{
	struct tpool pool = { 56, 0 };
	void *a = tpool_get_tail(&pool), *b = tpool_get_tail(&pool);

	pool_kept = tpool_get_tail(&pool);	/* TAIL-KEPT */
	tpool_put_tail(a);	/* TAIL-PUT */
	tpool_put_tail(b);	/* TAIL-PUT2 */
}

int main(int argc, char **argv)
{
	down(argc > 1 ? atoi(argv[1]) : 1);
	if (argc > 2 && strcmp(argv[2], "dtor") == 0)
		with_dtor();
	if (argc > 2 && strcmp(argv[2], "tail") == 0) {
		pool_tail();
		printf("%p\n", pool_kept);
	}
	if (argc > 2 && strcmp(argv[2], "pool") == 0) {
		pool_use();
		printf("%p\n", pool_kept);
	}
	printf("%p\n", (void *)kept);
	return 0;
}
