/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-every-call: calls every interposed function once, in a fixed order,
 * between mtrace() and exit, so that glibc's tracer and ours can be
 * compared line by line.  Covers realloc(p, 0), realloc(NULL, n), a failed
 * huge realloc, failed malloc, overflowing calloc/reallocarray, a bad
 * posix_memalign, free(NULL) and strdup. */
#include <malloc.h>
#include <mcheck.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed realloc leaves its block allocated: using it after is right. */
#pragma GCC diagnostic ignored "-Wuse-after-free"

static volatile size_t huge = SIZE_MAX / 2;
static volatile size_t all = SIZE_MAX;

int main(void)
{
	void *k = NULL, *k2 = NULL;

	mtrace();
	void *a = malloc(10);
	void *b = calloc(3, 4);
	void *c = realloc(a, 100);
	void *d = realloc(NULL, 5);
	void *e = malloc(0);
	void *f = realloc(NULL, 0);
	void *g = realloc(c, huge);		/* fails: c stays */
	void *h = reallocarray(NULL, 3, 5);
	void *i = reallocarray(h, all, 5);	/* overflows: nothing logged */
	void *j = memalign(64, 10);
	int r1 = posix_memalign(&k, 64, 20);
	int r2 = posix_memalign(&k2, 3, 20);	/* EINVAL: nothing logged */
	void *l = aligned_alloc(64, 128);
	void *m = valloc(10);
	void *n = pvalloc(100);
	void *o = calloc(all, 4);		/* overflows: nothing logged */
	void *q = malloc(huge);			/* fails: "+ (nil) SIZE" */
	char *s = strdup("hello");
	free(NULL);
	c = realloc(c, 0);			/* frees c */
	free(b); free(d); free(e); free(f); free(h); free(j); free(k);
	free(l); free(m); free(n); free(s);
	void *leak = malloc(77);		/* the one leak */
	printf("%d %d %d %d %d %d %d\n", g == NULL, i == NULL, r1, r2, o == NULL,
	       q == NULL, leak != NULL);
	return 0;
}
