/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-exec-trim: a process that execs without forking.  It allocates 20
 * blocks of 1234 bytes, frees 17 of them, and replaces itself with its own
 * program ("child": allocates nothing of its own and exits 0) by way of
 * HOW: execv, execvp, execve, execl, execlp, execle or fexecve.
 * "fail": execs that fail first (execv of a missing file, execvp of an
 * unknown name, execve of a directory, execl of a non-executable file),
 * then 20 blocks of 4321 bytes, 2 not freed, and it exits 0.
 * "threads": as "fail", with 3 threads allocating and freeing blocks of 555
 * bytes meanwhile; they are joined, then it execs by execv.
 * "running": as "threads", but it execs while the threads still run.
 * Usage: rec-exec-trim HOW|fail|threads|running|child */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static volatile int stop;

static void *churn(void *arg)
{
	(void)arg;
	while (!stop) {
		char *volatile p = malloc(555);

		free(p);
	}
	return NULL;
}

static void blocks(size_t size, int n, int keep)
{
	void *p[32];

	for (int i = 0; i < n; i++)
		p[i] = malloc(size);
	for (int i = keep; i < n; i++)
		free(p[i]);
}

static int failing_execs(void)
{
	char *const argv[] = { "x", NULL };

	if (execv("/nonexistent/rec-exec-trim", argv) != -1 ||
	    execvp("no-such-program-rec-exec-trim", argv) != -1 ||
	    execve("/", argv, environ) != -1 ||
	    execl("/etc/passwd", "x", (char *)NULL) != -1)
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "execv";
	char *const child[] = { argv[0], "child", NULL };
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pthread_t tid[3];
	int running = strcmp(how, "running") == 0;
	int threads = running || strcmp(how, "threads") == 0;

	if (strcmp(how, "child") == 0)
		return 0;
	if (n <= 0)
		return 3;
	self[n] = '\0';
	if (threads)
		for (int i = 0; i < 3; i++)
			pthread_create(&tid[i], NULL, churn, NULL);
	blocks(1234, 20, 3);
	if (strcmp(how, "fail") == 0 || threads) {
		if (failing_execs())
			return 4;
		blocks(4321, 20, 2);
		if (!threads)
			return 0;
		usleep(20000);
		if (!running) {
			stop = 1;
			for (int i = 0; i < 3; i++)
				pthread_join(tid[i], NULL);
		}
		how = "execv";
	}
	if (strcmp(how, "execv") == 0)
		execv(self, child);
	else if (strcmp(how, "execvp") == 0)
		execvp(self, child);
	else if (strcmp(how, "execve") == 0)
		execve(self, child, environ);
	else if (strcmp(how, "execl") == 0)
		execl(self, argv[0], "child", (char *)NULL);
	else if (strcmp(how, "execlp") == 0)
		execlp(self, argv[0], "child", (char *)NULL);
	else if (strcmp(how, "execle") == 0)
		execle(self, argv[0], "child", (char *)NULL, environ);
	else if (strcmp(how, "fexecve") == 0)
		fexecve(open(self, O_RDONLY | O_CLOEXEC), child, environ);
	return 5;
}
