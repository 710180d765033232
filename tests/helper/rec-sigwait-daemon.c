/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-sigwait-daemon: a daemon that handles signals as glusterd does.
 * Every signal is blocked before any thread starts, so it is blocked in
 * every thread; one thread takes them with sigwait(): SIGUSR2 is counted
 * (glusterd rotates its logs on it), SIGTERM ends the program.  Two
 * workers allocate and free blocks of 777 bytes every millisecond; with
 * "idle", they make no call at all until the file "wake" appears (looked at
 * with stat(), which does not allocate).  With "daemon", it first
 * daemonizes with daemon(3) (the parent exits, the child goes on) and
 * closes every descriptor above 2 (closefrom(3)), as daemons do.
 * Prints "ready PID" when running, "usr2 N" on each SIGUSR2, "bye" at end.
 * Usage: rec-sigwait-daemon [idle|daemon] */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static int idle;

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *work(void *arg)
{
	struct stat st;

	(void)arg;
	while (idle && !stop && stat("wake", &st) < 0)
		nap_ms(20);
	while (!stop) {
		char *volatile p = malloc(777);

		nap_ms(1);
		free(p);
	}
	return NULL;
}

static void *sigwaiter(void *arg)
{
	sigset_t *set = arg;
	int sig, usr2 = 0;

	for (;;) {
		if (sigwait(set, &sig) != 0)
			continue;
		if (sig == SIGUSR2) {
			printf("usr2 %d\n", ++usr2);
			fflush(stdout);
		} else if (sig == SIGTERM || sig == SIGINT) {
			stop = 1;
			return NULL;
		}
	}
}

int main(int argc, char **argv)
{
	pthread_t waiter, workers[2];
	sigset_t all;

	idle = argc > 1 && strcmp(argv[1], "idle") == 0;
	if (argc > 1 && strcmp(argv[1], "daemon") == 0) {
		free(malloc(100));	/* the parent records too */
		if (daemon(1, 1) < 0)
			return 1;
		closefrom(3);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_create(&waiter, NULL, sigwaiter, &all);
	for (int i = 0; i < 2; i++)
		pthread_create(&workers[i], NULL, work, NULL);
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	pthread_join(waiter, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(workers[i], NULL);
	printf("bye\n");
	return 0;
}
