/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-deepbind-plug.c -- the plugin tests/helper/rec-deepbind-main
 * loads with RTLD_DEEPBIND: it frees the blocks it is handed, uses every
 * allocation function, leaks one block, and hands one back. */
#include <malloc.h>
#include <stdlib.h>

void *plug_run(void **blocks, int n);

/* volatile: the compiler may drop an allocation whose block is unused. */
static void *volatile leaked;

static __attribute__((noinline)) void drop(void *p)
{
	void *volatile v = p;

	free(v);
}

void *plug_run(void **blocks, int n)
{
	void *volatile p;
	void *q;

	for (int i = 0; i < n; i++)
		free(blocks[i]);
	p = malloc(10);
	q = realloc(p, 2000);
	drop(q ? q : p);
	drop(calloc(4, 8));
	if (posix_memalign(&q, 64, 100) == 0)
		drop(q);
	drop(aligned_alloc(64, 128));
	drop(memalign(32, 48));
	drop(valloc(16));
	drop(reallocarray(NULL, 3, 5));
	leaked = malloc(77);	/* the plugin's leak */
	leaked = NULL;
	return malloc(55);
}
