/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-refobj.c -- uses the objects of librec-refobj.so (t2600-t2619):
 * ROUNDS objects made, referenced again and released in balance; then one
 * object on a path that takes a reference at LEAK-REF and never drops it,
 * so that it keeps a net count of +1 (and its block is never freed).
 *
 *   rec-refobj [ROUNDS] */
#include <stdio.h>
#include <stdlib.h>

struct obj;
struct obj *obj_new(const char *name);
struct obj *obj_ref(struct obj *o);
void obj_unref(struct obj *o);

static struct obj *cache;

/* The buggy path: keeps a reference "for the cache" and forgets it. */
static void remember(struct obj *o)
{
	cache = obj_ref(o);	/* LEAK-REF */
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 10;
	struct obj *o;

	for (long i = 0; i < rounds; i++) {
		struct obj *a = obj_new("a"), *b = obj_ref(a);

		obj_unref(b);
		obj_unref(a);
	}
	o = obj_new("kept");	/* NEW-KEPT */
	remember(o);
	obj_unref(o);
	printf("%p\n", (void *)cache);
	cache = NULL;
	return 0;
}
