/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-reach-churn: a live scan (mtrec ctl PID reach) that takes long while
 * other threads allocate and free.  It keeps N blocks of 32 bytes from a
 * global array (a scan of them takes a while), starts two threads that
 * allocate and free blocks of 16 to 79 bytes without end (the same
 * addresses over and over: a verdict put after a later allocation at the
 * same address would judge the wrong block) -- each of them looks for mtrec
 * ctl's requests --, prints "ready PID", and runs until SIGTERM: then the
 * threads stop, and it prints "bye" and exits 0.
 *
 * Usage: rec-reach-churn N */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void **volatile kept;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static void *churn(void *arg)
{
	void *held[8] = { 0 };
	struct timespec pause = { 0, 1000000 };

	for (unsigned i = 0; !stop; i++) {
		free(held[i % 8]);
		held[i % 8] = malloc(16 + i % 64);
		if (i % 16 == 0)
			nanosleep(&pause, NULL);
	}
	for (int i = 0; i < 8; i++)
		free(held[i]);
	return arg;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	pthread_t t[2];
	sigset_t term, old;

	if (n <= 0)
		return 2;
	kept = malloc((size_t)n * sizeof(void *));
	for (long i = 0; i < n; i++)
		kept[i] = malloc(32);
	signal(SIGTERM, on_term);
	/* SIGTERM goes to the main thread, which waits for it */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churn, NULL) != 0)
			return 2;
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready %ld\n", (long)getpid());
	while (!stop)
		sigsuspend(&old);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("bye\n");
	return 0;
}
