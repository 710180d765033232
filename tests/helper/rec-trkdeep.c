/* rec-trkdeep.c -- for t2645: calls tobj_new() of librec-trkdeep.so at the
 * bottom of a chain of LEVELS nested calls (down()), keeps one object
 * (leaked at exit) and drops the other.
 *
 *   rec-trkdeep [LEVELS] */
#include <stdio.h>
#include <stdlib.h>

struct tobj;
struct tobj *tobj_new(size_t n);
struct tobj *tobj_ref(struct tobj *o);
void tobj_unref(struct tobj *o);

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

int main(int argc, char **argv)
{
	down(argc > 1 ? atoi(argv[1]) : 1);
	printf("%p\n", (void *)kept);
	return 0;
}
