/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-growth.c -- leaks that grow differently over a run, for the growth
 * classes of issue 7 (t7000):
 *
 *   ONE-OFF      20 blocks at start-up, never freed          -> constant
 *   CACHE        a cache that fills ever more slowly: an entry each time
 *                the iteration passes the next threshold, each threshold
 *                1/16 beyond the last (its last entries 6% of the run
 *                apart, never taken for a cache that stopped growing:
 *                with 1/8, 21% of the iterations without an entry were a
 *                third of the time on a loaded machine: bounded)
 *                                                             -> logarithmic
 *   STEADY       one block every 50 iterations                -> linear
 *   FASTER       blocks ever closer together: each gap 0.93 times the
 *                previous one, ending with the run            -> exponential
 *
 * Besides, every iteration makes a temporary allocation (freed at once)
 * and keeps a working set of 32 blocks that come and go (not leaks).
 * Each leaking call carries its tag in a comment, for grep -n.
 *
 * usage: ana-growth [ITERATIONS [SLEEP_EVERY [LEAKS]]]: with SLEEP_EVERY,
 * sleep 1 ms every SLEEP_EVERY iterations (so that the recorder's clock
 * spans the run); LEAKS names the leaks made, "ocsf" (the default) for
 * one-off, cache, steady and faster.  It calls mtrace(), so that glibc's
 * libc_malloc_debug.so traces it too.
 */
#include <errno.h>
#include <mcheck.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

#include "pace.h"

__attribute__((noinline)) static void
startup (void)
{
	for (int i = 0; i < 20; i++)
		sink = malloc (1000);      /* ONE-OFF */
}

__attribute__((noinline)) static void
cache_add (int key)
{
	char *e = malloc (256);         /* CACHE */
	memset (e, key, 256);
	sink = e;
}

__attribute__((noinline)) static void
steady_leak (void)
{
	sink = malloc (64);             /* STEADY */
}

__attribute__((noinline)) static void
faster_leak (void)
{
	sink = malloc (48);             /* FASTER */
}

__attribute__((noinline)) static void
temporary (int i)
{
	char *volatile t = malloc (32 + i % 64); /* TEMPORARY */
	t[0] = (char) i;
	free (t);
}

int
main (int argc, char **argv)
{
	long n = argc > 1 ? atol (argv[1]) : 20000;
	long sleep_every = argc > 2 ? atol (argv[2]) : 0;
	void *work[32] = { 0 };
	long next_cache = 1;
	double gap = n * 0.07, next_faster = gap;
	const char *leaks = argc > 3 ? argv[3] : "ocsf";

	mtrace ();
	pace_start ();
	if (strchr (leaks, 'o'))
		startup ();
	for (long i = 0; i < n; i++) {
		temporary ((int) i);
		free (work[i % 32]);
		work[i % 32] = malloc (100 + i % 200);   /* WORKING-SET */
		if (i == next_cache) {
			if (strchr (leaks, 'c'))
				cache_add ((int) i);
			next_cache += next_cache / 16 + 1;
		}
		if (i % 50 == 49 && strchr (leaks, 's'))
			steady_leak ();
		if (i >= (long) next_faster) {
			if (strchr (leaks, 'f'))
				faster_leak ();
			gap *= 0.93;
			next_faster += gap + 1;
		}
		if (sleep_every > 0 && i % sleep_every == 0)
			pace (i / sleep_every);
	}
	for (int k = 0; k < 32; k++)
		free (work[k]);
	return 0;
}
