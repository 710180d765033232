/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-ctl.c -- "mtrec ctl PID on|off|mark LABEL|status": steer the
 * recorder in a running process without a signal (share/control.md).
 *
 * The recorder looks for DIR/PID.ctl at most every 100 ms from the
 * process's own allocation calls (recorder/control.c).  This side
 * finds DIR as the process sees it (its XDG_RUNTIME_DIR, its effective
 * user, its root directory through /proc/PID/root, so that a chroot, a
 * container or a service's private /tmp are no obstacle) one name at a
 * time, never making or following what the process may have chosen to
 * lead root astray (make_dir), writes the request whole (a temporary
 * file linked into place, so that the recorder never reads half of one),
 * keeps it open, and waits for it to disappear: the recorder has then
 * written its answer into it. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mtrec-attach.h"
#include "mtrec-ctl.h"

#define ANSWER_AT 1024		/* recorder/control.h MTREC_CONTROL_ANSWER_AT */
#define LABEL_MAX 511		/* recorder/control.h struct mtrec_ctl_req's label, less its NUL */

enum {
	CTL_DONE = 0,		/* the recorder did it */
	CTL_REFUSED = 1,	/* the recorder answered that it could not */
	CTL_PENDING = 2,	/* not taken in time: it stays pending */
	CTL_TROUBLE = 125,	/* bad usage, or the request could not be made */
};

static const char *progname = "mtrec";

static void ctl_usage(FILE *out)
{
	fprintf(out,
		"Usage: %s ctl [--timeout=SECONDS] PID on|off|status|reach|mark LABEL\n"
		"Start or stop recording, or write a mark line, in a running process that\n"
		"has the recorder preloaded; no signal is used.\n"
		"\n"
		"  on            start recording (\"= Start\")\n"
		"  off           stop recording (\"= End\")\n"
		"  mark LABEL    write \"# mark LABEL\" into the trace (when recording)\n"
		"  status        say whether the process is recording\n"
		"  reach         scan memory now for the blocks still live (MTREC_REACH=1,\n"
		"                mtrec --reach): their verdicts go to the trace\n"
		"  -t, --timeout=SECONDS  wait this long for the process to take the\n"
		"                request [2; reach: 60]; it does so at its next allocation\n"
		"                call, at most 100 ms after the request is made, or, when\n"
		"                it makes none, one of its threads is made to take it at\n"
		"                once through ptrace (as mtrec attach does)\n"
		"      --no-ptrace  never that: wait for the process's own calls\n"
		"  -h, --help    print this help and exit\n"
		"\n"
		"Exit status:\n"
		"    0  done\n"
		"    1  the recorder could not do it (it says why), or the process exited\n"
		"    2  the process took no request in time (it made no allocation call,\n"
		"       and none of its threads could be made to take it):\n"
		"       the request stays, and is carried out at its next allocation call\n"
		"  125  bad usage, or no request could be made (no such process, no\n"
		"       recorder in it, not allowed)\n",
		progname);
}

static int ctl_try_help(void)
{
	fprintf(stderr, "Try '%s ctl --help' for more information.\n", progname);
	return CTL_TROUBLE;
}

/* A small /proc file, NUL-terminated; its length, or -1 with errno. */
static ssize_t read_proc(long pid, const char *what, char *buf, size_t cap)
{
	char path[64];
	ssize_t n, len = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, what);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	while ((size_t)len < cap - 1 && (n = read(fd, buf + len, cap - 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	return len;
}

/* The value of name in a NUL-separated environment block, or NULL. */
static const char *env_of(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (strncmp(p, name, nl) == 0 && p[nl] == '=')
			return p + nl + 1;
	return NULL;
}

struct target {
	long pid;
	uid_t euid;
	gid_t egid;
	char start[32];		/* /proc/PID/stat field 22 */
	char dir[PATH_MAX];	/* where requests go, as the process sees it */
	int dirfd;		/* that directory, open (make_dir) */
};

/* Does the process run the recorder, and will it look for requests?  0,
 * or CTL_TROUBLE after saying why. */
static int look_at(struct target *t)
{
	static char env[1 << 20];
	char buf[4096], *p;
	const char *trace, *off, *xdg, *preload;
	ssize_t n;
	FILE *maps;
	char path[64], line[PATH_MAX + 128];
	int has_lib = 0;

	if (read_proc(t->pid, "stat", buf, sizeof(buf)) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "%s: no process %ld\n", progname, t->pid);
		else
			fprintf(stderr, "%s: cannot look at process %ld: %s\n", progname, t->pid,
				strerror(errno));
		return CTL_TROUBLE;
	}
	/* "PID (COMM) STATE PPID ...": COMM may hold blanks and ')' */
	if ((p = strrchr(buf, ')')) == NULL)
		return CTL_TROUBLE;
	for (int field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	snprintf(t->start, sizeof(t->start), "%.*s", (int)strspn(p, "0123456789"), p);

	snprintf(path, sizeof(path), "/proc/%ld/maps", t->pid);
	if ((maps = fopen(path, "re")) == NULL) {
		fprintf(stderr, "%s: cannot look into process %ld: %s (run as its user or "
			"as root)\n", progname, t->pid, strerror(errno));
		return CTL_TROUBLE;
	}
	while (!has_lib && fgets(line, sizeof(line), maps))
		has_lib = strstr(line, "/libmtrec.so") != NULL;
	fclose(maps);
	if (!has_lib) {
		fprintf(stderr, "%s: process %ld does not run the recorder (libmtrec.so is "
			"not loaded in it)\n", progname, t->pid);
		return CTL_TROUBLE;
	}

	if ((n = read_proc(t->pid, "environ", env, sizeof(env))) < 0) {
		fprintf(stderr, "%s: cannot read the environment of process %ld: %s\n",
			progname, t->pid, strerror(errno));
		return CTL_TROUBLE;
	}
	trace = env_of(env, (size_t)n, "MALLOC_TRACE");
	off = env_of(env, (size_t)n, "MTREC_CONTROL");
	xdg = env_of(env, (size_t)n, "XDG_RUNTIME_DIR");
	preload = env_of(env, (size_t)n, "LD_PRELOAD");
	/* Loaded by mtrec attach: the settings are the attacher's, not in
	 * the environment. */
	if ((!trace || !*trace) && !(preload && strstr(preload, "libmtrec.so")))
		trace = "(attached)";
	if (!trace || !*trace) {
		fprintf(stderr, "%s: process %ld runs the recorder but records nothing "
			"(MALLOC_TRACE is not set in it)\n", progname, t->pid);
		return CTL_TROUBLE;
	}
	if (off && strcmp(off, "0") == 0) {
		fprintf(stderr, "%s: process %ld takes no requests (MTREC_CONTROL=0)\n",
			progname, t->pid);
		return CTL_TROUBLE;
	}

	if (read_proc(t->pid, "status", buf, sizeof(buf)) < 0 ||
	    !(p = strstr(buf, "\nUid:")) || sscanf(p, "\nUid: %*u %u", &t->euid) != 1 ||
	    !(p = strstr(buf, "\nGid:")) || sscanf(p, "\nGid: %*u %u", &t->egid) != 1) {
		fprintf(stderr, "%s: cannot tell the user of process %ld\n", progname, t->pid);
		return CTL_TROUBLE;
	}
	/* As recorder/control.c request_path() has it. */
	if (xdg && xdg[0] == '/' && strlen(xdg) < 256)
		snprintf(t->dir, sizeof(t->dir), "%s/mtrec", xdg);
	else
		snprintf(t->dir, sizeof(t->dir), "/tmp/mtrec-%u", (unsigned)t->euid);
	return 0;
}

/* May a directory on the way to the requests be trusted?  It is the
 * process's user's, root's, or that of the owner of the process's root
 * directory (a container's root, seen from outside its user namespace),
 * and nobody else may change what its names lead to: no other user may
 * write in it, unless it is sticky (as /tmp is), where another user's
 * entry cannot be renamed or removed and the next step checks the
 * entry's owner. */
static int trusted_step(const struct stat *st, const struct target *t, uid_t root_owner)
{
	return S_ISDIR(st->st_mode) &&
	       (st->st_uid == 0 || st->st_uid == t->euid || st->st_uid == root_owner) &&
	       (!(st->st_mode & 022) || (st->st_mode & S_ISVTX));
}

/* The request directory, open: DIR is a path the process chose (its
 * XDG_RUNTIME_DIR), so it is walked one name at a time from the
 * process's root (/proc/PID/root: a chroot, a container, a private /tmp
 * are no obstacle), never through a symbolic link or "..", and only
 * through directories trusted_step() accepts: root's mtrec ctl must not
 * be led to make or use a directory in /etc, or in another user's tree.
 * The last name is made (mode 0700, given to the process's user) only in
 * a directory of that user -- it could make it itself -- or in a sticky
 * one (/tmp); it must then be the process's user's, and nobody else may
 * write in it (anyone could otherwise remove requests or read answers).
 * 0, or CTL_TROUBLE after saying why. */
static int make_dir(struct target *t)
{
	char root[64], walk[PATH_MAX], *name, *next;
	struct stat st;
	uid_t root_owner;
	int fd, parent, made = 0;

	snprintf(root, sizeof(root), "/proc/%ld/root", t->pid);
	snprintf(walk, sizeof(walk), "%s", t->dir);
	if ((parent = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(parent, &st) < 0) {
		fprintf(stderr, "%s: cannot reach the root directory of process %ld: %s\n",
			progname, t->pid, strerror(errno));
		return CTL_TROUBLE;
	}
	root_owner = st.st_uid;
	for (name = walk + 1;; name = next) {
		if (!trusted_step(&st, t, root_owner)) {
			fprintf(stderr, "%s: '%s' leads through a directory that is not root's or "
				"user %u's, or that others may write in; not using it\n", progname,
				t->dir, (unsigned)t->euid);
			close(parent);
			return CTL_TROUBLE;
		}
		while (*name == '/')
			name++;
		if ((next = strchr(name, '/')) != NULL)
			*next++ = '\0';
		if (!next || !*next)
			break;
		if (!*name || strcmp(name, ".") == 0)
			continue;
		if (strcmp(name, "..") == 0 ||
		    (fd = openat(parent, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			fprintf(stderr, "%s: cannot reach '%s' (of process %ld) without following "
				"a symbolic link or '..': %s\n", progname, t->dir, t->pid,
				strcmp(name, "..") == 0 ? "'..' in it" : strerror(errno));
			close(parent);
			return CTL_TROUBLE;
		}
		close(parent);
		parent = fd;
		if (fstat(parent, &st) < 0) {
			fprintf(stderr, "%s: cannot look at '%s': %s\n", progname, t->dir,
				strerror(errno));
			close(parent);
			return CTL_TROUBLE;
		}
	}
	/* st is the parent's: may the last name be made in it? */
	if ((st.st_uid == t->euid || (st.st_mode & S_ISVTX)) && mkdirat(parent, name, 0700) == 0)
		made = 1;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(parent);
	if (fd < 0 && errno == ENOENT) {
		fprintf(stderr, "%s: not making '%s' (process %ld chose it): the directory it "
			"would be in is neither user %u's nor sticky, as /tmp is\n", progname,
			t->dir, t->pid, (unsigned)t->euid);
		return CTL_TROUBLE;
	}
	if (fd < 0) {
		fprintf(stderr, "%s: cannot open '%s' (of process %ld) as a directory, without "
			"following a symbolic link: %s\n", progname, t->dir, t->pid, strerror(errno));
		return CTL_TROUBLE;
	}
	if (made && fstat(fd, &st) == 0 && st.st_uid != t->euid &&
	    fchown(fd, t->euid, t->egid) < 0) {
		fprintf(stderr, "%s: cannot give '%s' to user %u: %s\n", progname, t->dir,
			(unsigned)t->euid, strerror(errno));
		close(fd);
		return CTL_TROUBLE;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != t->euid ||
	    (st.st_mode & 022)) {
		fprintf(stderr, "%s: '%s' is not a directory of user %u that only it may "
			"write in (user %u made it); not using it\n", progname, t->dir,
			(unsigned)t->euid, (unsigned)st.st_uid);
		close(fd);
		return CTL_TROUBLE;
	}
	t->dirfd = fd;
	return 0;
}

/* Is a request named name one for an earlier process with this pid? */
static int stale(const char *name, const struct target *t)
{
	char buf[128], want[64];
	int fd = openat(t->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "mtrec-ctl 1 %s\n", t->start);
	return strncmp(buf, want, strlen(want)) != 0;
}

/* Put the request in place as name, whole; its open descriptor, or -1
 * after saying why (*ret the exit status). */
static int send_request(const struct target *t, const char *req, const char *name, int *ret)
{
	char tmp[64];
	size_t len = strlen(req);
	int fd;

	snprintf(tmp, sizeof(tmp), ".%ld.ctl.%ld", t->pid, (long)getpid());
	unlinkat(t->dirfd, tmp, 0);
	if ((fd = openat(t->dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			 0600)) < 0 ||
	    write(fd, req, len) != (ssize_t)len ||
	    (geteuid() != t->euid && fchown(fd, t->euid, t->egid) < 0)) {
		fprintf(stderr, "%s: cannot write a request in '%s': %s\n", progname, t->dir,
			strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlinkat(t->dirfd, tmp, 0);
		}
		*ret = CTL_TROUBLE;
		return -1;
	}
	for (int tries = 0; linkat(t->dirfd, tmp, t->dirfd, name, 0) < 0; tries++) {
		if (errno == EEXIST && tries == 0 && stale(name, t)) {
			unlinkat(t->dirfd, name, 0);
			continue;
		}
		if (errno == EEXIST)
			fprintf(stderr, "%s: an earlier request to process %ld is still pending "
				"(it has made no allocation call since); try again later\n",
				progname, t->pid);
		else
			fprintf(stderr, "%s: cannot make the request '%s/%s': %s\n", progname,
				t->dir, name, strerror(errno));
		close(fd);
		unlinkat(t->dirfd, tmp, 0);
		*ret = CTL_TROUBLE;
		return -1;
	}
	unlinkat(t->dirfd, tmp, 0);
	return fd;
}

static int no_ptrace;	/* --no-ptrace: only the program's own calls take it */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the request to be taken and report the answer. */
static int wait_answer(const struct target *t, int fd, const char *name, double timeout)
{
	double start = now_s(), until = start + timeout;
	double kick_at = start + (timeout < 0.3 ? timeout / 2 : 0.15);
	int kicked = 0;
	char answer[256], probe[64];
	struct stat st;
	ssize_t n;

	snprintf(probe, sizeof(probe), "/proc/%ld", t->pid);
	while (fstatat(t->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (stat(probe, &st) < 0 || stale(name, t)) {
			unlinkat(t->dirfd, name, 0);
			fprintf(stderr, "%s: process %ld exited before taking the request\n",
				progname, t->pid);
			return CTL_REFUSED;
		}
		/* Not taken from the program's own calls in a moment (idle, or
		 * attached and then detached): one of its threads is made to take
		 * it now, as mtrec attach makes one call the recorder. */
		if (!kicked && !no_ptrace && now_s() >= kick_at) {
			kicked = 1;
			if (mtrec_attach_kick(t->pid) == 0)
				continue;
		}
		if (now_s() >= until) {
			fprintf(stderr, "%s: process %ld has not taken the request in %g s (it has "
				"made no allocation call since, and none of its threads could be made "
				"to take it: another tracer, or not allowed to trace it): the request "
				"stays pending and is carried out at its next allocation call\n",
				progname, t->pid, timeout);
			return CTL_PENDING;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	n = pread(fd, answer, sizeof(answer) - 1, ANSWER_AT);
	answer[n > 0 ? n : 0] = '\0';
	answer[strcspn(answer, "\n")] = '\0';
	if (strncmp(answer, "no ", 3) == 0) {
		fprintf(stderr, "%s: process %ld: %s\n", progname, t->pid, answer + 3);
		return CTL_REFUSED;
	}
	printf("%s\n", strncmp(answer, "ok ", 3) == 0 ? answer + 3 : "request taken");
	return CTL_DONE;
}

/* The label as the trace can hold it, one line of LABEL_MAX bytes at
 * most (cut between UTF-8 characters), into out; what was changed is
 * said on stderr, never done in silence. */
static void mark_label(const char *label, char *out)
{
	size_t len = strlen(label), newlines = 0;

	if (len > LABEL_MAX) {
		len = LABEL_MAX;
		while (len > 0 && ((unsigned char)label[len] & 0xc0) == 0x80)
			len--;
		fprintf(stderr, "%s: ctl: the label is cut to its first %zu bytes (a mark holds "
			"%d)\n", progname, len, LABEL_MAX);
	}
	for (size_t i = 0; i < len; i++) {
		out[i] = label[i];
		if (out[i] == '\n' || out[i] == '\r')
			out[i] = ' ';
		newlines += out[i] != label[i];
	}
	out[len] = '\0';
	if (newlines)
		fprintf(stderr, "%s: ctl: the label's line breaks are written as spaces (a mark "
			"is one line)\n", progname);
}

int mtrec_ctl_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "no-ptrace", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct target t = { .dirfd = -1 };
	char req[ANSWER_AT], name[64], label[LABEL_MAX + 1] = "", *end;
	const char *cmd;
	double timeout = -1;	/* not given: 2 s, 60 for a scan */
	int c, fd, ret = 0, want;

	opterr = 0;	/* said below, with a suggestion */
	while ((c = getopt_long(argc, argv, "+t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			no_ptrace = 1;
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(timeout >= 0 && timeout <= 86400)) {
				fprintf(stderr, "%s: invalid --timeout '%s': a number of seconds is "
					"expected\n", progname, optarg);
				return ctl_try_help();
			}
			break;
		case 'h':
			ctl_usage(stdout);
			return 0;
		default:
			mtrec_bad_option("ctl", "t", argv[optind - 1], opts);
			return ctl_try_help();
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "%s: ctl: %s\n", progname, argc == optind ? "no process given" :
			"no request given (on, off, status, reach or mark LABEL)");
		return ctl_try_help();
	}
	errno = 0;
	t.pid = strtol(argv[optind], &end, 10);
	if (errno || *end || end == argv[optind] || t.pid <= 0) {
		fprintf(stderr, "%s: ctl: invalid process id '%s'\n", progname, argv[optind]);
		return ctl_try_help();
	}
	cmd = argv[optind + 1];
	if (timeout < 0)
		timeout = strcmp(cmd, "reach") == 0 ? 60 : 2;
	want = strcmp(cmd, "mark") == 0 ? 3 : 2;
	if (strcmp(cmd, "on") != 0 && strcmp(cmd, "off") != 0 && strcmp(cmd, "status") != 0 &&
	    strcmp(cmd, "reach") != 0 && want == 2) {
		static const char *const requests[] = { "on", "off", "status", "reach", "mark", NULL };
		const char *near = mtrec_nearest(cmd, requests);

		if (near)
			fprintf(stderr, "%s: ctl: unknown request '%s': did you mean '%s'?\n", progname,
				cmd, near);
		else
			fprintf(stderr, "%s: ctl: unknown request '%s' (on, off, status, reach or mark "
				"LABEL)\n", progname, cmd);
		return ctl_try_help();
	}
	if (argc - optind != want) {
		if (want == 3)
			fprintf(stderr, "%s: ctl: mark takes one LABEL\n", progname);
		else
			fprintf(stderr, "%s: ctl: '%s' takes no argument\n", progname, cmd);
		return ctl_try_help();
	}
	if ((ret = look_at(&t)) != 0 || (ret = make_dir(&t)) != 0)
		return ret;
	if (want == 3)
		mark_label(argv[optind + 2], label);
	snprintf(req, sizeof(req), "mtrec-ctl 1 %s\n%s%s%s\n", t.start, cmd, want == 3 ? " " : "",
		 label);
	snprintf(name, sizeof(name), "%ld.ctl", t.pid);
	if ((fd = send_request(&t, req, name, &ret)) < 0) {
		close(t.dirfd);
		return ret;
	}
	ret = wait_answer(&t, fd, name, timeout);
	close(fd);
	close(t.dirfd);
	return ret;
}
