/* control.c -- finding and answering mtrec ctl's requests (control.h).
 *
 * Why a file looked at from the program's own calls, and not a thread or a
 * socket: a thread of ours in someone else's process changes what it sees
 * (unshare(CLONE_NEWUSER) and some daemons' "am I single-threaded" checks
 * fail, a thread count at exit is off), must be made again after every
 * fork and daemonizing, and a descriptor it waits on is closed or, worse,
 * reused by a program that closes all descriptors (closefrom(3)).  A signal
 * does not reach a daemon that blocks it in every thread and takes it with
 * sigwait() (glusterd, SIGUSR2).  A look at a path costs one lstat() every
 * 100 ms of a thread's allocations, keeps no state between looks, and
 * works after fork (the path holds the pid), daemonizing and closefrom.
 * A process that makes no allocation call is made to look by mtrec ctl
 * itself: one of its threads, at a safe point, is made to call
 * mtrec_ctl_now() through ptrace (recorder/mtrec-attach.c), which takes
 * the request at once; without that right, the request waits for the
 * next allocation call (mtrec ctl says it is pending).
 *
 * Trust: a request is taken only from a regular file with one link, owned
 * by this process's effective user or by root, in a directory (not a
 * symbolic link) of that user or root that nobody else may write in, and
 * naming this process's start time (a request left for an earlier process
 * with the same pid is removed unanswered). */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

uint64_t mtrec_ctl_due = UINT64_MAX;

static char runtime_dir[256];	/* $XDG_RUNTIME_DIR at start, or "" */

void mtrec_control_init(void)
{
	const char *off = prim_getenv("MTREC_CONTROL");
	const char *xdg = prim_getenv("XDG_RUNTIME_DIR");

	if (off && strcmp(off, "0") == 0)
		return;
	if (xdg && xdg[0] == '/' && strlen(xdg) < sizeof(runtime_dir))
		memcpy(runtime_dir, xdg, strlen(xdg) + 1);
	__atomic_store_n(&mtrec_ctl_due, 0, __ATOMIC_RELAXED);
}

/* DIR/PID.ctl, computed at each look: the pid changes with fork, the
 * effective user with a daemon's dropping of privileges. */
static void request_path(char *out, size_t cap)
{
	char *o = out, *lim = out + cap - 1;

	if (runtime_dir[0]) {
		o = prim_puts(o, lim, runtime_dir);
		o = prim_puts(o, lim, "/mtrec/");
	} else {
		o = prim_puts(o, lim, "/tmp/mtrec-");
		o = prim_putu(o, lim, (unsigned long)geteuid());
		o = prim_puts(o, lim, "/");
	}
	o = prim_putu(o, lim, (unsigned long)getpid());
	o = prim_puts(o, lim, ".ctl");
	*o = '\0';
}

/* The request's text and /proc/self/stat, read by the one thread that
 * takes a request (life.c's try-lock): kept off its stack, which is
 * the stack of whatever malloc call looked (a small thread stack, a
 * sigaltstack). */
static char req_text[MTREC_CONTROL_ANSWER_AT];
static char stat_text[1024];

/* Field 22 of /proc/self/stat (the start time, in clock ticks after boot),
 * as text; "" when it cannot be read. */
