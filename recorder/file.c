/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file.c -- the trace file: its name, its mapping, its growth (the
 * opening of a name: file-open.c).
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
 * Only one recording writes a file: the session's first process takes an
 * exclusive flock() on it before it truncates it, and a process that finds
 * the name locked by another recording writes NAME.PID beside it instead.
 * A name that exists and is not a regular file (a device, a FIFO, a
 * socket) is refused without being opened; a file another user left in a
 * sticky directory that others may write in (owner.h) is refused after
 * the open, on the descriptor, before anything is written or truncated.
 *
 * Whatever happens to the file, the program runs on:
 *   - its descriptor closed or replaced by the program (closefrom(3) in a
 *     daemon): the mapping still writes the file; the next growth reopens
 *     it by name, checks it is the same file, and never touches the number
 *     the program now owns;
 *   - truncated by another process: writes through the mapping past the
 *     new end would raise SIGBUS; a handler that recognises our own range
 *     replaces the mapping with anonymous memory, and recording stops
 *     (other SIGBUS go on to the program's own handler);
 *   - a full disk, a size limit: growth fails before any page is touched.
 * The file always keeps MARGIN bytes past every chunk handed out, so that
 * when recording stops the recorder can still say so in the trace
 * ("# stopped", "# lost", "= End": mtrec_file_note).
 *
 * Rotation (MTREC_ROTATE=SIZE) cuts the trace into parts of SIZE bytes:
 * part 1 is the file named above, part N the same name with ".partN".
 * Offsets in the trace are global and only grow: part k holds offsets
 * [(k-1)*SIZE, k*SIZE).  The reserved range holds P = maplen / SIZE places
 * of SIZE bytes (mtrec_file.ring = P * SIZE), and part k is mapped at place
 * (k-1) mod P: the byte at offset off is at base + off % ring.  The first
 * P parts lie one after the other, as in one file; part k > P takes the
 * place of part k - P, which must have been retired first (unmapped once
 * no thread writes there, chunk.c "Parts that complete"): otherwise
 * the trace stops, as it did when the range was used up.  So a daemon
 * traced for days in parts never runs out of address space, however much
 * it writes in all.  A chunk's lines never span two parts, so they are
 * contiguous in memory; only the one chunk that covers a part's start
 * (chunk.c) converts offsets on both sides of it.  Which part a byte
 * belongs to is read from the places' table (mtrec_file.part_at), and
 * anything that compares positions compares offsets or parts, never
 * addresses (an address says nothing about order any more).
 *
 * Failures that end the recording are returned (struct mtrec_file_err) to
 * the chunk writer, which stops recording and says why; this file only
 * remembers that it is broken, so that no other thread tries again. */
#include "file.h"
#include "file-bus.h"
#include "file-open.h"
#include "lock.h"
#include "owner.h"
#include "words.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define GROW_STEP (4u << 20)	/* the largest step the file grows by */
#define MIN_STEP (64u << 10)	/* the first */
#define ALIGN_2M ((size_t)2 << 20)
#define MARGIN 1024		/* kept past every chunk for the last words */
#define LOOKAHEAD (256u << 10)	/* grown ahead of need (mtrec_file_ensure) */
#define KEEP_RESIDENT (1u << 20)	/* written pages left mapped behind the tail */
#define SHED_STEP (2u << 20)	/* and dropped in steps of this */
#define CACHE_RETRY ((size_t)32 << 20)	/* written pages offered again to leave the cache */
#define MIN_RESERVE ((size_t)8 << 20)	/* less address space: not recording */
/* The first line says what the file is ("# mtrec 1"); a pad line takes
 * the file to MAGIC_LEN bytes, so that every chunk after it is aligned
 * (see chunk.c). */
#define MAGIC_LEN 64

struct mtrec_file mtrec_file = { .fd = -1 };

static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER;
static dev_t file_dev;
static ino_t file_ino;
static char first_path[sizeof(mtrec_file.path)];	/* part 1's name */
static char name_pattern[sizeof(mtrec_file.path)];	/* MALLOC_TRACE, absolute */
static size_t shed_upto;	/* written pages before this are not resident */
static int stopped;		/* mtrec_file_stop() was called */
static int closed;		/* mtrec_file_close() trimmed the file */
static int broken;		/* a growth failed for good (reported once) */
static int as_limited;		/* the reservation was sized by RLIMIT_AS */
static int released;		/* mtrec_file_release gave it back */
static size_t notes_next, notes_lim;	/* the margin, once stopped */
static unsigned retired;	/* parts 1 .. retired are unmapped */
static unsigned part_at_few[64];	/* mtrec_file.part_at for few places */
/* Back-pressure for a compacted trace (compact_backlog) */
static pid_t compact_pid;	/* MTREC_COMPACT_PID: the process whose trace is compacted */
static unsigned compact_wait_ms;	/* MTREC_COMPACT_WAIT: the longest wait; 0: none */
static unsigned compact_gone;	/* parts 1 .. compact_gone were seen deleted */
static int compact_looking;	/* a thread looks for a part (owns compact_name) */
static char compact_name[sizeof(mtrec_file.path)];
/* This thread waits (a signal handler that allocates meanwhile must not:
 * the part it looks for may be held by the wait it interrupted). */
static __thread int compact_waiting;

void mtrec_file_init(const char *inherited, mtrec_sigaction_fn sa)
{
	const char *trace = prim_getenv("MALLOC_TRACE");
	char *o = name_pattern, *lim = name_pattern + sizeof(name_pattern) - 1;

	mtrec_bus_init(sa, &mtrec_file);
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

/* A name of this process's own: NAME.PID (or the %p name), then .1, .2
 * ... when taken; created exclusively, so nothing is ever overwritten. */
static int open_own(pid_t pid)
{
	int fd = -1;

	for (unsigned serial = 0; serial < 10000; serial++) {
		if (make_name(mtrec_file.path, sizeof(mtrec_file.path), name_pattern,
			      pid, 1, serial) < 0) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = prim_open(mtrec_file.path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
			       O_CLOEXEC | O_NONBLOCK, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd >= 0)
		prim_flock(fd, LOCK_EX | LOCK_NB);
	return fd;
}

static int open_name(int first)
{
	pid_t pid = getpid();
	/* Under the life lock; static, as a forked child opens its file
	 * from its first malloc call, on whatever stack that has. */
	static char taken[sizeof(mtrec_file.path)];
	uid_t owner;
	int fd;

	if (!*name_pattern)
		return -1;
	if (!first)
		return open_own(pid);
	if (make_name(mtrec_file.path, sizeof(mtrec_file.path), name_pattern, pid, 0, 0) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open_first(mtrec_file.path, &owner);
	if (fd == -4 || fd == -5) {
		say_planted(mtrec_file.path, fd, owner, "not recording");
		return -2;
	}
	if (fd == -3) {
		prim_say("trace file '", mtrec_file.path, "' is not a regular file; not recording",
			 SAY_END);
		return -2;
	}
	if (fd != -2)
		return fd;
	memcpy(taken, mtrec_file.path, sizeof(taken));
	fd = open_own(pid);
	if (fd >= 0)
		prim_say("trace file '", taken, "' is being written by another recording; "
			 "this one writes '", mtrec_file.path, "'", SAY_END);
	return fd;
}

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
		prim_say_error("MTREC_ROTATE: not a size: '", v, "'; not rotating", SAY_END);
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

/* The 2 MiB-aligned range of want bytes inside a reservation of
 * want + ALIGN_2M at p; the rest is given back (it counts in RLIMIT_AS). */
static void *trim_to_2m(void *p, size_t want)
{
	char *raw = p, *aligned = (char *)(((uintptr_t)raw + ALIGN_2M - 1) & ~(uintptr_t)(ALIGN_2M - 1));

	if (aligned > raw)
		munmap(raw, (size_t)(aligned - raw));
	if (raw + want + ALIGN_2M > aligned + want)
		munmap(aligned + want, (size_t)(raw + want + ALIGN_2M - (aligned + want)));
	return aligned;
}

/* The places parts take in a reservation of len bytes, and the table of
 * which part each holds (part 1 at the first): 0, or -1 when the table
 * cannot be had. */
static int set_places(size_t len)
{
	size_t n = len / mtrec_file.part_size;
	unsigned *t = part_at_few;

	if (n > sizeof(part_at_few) / sizeof(part_at_few[0]) &&
	    (t = prim_map_anon(n * sizeof(unsigned))) == NULL)
		return -1;
	t[0] = 1;
	mtrec_file.part_at = t;
	mtrec_file.ring = n * mtrec_file.part_size;
	return 0;
}

static void drop_places(void)
{
	if (mtrec_file.part_at && mtrec_file.part_at != part_at_few)
		munmap(mtrec_file.part_at, mtrec_file.ring / mtrec_file.part_size * sizeof(unsigned));
	mtrec_file.part_at = NULL;
	mtrec_file.ring = 0;
}

/* Reserve address space for the whole trace; a limit on the address space
 * (RLIMIT_AS) makes us take a small share of it. */
static int map_file(int fd)
{
	static const size_t sizes[] = { (size_t)1 << 40, (size_t)1 << 36, (size_t)1 << 32,
					(size_t)1 << 30, (size_t)1 << 28 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
	struct rlimit rl;
	size_t cap = (size_t)-1;

	/* Under a limit on the address space, an eighth of it: the program
	 * keeps the rest, and gets the reservation back if it runs out
	 * (mtrec_file_release). */
	as_limited = getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
	if (as_limited)
		cap = (rl.rlim_cur / 8) & ~(ALIGN_2M - 1);
	for (unsigned i = 0; i < NSIZES + 4; i++) {
		/* Then the cap itself, a half, a quarter, an eighth of it. */
		size_t want = i < NSIZES ? sizes[i] : (cap >> (i - NSIZES)) & ~(ALIGN_2M - 1);
		void *p;

		if (want > cap || want < MIN_RESERVE)
			continue;
		/* 2 MiB-aligned, as the kernel aligns a large file mapping:
		 * large page-cache folios are only mapped whole at such
		 * addresses (unaligned, every 4 KiB page faulted again). */
		p = mmap(NULL, want + ALIGN_2M, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		p = trim_to_2m(p, want);
		mtrec_file.base = p;
		mtrec_file.maplen = want;
		mtrec_file.part_size = rotate_size();
		if (!mtrec_file.part_size || mtrec_file.part_size > want)
			mtrec_file.part_size = want;
		/* Large page-cache folios: one fault maps up to 2 MiB instead
		 * of 4 KiB (measured on ext4: 143 faults for 290 MB instead of
		 * 74,749, and a fifth of the time). */
		if (set_places(want) == 0) {
			if (map_part(fd, p) == 0)
				return 0;
			drop_places();
		}
		munmap(p, want);
	}
	errno = ENOMEM;
	return -1;
}

/* A decimal number at the start of V, or dflt. */
static unsigned long env_number(const char *v, unsigned long dflt)
{
	unsigned long n = 0;
	const char *p;

	if (!v)
		return dflt;
	for (p = v; *p >= '0' && *p <= '9' && n < 1000000000ul; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	return p == v ? dflt : n;
}

/* The file's first MAGIC_LEN bytes: "# mtrec 1", then '#' and blanks. */
static void put_magic(char *o)
{
	char *end = o + MAGIC_LEN;

	o = mtrec_put_word(o, MTREC_W_MTREC);
	*o++ = '1';
	*o++ = '\n';
	*o++ = '#';
	while (o < end - 1)
		*o++ = ' ';
	*o = '\n';
}

/* MTREC_COMPACT_PID (set by mtrec --compact for the program it starts)
 * and MTREC_COMPACT_WAIT (seconds, 30 when unset, 0: no waiting). */
static void compact_settings(void)
{
	unsigned long s = env_number(prim_getenv("MTREC_COMPACT_WAIT"), 30);

	compact_pid = (pid_t)env_number(prim_getenv("MTREC_COMPACT_PID"), 0);
	compact_wait_ms = s > 3600 ? 3600000u : (unsigned)s * 1000u;
	compact_gone = 0;
}

static int grow_to(size_t need, size_t want_end, struct mtrec_file_err *e);

int mtrec_file_open(int first, struct mtrec_file_err *e)
{
	struct stat st;
	int fd = open_name(first);

	if (fd < 0) {
		if (fd == -1)
			prim_say("cannot open trace file '", mtrec_file.path, "': ",
				 prim_strerror(errno), "; not recording", SAY_END);
		return -1;
	}
	fd = move_high(fd);
	if (fstat(fd, &st) < 0) {
		prim_say("cannot open trace file '", mtrec_file.path, "': fstat: ",
			 prim_strerror(errno), "; not recording", SAY_END);
		prim_close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		prim_say("trace file '", mtrec_file.path, "' is not a regular file; not recording", SAY_END);
		prim_close(fd);
		return -1;
	}
	if (map_file(fd) < 0) {
		prim_say("cannot map trace file '", mtrec_file.path, "': ",
			 prim_strerror(errno), as_limited ?
			 " (the address-space limit, ulimit -v, leaves too little room)" : "",
			 "; not recording", SAY_END);
		prim_close(fd);
		return -1;
	}
	mtrec_bus_guard();
	file_dev = st.st_dev;
	file_ino = st.st_ino;
	mtrec_file.fd = fd;
	mtrec_file.tail = 0;
	mtrec_file.size = 0;
	mtrec_file.part_start = 0;
	mtrec_file.part_no = 1;
	memcpy(first_path, mtrec_file.path, sizeof(first_path));
	compact_settings();
	if (grow_to(MAGIC_LEN, MAGIC_LEN, e) < 0)
		return -1;
	put_magic(mtrec_file.base);
	mtrec_file.tail = MAGIC_LEN;
	return 0;
}

/* Is our descriptor still our file?  A program may close it or dup2 over
 * it; then extending "it" would write into someone else's file.  1 yes,
 * 0 no, -1 cannot tell: fstat() itself was refused (a seccomp filter), and
 * errno says how. */
static int fd_is_ours(struct stat *st)
{
	if (fstat(mtrec_file.fd, st) < 0)
		return errno == EBADF ? 0 : -1;
	return st->st_dev == file_dev && st->st_ino == file_ino;
}

static int still_ours(struct stat *st)
{
	return fd_is_ours(st) == 1;
}

#define CANNOT_CHECK "cannot check that the trace file is still the one it opened (fstat refused)"

/* Make mtrec_file.fd our file again after the program closed or replaced
 * the number (a daemon closing every descriptor at start): open the name
 * again and check it is the same file.  The old number is the program's
 * now and is never closed.  0, or -1 with a reason (and *err, an errno
 * value or 0). */
static int regain(struct stat *st, const char **why, int *err)
{
	int fd, ours = fd_is_ours(st);

	*err = 0;
	if (ours == 1)
		return 0;
	if (ours < 0) {
		*err = errno;
		*why = CANNOT_CHECK;
		return -1;
	}
	fd = prim_open(mtrec_file.path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
	if (fd < 0) {
		*err = errno;
		*why = "the program closed its descriptor and the file cannot be opened again";
		return -1;
	}
	if (fstat(fd, st) < 0) {
		*err = errno;
		prim_close(fd);
		*why = CANNOT_CHECK;
		return -1;
	}
	if (st->st_dev != file_dev || st->st_ino != file_ino) {
		prim_close(fd);
		*why = "the program closed its descriptor and the file was replaced or removed";
		return -1;
	}
	mtrec_file.fd = move_high(fd);
	prim_flock(mtrec_file.fd, LOCK_EX | LOCK_NB);
	return 0;
}

/* ---- the file taken away ---------------------------------------------- */

/* A trace removed (rm) or replaced (mv over it) while the program runs
 * leaves the recorder writing into a file that no name reaches: every
 * later event lost, in silence.  The file's link count, read on our own
 * descriptor, says so exactly: 0 once its last name is gone.  A name
 * looked up instead would mislead after a chroot() or a rename of the
 * file (the trace goes on under its new name: nothing is lost), and on a
 * hard link kept elsewhere.  The look costs one fstat() every
 * WATCH_EVERY_NS at most, at a chunk turnover (mtrec_file_watch). */
#define WATCH_EVERY_NS 100000000ull

static uint64_t watch_due;	/* the next look; UINT64_MAX: fstat is refused */

/* Why the file is lost, or NULL when it is not (or nobody can tell). */
static const char *gone_why(void)
{
	struct stat st, by_name;
	int ours = fd_is_ours(&st);

	if (ours < 0) {
		/* Refused, not lost: recording goes on; the growth, which
		 * must know, says so if it is refused too. */
		__atomic_store_n(&watch_due, UINT64_MAX, __ATOMIC_RELAXED);
		return NULL;
	}
	/* A descriptor the program took over is the growth's to regain. */
	if (!ours || st.st_nlink > 0)
		return NULL;
	if (lstat(mtrec_file.path, &by_name) == 0)
		return "the trace file was replaced by another file";
	if (errno == ENOENT)
		return "the trace file was removed";
	return "the trace file was removed or replaced";
}

/* The file is gone and recording stopped (the caller said why): hold it
 * no longer, so that removing it frees the disk at once -- a trace of
 * gigabytes removed to make room must not stay allocated until the
 * program exits.  Threads still in their chunks write on into anonymous
 * memory (lose_mapping); nothing else is written (mtrec_file_note
 * appends only through a descriptor that is still ours). */
void mtrec_file_drop(void)
{
	size_t len = (__atomic_load_n(&mtrec_file.size, __ATOMIC_ACQUIRE) + ALIGN_2M) & ~(ALIGN_2M - 1);

	if (mtrec_lock(&grow_lock, MTREC_LOCK_GROW) < 0)
		return;
	/* The file's mapping reaches past the size, to the end of the
	 * reservation or of the part's place: all of it must go. */
	if (!mtrec_file_lost() && mtrec_file.base && mtrec_bus_lose_mapping() == 0 &&
	    (len >= mtrec_file.maplen ||
	     mmap(mtrec_file.base + len, mtrec_file.maplen - len, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != MAP_FAILED) &&
	    mtrec_file.fd >= 0) {
		prim_close(mtrec_file.fd);
		mtrec_file.fd = -1;
	}
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
}

int mtrec_file_watch(uint64_t now, struct mtrec_file_err *e)
{
	uint64_t due = __atomic_load_n(&watch_due, __ATOMIC_RELAXED);
	const char *why;

	if (now < due || !__atomic_compare_exchange_n(&watch_due, &due, now + WATCH_EVERY_NS, 0,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 0;
	if (__atomic_load_n(&stopped, __ATOMIC_RELAXED) || __atomic_load_n(&broken, __ATOMIC_RELAXED) ||
	    mtrec_file_lost() || __atomic_load_n(&closed, __ATOMIC_RELAXED) ||
	    (why = gone_why()) == NULL)
		return 0;
	e->why = why;
	e->err = 0;
	__atomic_store_n(&broken, 1, __ATOMIC_RELAXED);
	return -1;
}

static int extend(size_t from, size_t to)
{
	static const char zeros[4096];

	if (prim_fallocate(mtrec_file.fd, (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -1;
	/* No fallocate on this file system: write the blocks for real. */
	for (size_t off = from; off < to; off += sizeof(zeros))
		if (prim_pwrite(mtrec_file.fd, zeros, sizeof(zeros), (off_t)off) != sizeof(zeros))
			return -1;
	return 0;
}

/* Growth fails for good: say why to the caller, and to nobody after. */
static int fail(struct mtrec_file_err *e, const char *why, int err)
{
	e->why = why;
	e->err = err;
	broken = 1;
	return -1;
}

/* Part N+1: its file, mapped at the next place, where part N+1-P was
 * (P places, see "Rotation" above) once that part is retired.  Called
 * with the grow lock held, when part N is full. */
static int next_part(struct mtrec_file_err *e)
{
	size_t start = mtrec_file.part_start + mtrec_file.part_size;
	size_t places = mtrec_file.ring / mtrec_file.part_size;
	unsigned k = mtrec_file.part_no + 1;
	/* Under the grow lock, and off the stack of the malloc call that
	 * filled the part. */
	static char name[sizeof(mtrec_file.path)];
	char *o, *lim = name + sizeof(name) - 1;
	struct stat st, old;
	uid_t owner;
	int fd;

	if (mtrec_file.part_size >= mtrec_file.maplen || places < 2)
		return fail(e, as_limited ? "the trace reached the size the address-space limit "
			    "(ulimit -v) leaves it" : "the trace reached its maximum size", 0);
	if (k > places && __atomic_load_n(&retired, __ATOMIC_ACQUIRE) < k - places)
		return fail(e, as_limited ? "the trace reached the size the address-space limit "
			    "(ulimit -v) leaves it, and its oldest part is still in use" :
			    "the trace reached its maximum size, and its oldest part is still in use", 0);
	/* The part that ends was removed while it was written (a removed
	 * complete part is the compactor's doing, or the user's). */
	if (still_ours(&old) && old.st_nlink == 0)
		return fail(e, "the trace file was removed", 0);
	o = prim_puts(name, lim, first_path);
	o = prim_puts(o, lim, ".part");
	o = prim_putu(o, lim, k);
	*o = '\0';
	/* Checked as part 1 was (open_checked), and then truncated. */
	st.st_mode = 0;
	fd = open_checked(name, &owner);
	if (fd == -4) {
		memcpy(mtrec_file.path, name, sizeof(name));
		return fail(e, "the file belongs to another user, in a sticky directory others "
			    "may write in (whoever made it could read the trace); not writing "
			    "into it", 0);
	}
	if (fd == -5) {
		memcpy(mtrec_file.path, name, sizeof(name));
		return fail(e, "the file " MTREC_LINKED_WHY " (" MTREC_LINKED_HARM "); not writing "
			    "into it", 0);
	}
	fd = move_high(fd);
	if (fd < 0 || ftruncate(fd, 0) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    map_part(fd, mtrec_file_at(start)) < 0) {
		int err = errno;
		/* A part that could not be mapped holds nothing: not left
		 * behind as an empty file beside the trace. */
		if (fd >= 0 && S_ISREG(st.st_mode) && st.st_size == 0)
			unlink(name);
		if (fd >= 0)
			prim_close(fd);
		memcpy(mtrec_file.path, name, sizeof(name));
		return fail(e, "cannot start the next part", err);
	}
	prim_flock(fd, LOCK_EX | LOCK_NB);
	if (still_ours(&old))
		prim_close(mtrec_file.fd);
	mtrec_file.fd = fd;
	file_dev = st.st_dev;
	file_ino = st.st_ino;
	memcpy(mtrec_file.path, name, sizeof(name));
	/* Read by writers only once the growth that follows is published. */
	__atomic_store_n(&mtrec_file.part_at[(k - 1) % places], k, __ATOMIC_RELAXED);
	__atomic_store_n(&mtrec_file.part_start, start, __ATOMIC_RELEASE);
	__atomic_add_fetch(&mtrec_file.part_no, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Written pages leave the page cache too, once on disk: each new page
 * of the trace is a page the kernel must find free and zero, and memory
 * freed long ago costs far more to touch again than memory freed just
 * now (on a virtual machine whose host took the free pages back, 0.35 to
 * 1.2 GB/s against 7 GB/s: the zeroing was half of a depth-1 run's CPU
 * time).  So the written range behind shed_upto is handed to writeback
 * and dropped from the cache (POSIX_FADV_DONTNEED does both: pages still
 * dirty or being written are only started, and kept), and the pages
 * freed become the next ones the trace takes: the trace's page cache
 * stays a window of tens of megabytes instead of its whole length.  The
 * last CACHE_RETRY bytes are offered again at each step, for the pages
 * whose writeback had not ended.  Nothing is lost: a page leaves only
 * once written back, and a late writer in an old chunk faults it back
 * from the disk.  Under the grow lock, taken only if free (the descriptor
 * may change under it, and a thread must not wait here), on the current
 * part's file alone: an older part's descriptor is closed. */
static size_t cache_kept_from;	/* offsets before this were offered */

static void let_cache_go(size_t upto)
{
	size_t from, start;
	struct stat st;

	if ((mtrec_held & MTREC_LOCK_GROW) || pthread_mutex_trylock(&grow_lock) != 0)
		return;
	mtrec_held |= MTREC_LOCK_GROW;
	start = mtrec_file.part_start;
	from = cache_kept_from > start ? cache_kept_from : start;
	if (upto > from && !stopped && !closed && !mtrec_file_lost() && still_ours(&st)) {
		posix_fadvise(mtrec_file.fd, (off_t)(from - start), (off_t)(upto - from),
			      POSIX_FADV_DONTNEED);
		cache_kept_from = upto > CACHE_RETRY ? upto - CACHE_RETRY : 0;
	}
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
}

/* Written pages leave the program's resident set: VmRSS is what people
 * watch for a leak, and a mapped trace counted there (400 MB against 15 MB
 * for ovs-vswitchd) misleads them.  For a shared file mapping,
 * MADV_DONTNEED only drops our page table entries: the data stays in the
 * page cache, dirty, on its way to the file (as crash-safe as before),
 * and a thread still writing in an old chunk faults the same page back.
 * One atomic load per chunk; the thread that moves shed_upto, every 2 MiB
 * of trace, drops everything behind: not only the last 2 MiB, since a
 * thread that was descheduled in an old chunk maps its page (a 2 MiB
 * folio) again when it resumes -- 8 threads on 2 cores kept 700 MB.
 * Behind means from the first part still mapped on: at most the ring's
 * length, which wraps round the end of the ring when parts took places
 * again (a stale count of retired parts only drops more of the range). */
static void shed_written(size_t tail)
{
	size_t done = __atomic_load_n(&shed_upto, __ATOMIC_RELAXED);
	size_t upto = tail > KEEP_RESIDENT ? (tail - KEEP_RESIDENT) & ~(SHED_STEP - 1) : 0;
	size_t ring = mtrec_file.ring, from, at, len;
	int saved;

	if (upto < done + SHED_STEP || upto >= MTREC_TAIL_SHUT || mtrec_file_lost() ||
	    !__atomic_compare_exchange_n(&shed_upto, &done, upto, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	from = (size_t)__atomic_load_n(&retired, __ATOMIC_RELAXED) * mtrec_file.part_size;
	if (from >= upto)
		return;
	if (upto - from > ring)
		from = upto - ring;
	at = from % ring;
	len = upto - from;
	saved = errno;		/* inside the program's malloc: a refused call is not its error */
	if (at + len <= ring) {
		madvise(mtrec_file.base + at, len, MADV_DONTNEED);
	} else {
		madvise(mtrec_file.base + at, ring - at, MADV_DONTNEED);
		madvise(mtrec_file.base, len - (ring - at), MADV_DONTNEED);
	}
	let_cache_go(upto);
	errno = saved;
}

/* What the file must reach for a chunk ending at end: the margin past it,
 * in the same part and outside the next part's header zone. */
static size_t with_margin(size_t end)
{
	size_t ps = mtrec_file.part_size, part_end = (end - 1) / ps * ps + ps;

	if (ps < mtrec_file.maplen && end + MARGIN > part_end)
		return part_end + MTREC_PART_ZONE + MARGIN;
	return end + MARGIN;
}

/* Has part k's file been deleted?  0 also when another thread is looking:
 * the caller asks again a moment later. */
static int part_gone(unsigned k)
{
	char *o = compact_name, *lim = compact_name + sizeof(compact_name) - 1;
	struct stat st;
	int free_ = 0, gone;

	if (__atomic_load_n(&compact_gone, __ATOMIC_ACQUIRE) >= k)
		return 1;
	if (!__atomic_compare_exchange_n(&compact_looking, &free_, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return 0;
	o = prim_puts(o, lim, first_path);
	if (k > 1) {
		o = prim_puts(o, lim, ".part");
		o = prim_putu(o, lim, k);
	}
	*o = '\0';
	gone = stat(compact_name, &st) < 0 && errno == ENOENT;
	if (gone && __atomic_load_n(&compact_gone, __ATOMIC_RELAXED) < k)
		__atomic_store_n(&compact_gone, k, __ATOMIC_RELEASE);
	__atomic_store_n(&compact_looking, 0, __ATOMIC_RELEASE);
	return gone;
}

/* Back-pressure for mtrec --compact (share/compact.md, "Keeping up"): a
 * program that writes its trace faster than the compactor folds it would
 * fill the disk with parts waiting their turn.  So before part k begins,
 * the thread that needs it waits, outside every lock of ours, until
 * part k - 2 is deleted: on disk stay the part just filled and the one
 * that begins.  Only for a part already unmapped, one the compactor can
 * take: when part k - 2 is not yet (a thread still writes there, chunk.c;
 * a waiting thread also holds back the unmapping), for the latest one
 * that is.  Only where a compactor follows this process's trace
 * (MTREC_COMPACT_PID: not in its children, whose traces it does not
 * fold), and for MTREC_COMPACT_WAIT seconds at most: a compactor that died
 * or stopped must not stop the program, which then says so once and never
 * waits again. */
static MTREC_COLD void compact_backlog(void)
{
	unsigned k = __atomic_load_n(&mtrec_file.part_no, __ATOMIC_ACQUIRE) + 1;
	unsigned old = __atomic_load_n(&retired, __ATOMIC_ACQUIRE);
	uint64_t t0, limit = (uint64_t)__atomic_load_n(&compact_wait_ms, __ATOMIC_RELAXED) * 1000000u;
	int saved = errno;

	if (k >= 3 && old > k - 2)
		old = k - 2;
	if (old == 0 || limit == 0 || compact_waiting || getpid() != compact_pid)
		return;
	compact_waiting = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t0 = prim_monotonic_ns();
	while (!part_gone(old) && !__atomic_load_n(&stopped, __ATOMIC_RELAXED)) {
		struct timespec ms = { 0, 1000000 };
		unsigned wait = __atomic_load_n(&compact_wait_ms, __ATOMIC_RELAXED);

		if (wait == 0)
			break;
		if (prim_monotonic_ns() - t0 > limit) {
			char n[24];
			*prim_putu(n, n + sizeof(n) - 1, old) = '\0';
			if (__atomic_compare_exchange_n(&compact_wait_ms, &wait, 0, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
				prim_say("the compactor has not taken part ", n, " of the trace in "
					 "MTREC_COMPACT_WAIT seconds; not waiting for it any more",
					 SAY_END);
			break;
		}
		/* the system call: nanosleep() is a cancellation point */
		syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ms, NULL);
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	compact_waiting = 0;
	errno = saved;
}

/* The file grows LOOKAHEAD before it must: a signal handler that
 * interrupts its own thread's growth (which holds the lock) still finds
 * backed room for its chunks. */
int mtrec_file_ensure(size_t end, struct mtrec_file_err *e)
{
	size_t need = with_margin(end);

	shed_written(end);
	if (__atomic_load_n(&mtrec_file.size, __ATOMIC_ACQUIRE) >= need + LOOKAHEAD)
		return 0;
	if (unlikely(compact_pid != 0) &&
	    need > __atomic_load_n(&mtrec_file.part_start, __ATOMIC_ACQUIRE) + mtrec_file.part_size &&
	    mtrec_file.part_size < mtrec_file.maplen)
		compact_backlog();
	if (grow_to(need, need + LOOKAHEAD, e) == 0)
		return 0;
	if (e->why)
		return -1;
	return !stopped && __atomic_load_n(&mtrec_file.size, __ATOMIC_ACQUIRE) >= need ? 0 : -1;
}

/* Grow the file to reach want, or at least need: what lies between is
 * growth ahead of time, and failing to get it is no reason to stop yet. */
static int grow_to(size_t need, size_t want_end, struct mtrec_file_err *e)
{
	struct rlimit rl;
	struct stat st;
	size_t size, want, part_end, step, align;
	const char *why = NULL;
	int ret = -1, err;

	e->why = NULL;
	e->err = 0;
	/* Nested in this thread's own growth (a signal handler): the event
	 * is dropped and counted. */
	if (mtrec_lock(&grow_lock, MTREC_LOCK_GROW) < 0)
		return -1;
	while (want_end > (size = __atomic_load_n(&mtrec_file.size, __ATOMIC_RELAXED))) {
		/* After the exit trim, growing again would leave the chunks
		 * reserved meanwhile as NUL runs before this one's lines. */
		if (stopped || broken || mtrec_file_lost() || closed)
			goto out;
		part_end = mtrec_file.part_start + mtrec_file.part_size;
		if (size == part_end) {
			if (size >= need)
				break;
			if (next_part(e) < 0)
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
		want = (want_end + step + align - 1) & ~(align - 1);
		if (want > part_end)
			want = part_end;
		/* Writing past RLIMIT_FSIZE would raise SIGXFSZ in the program. */
		if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
			if (size - mtrec_file.part_start >= rl.rlim_cur) {
				if (size >= need)
					break;
				fail(e, "file size limit reached", EFBIG);
				goto out;
			}
			if (want - mtrec_file.part_start > rl.rlim_cur)
				want = mtrec_file.part_start + rl.rlim_cur;
		}
		if (regain(&st, &why, &err) < 0) {
			fail(e, why, err);
			goto out;
		}
		if ((size_t)st.st_size < size - mtrec_file.part_start) {
			mtrec_bus_lose_mapping();
			fail(e, "the trace file was truncated by another process", 0);
			goto out;
		}
		if (extend(size - mtrec_file.part_start, want - mtrec_file.part_start) < 0) {
			if (size >= need)
				break;
			fail(e, "cannot extend the file", errno);
			goto out;
		}
		__atomic_store_n(&mtrec_file.size, want, __ATOMIC_RELEASE);
	}
	ret = 0;
out:
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
	return ret;
}

/* ---- parts that complete ---------------------------------------------- */

unsigned mtrec_file_retirable(void)
{
	unsigned k = __atomic_load_n(&retired, __ATOMIC_RELAXED) + 1;
	size_t ps = mtrec_file.part_size;

	if (ps >= mtrec_file.maplen || __atomic_load_n(&stopped, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&closed, __ATOMIC_RELAXED) || mtrec_file_lost() ||
	    k >= __atomic_load_n(&mtrec_file.part_no, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&mtrec_file.tail, __ATOMIC_ACQUIRE) < (size_t)k * ps)
		return 0;
	return k;
}

/* The part's descriptor was closed when the next part began (next_part):
 * the mapping is all that holds its file.  Replaced in one call, so the
 * range is never free for another mmap of the program's to take; part
 * k + P may be mapped there from now on (next_part). */
void mtrec_file_retire(unsigned k)
{
	size_t ps = mtrec_file.part_size;

	if (mmap(mtrec_file_at((size_t)(k - 1) * ps), ps, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) != MAP_FAILED)
		__atomic_store_n(&retired, k, __ATOMIC_RELEASE);
}

/* ---- after recording stopped ------------------------------------------ */

void mtrec_file_stop(void)
{
	size_t size;

	if (__atomic_exchange_n(&stopped, 1, __ATOMIC_ACQ_REL))
		return;
	/* No chunk is handed out any more; every one handed out ends before
	 * size - MARGIN (mtrec_file_ensure), so the margin is ours alone. */
	__atomic_store_n(&mtrec_file.tail, MTREC_TAIL_SHUT, __ATOMIC_RELEASE);
	size = __atomic_load_n(&mtrec_file.size, __ATOMIC_ACQUIRE);
	notes_lim = size;
	notes_next = size >= MARGIN ? size - MARGIN : size;
	/* Whatever precedes is closed: the notes start a line of their own. */
	mtrec_file_note("\n", 1);
}

/* Append to the file itself (the mapping no longer reaches it), within
 * RLIMIT_FSIZE, when the descriptor is still ours. */
static void append(const char *text, size_t len)
{
	struct rlimit rl;
	struct stat st;

	if (!still_ours(&st))
		return;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (size_t)st.st_size + len > rl.rlim_cur)
		return;
	prim_pwrite(mtrec_file.fd, text, len, st.st_size);
}

void mtrec_file_note(const char *text, size_t len)
{
	size_t at;

	if (!stopped || !mtrec_file.base)
		return;
	if (mtrec_file_lost()) {
		append(text, len);
		return;
	}
	at = __atomic_fetch_add(&notes_next, len, __ATOMIC_ACQ_REL);
	/* The margin lies in the current part, all of it in one place. */
	if (at + len <= notes_lim && len > 0 &&
	    at / mtrec_file.part_size == (at + len - 1) / mtrec_file.part_size)
		memcpy(mtrec_file_at(at), text, len);
}

/* Is the address space limited now?  Not only when the program started
 * under a limit: a daemon may set one itself once running, below what
 * the reservation took while there was none (a terabyte). */
static int as_limited_now(void)
{
	struct rlimit rl;

	return as_limited || (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY);
}

/* Once parts took places again, what is given back is every place whose
 * part was retired and not replaced, the end of the current part's place,
 * and the range past the ring.  No part is retired after the stop
 * (mtrec_file_retirable), and those retired before are unmapped already:
 * nothing maps into what is given back. */
int mtrec_file_release(void)
{
	size_t keep, ps = mtrec_file.part_size, places, cur;
	unsigned done;
	int gave = 0;

	if (released || !mtrec_file.base || !stopped || mtrec_file_lost() || !as_limited_now())
		return 0;
	places = mtrec_file.ring / ps;
	if (mtrec_file.part_no <= places) {
		keep = (mtrec_file.size + 4095) & ~(size_t)4095;
		if (keep >= mtrec_file.maplen)
			return 0;
		released = 1;
		return munmap(mtrec_file.base + keep, mtrec_file.maplen - keep) == 0;
	}
	released = 1;
	done = __atomic_load_n(&retired, __ATOMIC_ACQUIRE);
	cur = (mtrec_file.part_no - 1) % places;
	keep = (mtrec_file.size - mtrec_file.part_start + 4095) & ~(size_t)4095;
	if (keep < ps)
		gave |= munmap(mtrec_file.base + cur * ps + keep, ps - keep) == 0;
	for (size_t i = 0; i < places; i++)
		if (i != cur && mtrec_file.part_at[i] <= done)
			gave |= munmap(mtrec_file.base + i * ps, ps) == 0;
	if (mtrec_file.ring < mtrec_file.maplen)
		gave |= munmap(mtrec_file.base + mtrec_file.ring,
			       mtrec_file.maplen - mtrec_file.ring) == 0;
	return gave;
}

/* Cut the file to what was written (grow_lock held); 1 when cut at pos.
 * No reservation can succeed afterwards (the tail is at the mapping's
 * end); what was handed out stays inside the file, so no late writer can
 * fault past its end.  The mapping is kept for such writers. */
static int cut_to_used(char *pos, char *end, size_t *usedp)
{
	struct stat st;
	const char *why;
	int cut = 0, err;
	size_t used;

	used = __atomic_exchange_n(&mtrec_file.tail, MTREC_TAIL_SHUT, __ATOMIC_ACQ_REL);
	if (used > mtrec_file.size)
		used = mtrec_file.size;
	if (stopped) {
		used = notes_next < notes_lim ? notes_next : notes_lim;
	} else if (pos && used > 0 && mtrec_file_off(end - 1) + 1 == used) {
		used -= (size_t)(end - pos);
		cut = 1;
	}
	if (!mtrec_file_lost() && regain(&st, &why, &err) == 0 && used >= mtrec_file.part_start)
		if (ftruncate(mtrec_file.fd, (off_t)(used - mtrec_file.part_start)) < 0)
			prim_say("cannot trim trace file '", mtrec_file.path, "': ",
				 prim_strerror(errno), SAY_END);
	__atomic_store_n(&mtrec_file.size, used, __ATOMIC_RELEASE);
	*usedp = used;
	return cut;
}

int mtrec_file_close(char *pos, char *end)
{
	const char *why;
	size_t used;
	int cut;

	if (mtrec_file.fd < 0)
		return 0;
	/* Taken away since the last look: the run was too short, or its
	 * last chunk too long, for a look to come; said now, at least. */
	if (!stopped && !broken && !mtrec_file_lost() && watch_due != UINT64_MAX &&
	    (why = gone_why()) != NULL)
		prim_say("stopped recording to '", mtrec_file.path, "': ", why, SAY_END);
	if (mtrec_lock(&grow_lock, MTREC_LOCK_GROW) < 0)
		return 0;
	cut = cut_to_used(pos, end, &used);
	closed = 1;
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
	return cut;
}

/* Before an exec: the file as at exit, but ready to go on (see
 * mtrec_file_untrim).  The sizes before the cut, for the way back. */
static size_t trimmed_used, trimmed_notes_lim;
static int trimmed;

int mtrec_file_trim(char *pos, char *end)
{
	int cut;

	if (mtrec_file.fd < 0 || closed || mtrec_file_lost())
		return 0;
	if (mtrec_lock(&grow_lock, MTREC_LOCK_GROW) < 0)
		return 0;
	trimmed_notes_lim = notes_lim;
	cut = cut_to_used(pos, end, &trimmed_used);
	trimmed = 1;
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
	return cut;
}

int mtrec_file_untrim(struct mtrec_file_err *e)
{
	e->why = NULL;
	if (!trimmed || mtrec_lock(&grow_lock, MTREC_LOCK_GROW) < 0)
		return 0;
	trimmed = 0;
	if (stopped) {
		/* The last words go on in the margin, which must be backed again
		 * (or they are dropped: no write past the file's end). */
		if (trimmed_notes_lim > trimmed_used &&
		    extend(trimmed_used - mtrec_file.part_start,
			   trimmed_notes_lim - mtrec_file.part_start) == 0)
			__atomic_store_n(&mtrec_file.size, trimmed_notes_lim, __ATOMIC_RELEASE);
		else
			notes_lim = trimmed_used;
		mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
		return 0;
	}
	/* Chunks are handed out from the cut on; the file grows again with
	 * the first of them, here, so that the margin is there at once. */
	__atomic_store_n(&mtrec_file.tail, trimmed_used, __ATOMIC_RELEASE);
	mtrec_unlock(&grow_lock, MTREC_LOCK_GROW);
	return mtrec_file_ensure(trimmed_used, e);
}

const char *mtrec_file_first_path(void)
{
	return first_path;
}

void mtrec_file_fork_child(void)
{
	char *base = mtrec_file.base;

	pthread_mutex_init(&grow_lock, NULL);
	/* The SIGBUS handler stops claiming the range before it goes. */
	__atomic_store_n(&mtrec_file.base, NULL, __ATOMIC_RELEASE);
	if (base)
		munmap(base, mtrec_file.maplen);
	if (mtrec_file.fd >= 0)
		prim_close(mtrec_file.fd);
	drop_places();
	stopped = closed = broken = 0;
	mtrec_bus_fork_child();
	shed_upto = 0;
	cache_kept_from = 0;
	watch_due = 0;
	retired = 0;
	compact_looking = 0;
	mtrec_file.maplen = 0;
	mtrec_file.fd = -1;
	mtrec_file.tail = mtrec_file.size = 0;
}
