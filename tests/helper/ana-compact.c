/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-compact.c -- a long run for `mtanalyze compact` (t3320-t3339, and
 * tests/bench/compact.sh): what a busy daemon's trace holds, many times
 * over, so that most of it can be folded away.
 *
 *   STEADY     a block every 50 iterations, never freed   -> a linear leak
 *   FASTER     blocks ever closer together                 -> exponential
 *   ONE-OFF    blocks at start-up, never freed             -> constant
 *   TEMPORARY  freed before the next allocation (churn)
 *   WORKING    a working set of 64 blocks that come and go (not leaks)
 *   REALLOC    a buffer grown and shrunk by realloc
 *   BAD FREE   blocks allocated behind the recorder's back (__libc_malloc)
 *              then freed with free(): "never allocated", 3 times
 *   HELPER     a second thread with churn and a few leaks of its own
 *   BURST      3 MB live at once at an eighth of the run, then freed: the
 *              run's peak lies early, in the parts compacted first
 *
 * usage: ana-compact ITERATIONS [SLEEP_EVERY [WAIT_FILE]]: sleep 1 ms
 * every SLEEP_EVERY iterations, so that the recorder's clock spans the
 * run; with WAIT_FILE, stop recording (muntrace) and wait until that file
 * exists before exiting (a test looks at the parts of a live run, then
 * lets it end).  The wait is left out of the trace: an idle time at its
 * end, as long as the test took, would be part of the run's span and
 * flatten the leaks' curves (a linear leak logarithmic after 3 s).
 */
#include <errno.h>
#include <mcheck.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_malloc (size_t);

static void *volatile sink;

#include "pace.h"
static long iterations;

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
bad_free (void)
{
	void *p = __libc_malloc (40);   /* not seen by the recorder */
	free (p);                       /* BAD FREE */
}

__attribute__((noinline)) static void
burst (void)
{
	static void *held[3000];
	for (int i = 0; i < 3000; i++)
		held[i] = malloc (1000);    /* BURST */
	for (int i = 0; i < 3000; i++)
		free (held[i]);
}

static void *
helper (void *arg)
{
	(void) arg;
	for (long i = 0; i < iterations / 4; i++) {
		char *volatile t = malloc (24 + i % 32);
		t[0] = 1;
		free (t);
		if (i % 1000 == 999)
			sink = malloc (16);      /* HELPER */
	}
	return NULL;
}

int
main (int argc, char **argv)
{
	long n = argc > 1 ? atol (argv[1]) : 20000;
	long sleep_every = argc > 2 ? atol (argv[2]) : 0;
	void *work[64] = { 0 };
	char *buf = malloc (16);
	double gap = n * 0.07, next_faster = gap;
	pthread_t t;

	iterations = n;
	pace_start ();
	for (int i = 0; i < 10; i++)
		sink = malloc (1000);       /* ONE-OFF */
	if (pthread_create (&t, NULL, helper, NULL) != 0)
		return 1;
	for (long i = 0; i < n; i++) {
		char *volatile tmp = malloc (32 + i % 64);   /* TEMPORARY */
		tmp[0] = (char) i;
		free (tmp);
		free (work[i % 64]);
		work[i % 64] = malloc (100 + i % 200);   /* WORKING */
		if (i % 16 == 0)
			buf = realloc (buf, 16 + (size_t) (i % 4096));   /* REALLOC */
		if (i % 50 == 49)
			steady_leak ();
		if (i >= (long) next_faster) {
			faster_leak ();
			gap *= 0.93;
			next_faster += gap + 1;
		}
		if (i == n / 4 || i == n / 2 || i == 3 * n / 4)
			bad_free ();
		if (i == n / 8)
			burst ();
		if (sleep_every > 0 && i % sleep_every == 0)
			pace (i / sleep_every);
	}
	pthread_join (t, NULL);
	for (int k = 0; k < 64; k++)
		free (work[k]);
	free (buf);
	if (argc > 3) {
		muntrace ();
		/* say so, outside the trace: the test reads the parts now */
		static const char msg[] = "waiting\n";
		if (write (1, msg, sizeof msg - 1) < 0)
			return 1;
		while (access (argv[3], F_OK) != 0)
			usleep (10000);
	}
	return 0;
}
