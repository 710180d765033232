/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-toggle: THREADS threads allocate and free in tight pairs (and hand a
 * few blocks to each other) while the main thread turns recording off and
 * on TOGGLES times with trace_off()/trace_on().  A toggle can split at most
 * one pair per thread, so a consistent trace has at most THREADS frees
 * "never allocated" and THREADS unfreed blocks per toggle.
 * Usage: rec-toggle THREADS TOGGLES */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "mtrec.h"

static volatile int stop;

static void *work(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg + 1;

	while (!stop) {
		seed = seed * 1103515245u + 12345u;
		char *volatile p = malloc(16 + (seed >> 16) % 512);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	int toggles = argc > 2 ? atoi(argv[2]) : 1000;
	pthread_t tid[64];

	if (threads < 1 || threads > 64)
		return 2;
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, work, (void *)t);
	for (int i = 0; i < toggles; i++) {
		usleep(100);
		trace_off();
		usleep(100);
		trace_on();
	}
	stop = 1;
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return 0;
}
