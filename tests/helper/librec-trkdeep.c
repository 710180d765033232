/* librec-trkdeep.c -- a reference-counted object whose constructor calls
 * malloc itself, for t2645: with tobj_new tracked, the recorder's wrapper
 * is on the stack while tobj_new's own malloc and calloc run, and none of
 * its frames may be recorded there (SPEC: the recorder's own functions
 * never appear in a recorded stack).  tpool_get() hands out objects of
 * the size its pool holds in its first word, as GlusterFS's mem_get does
 * (t2646: ARG *1). */
#include <stdlib.h>

struct tobj {
	int refs;
	char *buf;
};

struct tobj *tobj_new(size_t n);
struct tobj *tobj_ref(struct tobj *o);
void tobj_unref(struct tobj *o);

struct tpool {
	unsigned long size;	/* first, as struct mem_pool's sizeof_type */
	unsigned long active;
};

void *tpool_get(struct tpool *pool);
void tpool_put(void *p);

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

void tobj_unref(struct tobj *o)
{
	if (--o->refs == 0) {
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
