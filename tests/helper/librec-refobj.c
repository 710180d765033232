/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-refobj.c -- a reference-counted object in a shared library, for
 * MTREC_TRACK's tests (t2600-t2619): obj_new() returns an object with one
 * reference, obj_ref() takes one more, obj_unref() drops one and frees the
 * object at zero.  Built with -DUSE_MTREC_API, it tells the recorder of
 * its references itself through mtrec.h (kind "obj"). */
#include <stdlib.h>
#include <string.h>

#ifdef USE_MTREC_API
#include "mtrec.h"
#else
#define mtrec_ref(kind, p) ((void)0)
#define mtrec_unref(kind, p) ((void)0)
#endif

struct obj {
	int refs;
	char name[28];
};

struct obj *obj_new(const char *name);
struct obj *obj_ref(struct obj *o);
void obj_unref(struct obj *o);

struct obj *obj_new(const char *name)
{
	struct obj *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->refs = 1;
	strncpy(o->name, name, sizeof(o->name) - 1);
	mtrec_ref("obj", o);
	return o;
}

struct obj *obj_ref(struct obj *o)
{
	__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
	mtrec_ref("obj", o);
	return o;
}

void obj_unref(struct obj *o)
{
	mtrec_unref("obj", o);
	if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(o);
}
