/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-inline.c -- leaks made in inlined code, for the report by call
 * site (t4030).  Built at -O2 -g, xmalloc (on the default wrapper list)
 * is inlined into cache_put, and cache_put into worker: a return address
 * of malloc lies in worker's code, and only the DWARF inline records
 * (DW_TAG_inlined_subroutine, DW_AT_call_line) say that the call is
 * xmalloc's, made for cache_put's line (the tests find each line by the
 * marker in its comment).  worker also calls xmalloc itself, so that the
 * two callers of the inlined wrapper must stay apart; and xstrdup, a
 * wrapper, has its own helper inlined into it, which is skipped with it.
 * Argument N: cache_put N times (default 3);
 * "free" after it: also free everything.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	int key;
	struct entry *next;
};

static struct entry *volatile cache;
static void *volatile sink[64];
static int nsink;

static inline __attribute__((always_inline)) void *
xmalloc (size_t n)
{
	void *p = malloc (n);   /* XMALLOC-CALL */
	if (p == NULL)
		abort ();
	return p;
}

static inline __attribute__((always_inline)) void
cache_put (int key)
{
	struct entry *e = xmalloc (sizeof *e);   /* LEAK-PUT */
	e->key = key;
	e->next = cache;
	cache = e;
}

/* A wrapper's own helper, inlined into it: its code is the wrapper's. */
static inline __attribute__((always_inline)) void *
do_alloc (size_t n)
{
	void *p = malloc (n);   /* DO-ALLOC-CALL */
	if (p == NULL)
		abort ();
	return p;
}

__attribute__((noinline)) char *
xstrdup (const char *s)
{
	size_t n = strlen (s) + 1;
	return memcpy (do_alloc (n), s, n);
}

static __attribute__((noinline)) void
worker (int n)
{
	for (int i = 0; i < n; i++)
		cache_put (i);   /* PUT-CALL */
	for (int i = 0; i < 2; i++)
		sink[nsink++] = xmalloc (24 + (size_t) i);   /* LEAK-DIRECT */
}

int
main (int argc, char **argv)
{
	int n = argc > 1 ? atoi (argv[1]) : 3;

	worker (n > 0 && n < 1000 ? n : 3);   /* WORKER-CALL */
	sink[nsink++] = xstrdup (argv[0]);   /* LEAK-DUP */
	if (argc > 2 && strcmp (argv[2], "free") == 0) {
		while (cache != NULL) {
			struct entry *e = cache;
			cache = e->next;
			free (e);
		}
		while (nsink > 0)
			free (sink[--nsink]);
	}
	return 0;
}
