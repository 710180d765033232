/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-daemon: forks whose child inherits its parent's heap (tests/t2105,
 * t3090).  Before forking, the first process allocates 3 blocks of 1001
 * bytes that nobody frees and 2 of 1002 that its descendant frees.  The
 * process that ends up running the daemon frees both 1002 blocks, leaks 1
 * block of 1004 of its own, and writes its pid into the file named by its
 * last argument (then exits with exit()).
 *
 *   rec-daemon daemon FILE     daemon(3) (no chdir, no close): the parent
 *                              _exit()s inside daemon()
 *   rec-daemon double FILE     fork; the child calls setsid() and forks
 *                              again and _exit()s without allocating; the
 *                              grandchild runs the daemon once the first
 *                              process, which waits for the child and
 *                              exit()s, is gone (a pipe it holds ends)
 *   rec-daemon double-alloc FILE
 *                              as double, but the middle process allocates
 *                              and frees a block of 1003 before forking
 *                              (so it writes a trace of its own)
 *   rec-daemon both FILE       fork, and both keep running: the child frees
 *                              the first 1002 block and leaks 1 of 1004;
 *                              the parent frees the second 1002 block,
 *                              leaks 1 block of 1005 of its own after the
 *                              fork, waits for the child and exit()s
 *   rec-daemon exec FILE       fork; the child execs "rec-daemon leaf FILE"
 *                              at once; the parent waits and exit()s
 *   rec-daemon leaf FILE       writes its pid into FILE (what exec runs)
 * With REC_DAEMON_CHURN=N in the environment, the first process then
 * allocates and frees N blocks of 999 bytes before it forks (so that the
 * fork of a rotated trace comes in a later part than the blocks).
 * Exit status: 0, or 1 when something failed (said on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[8];
static int nkeep;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("rec-daemon: out of memory\n", stderr);
		_exit(1);
	}
	memset(p, 1, n);
	return p;
}

/* The pid, for the test to wait on; written without stdio's buffer. */
static void say_pid(const char *file)
{
	char buf[32];
	FILE *f = fopen(file, "w");

	snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (!f || fputs(buf, f) < 0 || fclose(f) != 0) {
		perror(file);
		exit(1);
	}
}

/* What the daemon does with what it inherited. */
static void run_daemon(void **shared, const char *file)
{
	free(shared[0]);
	free(shared[1]);
	keep[nkeep++] = xmalloc(1004);
	say_pid(file);
	exit(0);
}

int main(int argc, char **argv)
{
	void *shared[2];
	pid_t pid;
	int st;

	if (argc != 3) {
		fputs("usage: rec-daemon daemon|double|double-alloc|both|exec|leaf FILE\n", stderr);
		return 1;
	}
	if (strcmp(argv[1], "leaf") == 0) {
		say_pid(argv[2]);
		return 0;
	}
	for (int i = 0; i < 3; i++)
		keep[nkeep++] = xmalloc(1001);
	shared[0] = xmalloc(1002);
	shared[1] = xmalloc(1002);
	for (long n = getenv("REC_DAEMON_CHURN") ? atol(getenv("REC_DAEMON_CHURN")) : 0; n > 0; n--)
		free(xmalloc(999));
	if (strcmp(argv[1], "daemon") == 0) {
		if (daemon(1, 1) < 0) {
			perror("daemon");
			return 1;
		}
		run_daemon(shared, argv[2]);
	}
	if (strcmp(argv[1], "double") == 0 || strcmp(argv[1], "double-alloc") == 0) {
		int hold[2];
		char c;

		if (pipe(hold) < 0 || (pid = fork()) < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			setsid();
			if (argv[1][6] == '-')
				free(xmalloc(1003));
			if ((pid = fork()) < 0)
				_exit(1);
			if (pid > 0)
				_exit(0);
			close(hold[1]);
			alarm(60);
			while (read(hold[0], &c, 1) > 0)
				;
			alarm(0);
			run_daemon(shared, argv[2]);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		return 0;
	}
	if (strcmp(argv[1], "both") == 0) {
		if ((pid = fork()) < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			free(shared[0]);
			keep[nkeep++] = xmalloc(1004);
			say_pid(argv[2]);
			exit(0);
		}
		free(shared[1]);
		keep[nkeep++] = xmalloc(1005);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		return 0;
	}
	if (strcmp(argv[1], "exec") == 0) {
		if ((pid = fork()) < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			execl(argv[0], argv[0], "leaf", argv[2], (char *)NULL);
			_exit(1);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			return 1;
		return 0;
	}
	fprintf(stderr, "rec-daemon: unknown mode '%s'\n", argv[1]);
	return 1;
}
