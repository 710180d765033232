/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-clock.c -- programs whose allocations come slowly, for the rule that
 * a trace of ours has a "# time" line at least every 100 ms while events
 * come (issue 26, t7002).  Each makes one malloc (of 41 bytes, to be told
 * in the trace) every 20 ms for 2 s (the slow phase), freed after it,
 * after:
 *
 *   burst     200,000 quick malloc/free pairs first (a daemon's start-up,
 *             then its idle loop): a thread that counts its calls between
 *             looks at the clock by how quick they came last must not go
 *             on counting as if they still came that quick
 *   thread    nothing: the slow phase runs in a second thread while the
 *             first waits in pthread_join, allocating nothing
 *   sigblock  nothing: every signal blocked first (no timer signal could
 *             make the clock's lines)
 *   forkexec  no slow phase: a forked child allocates 10 blocks and execs
 *             /bin/true at once, the parent waits for it
 *
 * The phase is paced by nanosleep: the lines of the slow phase come 20 ms
 * apart or more (a loaded machine only stretches the sleeps).
 *
 * usage: rec-clock MODE
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

static void
slow (void)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };

	void *slow_blocks[100];

	for (int i = 0; i < 100; i++) {
		slow_blocks[i] = malloc (41);
		nanosleep (&pause, NULL);
	}
	for (int i = 0; i < 100; i++)
		free (slow_blocks[i]);
}

static void *
slow_thread (void *arg)
{
	(void) arg;
	slow ();
	return NULL;
}

int
main (int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp (mode, "burst") == 0) {
		for (int i = 0; i < 200000; i++) {
			sink = malloc (40);
			free (sink);
		}
		slow ();
	} else if (strcmp (mode, "thread") == 0) {
		pthread_t t;

		if (pthread_create (&t, NULL, slow_thread, NULL) != 0 ||
		    pthread_join (t, NULL) != 0)
			return 1;
	} else if (strcmp (mode, "sigblock") == 0) {
		sigset_t all;

		sigfillset (&all);
		sigprocmask (SIG_BLOCK, &all, NULL);
		slow ();
	} else if (strcmp (mode, "forkexec") == 0) {
		pid_t child = fork ();

		if (child == 0) {
			for (int i = 0; i < 10; i++)
				sink = malloc (41);
			execl ("/bin/true", "true", (char *) NULL);
			_exit (127);
		}
		if (child < 0 || waitpid (child, NULL, 0) != child)
			return 1;
	} else {
		fprintf (stderr, "usage: rec-clock burst|thread|sigblock|forkexec\n");
		return 2;
	}
	return 0;
}
