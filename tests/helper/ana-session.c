/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-session: a session of several processes with known leaks, for
 * `mtanalyze session` (t7040).
 *
 *   ana-session            the first process: frees all it allocates;
 *                          forks a worker, double-forks a daemon, waits
 *   ana-session worker     (forked) leaks 2 blocks of 100, then execs
 *                          "ana-session image"
 *   ana-session image      (exec'd by the worker) leaks 3 blocks of 300
 *   the daemon             (grandchild) leaks 1 block of 7000 and
 *                          allocates MB in a loop, for rotation
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* seen from outside, so that the compiler keeps every allocation */
void *volatile keep[8];
void *volatile scratch;

static void
churn (int rounds)
{
	for (int i = 0; i < rounds; i++) {
		scratch = malloc (64 + (size_t) (i % 512));
		free (scratch);
	}
}

static int
image (void)
{
	for (int i = 0; i < 3; i++)
		keep[i] = malloc (300);         /* image leak */
	return 0;
}

static void
worker (const char *self)
{
	for (int i = 0; i < 2; i++)
		keep[i] = malloc (100);         /* worker leak */
	execl (self, self, "image", (char *) NULL);
	_exit (127);
}

static void
daemon_child (int rounds)
{
	keep[0] = malloc (7000);                /* daemon leak */
	churn (rounds);
	exit (0);                               /* the recorder ends its trace */
}

int
main (int argc, char **argv)
{
	int rounds = getenv ("ANA_SESSION_ROUNDS") ? atoi (getenv ("ANA_SESSION_ROUNDS")) : 1000;
	if (argc > 1 && strcmp (argv[1], "image") == 0)
		return image ();
	char *mine = scratch = malloc (50);
	pid_t w = fork ();
	if (w == 0)
		worker (argv[0]);
	pid_t d = fork ();
	if (d == 0) {
		if (fork () == 0)
			daemon_child (rounds);
		_exit (0);
	}
	waitpid (w, NULL, 0);
	waitpid (d, NULL, 0);           /* the daemon, reparented, is not waited for */
	free (mine);
	return 0;
}
