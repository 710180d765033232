/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* realloc-turn-main.c -- while thread A is inside realloc(old), after the
 * allocator released old (libturn.so parked it) and before realloc
 * returned, thread B marks the trace (a new epoch: every thread to a new
 * chunk) and mallocs old back; A meanwhile may have written so much
 * (malloc calls inside realloc, a signal handler that allocates and
 * marks) that its chunk is used up.  Whatever happened, the trace must
 * have A's "< old" before B's "+ old": the place realloc took for its
 * outcome is held, not only checked.
 *
 * Usage: realloc-turn ROUNDS INNER [signal]: INNER malloc/free pairs
 * inside each realloc; "signal": a SIGUSR1 handler that allocates and
 * calls trace_mark() runs inside each realloc too.  Prints how many times
 * B got old back; exits 0 when it did every time. */
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "mtrec.h"
#include "realloc-turn.h"

static sem_t go, done;
static void *got;
static int hits, with_signal, stopping;

static void on_usr1(int sig)
{
	free(malloc(24));
	trace_mark("in a signal handler inside realloc");
}

/* Runs in A, inside libturn's realloc, after old was released. */
static void turn(void *old)
{
	sem_post(&go);
	sem_wait(&done);
	if (got == old)
		hits++;
	if (with_signal)
		raise(SIGUSR1);
}

static void *taker(void *arg)
{
	for (;;) {
		sem_wait(&go);
		if (stopping)
			return NULL;
		trace_mark("turn");
		got = malloc(TURN_SIZE);
		free(got);
		sem_post(&done);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;
	void (**hook)(void *) = dlsym(RTLD_DEFAULT, "turn_hook");
	int *inner = dlsym(RTLD_DEFAULT, "turn_inner");
	pthread_t th;

	if (!hook || !inner) {
		fprintf(stderr, "realloc-turn: libturn.so is not preloaded\n");
		return 2;
	}
	*inner = argc > 2 ? atoi(argv[2]) : 0;
	with_signal = argc > 3;
	signal(SIGUSR1, on_usr1);
	sem_init(&go, 0, 0);
	sem_init(&done, 0, 0);
	pthread_create(&th, NULL, taker, NULL);
	*hook = turn;
	for (int i = 0; i < rounds; i++) {
		void *p = malloc(TURN_SIZE);
		free(realloc(p, 2 * TURN_SIZE));
	}
	*hook = NULL;
	stopping = 1;
	sem_post(&go);
	pthread_join(th, NULL);
	printf("%d of %d\n", hits, rounds);
	return hits == rounds ? 0 : 1;
}
