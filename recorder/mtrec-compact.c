/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-compact.c -- mtrec --compact: run "mtanalyze compact --follow
 * --delete TRACE" while the program runs (share/compact.md).
 *
 * The compactor is the launcher's, never the program's: started from the
 * launcher after the program was forked, through a double fork and
 * setsid(), so that the program never gets a SIGCHLD or a child it did not
 * make, and a Ctrl-C meant for the program does not stop it half-way (it
 * finishes the parts the program left).  It reads nothing of the
 * program's terminal and writes nothing to it: stdin and stdout are
 * /dev/null, stderr a hidden file beside the trace.  It is not recorded:
 * the recorder's variables are removed from its environment.
 */
#include "mtrec-compact.h"
#include "owner.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int mtrec_compact_find(char *out, size_t cap)
{
	const char *rel[] = { "/mtanalyze", "/../analyzer/mtanalyze" };
	char self[PATH_MAX - 64], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, cap, "%s%s", self, rel[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* PATTERN with each "%p" replaced by PID, as the recorder names the file. */
static void trace_name(const char *pattern, pid_t pid, char *out, size_t cap)
{
	size_t k = 0;

	for (const char *p = pattern; *p && k + 24 < cap; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			k += (size_t)snprintf(out + k, cap - k, "%ld", (long)pid);
			p++;
		} else
			out[k++] = *p;
	}
	out[k] = '\0';
}

/* ".NAME.compact.log" in the trace's directory: not matched by 'TRACE*'. */
static void log_name(const char *trace, char *out, size_t cap)
{
	const char *slash = strrchr(trace, '/');
	int dirlen = slash ? (int)(slash - trace + 1) : 0;

	snprintf(out, cap, "%.*s.%s.compact.log", dirlen, trace, slash ? slash + 1 : trace);
}

/* The compactor's stderr: as the recorder opens a trace (file.c,
 * open_checked), never through a symbolic link and never a file another
 * user left beside a trace in /tmp, nor a hard link there; truncated only
 * then.  -1 when refused
 * (the compactor's messages are then lost, nothing else). */
static int open_log(const char *log)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(log, '/');
	struct stat dst, st;
	int fd = open(log, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - log) + 1 : 1, slash ? log : ".");
	if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || stat(dir, &dst) < 0 ||
			mtrec_planted(&dst, &st, geteuid()) || mtrec_linked(&dst, &st) ||
			ftruncate(fd, 0) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void __attribute__((noreturn)) run_compactor(const char *analyzer, const char *trace,
						    pid_t pid, const char *log)
{
	char pidarg[32];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int err = open_log(log);

	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(err < 0 ? null : err, 2) < 0)
		_exit(125);
	unsetenv("LD_PRELOAD");
	unsetenv("MALLOC_TRACE");
	unsetenv("MTREC_SIGNAL");
	unsetenv("MTREC_SCOPED");
	snprintf(pidarg, sizeof(pidarg), "--pid=%ld", (long)pid);
	execl(analyzer, "mtanalyze", "compact", "--follow", "--delete", "-q", pidarg, "--", trace,
	      (char *)NULL);
	dprintf(2, "mtrec: cannot run '%s'\n", analyzer);
	_exit(126);
}

pid_t mtrec_compact_start(const char *analyzer, const char *pattern, pid_t pid, char *trace,
			  char *log, size_t logcap)
{
	int pfd[2];
	pid_t mid, grandchild = -1;

	trace_name(pattern, pid, trace, PATH_MAX);
	log_name(trace, log, logcap);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	if ((mid = fork()) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (mid == 0) {
		pid_t gc;
		close(pfd[0]);
		setsid();
		gc = fork();
		if (gc == 0) {
			close(pfd[1]);
			run_compactor(analyzer, trace, pid, log);
		}
		if (write(pfd[1], &gc, sizeof(gc)) != sizeof(gc))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
		grandchild = -1;
	close(pfd[0]);
	waitpid(mid, NULL, 0);
	return grandchild;
}
