/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-lineage: forks whose parent's blocks must, or must not, be handed to
 * a child (tests/t3091).  Every mode starts the same: the first process P
 * allocates 3 blocks of 1001 bytes (0x3e9) that it never frees.  The
 * process that runs on at the end (the last child, or the daemon) writes
 * its pid into FILE and exit()s.
 *
 *   ana-lineage wait FILE     P forks 3 children and waits for them; each
 *                             allocates and frees 1003 bytes, frees one
 *                             inherited block and exit()s; P exit()s
 *   ana-lineage exec FILE     as wait, but each child execs /bin/true
 *                             after its allocation (the case)
 *   ana-lineage daemon FILE   daemon(3): P _exit()s inside daemon(); the
 *                             daemon waits until P is gone, leaks 1004
 *   ana-lineage double FILE   P forks M, which forks D and _exit()s with no
 *                             event of its own (no trace); P waits for M
 *                             and exit()s; D waits until P is gone (a pipe
 *                             P holds reaches its end), leaks 1004
 *   ana-lineage execfail FILE P forks and _exit()s; the child, once P is
 *                             gone, allocates and frees 1003 bytes, tries
 *                             to exec a program that does not exist, goes
 *                             on, and leaks 1004
 *   ana-lineage spawn FILE    P forks D, then a helper that allocates and
 *                             frees 1003 bytes and execs /bin/true; P waits
 *                             for the helper and exit()s; D waits until P
 *                             is gone, leaks 1004
 *   ana-lineage gluster FILE  glusterd's start: P forks M, M forks D and
 *                             _exit()s; P waits for M, then for D's "ready"
 *                             byte on a pipe, and exit()s; D waits until P
 *                             is gone, then forks two helpers that each
 *                             allocate and free 1003 bytes and exec
 *                             /bin/true, waits for them, leaks 1004
 *
 * Waits are bounded (60 s).  Exit status: 0, or 1 when something failed
 * (said on stderr). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[8];

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("ana-lineage: out of memory\n", stderr);
		_exit(1);
	}
	memset(p, 1, n);
	return p;
}

static void die(const char *what)
{
	perror(what);
	_exit(1);
}

static void say_pid(const char *file)
{
	char buf[32];
	FILE *f = fopen(file, "w");

	snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (!f || fputs(buf, f) < 0 || fclose(f) != 0)
		die(file);
}

static void wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "ana-lineage: child %ld failed\n", (long)pid);
		_exit(1);
	}
}

/* Until the write ends of the pipe FD reads from are all closed: the
 * process that held the last one has ended. */
static void wait_eof(int fd)
{
	char c;
	ssize_t n;

	alarm(60);
	while ((n = read(fd, &c, 1)) != 0)
		if (n < 0 && errno != EINTR)
			die("read");
	alarm(0);
	close(fd);
}

/* Until this process is no longer P's child (P ended: daemon(3)). */
static void wait_orphan(pid_t p)
{
	for (int i = 0; getppid() == p; i++) {
		if (i > 6000) {
			fputs("ana-lineage: the parent did not end\n", stderr);
			_exit(1);
		}
		usleep(10000);
	}
}

static pid_t xfork(void)
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	return pid;
}

static void children(int exec_true, const char *file)
{
	pid_t pids[3];

	for (int i = 0; i < 3; i++) {
		if ((pids[i] = xfork()) == 0) {
			free(xmalloc(1003));
			if (i == 2)
				say_pid(file);
			if (exec_true) {
				execl("/bin/true", "true", (char *)NULL);
				die("/bin/true");
			}
			free(keep[i]);
			exit(0);
		}
	}
	for (int i = 0; i < 3; i++)
		wait_child(pids[i]);
	exit(0);
}

/* The daemon's own work, once its parent is gone. */
static void daemon_work(const char *file)
{
	keep[3] = xmalloc(1004);
	say_pid(file);
	exit(0);
}

static void helpers(void)
{
	pid_t pids[2];

	for (int i = 0; i < 2; i++) {
		if ((pids[i] = xfork()) == 0) {
			free(xmalloc(1003));
			execl("/bin/true", "true", (char *)NULL);
			die("/bin/true");
		}
	}
	for (int i = 0; i < 2; i++)
		wait_child(pids[i]);
}

static void double_fork(int gluster, const char *file)
{
	int hold[2], ready[2];
	pid_t m;
	char c;

	if (pipe(hold) < 0 || pipe(ready) < 0)
		die("pipe");
	if ((m = xfork()) == 0) {
		/* M: no event of its own, so no trace and no mark */
		if (xfork() > 0)
			_exit(0);
		close(hold[1]);
		close(ready[0]);
		if (gluster && write(ready[1], "r", 1) != 1)
			die("write");
		close(ready[1]);
		wait_eof(hold[0]);
		if (gluster)
			helpers();
		daemon_work(file);
	}
	close(hold[0]);
	close(ready[1]);
	wait_child(m);
	if (gluster && read(ready[0], &c, 1) != 1)
		die("read");
	exit(0);
}

int main(int argc, char **argv)
{
	pid_t p = getpid();

	if (argc != 3) {
		fputs("usage: ana-lineage wait|exec|daemon|double|execfail|spawn|gluster FILE\n", stderr);
		return 1;
	}
	for (int i = 0; i < 3; i++)
		keep[i] = xmalloc(1001);
	if (strcmp(argv[1], "wait") == 0 || strcmp(argv[1], "exec") == 0)
		children(argv[1][0] == 'e', argv[2]);
	if (strcmp(argv[1], "daemon") == 0) {
		if (daemon(1, 1) < 0)
			die("daemon");
		wait_orphan(p);
		daemon_work(argv[2]);
	}
	if (strcmp(argv[1], "execfail") == 0) {
		if (xfork() > 0)
			_exit(0);
		wait_orphan(p);
		free(xmalloc(1003));   /* its trace opens: the exec is marked */
		execl("/nonexistent/ana-lineage", "x", (char *)NULL);
		daemon_work(argv[2]);
	}
	if (strcmp(argv[1], "spawn") == 0) {
		int hold[2];

		if (pipe(hold) < 0)
			die("pipe");
		if (xfork() == 0) {
			close(hold[1]);
			wait_eof(hold[0]);
			daemon_work(argv[2]);
		}
		close(hold[0]);
		helpers();
		exit(0);
	}
	if (strcmp(argv[1], "double") == 0 || strcmp(argv[1], "gluster") == 0)
		double_fork(argv[1][0] == 'g', argv[2]);
	fprintf(stderr, "ana-lineage: unknown mode '%s'\n", argv[1]);
	return 1;
}