static void start_time(char *out, size_t cap)
{
	char *buf = stat_text, *p;
	int fd = prim_open("/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	ssize_t n = fd < 0 ? -1 : prim_read(fd, buf, sizeof(stat_text) - 1);
	size_t len = 0;

	out[0] = '\0';
	if (fd >= 0)
		prim_close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* "PID (COMM) STATE PPID ...": COMM may hold blanks and ')' */
	if ((p = strrchr(buf, ')')) == NULL)
		return;
	for (int field = 2; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	while (p[len] >= '0' && p[len] <= '9' && len + 1 < cap)
		len++;
	memcpy(out, p, len);
	out[len] = '\0';
}

/* "mtrec-ctl 1 START\nCMD[ ARG]\n" into *r; 0, or -1 when it is not one
 * for this process. */
static int parse(char *text, struct mtrec_ctl_req *r)
{
	static const char magic[] = "mtrec-ctl 1 ";
	char mine[32], *nl, *cmd, *arg;

	if (strncmp(text, magic, sizeof(magic) - 1) != 0 || (nl = strchr(text, '\n')) == NULL)
		return -1;
	*nl = '\0';
	start_time(mine, sizeof(mine));
	if (!mine[0] || strcmp(text + sizeof(magic) - 1, mine) != 0)
		return -1;
	cmd = nl + 1;
	if ((nl = strchr(cmd, '\n')) != NULL)
		*nl = '\0';
	arg = strchr(cmd, ' ');
	if (arg)
		*arg++ = '\0';
	if (strcmp(cmd, "on") == 0)
		r->cmd = MTREC_CTL_ON;
	else if (strcmp(cmd, "off") == 0)
		r->cmd = MTREC_CTL_OFF;
	else if (strcmp(cmd, "status") == 0)
		r->cmd = MTREC_CTL_STATUS;
	else if (strcmp(cmd, "reach") == 0)
		r->cmd = MTREC_CTL_REACH;
	else if (strcmp(cmd, "mark") == 0 && arg)
		r->cmd = MTREC_CTL_MARK;
	else
		return -1;
	r->label[0] = '\0';
	if (r->cmd == MTREC_CTL_MARK) {
		size_t len = strnlen(arg, sizeof(r->label) - 1);

		memcpy(r->label, arg, len);
		r->label[len] = '\0';
	}
	return 0;
}

/* The directory of the request, open, when it may be trusted: a real
 * directory (not a symbolic link), ours or root's, that nobody else may
 * write in.  Else another user who made /tmp/mtrec-EUID first, or a link
 * there, would choose what we read and remove.  -1 when not. */
static int open_dir(struct mtrec_ctl_req *r, uid_t me)
{
	char *slash = strrchr(r->path, '/');
	struct stat st;
	int fd;

	*slash = '\0';
	fd = prim_open(r->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
	*slash = '/';
	r->name = slash + 1;
	if (fd >= 0 && (fstat(fd, &st) < 0 || (st.st_uid != me && st.st_uid != 0) ||
			(st.st_mode & 022))) {
		prim_close(fd);
		return -1;
	}
	return fd;
}

static int open_at(int dirfd, const char *name, int flags)
{
	long r;

	do
		r = syscall(SYS_openat, dirfd, name, flags, 0);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

static void drop(struct mtrec_ctl_req *r)
{
	unlinkat(r->dirfd, r->name, 0);
	prim_close(r->fd);
	prim_close(r->dirfd);
}

int mtrec_control_take(struct mtrec_ctl_req *r)
{
	struct stat st, fst;
	uid_t me = geteuid();
	ssize_t n;

	request_path(r->path, sizeof(r->path));
	if (lstat(r->path, &st) < 0)
		return 0;	/* nothing asked: the common case */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 || (st.st_uid != me && st.st_uid != 0))
		return 0;	/* not a request we may trust: left alone */
	if ((r->dirfd = open_dir(r, me)) < 0)
		return 0;	/* nor one in a directory we may trust */
	r->fd = open_at(r->dirfd, r->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0)
		r->fd = open_at(r->dirfd, r->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (r->fd < 0 || fstat(r->fd, &fst) < 0 || fst.st_dev != st.st_dev ||
	    fst.st_ino != st.st_ino) {
		if (r->fd >= 0)
			prim_close(r->fd);
		prim_close(r->dirfd);
		return 0;	/* replaced between the two looks: next time */
	}
	/* Claimed by one thread: another that looks while the request is
	 * acted on (a scan takes seconds) finds it locked, or, once the lock
	 * is let go, answered and removed. */
	if (flock(r->fd, LOCK_EX | LOCK_NB) < 0 || fstat(r->fd, &fst) < 0 || fst.st_nlink == 0) {
		prim_close(r->fd);
		prim_close(r->dirfd);
		return 0;
	}
	n = prim_read(r->fd, req_text, sizeof(req_text) - 1);
	req_text[n > 0 ? n : 0] = '\0';
	if (n > 0 && parse(req_text, r) == 0)
		return 1;
	/* A request being written (mtrec ctl links it whole: never), malformed,
	 * or an earlier process's: removed, so that it is not read again. */
	drop(r);
	return 0;
}

void mtrec_control_answer(struct mtrec_ctl_req *r, int done, const char *text)
{
	char buf[256], *o = buf, *lim = buf + sizeof(buf) - 1;

	o = prim_puts(o, lim, done ? "ok " : "no ");
	o = prim_puts(o, lim, text);
	*o++ = '\n';
	/* A request we could only read is acknowledged without an answer. */
	if (prim_pwrite(r->fd, buf, (size_t)(o - buf), MTREC_CONTROL_ANSWER_AT) < 0)
		errno = 0;
	drop(r);
}
