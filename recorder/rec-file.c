/* rec-file.c -- the trace file: its name, its mapping, its growth.
 *
 * Names.  MALLOC_TRACE names the file; "%p" in it becomes the process id.
 * The session's first process (the one that found no MTREC_SESSION in its
 * environment) opens that name, truncating it as glibc does.  Every other
 * process -- a forked child, or a program started by exec from a traced
 * one -- never touches a file it did not create: it appends ".PID" to the
 * name (unless the name already holds %p) and creates it exclusively,
 * trying ".1", ".2", ... after that when the name is taken.
 *
 * The whole file is mapped shared, once, over a large reserved range.  It
 * grows in steps with fallocate(), so that a full disk is an error here,
 * and not a SIGBUS in the program when a page is first written. */
#include "rec.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define GROW_STEP (4u << 20)
#define MAGIC "# mtrec 1\n"

struct mtrec_file mtrec_file = { .fd = -1 };

pthread_mutex_t mtrec_grow_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_t file_dev;
static ino_t file_ino;

/* pattern with %p replaced by pid, then suffix; 0 or -1 when too long. */
static int make_name(char *out, size_t cap, const char *pattern, pid_t pid,
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

static int open_name(int first)
{
	const char *pattern = prim_getenv("MALLOC_TRACE");
	int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	pid_t pid = getpid();
	int fd = -1;

	if (!pattern || !*pattern)
		return -1;
	if (first) {
		if (make_name(mtrec_file.path, sizeof(mtrec_file.path), pattern, pid, 0, 0) < 0)
			goto too_long;
		fd = open(mtrec_file.path, flags | O_TRUNC, 0600);
	} else {
		for (unsigned serial = 0; serial < 10000; serial++) {
			if (make_name(mtrec_file.path, sizeof(mtrec_file.path), pattern,
				      pid, 1, serial) < 0)
				goto too_long;
			fd = open(mtrec_file.path, flags | O_EXCL, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0)
		prim_say("cannot open trace file '", mtrec_file.path, "': ",
			 prim_strerror(errno), "; not recording", NULL);
	return fd;
too_long:
	prim_say("MALLOC_TRACE is too long; not recording", NULL);
	return -1;
}

/* Reserve address space for the whole trace; a limit on the address space
 * (RLIMIT_AS) makes us take a small share of it. */
static int map_file(int fd)
{
	static const size_t sizes[] = { (size_t)1 << 40, (size_t)1 << 36, (size_t)1 << 32,
					(size_t)1 << 30, (size_t)1 << 28 };
	struct rlimit rl;
	size_t cap = (size_t)-1;

	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		cap = rl.rlim_cur / 8;
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p;

		if (sizes[i] > cap && i + 1 < sizeof(sizes) / sizeof(sizes[0]))
			continue;
		p = mmap(NULL, sizes[i], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
		if (p != MAP_FAILED) {
			/* Large page-cache folios: one fault maps up to 2 MiB
			 * instead of 4 KiB (measured on ext4: 143 faults for
			 * 290 MB instead of 74,749, and a fifth of the time). */
			madvise(p, sizes[i], MADV_HUGEPAGE);
			mtrec_file.base = p;
			mtrec_file.maplen = sizes[i];
			return 0;
		}
	}
	return -1;
}

int mtrec_file_open(int first)
{
	struct stat st;
	int fd = open_name(first);

	if (fd < 0)
		return -1;
	/* Keep away from the low numbers a program may close or dup2 over. */
	if (fd < 100) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
		if (high >= 0) {
			close(fd);
			fd = high;
		}
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		prim_say("trace file '", mtrec_file.path, "' is not a regular file; not recording", NULL);
		close(fd);
		return -1;
	}
	if (map_file(fd) < 0) {
		prim_say("cannot map trace file '", mtrec_file.path, "': ",
			 prim_strerror(errno), "; not recording", NULL);
		close(fd);
		return -1;
	}
	file_dev = st.st_dev;
	file_ino = st.st_ino;
	mtrec_file.fd = fd;
	mtrec_file.tail = 0;
	mtrec_file.size = 0;
	/* The first line says what the file is, before any thread's chunk. */
	if (mtrec_file_grow(sizeof(MAGIC) - 1) < 0)
		return -1;
	memcpy(mtrec_file.base, MAGIC, sizeof(MAGIC) - 1);
	mtrec_file.tail = sizeof(MAGIC) - 1;
	return 0;
}

/* Is our descriptor still our file?  A program may close it or dup2 over
 * it; then extending "it" would write into someone else's file. */
static int still_ours(void)
{
	struct stat st;

	return fstat(mtrec_file.fd, &st) == 0 && st.st_dev == file_dev && st.st_ino == file_ino;
}

static int extend(size_t from, size_t to)
{
	static const char zeros[4096];

	if (fallocate(mtrec_file.fd, 0, (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	/* No fallocate on this file system: write the blocks for real. */
	for (size_t off = from; off < to; off += sizeof(zeros))
		if (pwrite(mtrec_file.fd, zeros, sizeof(zeros), (off_t)off) != sizeof(zeros))
			return -1;
	return 0;
}

int mtrec_file_grow(size_t end)
{
	struct rlimit rl;
	size_t size, want;
	int ret = -1;

	pthread_mutex_lock(&mtrec_grow_lock);
	size = __atomic_load_n(&mtrec_file.size, __ATOMIC_RELAXED);
	if (end <= size) {
		ret = 0;
		goto out;
	}
	if (end > mtrec_file.maplen) {
		mtrec_give_up("the trace reached its maximum size", 0);
		goto out;
	}
	want = (end + GROW_STEP - 1) / GROW_STEP * GROW_STEP;
	if (want > mtrec_file.maplen)
		want = mtrec_file.maplen;
	/* Writing past RLIMIT_FSIZE would raise SIGXFSZ in the program. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		if (end > rl.rlim_cur) {
			mtrec_give_up("file size limit reached", EFBIG);
			goto out;
		}
		if (want > rl.rlim_cur)
			want = rl.rlim_cur;
	}
	if (!still_ours()) {
		mtrec_give_up("the program closed or replaced its file descriptor", 0);
		goto out;
	}
	if (extend(size, want) < 0) {
		mtrec_give_up("cannot extend the file", errno);
		goto out;
	}
	__atomic_store_n(&mtrec_file.size, want, __ATOMIC_RELEASE);
	ret = 0;
out:
	pthread_mutex_unlock(&mtrec_grow_lock);
	return ret;
}

int mtrec_file_close(char *pos, char *end)
{
	int cut = 0;
	size_t used;

	if (mtrec_file.fd < 0)
		return 0;
	pthread_mutex_lock(&mtrec_grow_lock);
	/* No reservation can succeed any more; what was handed out stays
	 * inside the file, so no late writer can fault past its end.  The
	 * mapping is kept for such writers. */
	used = __atomic_exchange_n(&mtrec_file.tail, mtrec_file.maplen, __ATOMIC_ACQ_REL);
	if (used > mtrec_file.size)
		used = mtrec_file.size;
	if (pos && end == mtrec_file.base + used) {
		used = (size_t)(pos - mtrec_file.base);
		cut = 1;
	}
	if (still_ours())
		if (ftruncate(mtrec_file.fd, (off_t)used) < 0)
			prim_say("cannot trim trace file '", mtrec_file.path, "': ",
				 prim_strerror(errno), NULL);
	__atomic_store_n(&mtrec_file.size, used, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mtrec_grow_lock);
	return cut;
}

void mtrec_file_forget(void)
{
	if (mtrec_file.base)
		munmap(mtrec_file.base, mtrec_file.maplen);
	if (mtrec_file.fd >= 0)
		close(mtrec_file.fd);
	mtrec_file.base = NULL;
	mtrec_file.maplen = 0;
	mtrec_file.fd = -1;
	mtrec_file.tail = mtrec_file.size = 0;
}
