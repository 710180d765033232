/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-trkdeep.c -- a reference-counted object whose constructor calls
 * malloc itself, for t2645: with tobj_new tracked, the recorder's wrapper
 * is on the stack while tobj_new's own malloc and calloc run, and none of
 * its frames may be recorded there (SPEC: the recorder's own functions
 * never appear in a recorded stack).  tpool_get() hands out objects of
 * the size its pool holds in its first word, as GlusterFS's mem_get does
 * (t2646: ARG *1).  tobj_unref() calls the program's destructor, set by
 * tobj_set_dtor(), before it frees an object: a call back from inside a
 * tracked function (t2647); tobj_dup() calls tobj_new() through the
 * library's own PLT: a nested call of the library itself; tobj_new_tail()
 * ends in a tail call of tobj_new() (a jmp: the inner call returns
 * straight to the outer one's caller); tpool_get_tail() and
 * tpool_put_tail() end in a tail call of malloc and free (GlusterFS's
 * iobuf_unref -> iobuf_put -> ... jmp free): malloc returns into the
 * recorder's wrapper, and its caller field must be the program's line. */
#include <stdlib.h>

struct tobj {
	int refs;
	char *buf;
};

struct tobj *tobj_new(size_t n);
struct tobj *tobj_ref(struct tobj *o);
void tobj_unref(struct tobj *o);
void tobj_set_dtor(void (*fn)(struct tobj *));
struct tobj *tobj_dup(const struct tobj *o);
struct tobj *tobj_new_tail(size_t n);

static void (*dtor)(struct tobj *);

struct tpool {
	unsigned long size;	/* first, as struct mem_pool's sizeof_type */
	unsigned long active;
};

void *tpool_get(struct tpool *pool);
void tpool_put(void *p);
void *tpool_get_tail(struct tpool *pool);
void tpool_put_tail(void *p);

struct tobj *tobj_new(size_t n)
{
	struct tobj *o = malloc(sizeof(*o));	/* DEEP-MALLOC */

	if (!o)
		return NULL;
	o->refs = 1;
	o->buf = calloc(1, n);	/* DEEP-CALLOC */
	return o;
}

struct tobj *tobj_ref(struct tobj *o)
{
	o->refs++;
	return o;
}

struct tobj *tobj_dup(const struct tobj *o)
{
	(void)o;
	return tobj_new(8);	/* DUP-NEW */
}

__attribute__((optimize("O2", "optimize-sibling-calls"))) struct tobj *tobj_new_tail(size_t n)
{
	return tobj_new(n);
}

void tobj_set_dtor(void (*fn)(struct tobj *))
{
	dtor = fn;
}

void tobj_unref(struct tobj *o)
{
	if (--o->refs == 0) {
		if (dtor)
			dtor(o);
		free(o->buf);
		free(o);
	}
}

void *tpool_get(struct tpool *pool)
{
	pool->active++;
	return malloc(pool->size);
}

void tpool_put(void *p)
{
	free(p);
}

__attribute__((optimize("O2", "optimize-sibling-calls"))) void *tpool_get_tail(struct tpool *pool)
{
	return malloc(pool->size);
}

__attribute__((optimize("O2", "optimize-sibling-calls"))) void tpool_put_tail(void *p)
{
	free(p);
}
