/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-open.c -- the trace file's name made from MALLOC_TRACE, and its
 * opening: never a device, a FIFO or a socket, never a file another user
 * planted in a sticky directory (owner.h), the session's file locked
 * against a second recording (file.c tells the rules). */
#include "file-open.h"
#include "file.h"		/* the size of a name */
#include "owner.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* pattern with %p replaced by pid, then suffix; 0 or -1 when too long. */
int make_name(char *out, size_t cap, const char *pattern, pid_t pid,
		     int add_pid, unsigned serial)
{
	char *o = out, *lim = out + cap - 1;
	int had_pid = 0;

	for (const char *s = pattern; *s && o < lim; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			o = prim_putu(o, lim, (unsigned long)pid);
			had_pid = 1;
			s++;
		} else {
			*o++ = *s;
		}
	}
	if (add_pid && !had_pid) {
		o = prim_puts(o, lim, ".");
		o = prim_putu(o, lim, (unsigned long)pid);
	}
	if (serial) {
		o = prim_puts(o, lim, ".");
		o = prim_putu(o, lim, serial);
	}
	if (o >= lim)
		return -1;
	*o = '\0';
	return 0;
}

/* Keep away from the low numbers a program may close or dup2 over. */
int move_high(int fd)
{
	int high;

	if (fd < 0 || fd >= 100 || (high = fcntl(fd, F_DUPFD_CLOEXEC, 100)) < 0)
		return fd;
	prim_close(fd);
	return high;
}

/* The directory that holds path, opened (O_PATH: nothing is read from
 * it) so that the file is then opened in the very directory whose owner
 * and mode were looked at, whatever is renamed meanwhile; *base is the
 * name in it.  -1 with errno. */
static int open_parent(const char *path, const char **base, struct stat *dir)
{
	/* Off the stack: a part is opened from inside the malloc call that
	 * filled the last one, on whatever stack that has.  One caller at a
	 * time: part 1 under the life lock, before any chunk exists, the
	 * next ones under the grow lock. */
	static char d[sizeof(mtrec_file.path)];
	const char *slash = strrchr(path, '/');
	size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
	int fd, err;

	*base = slash ? slash + 1 : path;
	if (len >= sizeof(d)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(d, slash ? path : ".", len);
	d[len] = '\0';
	fd = prim_open(d, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd >= 0 && fstat(fd, dir) < 0) {
		err = errno;
		prim_close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static int open_at(int dirfd, const char *name, int flags, mode_t mode)
{
	long r;

	do
		r = syscall(SYS_openat, dirfd, name, flags, mode);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

/* Open path to write it, creating it (mode 0600) when missing, never
 * through a symbolic link.  What is not a regular file is refused without
 * being opened (opening a device can have effects): -3.  A file another
 * user left in a directory others may write in is refused (owner.h),
 * after the open, on the descriptor, so that no swap of names between a
 * look and the open can fool it: -4, its owner in *owner; so is a file
 * with other names there (a hard link: owner.h): -5.  Nothing is
 * truncated here.  -1 with errno. */
int open_checked(const char *path, uid_t *owner)
{
	struct stat dir, st;
	const char *base;
	int dfd = open_parent(path, &base, &dir), fd, err, was;

	if (dfd < 0)
		return -1;
	was = fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (was && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		prim_close(dfd);
		errno = EINVAL;
		return -3;
	}
	fd = open_at(dfd, base, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	err = errno;
	prim_close(dfd);
	/* The kernel refused it by the same rule (fs.protected_regular set):
	 * said as we say it. */
	if (fd < 0 && err == EACCES && was && S_ISREG(st.st_mode) &&
	    mtrec_planted(&dir, &st, geteuid())) {
		*owner = st.st_uid;
		return -4;
	}
	if (fd < 0 || fstat(fd, &st) < 0) {
		err = fd < 0 ? err : errno;
		if (fd >= 0)
			prim_close(fd);
		errno = err;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		prim_close(fd);
		errno = EINVAL;
		return -3;
	}
	if (mtrec_planted(&dir, &st, geteuid())) {
		*owner = st.st_uid;
		prim_close(fd);
		return -4;
	}
	if (mtrec_linked(&dir, &st)) {
		prim_close(fd);
		return -5;
	}
	return fd;
}

/* The session's own name: checked (open_checked), then locked before it
 * is truncated, so that a recording in progress is never cut.  -1 with
 * errno set, -2 when another recording holds the file, -3, -4 or -5 as
 * open_checked. */
int open_first(const char *path, uid_t *owner)
{
	int fd = open_checked(path, owner);

	if (fd < 0)
		return fd;
	if (prim_flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK) {
		prim_close(fd);
		return -2;
	}
	if (ftruncate(fd, 0) < 0) {
		int err = errno;
		prim_close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* "refusing trace file 'PATH': ..." for a file open_checked found planted
 * (-4: its owner; -5: its other names, owner unused). */
void say_planted(const char *path, int why, uid_t owner, const char *then)
{
	char uid[24];

	if (why == -5) {
		prim_say("refusing trace file '", path, "': it " MTREC_LINKED_WHY " (" MTREC_LINKED_HARM "); ",
			 then, SAY_END);
		return;
	}
	*prim_putu(uid, uid + sizeof(uid) - 1, (unsigned long)owner) = '\0';
	prim_say("refusing trace file '", path, "': it belongs to user ", uid, ", not to this "
		 "process's user, in a sticky directory others may write in (whoever made it "
		 "could read the trace); ", then, SAY_END);
}
