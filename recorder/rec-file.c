/* rec-file.c -- the trace file: its name, its mapping, its growth.
 *
 * Names.  MALLOC_TRACE names the file; "%p" in it becomes the process id.
 * A relative name is taken from the directory the session's first process
 * started in, for every process of the session (a daemon that chdir()s to
 * "/" and forks still writes beside the first trace).
 * The session's first process (the one that found no MTREC_SESSION in its
 * environment) opens that name, truncating it as glibc does.  Every other
 * process -- a forked child, or a program started by exec from a traced
 * one -- never touches a file it did not create: it appends ".PID" to the
 * name (unless the name already holds %p) and creates it exclusively,
 * trying ".1", ".2", ... after that when the name is taken.
 *
 * The trace is mapped shared over one large reserved range of addresses.
 * It grows in steps with fallocate(), so that a full disk is an error here,
 * and not a SIGBUS in the program when a page is first written.
 *
 * Rotation (MTREC_ROTATE=SIZE) cuts the trace into parts of SIZE bytes:
 * part 1 is the file named above, part N the same name with ".partN".
 * Offsets in the trace are global: part k holds offsets [(k-1)*SIZE,
 * k*SIZE) and is mapped at base + (k-1)*SIZE, so addresses grow across
 * parts as they do within one, and the writers need not know about parts
 * at all, but for the one chunk that covers a part's start (rec-core.c). */
#include "rec.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define GROW_STEP (4u << 20)	/* the largest step the file grows by */
#define MIN_STEP (64u << 10)	/* the first */
#define ALIGN_2M ((size_t)2 << 20)
/* The first line says what the file is; a pad line takes the file to 64
 * bytes, so that every chunk after it is aligned (see rec-core.c). */
#define MAGIC "# mtrec 1\n#                                                    \n"

struct mtrec_file mtrec_file = { .fd = -1 };

pthread_mutex_t mtrec_grow_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_t file_dev;
static ino_t file_ino;
static char first_path[sizeof(mtrec_file.path)];	/* part 1's name */
static char name_pattern[sizeof(mtrec_file.path)];	/* MALLOC_TRACE, absolute */

void mtrec_file_pattern_init(const char *inherited)
{
	const char *trace = prim_getenv("MALLOC_TRACE");
	char *o = name_pattern, *lim = name_pattern + sizeof(name_pattern) - 1;

	if (inherited && inherited[0] == '/') {
		o = prim_puts(o, lim, inherited);
	} else if (trace && trace[0] != '/' && getcwd(name_pattern, sizeof(name_pattern) - 2)) {
		o = prim_puts(name_pattern + strlen(name_pattern), lim, "/");
		o = prim_puts(o, lim, trace);
	} else if (trace) {
		o = prim_puts(o, lim, trace);
	}
	*o = '\0';
}

const char *mtrec_file_pattern(void)
{
	return name_pattern;
}

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
	int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
	pid_t pid = getpid();
	int fd = -1;

	if (!*name_pattern)
		return -1;
	if (first) {
		if (make_name(mtrec_file.path, sizeof(mtrec_file.path), name_pattern, pid, 0, 0) < 0)
			goto too_long;
		fd = open(mtrec_file.path, flags | O_TRUNC, 0600);
	} else {
		for (unsigned serial = 0; serial < 10000; serial++) {
			if (make_name(mtrec_file.path, sizeof(mtrec_file.path), name_pattern,
				      pid, 1, serial) < 0)
				goto too_long;
			fd = open(mtrec_file.path, flags | O_EXCL, 0600);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
	}
	if (fd < 0)
		prim_say("cannot open trace file '", mtrec_file.path, "': ",
			 prim_strerror(errno), "; not recording", SAY_END);
	return fd;
too_long:
	prim_say("MALLOC_TRACE is too long; not recording", SAY_END);
	return -1;
}

/* Reserve address space for the whole trace; a limit on the address space
 * (RLIMIT_AS) makes us take a small share of it. */
/* "256M", "1G", "4096K", "1000000": bytes, rounded to GROW_STEP; 0 = off. */
static size_t rotate_size(void)
{
	const char *v = prim_getenv("MTREC_ROTATE");
	unsigned long long n = 0;
	const char *p;

	if (!v || !*v)
		return 0;
	for (p = v; *p >= '0' && *p <= '9'; p++)
		n = n * 10 + (unsigned long long)(*p - '0');
	switch (*p) {
	case 'k': case 'K': n <<= 10; p++; break;
	case 'm': case 'M': n <<= 20; p++; break;
	case 'g': case 'G': n <<= 30; p++; break;
	}
	if (p == v || *p || n == 0) {
		prim_say("MTREC_ROTATE: not a size: '", v, "'; not rotating", SAY_END);
		return 0;
	}
	n = (n + GROW_STEP - 1) / GROW_STEP * GROW_STEP;
	return (size_t)n;
}

