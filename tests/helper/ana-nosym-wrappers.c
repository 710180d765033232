/* ana-nosym-wrappers.c -- wrappers to be found without symbols (t4009):
 * xalloc, an xmalloc-like wrapper (not on the default list by that name), is
 * called by new_a, new_b, new_c and dup_name, which leak 1, 2, 3 and 5
 * blocks (LEAK-x); make_table allocates directly for its one caller,
 * setup (4 blocks), and dup_name calls xalloc for its one caller: both
 * are leak sites, never wrappers.  xre__ (realloc) is called only by
 * xre, a thin wrapper around it, which grow_a, grow_b and grow_c call
 * (6, 7 and 8 blocks, LEAK-GROW-x): the chain is found from the callers
 * of the thin one.  The test strips a copy, so that no name says which
 * is which.
 */
#include <stdlib.h>
#include <string.h>

static void *volatile sink[64];
static int nsink;

__attribute__((noinline)) static void *
xalloc (size_t n)
{
	void *p = malloc (n);  /* XALLOC-CALL */
	if (p == NULL)
		abort ();
	return p;
}

__attribute__((noinline)) static void new_a (void) { sink[nsink++] = xalloc (16); }  /* LEAK-A */
__attribute__((noinline)) static void new_b (void) { sink[nsink++] = xalloc (32); }  /* LEAK-B */
__attribute__((noinline)) static void new_c (void) { sink[nsink++] = xalloc (48); }  /* LEAK-C */

__attribute__((noinline)) static char *
dup_name (const char *s)
{
	size_t n = strlen (s) + 1;
	return memcpy (xalloc (n), s, n);  /* LEAK-DUP */
}

__attribute__((noinline)) static void *
make_table (size_t n)
{
	return calloc (n, 8);  /* LEAK-TABLE */
}

__attribute__((noinline)) static void
setup (void)
{
	for (int i = 0; i < 4; i++)
		sink[nsink++] = make_table (4 + (size_t) i);
}

static volatile int calls;

__attribute__((noinline)) static void *
xre__ (void *p, size_t n)
{
	p = realloc (p, n);  /* XRE-CALL */
	if (p == NULL)
		abort ();
	return p;
}

__attribute__((noinline)) static void *
xre (void *p, size_t n)
{
	void *r = xre__ (p, n);
	calls++;             /* no tail call: xre is a frame of its own */
	return r;
}

__attribute__((noinline)) static void grow_a (void) { sink[nsink++] = xre (NULL, 8); }   /* LEAK-GROW-A */
__attribute__((noinline)) static void grow_b (void) { sink[nsink++] = xre (NULL, 16); }  /* LEAK-GROW-B */
__attribute__((noinline)) static void grow_c (void) { sink[nsink++] = xre (NULL, 24); }  /* LEAK-GROW-C */

int
main (int argc, char **argv)
{
	(void) argc;
	new_a ();
	for (int i = 0; i < 2; i++)
		new_b ();
	for (int i = 0; i < 3; i++)
		new_c ();
	for (int i = 0; i < 5; i++)
		sink[nsink++] = dup_name (argv[0]);
	setup ();
	for (int i = 0; i < 6; i++)
		grow_a ();
	for (int i = 0; i < 7; i++)
		grow_b ();
	for (int i = 0; i < 8; i++)
		grow_c ();
	return 0;
}
