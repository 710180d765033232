/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-inflight.c -- a program that frees everything, for t3030: a steady
 * working set of WINDOW blocks in flight (each freed WINDOW allocations
 * after it was made) and a registry that grows by one block every ten
 * steps until exit, when it is freed.  Recorded whole, nothing leaks; a
 * trace cut in the middle (the recorder stopped: a full disk) shows the
 * blocks in flight and the registry as live, the registry growing
 * linearly: what the analyzer must not call proven leaks.
 * Argument: the number of steps (default 20000).
 */
#include <stdlib.h>

#define WINDOW 1000

static void *inflight[WINDOW];

__attribute__((noinline)) static void *
request (size_t n)
{
	return malloc (n);        /* REQUEST */
}

__attribute__((noinline)) static void *
register_one (void)
{
	return malloc (24);       /* REGISTER */
}

int
main (int argc, char **argv)
{
	long steps = argc > 1 ? atol (argv[1]) : 20000;
	void **registry = calloc ((size_t) steps / 10 + 1, sizeof *registry);
	long nreg = 0;

	for (long i = 0; i < steps; i++) {
		free (inflight[i % WINDOW]);
		inflight[i % WINDOW] = request (64 + (size_t) (i % 7));
		if (i % 10 == 0)
			registry[nreg++] = register_one ();
	}
	for (long i = 0; i < WINDOW; i++)
		free (inflight[i]);
	for (long i = 0; i < nreg; i++)
		free (registry[i]);
	free (registry);
	return 0;
}
