/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-daemon-shapes.c -- leaks of real daemons that are not growth, for the
 * growth rule's evidence (issue 11, t7005):
 *
 *   REHASH       2 blocks at start-up and 14 at shutdown, in the last
 *                moments of the run (Open vSwitch's cmap_rehash)
 *   SHUTDOWN     400 blocks made while shutting down, a teardown that
 *                takes about a tenth of the run (a GlusterFS translator's)
 *   CACHE        a 64-entry FIFO cache shared by 4 threads serving 20
 *                requests each: the first 16 entries are evicted (freed),
 *                the last 64 are left at exit
 *   FEW          5 blocks over the whole run: too few to judge
 *   STEADY       one block every 200 iterations of each thread: a real
 *                leak, the control that must stay linear
 *
 * Each thread also makes a temporary allocation every iteration, so that
 * event order spreads like time.  Each leaking call carries its tag.
 *
 * usage: ana-daemon-shapes [ITERATIONS [SLEEP_EVERY [SHAPES]]]: ITERATIONS per
 * thread; with SLEEP_EVERY, each thread sleeps 1 ms every SLEEP_EVERY
 * iterations (the recorder's clock then spans the run); SHAPES names the
 * leaks made, "rtcfs" (the default).  It calls mtrace(), for glibc's
 * libc_malloc_debug.so.
 */
#include <errno.h>
#include <mcheck.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define REQUESTS 20
#define CACHE_SIZE 64

static void *volatile sink;

#include "pace.h"
static long iterations = 20000, sleep_every;
static const char *shapes = "rtcfs";

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static void *cache[CACHE_SIZE];
static unsigned cache_next;

static int
wants (char shape)
{
	return strchr (shapes, shape) != NULL;
}

__attribute__((noinline)) static void
rehash (int n)
{
	for (int i = 0; i < n; i++)
		sink = malloc (512);       /* REHASH */
}

static void temporary (long i);

/* As long as a tenth of the run: as many events and, with SLEEP_EVERY, as
 * much time as the 4 threads take for a tenth of their iterations. */
__attribute__((noinline)) static void
translator_fini (void)
{
	long every = THREADS * iterations / 10 / 400;
	long ticks = sleep_every > 0 ? iterations / sleep_every + 1 : 0;   /* the workers' */

	for (long i = 0; i < 400 * every; i++) {
		if (i % every == 0)
			sink = malloc (128);       /* SHUTDOWN */
		temporary (i);
		if (sleep_every > 0 && i % (sleep_every * THREADS / 2) == 0)
			pace (ticks + i / (sleep_every * THREADS / 2));
	}
}

__attribute__((noinline)) static void
cache_insert (long key)
{
	char *e = malloc (200);            /* CACHE */

	memset (e, (int) key, 200);
	pthread_mutex_lock (&cache_lock);
	free (cache[cache_next % CACHE_SIZE]);
	cache[cache_next++ % CACHE_SIZE] = e;
	pthread_mutex_unlock (&cache_lock);
}

__attribute__((noinline)) static void
few_leak (void)
{
	sink = malloc (24);                /* FEW */
}

__attribute__((noinline)) static void
steady_leak (void)
{
	sink = malloc (64);                /* STEADY */
}

__attribute__((noinline)) static void
temporary (long i)
{
	char *volatile t = malloc (32 + (size_t) (i % 64));
	t[0] = (char) i;
	free (t);
}

static void *
worker (void *arg)
{
	long id = (long) arg, every = iterations / REQUESTS;

	for (long i = 0; i < iterations; i++) {
		temporary (i);
		if (i % every == every / 2 && wants ('c'))
			cache_insert (i);
		if (id == 0 && i % (iterations / 5) == 0 && wants ('f'))
			few_leak ();
		if (i % 200 == 199 && wants ('s'))
			steady_leak ();
		if (sleep_every > 0 && i % sleep_every == 0)
			pace (i / sleep_every);
	}
	return NULL;
}

int
main (int argc, char **argv)
{
	pthread_t t[THREADS];

	if (argc > 1)
		iterations = atol (argv[1]);
	if (argc > 2)
		sleep_every = atol (argv[2]);
	if (argc > 3)
		shapes = argv[3];
	if (iterations < 5 * REQUESTS)
		return 2;
	mtrace ();
	if (wants ('r'))
		rehash (2);
	pace_start ();
	for (long k = 0; k < THREADS; k++)
		if (pthread_create (&t[k], NULL, worker, (void *) k) != 0)
			return 1;
	for (int k = 0; k < THREADS; k++)
		pthread_join (t[k], NULL);
	if (wants ('t'))
		translator_fini ();
	if (wants ('r'))
		rehash (14);
	return 0;
}