/* Map one part's file at its place in the reserved range. */
static int map_part(int fd, char *at)
{
	void *p = mmap(at, mtrec_file.part_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);

	if (p == MAP_FAILED)
		return -1;
	madvise(p, mtrec_file.part_size, MADV_HUGEPAGE);
	return 0;
}

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
		/* 2 MiB-aligned, as the kernel aligns a large file mapping:
		 * large page-cache folios are only mapped whole at such
		 * addresses (unaligned, every 4 KiB page faulted again). */
		p = mmap(NULL, sizes[i] + ALIGN_2M, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		p = (void *)(((uintptr_t)p + ALIGN_2M - 1) & ~(uintptr_t)(ALIGN_2M - 1));
		mtrec_file.base = p;
		mtrec_file.maplen = sizes[i];
		mtrec_file.part_size = rotate_size();
		if (!mtrec_file.part_size || mtrec_file.part_size > sizes[i])
			mtrec_file.part_size = sizes[i];
		/* Large page-cache folios: one fault maps up to 2 MiB instead
		 * of 4 KiB (measured on ext4: 143 faults for 290 MB instead of
		 * 74,749, and a fifth of the time). */
		if (map_part(fd, p) == 0)
			return 0;
		munmap(p, sizes[i]);
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
		prim_say("trace file '", mtrec_file.path, "' is not a regular file; not recording", SAY_END);
		close(fd);
		return -1;
	}
	if (map_file(fd) < 0) {
		prim_say("cannot map trace file '", mtrec_file.path, "': ",
			 prim_strerror(errno), "; not recording", SAY_END);
		close(fd);
		return -1;
	}
	file_dev = st.st_dev;
	file_ino = st.st_ino;
	mtrec_file.fd = fd;
	mtrec_file.tail = 0;
	mtrec_file.size = 0;
	mtrec_file.part_start = 0;
	mtrec_file.part_no = 1;
	memcpy(first_path, mtrec_file.path, sizeof(first_path));
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

/* Part N+1: its file, mapped right after part N.  Called with the grow
 * lock held, when part N is full. */
static int next_part(void)
{
	size_t start = mtrec_file.part_start + mtrec_file.part_size;
	char name[sizeof(mtrec_file.path)], *o, *lim = name + sizeof(name) - 1;
	struct stat st;
	int fd;

	if (start + mtrec_file.part_size > mtrec_file.maplen) {
		mtrec_give_up("the trace reached its maximum size", 0);
		return -1;
	}
	o = prim_puts(name, lim, first_path);
	o = prim_puts(o, lim, ".part");
	o = prim_putu(o, lim, mtrec_file.part_no + 1);
	*o = '\0';
	fd = open(name, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0 && fd < 100) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
		if (high >= 0) {
			close(fd);
			fd = high;
		}
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    map_part(fd, mtrec_file.base + start) < 0) {
		memcpy(mtrec_file.path, name, sizeof(name));
		mtrec_give_up("cannot start the next part", errno);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(mtrec_file.fd);
	mtrec_file.fd = fd;
	file_dev = st.st_dev;
	file_ino = st.st_ino;
	memcpy(mtrec_file.path, name, sizeof(name));
	__atomic_store_n(&mtrec_file.part_start, start, __ATOMIC_RELEASE);
	mtrec_file.part_no++;
	return 0;
}

int mtrec_file_grow(size_t end)
{
	struct rlimit rl;
	size_t size, want, part_end, step, align;
	int ret = -1;

	pthread_mutex_lock(&mtrec_grow_lock);
	while (end > (size = __atomic_load_n(&mtrec_file.size, __ATOMIC_RELAXED))) {
		part_end = mtrec_file.part_start + mtrec_file.part_size;
		if (size == part_end) {
			if (next_part() < 0)
				goto out;
			continue;
		}
		/* Steps double from 64 KiB to GROW_STEP: a short-lived process
		 * keeps a small file even when it never gets to trim it.  From
		 * 2 MiB on, the size stays a multiple of 2 MiB: large folios
		 * are not made across it, and without them every 4 KiB page
		 * faults (measured: 66,000 faults instead of 400). */
		step = size - mtrec_file.part_start;
		step = step < MIN_STEP ? MIN_STEP : step > GROW_STEP ? GROW_STEP : step;
		align = step < ALIGN_2M ? MIN_STEP : ALIGN_2M;
		want = (end + step + align - 1) & ~(align - 1);
		if (want > part_end)
			want = part_end;
		/* Writing past RLIMIT_FSIZE would raise SIGXFSZ in the program. */
		if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
			if (size - mtrec_file.part_start >= rl.rlim_cur) {
				mtrec_give_up("file size limit reached", EFBIG);
				goto out;
			}
			if (want - mtrec_file.part_start > rl.rlim_cur)
				want = mtrec_file.part_start + rl.rlim_cur;
		}
		if (!still_ours()) {
			mtrec_give_up("the program closed or replaced its file descriptor", 0);
			goto out;
		}
		if (extend(size - mtrec_file.part_start, want - mtrec_file.part_start) < 0) {
			mtrec_give_up("cannot extend the file", errno);
			goto out;
		}
		__atomic_store_n(&mtrec_file.size, want, __ATOMIC_RELEASE);
	}
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
	if (still_ours() && used >= mtrec_file.part_start)
		if (ftruncate(mtrec_file.fd, (off_t)(used - mtrec_file.part_start)) < 0)
			prim_say("cannot trim trace file '", mtrec_file.path, "': ",
				 prim_strerror(errno), SAY_END);
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
