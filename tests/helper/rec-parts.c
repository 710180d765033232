/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-parts: a daemon's shape for rotated traces -- one idle thread that
 * allocates once at start and then sleeps (a signal thread), and one busy
 * thread that allocates and frees RATE pairs every millisecond.
 *
 * Usage: rec-parts DIR SECONDS RATE [exit]
 *   The busy thread stops after SECONDS, or when DIR/stop exists.
 *   Each time DIR/wake appears, the idle thread removes it, allocates 50
 *   blocks of 4321 bytes, frees 49 of them (one leak of 4321 bytes per
 *   wake-up) and creates DIR/woke.
 *   With "exit", main calls exit() while the busy thread still allocates.
 * Prints "rec-parts: N wake-ups" and exits 3, so that a caller can tell
 * its own status from the recorder's. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static double seconds;
static long rate;
static volatile int quit;
static volatile int wakeups;
static void *volatile sink;	/* so that the compiler keeps malloc and free */

static char *path(const char *name)
{
	static __thread char buf[4096];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(long ns)
{
	struct timespec ts = { 0, ns };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void wake_up(void)
{
	void *blocks[50];
	FILE *f;

	for (int i = 0; i < 50; i++)
		sink = blocks[i] = malloc(4321);
	for (int i = 1; i < 50; i++)
		free(blocks[i]);
	wakeups++;
	f = fopen(path("woke"), "w");
	if (f)
		fclose(f);
}

static void *idle(void *arg)
{
	void *first = malloc(1111);

	(void)arg;
	while (!quit) {
		if (unlink(path("wake")) == 0)
			wake_up();
		nap(5000000);
	}
	free(first);
	return NULL;
}

static void *busy(void *arg)
{
	double end = now() + seconds;
	unsigned long n = 0;

	(void)arg;
	while (now() < end && access(path("stop"), F_OK) != 0) {
		for (long i = 0; i < rate; i++) {
			{
				void *own = malloc(16 + (n++ % 64));
				sink = own;	/* another thread may store here too */
				free(own);
			}
		}
		nap(1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t_idle, t_busy;

	if (argc < 4) {
		fprintf(stderr, "usage: rec-parts DIR SECONDS RATE [exit]\n");
		return 2;
	}
	dir = argv[1];
	seconds = atof(argv[2]);
	rate = atol(argv[3]);
	if (pthread_create(&t_idle, NULL, idle, NULL) != 0 ||
	    pthread_create(&t_busy, NULL, busy, NULL) != 0)
		return 2;
	if (argc > 4 && strcmp(argv[4], "exit") == 0) {
		/* The busy thread is still allocating when the process ends. */
		nap(200000000);
		printf("rec-parts: exit while allocating\n");
		fflush(stdout);
		exit(3);
	}
	pthread_join(t_busy, NULL);
	quit = 1;
	pthread_join(t_idle, NULL);
	printf("rec-parts: %d wake-ups\n", wakeups);
	return 3;
}
