/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-fork: process boundaries for the recorder (tests/t2100).  Each
 * process allocates blocks of a size of its own, so that a trace shows
 * whose events it holds, and leaks an exact number of them.  Nothing is
 * printed with stdio before a fork (no inherited stdio buffer), and no
 * child frees a block its parent allocated.
 *
 *   rec-fork basic      parent leaks 3+1 blocks of 1001 bytes (3 before the
 *                       fork, 1 after), the forked child 2 of 2002 and
 *                       exit()s; prints "child PID"
 *   rec-fork exec       leaks 3 blocks of 3003, then execs itself ("leaf":
 *                       leaks 2 blocks of 4004) without forking; prints
 *                       "pid PID" before the exec
 *   rec-fork fork-exec  leaks 3 of 3003, forks; the child allocates and
 *                       frees one block of 5005, then execs "leaf";
 *                       the parent leaks 1 more of 3003; prints "child PID"
 *   rec-fork spawn      as fork-exec, but with posix_spawn()
 *   rec-fork leaf       leaks 2 blocks of 4004 (what exec runs)
 *   rec-fork threads N ROUNDS
 *                       N threads malloc/free blocks of 5005 in bursts
 *                       while the main thread forks ROUNDS children, one at
 *                       a time; each child leaks 1 block of 6006, frees 10
 *                       others and exit()s; the parent leaks 1 block of
 *                       7007; prints "children ROUNDS"
 *   rec-fork fork-exit ROUNDS
 *                       ROUNDS times: fork a child that _exit(0)s at once;
 *                       the parent allocates 8008 around the forks and
 *                       leaks ROUNDS of them
 *   rec-fork chdir DIR  leaks 1 block of 1001, changes directory to DIR,
 *                       forks: the child leaks 2 blocks of 2002 and
 *                       exit()s; prints "child PID" (a daemon's chdir("/")
 *                       before its fork, in small)
 *   rec-fork raw-fork   leaks 3 blocks of 1001, forks with _Fork() (glibc
 *                       2.34+: no fork handlers run); the child leaks 5
 *                       blocks of 2002 and _exit()s; the parent waits and
 *                       _exit()s at once (so that it writes nothing after
 *                       the child); prints "child PID"
 * Exit status: 0, or 1 when something failed (said on stderr). */
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void *volatile sink;

static void leak(size_t size, int n)
{
	for (int i = 0; i < n; i++)
		if ((sink = malloc(size)) == NULL)
			exit(1);
}

static void churn(size_t size, int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(size);
		if (!p)
			exit(1);
		sink = p;
		free(p);
	}
}

/* Print without stdio (no buffer allocated before a fork or exec). */
static void say(const char *what, long v)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%s %ld\n", what, v);

	if (write(1, buf, (size_t)n) != n)
		exit(1);
}

static int wait_ok(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "rec-fork: child %ld failed (status %#x)\n", (long)pid, st);
		return 0;
	}
	return 1;
}

static int leaf(void)
{
	leak(4004, 2);
	churn(4004, 5);
	return 0;
}

static void exec_leaf(void)
{
	execl("/proc/self/exe", "rec-fork", "leaf", (char *)NULL);
	perror("rec-fork: exec");
	_exit(1);
}

static volatile int stop;

/* Bursts of allocation with short pauses: a fork often lands inside the
 * recorder in another thread, and the trace stays small. */
static void *spinner(void *arg)
{
	while (!stop) {
		for (int i = 0; i < 16; i++) {
			void *p = malloc(5005);
			sink = p;
			free(p);
			p = calloc(1, 5005);
			p = realloc(p, 5005 * 2);
			free(p);
		}
		usleep(1000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";
	pid_t pid;

	if (!strcmp(mode, "leaf"))
		return leaf();
	if (!strcmp(mode, "basic")) {
		leak(1001, 3);
		churn(1001, 2);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			leak(2002, 2);
			churn(2002, 3);
			exit(0);
		}
		if (!wait_ok(pid))
			return 1;
		leak(1001, 1);
		churn(1001, 2);
		say("child", pid);
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		leak(3003, 3);
		churn(3003, 2);
		say("pid", getpid());
		exec_leaf();
	}
	if (!strcmp(mode, "fork-exec") || !strcmp(mode, "spawn")) {
		leak(3003, 3);
		if (!strcmp(mode, "spawn")) {
			char *args[] = { "rec-fork", "leaf", NULL };
			if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0)
				return 1;
		} else {
			pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				churn(5005, 1);	/* the child records before it execs */
				exec_leaf();
			}
		}
		if (!wait_ok(pid))
			return 1;
		leak(3003, 1);
		churn(3003, 2);
		say("child", pid);
		return 0;
	}
	if (!strcmp(mode, "threads")) {
		int nthreads = argc > 2 ? atoi(argv[2]) : 3;
		int rounds = argc > 3 ? atoi(argv[3]) : 200;
		pthread_t tid[16];

		if (nthreads < 1 || nthreads > 16)
			return 2;
		for (int t = 0; t < nthreads; t++)
			if (pthread_create(&tid[t], NULL, spinner, NULL) != 0)
				return 1;
		for (int r = 0; r < rounds; r++) {
			pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				leak(6006, 1);
				churn(6006, 10);
				exit(0);
			}
			if (!wait_ok(pid))
				return 1;
		}
		stop = 1;
		for (int t = 0; t < nthreads; t++)
			pthread_join(tid[t], NULL);
		leak(7007, 1);
		say("children", rounds);
		return 0;
	}
	if (!strcmp(mode, "fork-exit")) {
		int rounds = argc > 2 ? atoi(argv[2]) : 20;

		for (int r = 0; r < rounds; r++) {
			void *p = malloc(8008);
			sink = p;
			pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0)
				_exit(0);
			free(p);
			leak(8008, 1);
			if (!wait_ok(pid))
				return 1;
		}
		say("children", rounds);
		return 0;
	}
	if (!strcmp(mode, "chdir") && argc > 2) {
		leak(1001, 1);
		if (chdir(argv[2]) != 0)
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			leak(2002, 2);
			exit(0);
		}
		if (!wait_ok(pid))
			return 1;
		say("child", pid);
		return 0;
	}
	if (!strcmp(mode, "raw-fork")) {
		leak(1001, 3);
#if __GLIBC_PREREQ(2, 34)
		pid = _Fork();
#else
		pid = (pid_t)syscall(SYS_fork);
#endif
		if (pid < 0)
			return 1;
		if (pid == 0) {
			leak(2002, 5);
			_exit(0);
		}
		if (!wait_ok(pid))
			_exit(1);
		say("child", pid);
		_exit(0);
	}
	fprintf(stderr, "rec-fork: unknown mode '%s'\n", mode);
	return 2;
}
