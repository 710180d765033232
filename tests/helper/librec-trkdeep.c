/* librec-trkdeep.c -- a reference-counted object whose constructor calls
 * malloc itself, for t2645: with tobj_new tracked, the recorder's wrapper
 * is on the stack while tobj_new's own malloc and calloc run, and none of
 * its frames may be recorded there (SPEC: the recorder's own functions
 * never appear in a recorded stack). */
#include <stdlib.h>

struct tobj {
	int refs;
	char *buf;
};

struct tobj *tobj_new(size_t n);
struct tobj *tobj_ref(struct tobj *o);
void tobj_unref(struct tobj *o);

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
