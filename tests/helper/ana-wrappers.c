/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-wrappers.c -- leaks made through allocation wrappers, for the
 * report by call site (t4000).  xmalloc (on the default wrapper list) is
 * called from three places that leak 1, 2 and 3 blocks; pool_get (not on
 * the list) wraps xmalloc; strdup is libc's.  Each leaking call carries a
 * LEAK-x comment on its line so that the tests find the line with grep -n.
 * Argument "free": also free everything (no leaks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink[16];
static int nsink;

__attribute__((noinline)) void *
xmalloc (size_t n)
{
	void *p = malloc (n);   /* XMALLOC-CALL */
	if (p == NULL)
		abort ();
	return p;
}

__attribute__((noinline)) void *
pool_get (size_t n)
{
	void *p = xmalloc (n);  /* POOL-CALL */
	memset (p, 0, n);
	return p;
}

__attribute__((noinline)) static void
load_config (void)
{
	sink[nsink++] = xmalloc (100);  /* LEAK-A */
}

__attribute__((noinline)) static void
parse_args (void)
{
	for (int i = 0; i < 2; i++)
		sink[nsink++] = xmalloc (20);  /* LEAK-B */
}

int
main (int argc, char **argv)
{
	free (xmalloc (1000));
	load_config ();
	parse_args ();
	for (int i = 0; i < 3; i++)
		sink[nsink++] = xmalloc (7);  /* LEAK-C */
	sink[nsink++] = pool_get (50);  /* LEAK-POOL */
	sink[nsink++] = strdup ("a string that leaks");  /* LEAK-DUP */
	if (argc > 1 && strcmp (argv[1], "free") == 0)
		while (nsink > 0)
			free (sink[--nsink]);
	return 0;
}
