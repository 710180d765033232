/* reach.c -- MTREC_REACH=1: which of the blocks still live at the end
 * of the recorded run the program could still reach, told as valgrind's
 * leak check tells it ("# reach" lines, share/trace-format.md).
 *
 * The table.  While recording, every allocation the trace records adds
 * its block (address, size) to a table, every free removes it: an open
 * addressing hash in 64 stripes, each behind a spin lock, in memory of
 * its own (mmap, never malloc: this runs inside malloc).  A thread waits
 * for a stripe only at its outer level: a signal handler that allocates
 * while its thread is inside the table queues its update for the thread
 * to make on the way out, so that no thread ever waits while it holds a
 * stripe, and nothing waits for a thread that cannot go on.  Each
 * thread's first update also notes where its stack and its thread
 * pointer are, for the scan.
 *
 * The scan.  Its lines take one piece of the trace, reserved before the
 * table is copied (struct mtrec_reach_out).  At the end the table is
 * frozen and copied, sorted by address, and memory is scanned
 * conservatively for words that point into a block, as valgrind's
 * memcheck does (mc_leakcheck.c):
 *
 *   roots   the writable PT_LOAD segments of every loaded object but the
 *           recorder, the calling thread's stack from its stack pointer
 *           (its registers spilled there), the other threads' stacks
 *           (found from the stack address each noted, and from
 *           /proc/self/task/TID/syscall, which also gives the stack
 *           pointer and the system call's arguments of a blocked
 *           thread), each thread's static TLS and the main thread's DTV,
 *           the static TLS and TCB of ended threads (their stacks kept by
 *           glibc), the program's own mappings; never the heap blocks
 *           themselves, malloc's memory (glibc's main arena included),
 *           nor this file's;
 *   marks   a block reached from a root or a reachable block by a
 *           pointer to its first byte is reachable; one reached only
 *           through an interior pointer somewhere on the way is possible;
 *           either is then scanned in turn;
 *   cliques the blocks not reached are lost; in address order, each one
 *           still unmarked leads a clique: every lost block reached from
 *           it (by any pointer, as valgrind) is indirect; the leaders
 *           stay definite.
 *
 * Other threads keep running: their stacks are read as they are, every
 * read goes through process_vm_readv() on our own pid (a pipe's write()
 * where that is refused), so that a guard page, a PROT_NONE page or
 * memory unmapped meanwhile is counted as unreadable and never faults. */
#include "reach.h"
#include "file.h"		/* the trace's reservation: never a root */

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ---- the table ------------------------------------------------------ */

#define NSTRIPES 64
#define STRIPE_MIN 1024u	/* entries of a stripe's first table */
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)	/* a removed entry: probes go on past it */

struct ent {
	uintptr_t addr;
	size_t size;
};

struct stripe {
	int lock;
	size_t cap;		/* entries, a power of two (0: not mapped yet) */
	size_t used;		/* live entries and tombs */
	size_t live;
	struct ent *e;
} __attribute__((aligned(64)));

static struct stripe stripes[NSTRIPES];
static int enabled;
static int frozen;		/* the scan took its copy: no more updates */
static unsigned long missed;	/* updates dropped (no memory, queue full) */

/* Updates a signal handler made while its thread was inside the table. */
#define NPEND 16
struct pend {
	uintptr_t p;
	size_t size;
	int add;
};
static __thread int in_table;
static __thread struct pend pend[NPEND];
static __thread unsigned npend;
static __thread int registered;

/* Where each thread's stack and thread pointer are, by tid (a later
 * thread with the same tid modulo NTHR takes the place). */
#define NTHR 65536u
struct thr {
	pid_t tid;
	uintptr_t stack;	/* an address in its stack */
	uintptr_t tp;		/* its thread pointer */
};
static struct thr *thr;

static inline uintptr_t thread_pointer(void)
{
	uintptr_t tp;

#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = (uintptr_t)&in_table;	/* an address in its static TLS */
#endif
	return tp;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

/* Blocks within 256 bytes of each other (often allocated one after the
 * other) take entries next to each other, in their address order, from a
 * place the rest of the address sets: a table of a million entries does
 * not fit in the caches, and each allocation took a miss where now the
 * blocks of a page take a few.  hash_addr() keeps the offset in its low
 * bits. */
#define WINDOW 16u

static inline uint64_t hash_addr(uintptr_t a)
{
	uint64_t h = (uint64_t)(a >> 8) * 0x9e3779b97f4a7c15ull;

	return (h & ~(uint64_t)(WINDOW - 1)) | ((a >> 4) & (WINDOW - 1));
}

static inline struct stripe *stripe_of(uint64_t h)
{
	return &stripes[h >> 58];
}

static inline size_t slot_of(uint64_t h, size_t cap)
{
	uint64_t place = h & ~(uint64_t)(WINDOW - 1);

	return (size_t)((place ^ (place >> 29)) + (h & (WINDOW - 1))) & (cap - 1);
}

static void stripe_lock(struct stripe *s)
{
	unsigned spins = 0;

	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
			if (++spins < 200) {
				cpu_relax();
			} else {
				syscall(SYS_sched_yield);
				spins = 0;
			}
		}
	}
}

static void stripe_unlock(struct stripe *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* A larger (or a cleaner) table for s: 0, or -1 without memory. */
static int grow(struct stripe *s)
{
	size_t cap = s->cap ? s->cap : STRIPE_MIN, old_cap;
	struct ent *e, *old;

	while ((s->live + 1) * 2 > cap)
		cap *= 2;
	if ((e = prim_map_anon(cap * sizeof(*e))) == NULL)
		return -1;
	old = s->e;
	old_cap = old ? s->cap : 0;
	for (size_t i = 0; i < old_cap; i++) {
		uintptr_t a = old[i].addr;
		size_t j;

		if (a <= TOMB)
			continue;
		for (j = slot_of(hash_addr(a), cap); e[j].addr != EMPTY; j = (j + 1) & (cap - 1))
			;
		e[j] = old[i];
	}
	/* The new table first, then its size (never smaller), then the old
	 * one goes: what the scan reads without the lock (copy_table) is a
	 * table with at most as many entries as it has. */
	__atomic_store_n(&s->e, e, __ATOMIC_RELEASE);
	__atomic_store_n(&s->cap, cap, __ATOMIC_RELEASE);
	s->used = s->live;
	if (old)
		munmap(old, old_cap * sizeof(*old));
	return 0;
}

static void do_add(uintptr_t p, size_t size)
{
	uint64_t h = hash_addr(p);
	struct stripe *s = stripe_of(h);
	size_t i, tomb = SIZE_MAX;

	stripe_lock(s);
	if (frozen)
		goto out;
	if ((s->used + 1) * 4 > s->cap * 3 && grow(s) < 0 && s->used + 1 >= s->cap) {
		__atomic_add_fetch(&missed, 1, __ATOMIC_RELAXED);
		goto out;
	}
	for (i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
		uintptr_t a = s->e[i].addr;

		if (a == p) {		/* a free we never saw: the new size */
			s->e[i].size = size;
			goto out;
		}
		if (a == EMPTY)
			break;
		if (a == TOMB && tomb == SIZE_MAX)
			tomb = i;
	}
	if (tomb != SIZE_MAX)
		i = tomb;
	else
		s->used++;
	s->e[i].addr = p;
	s->e[i].size = size;
	s->live++;
out:
	stripe_unlock(s);
}

static int do_remove(uintptr_t p, size_t *size)
{
	uint64_t h = hash_addr(p);
	struct stripe *s = stripe_of(h);
	int found = 0;

	stripe_lock(s);
	if (frozen || !s->cap)
		goto out;
	for (size_t i = slot_of(h, s->cap);; i = (i + 1) & (s->cap - 1)) {
		uintptr_t a = s->e[i].addr;

		if (a == EMPTY)
			break;
		if (a != p)
			continue;
		*size = s->e[i].size;
		found = 1;
		s->live--;
		if (s->e[(i + 1) & (s->cap - 1)].addr != EMPTY) {
			s->e[i].addr = TOMB;
			break;
		}
		/* The probe sequence ends here: so can the tombs before it. */
		do {
			s->e[i].addr = EMPTY;
			s->used--;
			i = (i - 1) & (s->cap - 1);
		} while (s->e[i].addr == TOMB);
		break;
	}
out:
	stripe_unlock(s);
	return found;
}

/* The calling thread's stack and thread pointer, at its first update. */
static MTREC_COLD void register_thread(void)
{
	pid_t tid = prim_gettid();
	struct thr *t = &thr[(unsigned)tid % NTHR];

	t->stack = (uintptr_t)__builtin_frame_address(0);
	t->tp = thread_pointer();
	__atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE);
	registered = 1;
}

static inline void table_enter(void)
{
	in_table = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (unlikely(!registered))
		register_thread();
}

/* Leave the table, making the updates signal handlers queued meanwhile
 * (a handler that comes after in_table is cleared makes its own, and any
 * still queued). */
static void table_leave(void)
{
	unsigned done = 0, n;

	for (;;) {
		while (done < (n = __atomic_load_n(&npend, __ATOMIC_RELAXED))) {
			struct pend q = pend[done];
			size_t size;

			/* no block address left behind in the TLS the scan reads */
			pend[done++].p = 0;
			if (q.add)
				do_add(q.p, q.size);
			else
				do_remove(q.p, &size);
		}
		if (!__atomic_compare_exchange_n(&npend, &n, 0, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		done = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		in_table = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&npend, __ATOMIC_RELAXED) == 0)
			return;
		in_table = 1;
	}
}

static MTREC_COLD void queue(uintptr_t p, size_t size, int add)
{
	unsigned n = npend;

	if (n >= NPEND) {
		__atomic_add_fetch(&missed, 1, __ATOMIC_RELAXED);
		return;
	}
	pend[n].p = p;
	pend[n].size = size;
	pend[n].add = add;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	npend = n + 1;
}

int mtrec_reach_init(void)
{
	thr = prim_map_anon(NTHR * sizeof(*thr));
	if (!thr)
		return -1;
	enabled = 1;
	return 0;
}

void mtrec_reach_add(const void *p, size_t size)
{
	if (!p || !enabled || __atomic_load_n(&frozen, __ATOMIC_RELAXED))
		return;
	if (unlikely(in_table)) {
		queue((uintptr_t)p, size, 1);
		return;
	}
	table_enter();
	do_add((uintptr_t)p, size);
	table_leave();
}

int mtrec_reach_remove(const void *p, size_t *size)
{
	int found;

	if (!p || !enabled || __atomic_load_n(&frozen, __ATOMIC_RELAXED))
		return 0;
	if (unlikely(in_table)) {
		queue((uintptr_t)p, 0, 0);
		return 0;
	}
	table_enter();
	found = do_remove((uintptr_t)p, size);
	table_leave();
	return found;
}

void mtrec_reach_fork_child(void)
{
	for (int i = 0; i < NSTRIPES; i++)
		stripes[i].lock = 0;
	frozen = 0;
	in_table = 0;
	npend = 0;
	registered = 0;
	/* A child's threads are not its parent's. */
	if (thr)
		madvise(thr, NTHR * sizeof(*thr), MADV_DONTNEED);
}

/* ---- the scan's state ----------------------------------------------- */

enum { UNREACHED, POSSIBLE, REACHABLE, INDIRECT };
static const char *const kind_name[] = { "definite", "possible", "reachable", "indirect" };

#define BUF_SIZE (1u << 20)	/* memory is read through this, in pieces */
#define BATCH 1024		/* blocks read by one system call (IOV_MAX pieces) */
#define GAP 256			/* blocks closer than this are read as one piece */
#define OUT_SIZE (64u << 10)	/* without a region: lines are handed on in pieces of this */
/* "# reach 0x", the address, " reachable\n": 21 bytes and the digits,
 * 12 where user space ends at 2^48 (x86-64 and arm64 unless the program
 * asks for more: lines that do not fit are counted). */
#define VERDICT_LINE(digits) (21 + (digits))
#define NOTES_ROOM (64u << 10)	/* what of the notes a region keeps room for */
#define TAIL_ROOM ((size_t)4096)	/* the lines after the notes: 8 of 512 bytes */
#define NOTES_SIZE (256u << 10)
#define MAX_ROOTS 65536	/* mapped as used: 8 MB at most */
#define MAX_OWN (NSTRIPES + 32)
#define MAX_ARENAS_RING 1024	/* arenas: glibc makes 8 per core at most */
#define RED_ZONE 128		/* below the stack pointer, still the thread's */
#define PAGE ((size_t)4096)

/* Memory of this file's: never a root. */
struct own {
	uintptr_t lo, hi;
	int unmap;		/* the scan's own, unmapped after it */
};

struct map {
	uintptr_t lo, hi;
	int kind;		/* MK_* */
	unsigned flags;		/* MF_* */
	const char *name;	/* its name, namelen bytes, in the text of /proc/self/maps (kept) */
	size_t namelen;
};
enum { MK_OTHER, MK_STACK, MK_HEAP };
/* What a mapping is to map_roots(). */
enum {
	MF_RW = 1,		/* readable and writable */
	MF_SHARED = 2,		/* MAP_SHARED */
	MF_FILE = 4,		/* named by a path: a file, or shared memory (/dev/zero, /SYSV, memfd) */
	MF_SKIP = 8,		/* never a root as a mapping (see map_roots) */
};

/* A range of memory [lo, hi). */
struct span {
	uintptr_t lo, hi;
};

struct root {
	uintptr_t lo, hi;
	uintptr_t from;		/* a stack's mapping starts here: [from, lo) is never scanned */
	int whole;		/* a stack inside a heap block: the block is not left out */
	int resident;		/* a mapping read only where its pages are in memory (scan_resident) */
	char what[108];
};

static struct scan {
	pid_t pid;
	struct ent *blk;	/* the live blocks, by address */
	size_t n;
	unsigned char *state;
	uint32_t *stack;	/* blocks to scan (each is pushed at most twice) */
	size_t top;
	uintptr_t lo, hi;	/* [lowest block, end of the highest) */
	size_t last;		/* the block find() found last */
	long leader;		/* the clique being made, or -1 while marking */
	int collect;		/* scanning lost blocks for their pointers to lost blocks */
	uint32_t cur;		/* ... the block being scanned */
	uint32_t *edge;		/* ... the blocks each points to: edge[first[b]] on, */
	size_t *first;		/* ... cnt[b] of them */
	uint32_t *cnt;
	size_t nedge;
	char *buf;
	struct iovec iov[BATCH];
	uint32_t ids[BATCH];
	uint64_t scanned;
	uint64_t unreadable_bytes;	/* of blocks */
	unsigned long unreadable;	/* blocks */
	int no_vm;		/* process_vm_readv refused: read through a pipe */
	int pipefd[2];
	struct map *maps;
	size_t nmaps;
	uintptr_t self_lo, self_hi;	/* libmtrec.so's writable segment */
	size_t nloads;		/* PT_LOAD segments of every object */
	struct span *skip;	/* never roots as mappings (map_roots), sorted, merged */
	size_t nskip, skip_cap;
	uint64_t *pagemap;	/* scan_resident's */
	unsigned char *incore;
	int pagemap_fd;		/* the descriptor + 1; 0: not opened yet, -1: cannot be */
	struct root *roots;
	size_t nroots;
	size_t tls_size;	/* PT_TLS of every object: the static TLS, about */
	struct own own[MAX_OWN];
	int nown;
	char *out, *notes;
	size_t outlen, noteslen;
	size_t outcap;		/* of out: OUT_SIZE, or the region's length */
	char *region;		/* out is a piece of the trace file (mtrec_reach_out) */
	unsigned long lines_lost;	/* verdicts that did not fit in the region */
	int tail;		/* writing the lines after the notes */
	unsigned long notes_lost;	/* notes that did not fit */
	unsigned long roots_lost;	/* roots beyond MAX_ROOTS */
	const struct mtrec_reach_out *to;
	size_t counts[8][256];	/* the sort's */
} sc;

static void own(const void *p, size_t len, int unmap)
{
	if (p && len && sc.nown < MAX_OWN) {
		sc.own[sc.nown].lo = (uintptr_t)p;
		sc.own[sc.nown].hi = (uintptr_t)p + len;
		sc.own[sc.nown].unmap = unmap;
		sc.nown++;
	}
}

static void *scan_map(size_t len)
{
	void *p = prim_map_anon(len);

	own(p, len, 1);
	return p;
}

/* ---- output --------------------------------------------------------- */

static void flush(void)
{
	if (sc.outlen && !sc.region) {
		sc.to->text(sc.out, sc.outlen);
		sc.outlen = 0;
	}
}

/* Is there room for len more bytes of lines?  A region's size is fixed:
 * the verdicts leave its last TAIL_ROOM bytes to the lines after them. */
static int room_for(size_t len)
{
	if (sc.outlen + len + (sc.region && !sc.tail ? TAIL_ROOM : 0) <= sc.outcap)
		return 1;
	if (sc.region) {
		sc.lines_lost++;
		return 0;
	}
	flush();
	return 1;
}

/* The pieces (the variable arguments after first, up to a NULL) and a
 * newline at buf + len (cap bytes).  va_start() is in it: clang's
 * analyzer, which says va_arg() reads an uninitialized list there, is
 * mistaken (as in prim_say). */
#define PUT_PIECES(buf, len, cap, first) \
	do { \
		char *o_ = (buf) + (len), *lim_ = (buf) + (cap) - 1; \
		va_list ap_; \
		va_start(ap_, first); \
		for (const char *s_ = (first); s_; s_ = va_arg(ap_, const char *)) \
			o_ = prim_puts(o_, lim_, s_); \
		va_end(ap_); \
		*o_++ = '\n'; \
		(len) = (size_t)(o_ - (buf)); \
	} while (0)

/* A line of the scan's output. */
static __attribute__((sentinel)) void put_line(const char *first, ...)
{
	if (!room_for(512))
		return;
	PUT_PIECES(sc.out, sc.outlen, sc.outcap, first); // NOLINT(clang-analyzer-valist.Uninitialized)
}

/* A "# reach unscanned" line, kept for after the verdicts. */
static __attribute__((sentinel)) void note(const char *first, ...)
{
	if (sc.noteslen + 512 > NOTES_SIZE) {
		sc.notes_lost++;
		return;
	}
	PUT_PIECES(sc.notes, sc.noteslen, NOTES_SIZE, first); // NOLINT(clang-analyzer-valist.Uninitialized)
}

/* "# reach ADDR KIND" (a million of them take a tenth of a second with
 * put_line, half of it in formatting). */
static void put_verdict(uintptr_t addr, int kind)
{
	static const char digits[] = "0123456789abcdef";
	const char *name = kind_name[kind];
	size_t nlen = strlen(name);
	char *o;
	int d = 1;

	while (d < 16 && (addr >> (4 * d)) != 0)
		d++;
	if (!room_for(10 + (size_t)d + 1 + nlen + 1))
		return;
	o = sc.out + sc.outlen;
	memcpy(o, "# reach 0x", 10);
	o += 10;
	for (int i = d - 1; i >= 0; i--)
		*o++ = digits[(addr >> (4 * i)) & 15];
	*o++ = ' ';
	memcpy(o, name, nlen);
	o[nlen] = '\n';
	sc.outlen = (size_t)(o + nlen + 1 - sc.out);
}

/* Numbers as text for the lines: dec and hex (with 0x) into b[24]. */
static const char *dec(char *b, unsigned long v)
{
	*prim_putu(b, b + 23, v) = '\0';
	return b;
}

static const char *hex(char *b, unsigned long v)
{
	b[0] = '0';
	b[1] = 'x';
	*prim_putx(b + 2, b + 23, v) = '\0';
	return b;
}

/* ---- reading memory that may be gone -------------------------------- */

/* Copy len bytes at src (in this process) to dst: the length of the
 * prefix copied, short at the first page that cannot be read. */
static size_t read_mem(void *dst, uintptr_t src, size_t len)
{
	size_t total = 0;

	if (!sc.no_vm) {
		struct iovec l = { dst, len }, r = { (void *)src, len };
		long n = syscall(SYS_process_vm_readv, sc.pid, &l, 1ul, &r, 1ul, 0ul);

		if (n >= 0)
			return (size_t)n;
		if (errno != ENOSYS && errno != EPERM)
			return 0;
		sc.no_vm = 1;	/* a seccomp filter, or an old kernel */
	}
	if (sc.pipefd[0] < 0 && syscall(SYS_pipe2, sc.pipefd, O_CLOEXEC) < 0) {
		sc.pipefd[0] = sc.pipefd[1] = -1;
		return 0;
	}
	/* write() from memory that cannot be read fails with EFAULT, or
	 * writes the pipe buffers (of a page each, from the start of the
	 * write) it filled before: so that these are the source's pages, a
	 * first piece goes up to the first page boundary. */
	while (total < len) {
		size_t off = (src + total) % PAGE, piece = off ? PAGE - off : 16 * PAGE;

		if (piece > len - total)
			piece = len - total;
		long w = syscall(SYS_write, sc.pipefd[1], src + total, piece);

		if (w <= 0)
			break;
		for (long got = 0, r; got < w; got += r)
			if ((r = syscall(SYS_read, sc.pipefd[0], (char *)dst + total + got,
					 (size_t)(w - got))) <= 0)
				return total;
		total += (size_t)w;
		if ((size_t)w < piece)
			break;
	}
	return total;
}

/* One word; 0 when it cannot be read. */
static uintptr_t peek(uintptr_t a)
{
	uintptr_t w = 0;

	return read_mem(&w, a, sizeof(w)) == sizeof(w) ? w : 0;
}

/* ---- marking -------------------------------------------------------- */

/* Does block k hold address w? */
static inline int holds(size_t k, uintptr_t w)
{
	return w - sc.blk[k].addr < (sc.blk[k].size ? sc.blk[k].size : 1);
}

/* The block holding address w, or -1.  Pointers next to each other
 * often point to blocks next to each other: the last block found and
 * the next one are tried first. */
static inline long find(uintptr_t w)
{
	size_t l = 0, r = sc.n, size, last = sc.last;

	if (w - sc.lo >= sc.hi - sc.lo)
		return -1;
	if (holds(last, w))
		return (long)last;
	if (last + 1 < sc.n && holds(last + 1, w))
		return (long)(sc.last = last + 1);
	while (r - l > 1) {
		size_t m = (l + r) / 2;

		if (sc.blk[m].addr <= w)
			l = m;
		else
			r = m;
	}
	size = sc.blk[l].size ? sc.blk[l].size : 1;	/* as valgrind: malloc(0) has a byte */
	if (w - sc.blk[l].addr >= size)
		return -1;
	sc.last = l;
	return (long)l;
}

static inline void push(size_t k)
{
	sc.stack[sc.top++] = (uint32_t)k;
}

/* Block k is pointed at; start: at its first byte; definite: from a
 * root, or from a block reached by start pointers only (valgrind's
 * is_prior_definite). */
static inline void reached(size_t k, int start, int definite)
{
	unsigned char st = sc.state[k];

	if (sc.collect) {
		if (st == UNREACHED && k != sc.cur && sc.edge)
			sc.edge[sc.nedge++] = (uint32_t)k;
		return;
	}
	if (sc.leader >= 0) {
		if (st == UNREACHED && (long)k != sc.leader) {
			sc.state[k] = INDIRECT;
			push(k);
		}
		return;
	}
	if (st == REACHABLE)
		return;
	if (start && definite) {
		sc.state[k] = REACHABLE;
		push(k);
	} else if (st == UNREACHED) {
		sc.state[k] = POSSIBLE;
		push(k);
	}
}

/* The aligned words of [at, at + len), whose copy is at buf. */
static void scan_words(const char *buf, uintptr_t at, size_t len, int definite)
{
	uintptr_t a = (at + 7) & ~(uintptr_t)7, end = (at + len) & ~(uintptr_t)7;

	for (; a < end; a += 8) {
		uintptr_t w;
		long k;

		memcpy(&w, buf + (a - at), sizeof(w));
		if (w - sc.lo >= sc.hi - sc.lo)
			continue;
		if ((k = find(w)) >= 0)
			reached((size_t)k, w == sc.blk[k].addr, definite);
	}
}

/* Read and scan [lo, hi): the bytes that could not be read. */
static uint64_t scan_range(uintptr_t lo, uintptr_t hi, int definite)
{
	uint64_t lost = 0;

	while (lo < hi) {
		size_t want = hi - lo < BUF_SIZE ? hi - lo : BUF_SIZE;
		size_t got = read_mem(sc.buf, lo, want);

		scan_words(sc.buf, lo, got, definite);
		sc.scanned += got;
		lo += got;
		if (got < want) {	/* skip the page that failed */
			uintptr_t next = (lo | (PAGE - 1)) + 1;

			if (next > hi || next < lo)
				next = hi;
			lost += next - lo;
			lo = next;
		}
	}
	return lost;
}

static inline int block_definite(size_t k)
{
	return sc.state[k] != POSSIBLE;
}

static void block_unreadable(uint64_t bytes)
{
	if (bytes) {
		sc.unreadable++;
		sc.unreadable_bytes += bytes;
	}
}

/* Block k's whole words. */
static inline size_t block_words(size_t k)
{
	return sc.blk[k].size & ~(size_t)7;
}

/* Block b is scanned now, and has been: what the scan of lost blocks
 * (cliques) keeps of it. */
static inline void block_begin(uint32_t b)
{
	if (sc.collect && sc.first) {
		sc.cur = b;
		sc.first[b] = sc.nedge;
	}
}

static inline void block_end(uint32_t b)
{
	if (sc.collect && sc.cnt && sc.first)
		sc.cnt[b] = (uint32_t)(sc.nedge - sc.first[b]);
}

/* Scan block b, page by page. */
static void scan_block_alone(uint32_t b)
{
	block_begin(b);
	block_unreadable(scan_range(sc.blk[b].addr, sc.blk[b].addr + block_words(b), block_definite(b)));
	block_end(b);
}

/* Block numbers in increasing order, which is the blocks' address order
 * (a Shell sort: no recursion, no memory). */
static void sort_ids(uint32_t *ids, int k)
{
	static const int gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++)
		for (int gap = gaps[g], i = gap; i < k; i++) {
			uint32_t v = ids[i];
			int j = i;

			for (; j >= gap && ids[j - gap] > v; j -= gap)
				ids[j] = ids[j - gap];
			ids[j] = v;
		}
}

/* Scan the blocks on the stack until it is empty.  Up to BATCH of them at
 * a time are read by one system call, the ones that lie close together as
 * one piece of memory (a system call's cost is in the pieces, the bytes
 * between them are few). */
static void scan_blocks(void)
{
	while (sc.top) {
		size_t total = 0, len, off = 0;
		int k = 0, m = 0;
		long n;

		while (sc.top && k < BATCH) {
			uint32_t b = sc.stack[sc.top - 1];

			len = block_words(b);
			if (len > BUF_SIZE / 2) {	/* alone, in pieces */
				if (k)
					break;
				sc.top--;
				scan_block_alone(b);
				break;
			}
			if (total + len > BUF_SIZE / 2)
				break;
			sc.top--;
			if (len) {
				sc.ids[k++] = b;
				total += len;
			}
		}
		if (!k)
			continue;
		sort_ids(sc.ids, k);
		total = 0;
		for (int i = 0; i < k; i++) {
			uintptr_t at = sc.blk[sc.ids[i]].addr;
			struct iovec *v = m ? &sc.iov[m - 1] : NULL;

			len = block_words(sc.ids[i]);
			if (v && at >= (uintptr_t)v->iov_base + v->iov_len &&
			    at - ((uintptr_t)v->iov_base + v->iov_len) <= GAP) {
				total += at + len - ((uintptr_t)v->iov_base + v->iov_len);
				v->iov_len = at + len - (uintptr_t)v->iov_base;
			} else {
				sc.iov[m].iov_base = (void *)at;
				sc.iov[m++].iov_len = len;
				total += len;
			}
		}
		if (!sc.no_vm) {
			struct iovec l = { sc.buf, total };

			n = syscall(SYS_process_vm_readv, sc.pid, &l, 1ul, sc.iov, (unsigned long)m, 0ul);
		} else {	/* through the pipe, piece by piece */
			n = 0;
			for (int j = 0; j < m; j++) {
				size_t got = read_mem(sc.buf + n, (uintptr_t)sc.iov[j].iov_base,
						      sc.iov[j].iov_len);

				n += (long)got;
				if (got < sc.iov[j].iov_len)
					break;
			}
		}
		if (n != (long)total) {
			/* some of it could not be read: block by block, page by page */
			for (int i = 0; i < k; i++)
				scan_block_alone(sc.ids[i]);
			continue;
		}
		for (int i = 0, j = 0; i < k; i++) {
			uintptr_t at = sc.blk[sc.ids[i]].addr;

			sc.scanned += block_words(sc.ids[i]);
			while (at >= (uintptr_t)sc.iov[j].iov_base + sc.iov[j].iov_len)
				off += sc.iov[j++].iov_len;
			block_begin(sc.ids[i]);
			scan_words(sc.buf + off + (at - (uintptr_t)sc.iov[j].iov_base), at,
				   block_words(sc.ids[i]), block_definite(sc.ids[i]));
			block_end(sc.ids[i]);
		}
	}
}

/* ---- the copy of the table ------------------------------------------ */

/* LSD radix sort of the blocks by address, a byte at a time, skipping
 * the bytes all addresses share: 0, or -1 without memory. */
static int sort_blocks(void)
{
	size_t len = sc.n * sizeof(struct ent);
	struct ent *from = sc.blk, *to, *tmp;

	if (sc.n < 2)
		return 0;
	if ((tmp = prim_map_anon(len)) == NULL)
		return -1;
	to = tmp;
	memset(sc.counts, 0, sizeof(sc.counts));
	for (size_t i = 0; i < sc.n; i++)
		for (int d = 0; d < 8; d++)
			sc.counts[d][(from[i].addr >> (8 * d)) & 0xff]++;
	for (int d = 0; d < 8; d++) {
		size_t *c = sc.counts[d], sum = 0;
		struct ent *t;

		if (c[(from[0].addr >> (8 * d)) & 0xff] == sc.n)
			continue;	/* every address has that byte */
		for (int v = 0; v < 256; v++) {
			size_t x = c[v];

			c[v] = sum;
			sum += x;
		}
		for (size_t i = 0; i < sc.n; i++)
			to[c[(from[i].addr >> (8 * d)) & 0xff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != sc.blk)
		memcpy(sc.blk, from, len);
	munmap(tmp, len);
	return 0;
}

/* Take s's lock, unless it is not let go before deadline (a thread
 * that a signal handler of the program's holds inside the table, and
 * does not give back): 1 when taken. */
static int lock_before(struct stripe *s, uint64_t deadline)
{
	for (unsigned spins = 1; __atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE); spins++) {
		if (spins % 256)
			cpu_relax();
		else if (prim_monotonic_ns() > deadline)
			return 0;
		else
			syscall(SYS_sched_yield);
	}
	return 1;
}

/* The entries of a stripe whose lock was not let go, read as they are
 * (through read_mem: its table may be replaced meanwhile), up to room. */
static void copy_held(const struct stripe *s, size_t room)
{
	struct ent *e = __atomic_load_n(&s->e, __ATOMIC_ACQUIRE);
	size_t cap = __atomic_load_n(&s->cap, __ATOMIC_ACQUIRE);
	size_t per = BUF_SIZE / sizeof(struct ent);

	for (size_t i = 0; i < cap && room; i += per) {
		size_t want = (cap - i < per ? cap - i : per) * sizeof(struct ent);
		size_t got = read_mem(sc.buf, (uintptr_t)(e + i), want) / sizeof(struct ent);
		const struct ent *c = (const struct ent *)(void *)sc.buf;

		for (size_t j = 0; j < got && room; j++)
			if (c[j].addr > TOMB) {
				sc.blk[sc.n++] = c[j];
				room--;
			}
		if (got * sizeof(struct ent) < want)
			break;
	}
}

/* A stripe's entries, up to room; the number left out for want of room. */
static size_t copy_stripe(const struct stripe *s, size_t room)
{
	size_t left = 0;

	for (size_t j = 0; j < s->cap; j++)
		if (s->e[j].addr > TOMB) {
			if (room) {
				sc.blk[sc.n++] = s->e[j];
				room--;
			} else {
				left++;
			}
		}
	return left;
}

/* The blocks a scan makes room for (the verdicts' room in the file):
 * those live now, and an eighth more for those allocated while the table
 * is copied (or before it is frozen); blocks beyond are said unscanned. */
static size_t table_room(void)
{
	size_t n = 0;

	for (int i = 0; i < NSTRIPES; i++)
		n += __atomic_load_n(&stripes[i].live, __ATOMIC_RELAXED);
	return n + n / 8 + 4096;
}

/* Copy the table, sorted, room blocks at most: 0, or -1 without memory.
 * At exit the table is frozen first, and each stripe waited for once, so
 * that no update is under way in it.  While the program runs (live) each
 * stripe is copied under its lock, room kept for the blocks allocated
 * meanwhile.  Either way, a stripe not let go within half a second is
 * read as it is. */
static int copy_table(int live, size_t room)
{
	uint64_t deadline = prim_monotonic_ns() + 500000000u;
	int held[NSTRIPES], stuck = 0;
	size_t n = 0, left = 0;

	if (!live)
		__atomic_store_n(&frozen, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < NSTRIPES; i++) {
		if (live) {
			held[i] = 0;
			n += __atomic_load_n(&stripes[i].cap, __ATOMIC_ACQUIRE) / 2;
			continue;
		}
		held[i] = !lock_before(&stripes[i], deadline);
		if (held[i]) {
			stuck++;
			n += __atomic_load_n(&stripes[i].cap, __ATOMIC_ACQUIRE);
			continue;
		}
		stripe_unlock(&stripes[i]);
		/* Frozen: the stripe no longer changes. */
		n += stripes[i].live;
		own(stripes[i].e, stripes[i].cap * sizeof(struct ent), 0);
	}
	if (live)
		n += n / 4 + 1024;	/* a stripe is at most half full, and grows meanwhile */
	if (n > room)
		n = room;
	if (n > UINT32_MAX / 2)
		return -1;
	sc.blk = scan_map((n + 1) * sizeof(struct ent));
	sc.state = scan_map(n + 1);
	sc.stack = scan_map((2 * n + 1) * sizeof(uint32_t));
	if (!sc.blk || !sc.state || !sc.stack)
		return -1;
	for (int i = 0; i < NSTRIPES; i++) {
		if (live) {
			if (!lock_before(&stripes[i], deadline)) {
				stuck++;
				copy_held(&stripes[i], n - sc.n);
				continue;
			}
			left += copy_stripe(&stripes[i], n - sc.n);
			own(stripes[i].e, stripes[i].cap * sizeof(struct ent), 0);
			stripe_unlock(&stripes[i]);
			continue;
		}
		if (held[i]) {
			copy_held(&stripes[i], n - sc.n);
			continue;
		}
		left += copy_stripe(&stripes[i], n - sc.n);
	}
	if (left) {
		char a[24];

		note("# reach unscanned table: ", dec(a, (unsigned long)left), " blocks allocated "
		     "while it was copied", SAY_END);
	}
	if (stuck) {
		char a[24];

		note("# reach unscanned table: ", dec(a, (unsigned long)stuck), " of 64 parts held by a "
		     "thread that did not let go (in a signal handler?), read as they were", SAY_END);
	}
	if (sort_blocks() < 0)
		return -1;
	sc.lo = sc.n ? sc.blk[0].addr : 1;
	sc.hi = sc.lo;
	for (size_t i = 0; i < sc.n; i++) {
		uintptr_t end = sc.blk[i].addr + (sc.blk[i].size ? sc.blk[i].size : 1);

		if (end > sc.hi)
			sc.hi = end;
	}
	return 0;
}

/* ---- /proc/self/maps ------------------------------------------------ */

static uintptr_t parse_hex(const char **s)
{
	uintptr_t v = 0;
	const char *p = *s;
	int d;

	if (p[0] == '0' && p[1] == 'x')
		p += 2;
	for (;; p++) {
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v * 16 + (uintptr_t)d;
	}
	*s = p;
	return v;
}

/* The whole of /proc/self/maps, in a mapping of *cap bytes at *text:
 * its length (0: it cannot be read). */
static size_t read_maps(char **text, size_t *cap)
{
	for (*cap = 1u << 20; *cap <= (1u << 30); *cap *= 4) {
		size_t len = 0;
		long n = 0;
		int fd;

		if ((*text = prim_map_anon(*cap)) == NULL)
			return 0;
		if ((fd = prim_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0)) < 0)
			break;
		while (len < *cap && (n = prim_read(fd, *text + len, *cap - len)) > 0)
			len += (size_t)n;
		prim_close(fd);
		if (len < *cap)
			return n < 0 ? 0 : len;
		munmap(*text, *cap);	/* too small: a larger one */
		*text = NULL;
	}
	if (*text)
		munmap(*text, *cap);
	*text = NULL;
	return 0;
}

static int starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(s, prefix, n) == 0;
}

/* Is the mapping's file, NAME (len bytes, a path), a device's?  Its
 * memory may be a device's registers: valgrind leaves such mappings out
 * too, but for /dev/zero.  A file of /dev/shm or of hugetlbfs
 * (/dev/hugepages) is memory; a name that cannot be looked at is taken
 * for a device. */
static int device_map(const char *name, size_t len)
{
	char *path = sc.buf;
	struct stat st;

	if (!starts(name, len, "/dev/") || starts(name, len, "/dev/zero") ||
	    starts(name, len, "/dev/shm/"))
		return 0;
	if (len >= BUF_SIZE)
		return 1;
	memcpy(path, name, len);
	path[len] = '\0';
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0)
		return 1;
	return S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode);
}

/* What the mapping m is, from its PERMS and NAME (len bytes). */
static unsigned map_flags(const char *perms, const char *name, size_t len)
{
	unsigned f = 0;

	if (perms[0] == 'r' && perms[1] == 'w')
		f |= MF_RW;
	if (perms[3] == 's')
		f |= MF_SHARED;
	if (!len)
		return f;
	if (name[0] == '/') {
		f |= MF_FILE;
		if (f & MF_RW && device_map(name, len))
			f |= MF_SKIP;
		return f;
	}
	/* "[anon:NAME]", "[anon_shmem:NAME]": memory the program named
	 * (prctl PR_SET_VMA_ANON_NAME), but glibc's own ones (with the
	 * tunable glibc.mem.decorate_maps): its malloc's arenas and mmapped
	 * chunks, its threads' stacks.  Any other name is the kernel's:
	 * [heap], [stack], [vvar], and the objects it maps through an
	 * anonymous inode or a socket (io_uring rings, perf buffers, DMA
	 * buffers, packet rings: some are a device's memory). */
	if ((starts(name, len, "[anon:") || starts(name, len, "[anon_shmem:")) &&
	    !starts(name, len, "[anon:glibc: malloc") && !starts(name, len, "[anon:glibc: pthread stack"))
		return f;
	return f | MF_SKIP;
}

/* "LO-HI PERMS OFFSET DEV INODE [NAME]" lines into sc.maps: 0, or -1.
 * The text is kept for the names, till the end of the scan. */
static int load_maps(void)
{
	char *text;
	size_t cap, len = read_maps(&text, &cap), lines = 0;
	const char *p, *end = text + len;

	if (!len)
		return -1;
	own(text, cap, 1);
	for (p = text; p < end; p++)
		lines += *p == '\n';
	if ((sc.maps = scan_map((lines + 1) * sizeof(struct map))) == NULL)
		return -1;
	for (p = text; p < end;) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *name, *perms;
		struct map *m = &sc.maps[sc.nmaps];

		if (!eol)
			eol = end;
		m->lo = parse_hex(&p);
		if (*p == '-')
			p++;
		m->hi = parse_hex(&p);
		name = p;
		perms = "----";
		for (int f = 0; f < 4 && name < eol; f++) {	/* past PERMS ... INODE */
			while (name < eol && *name == ' ')
				name++;
			if (f == 0 && eol - name >= 4)
				perms = name;
			while (name < eol && *name != ' ')
				name++;
		}
		while (name < eol && *name == ' ')
			name++;
		if (eol - name >= 7 && memcmp(name, "[stack]", 7) == 0)
			m->kind = MK_STACK;
		else if (eol - name >= 6 && memcmp(name, "[heap]", 6) == 0)
			m->kind = MK_HEAP;
		else
			m->kind = MK_OTHER;
		m->name = name;
		m->namelen = (size_t)(eol - name);
		m->flags = map_flags(perms, name, m->namelen);
		if (m->hi > m->lo)
			sc.nmaps++;
		p = eol + 1;
	}
	return 0;
}

static const struct map *map_of(uintptr_t a)
{
	size_t l = 0, r = sc.nmaps;

	while (l < r) {
		size_t m = (l + r) / 2;

		if (sc.maps[m].hi <= a)
			l = m + 1;
		else if (sc.maps[m].lo > a)
			r = m;
		else
			return &sc.maps[m];
	}
	return NULL;
}

/* ---- roots ---------------------------------------------------------- */

/* A root [lo, hi) named WHAT (the pieces a, b). */
static struct root *add_root(uintptr_t lo, uintptr_t hi, const char *a, const char *b)
{
	struct root *r;
	char *o;

	if (hi <= lo)
		return NULL;
	if (sc.nroots >= MAX_ROOTS) {
		sc.roots_lost++;
		return NULL;
	}
	r = &sc.roots[sc.nroots++];
	r->lo = lo;
	r->hi = hi;
	r->from = lo;
	r->whole = 0;
	r->resident = 0;
	o = prim_puts(r->what, r->what + sizeof(r->what) - 1, a);
	o = prim_puts(o, r->what + sizeof(r->what) - 1, b ? b : "");
	*o = '\0';
	return r;
}

static struct root *thread_root(uintptr_t lo, uintptr_t hi, const char *what, pid_t tid)
{
	char n[24];

	return add_root(lo, hi, what, dec(n, (unsigned long)tid));
}

/* The first block that ends after a. */
static size_t first_block_after(uintptr_t a)
{
	size_t l = 0, r = sc.n;

	while (l < r) {
		size_t m = (l + r) / 2;

		if (sc.blk[m].addr + sc.blk[m].size <= a)
			l = m + 1;
		else
			r = m;
	}
	return l;
}

/* Scan [lo, hi) of a root, less this file's memory (from own[from] on)
 * and, unless whole, the heap blocks: the bytes that could not be read. */
static uint64_t scan_root_part(uintptr_t lo, uintptr_t hi, int whole, int from)
{
	uint64_t lost = 0;

	for (int i = from; i < sc.nown; i++)
		if (sc.own[i].lo < hi && sc.own[i].hi > lo) {
			if (sc.own[i].lo > lo)
				lost += scan_root_part(lo, sc.own[i].lo, whole, i + 1);
			if (sc.own[i].hi < hi)
				lost += scan_root_part(sc.own[i].hi, hi, whole, i + 1);
			return lost;
		}
	if (whole || !sc.n)
		return scan_range(lo, hi, 1);
	for (size_t k = first_block_after(lo); lo < hi && k < sc.n && sc.blk[k].addr < hi; k++) {
		if (sc.blk[k].addr > lo)
			lost += scan_range(lo, sc.blk[k].addr, 1);
		if (sc.blk[k].addr + sc.blk[k].size > lo)
			lo = sc.blk[k].addr + sc.blk[k].size;
	}
	if (lo < hi)
		lost += scan_range(lo, hi, 1);
	return lost;
}

#define RES_PAGES 8192		/* pages scan_resident looks at a time */
#define PM_PRESENT (1ull << 63)	/* /proc/PID/pagemap: in memory */
#define PM_SWAPPED (1ull << 62)	/* ... swapped out */

/* Which of n pages from page-aligned at hold data: in[i] & 1 for page i;
 * 0, or -1 when neither /proc/self/pagemap nor mincore() tells. */
static int resident_pages(uintptr_t at, size_t n, size_t pg, unsigned char *in)
{
	size_t len = n * sizeof(uint64_t);
	int pm = 0;

	if (!sc.pagemap_fd) {
		int fd = prim_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);

		sc.pagemap_fd = fd < 0 ? -1 : fd + 1;
	}
	if (sc.pagemap_fd > 0 &&
	    syscall(SYS_pread64, sc.pagemap_fd - 1, sc.pagemap, len, (off_t)(at / pg * sizeof(uint64_t))) ==
	    (long)len)
		pm = 1;
	/* mincore: pages in the page cache, whether this process touched
	 * them or not (shared memory another process wrote, a file's). */
	if (mincore((void *)at, n * pg, in) != 0) {
		if (!pm)
			return -1;
		memset(in, 0, n);
	}
	for (size_t i = 0; pm && i < n; i++)
		if (sc.pagemap[i] & (PM_PRESENT | PM_SWAPPED))
			in[i] |= 1;
	return 0;
}

/* Scan the pages of [lo, hi) that hold data (in memory, or swapped out):
 * a large reservation is not read page after page of nothing, a file's
 * or shared memory's holes are not filled (a read would allocate them):
 * the bytes that could not be read, or UINT64_MAX when which pages hold
 * data cannot be told. */
static uint64_t scan_resident(uintptr_t lo, uintptr_t hi)
{
	long sz = sysconf(_SC_PAGESIZE);
	size_t pg = sz > 0 ? (size_t)sz : PAGE;	/* pagemap's and mincore's unit */
	uint64_t lost = 0;

	if (!sc.pagemap)
		sc.pagemap = scan_map(RES_PAGES * sizeof(uint64_t));
	if (!sc.incore)
		sc.incore = scan_map(RES_PAGES);
	if (!sc.pagemap || !sc.incore)
		return UINT64_MAX;
	for (uintptr_t at = lo & ~(uintptr_t)(pg - 1); at < hi;) {
		size_t n = (hi - at + pg - 1) / pg;

		if (n > RES_PAGES)
			n = RES_PAGES;
		if (resident_pages(at, n, pg, sc.incore) < 0)
			return UINT64_MAX;
		for (size_t i = 0; i < n;) {
			size_t j = i;
			uintptr_t a, b;

			while (j < n && (sc.incore[j] & 1))
				j++;
			a = at + i * pg;
			b = at + j * pg;
			if (j > i)
				lost += scan_root_part(a > lo ? a : lo, b < hi ? b : hi, 0, 0);
			while (j < n && !(sc.incore[j] & 1))
				j++;
			i = j;
		}
		at += n * pg;
	}
	return lost;
}

static void scan_roots(void)
{
	char a[24], b[24], c[24];

	scan_blocks();		/* the system calls' arguments, already marked */
	for (size_t i = 0; i < sc.nroots; i++) {
		const struct root *r = &sc.roots[i];
		uint64_t lost = r->resident ? scan_resident(r->lo, r->hi) :
			scan_root_part(r->lo, r->hi, r->whole, 0);

		scan_blocks();
		if (lost == UINT64_MAX)
			note("# reach unscanned ", r->what, " ", hex(a, r->lo), "-", hex(b, r->hi),
			     ": which of its pages hold data cannot be told (neither /proc/self/pagemap "
			     "nor mincore can be read)", SAY_END);
		else if (lost)
			note("# reach unscanned ", r->what, " ", hex(a, r->lo), "-", hex(b, r->hi), ": ",
			     dec(c, lost), " bytes unreadable", SAY_END);
	}
	if (sc.pagemap_fd > 0)
		prim_close(sc.pagemap_fd - 1);
	sc.pagemap_fd = 0;
}

/* glibc's main arena, the malloc_state in libc's data (2.26 on, 64-bit):
 * its top chunk, bins and fast bins point at chunk headers, and the
 * header of a chunk lies in the last bytes of the live block before it
 * (top, after the latest block: a block whose only pointer was dropped
 * would be "possible" for that).  valgrind's malloc leaves glibc's unused,
 * so it is never a root here either.  Found by its shape: the bins of an
 * empty bin point at themselves, less 16 (bin_at()), and the arenas'
 * next fields make a ring that comes back to it. */
#define MSTATE_BINS 112		/* offsetof(struct malloc_state, bins) */
#define MSTATE_NBINS 127	/* pairs of bins: NBINS - 1 */
#define MSTATE_NEXT 2160	/* offsetof(struct malloc_state, next) */
#define MSTATE_SIZE 2200

static int arena_ring(uintptr_t ms)
{
	uintptr_t a = ms;

	for (int hops = 0; hops < 2 * MAX_ARENAS_RING; hops++) {
		if (!a || a % 8 || (a = peek(a + MSTATE_NEXT)) == 0)
			return 0;
		if (a == ms)
			return 1;
	}
	return 0;
}

static void skip_main_arena(uintptr_t lo, uintptr_t hi)
{
	uintptr_t first = 0;

	lo = (lo + 7) & ~(uintptr_t)7;
	if (hi < lo + MSTATE_SIZE)
		return;
	for (uintptr_t at = lo; !first;) {
		size_t want = hi - at < BUF_SIZE ? hi - at : BUF_SIZE;
		size_t got = read_mem(sc.buf, at, want) / 8;
		const uintptr_t *w = (const uintptr_t *)(void *)sc.buf;

		for (size_t i = 0; i + 1 < got; i++)
			if (w[i] == at + 8 * i - 16 && w[i + 1] == w[i]) {
				first = at + 8 * i;
				break;
			}
		if (!first && (got * 8 < want || at + want >= hi))
			return;
		at += want - 8;	/* a pair across the pieces */
	}
	/* first is the lowest empty bin's: the bins start up to 126 pairs
	 * before it; the self-pointers look alike at every shift, the ring
	 * of next fields does not. */
	for (int i = 0; first && i < MSTATE_NBINS; i++) {
		uintptr_t ms = first - 16 * (uintptr_t)i - MSTATE_BINS;

		if (ms < lo || ms + MSTATE_SIZE > hi)
			continue;
		if (arena_ring(ms)) {
			own((const void *)ms, MSTATE_SIZE, 0);
			return;
		}
	}
}

/* The writable PT_LOAD segments of every object but the recorder. */
static int object_roots(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t self = (uintptr_t)&sc;

	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type == PT_TLS)
			sc.tls_size += ph->p_memsz + ph->p_align;
		if (ph->p_type == PT_LOAD)
			sc.nloads++;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
			continue;
		if (self >= lo && self < hi) {
			sc.self_lo = lo;
			sc.self_hi = hi;
			continue;
		}
		if (info->dlpi_name && strstr(info->dlpi_name, "/libc.so."))
			skip_main_arena(lo, hi);
		add_root(lo, hi, info->dlpi_name && *info->dlpi_name ? info->dlpi_name
			 : "the executable", NULL);
	}
	return 0;
}

/* The static TLS and thread control block around tp, when they are not
 * on the thread's stack (the main thread's: memory the dynamic linker
 * mapped), and glibc's DTV, which holds the dynamic TLS blocks. */
static void tls_roots(uintptr_t tp, pid_t tid)
{
	const struct map *m = map_of(tp);
	size_t span = sc.tls_size + 4 * PAGE;
	uintptr_t lo = tp > span ? tp - span : 0, hi = tp + span;

	if (m && m->kind != MK_HEAP) {
		if (lo < m->lo)
			lo = m->lo;
		if (hi > m->hi)
			hi = m->hi;
		thread_root(lo, hi, "TLS of thread ", tid);
	}
#if defined(__GLIBC__) && (defined(__x86_64__) || defined(__aarch64__))
	{
		/* The TCB's dtv points at dtv[1]: dtv[0] is the generation,
		 * dtv[-1] the number of entries (16 bytes each) after it. */
#if defined(__x86_64__)
		uintptr_t dtv = peek(tp + 8);
#else
		uintptr_t dtv = peek(tp);
#endif
		uintptr_t len = dtv > 16 ? peek(dtv - 16) : 0;

		if (len && len < 65536 && !(m && m->kind != MK_HEAP && dtv - 16 >= lo &&
					    dtv + 16 * (len + 1) <= hi))
			thread_root(dtv - 16, dtv + 16 * (len + 1), "DTV of thread ", tid);
	}
#endif
}

/* Thread tid's stack, from its stack pointer sp (0: not known) or, when
 * that is not known, whole; sample: an address it noted in its stack
 * (0: none), tp: its thread pointer (0: not known). */
static void stack_roots(pid_t tid, uintptr_t sample, uintptr_t sp, uintptr_t tp)
{
	uintptr_t at = sp ? sp : sample, lo, hi;
	const struct map *m = map_of(at), *ms;
	struct root *r;
	char n[24];
	long k;

	if (!m) {
		note("# reach unscanned stack of thread ", dec(n, (unsigned long)tid),
		     ": not mapped", SAY_END);
		return;
	}
	if ((k = find(at)) >= 0) {
		/* a stack the program allocated: from sp to the block's end */
		lo = sc.blk[k].addr;
		hi = lo + sc.blk[k].size;
		if (sp >= lo + RED_ZONE && sp < hi)
			lo = sp - RED_ZONE;
		if ((r = thread_root(lo, hi, "stack of thread ", tid)) != NULL)
			r->whole = 1;
	} else if (m->kind == MK_HEAP) {
		note("# reach unscanned stack of thread ", dec(n, (unsigned long)tid),
		     ": in the heap, outside any live block", SAY_END);
	} else {
		lo = m->lo;
		hi = m->hi;
#if defined(__x86_64__)
		/* glibc puts the thread's TCB (struct pthread, tp at its
		 * start) at the top of its stack mapping: nothing of the
		 * thread's lies above, and the mapping may have merged with
		 * the next one. */
		if (m->kind != MK_STACK && tp >= lo && tp < hi && hi - tp > PAGE)
			hi = tp + PAGE;
#endif
		if (sp >= lo + RED_ZONE && sp < hi)
			lo = (sp - RED_ZONE) & ~(uintptr_t)7;
		if ((r = thread_root(lo, hi, "stack of thread ", tid)) != NULL)
			r->from = m->lo;	/* below the stack pointer: stale */
	}
	/* A thread on another stack (a signal's) keeps its own. */
	if (sp && sample && (ms = map_of(sample)) != NULL && ms != m && ms->kind != MK_HEAP &&
	    find(sample) < 0)
		thread_root(ms->lo, ms->hi, "stack of thread ", tid);
	if (tp && !(tp >= m->lo && tp < m->hi))
		tls_roots(tp, tid);
}

/* A blocked thread's /proc/self/task/TID/syscall: its stack pointer (0
 * when it runs), and its system call's arguments, marked. */
static uintptr_t blocked_thread(pid_t tid)
{
	char path[64], text[256], *o;
	const char *p, *end;
	uintptr_t v[10];
	int fd, nv = 0;
	long len;

	o = prim_puts(path, path + sizeof(path) - 1, "/proc/self/task/");
	o = prim_putu(o, path + sizeof(path) - 1, (unsigned long)tid);
	o = prim_puts(o, path + sizeof(path) - 1, "/syscall");
	*o = '\0';
	if ((fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0)) < 0)
		return 0;
	len = prim_read(fd, text, sizeof(text) - 1);
	prim_close(fd);
	if (len <= 0 || text[0] == 'r')		/* "running" */
		return 0;
	end = text + len;
	for (p = text; p < end && nv < 10;) {
		while (p < end && (*p == ' ' || *p == '\n'))
			p++;
		if (p >= end)
			break;
		if (*p == '-') {	/* "-1": blocked, not in a system call */
			v[nv++] = 0;
			while (p < end && *p != ' ')
				p++;
			continue;
		}
		v[nv++] = parse_hex(&p);
		while (p < end && *p != ' ' && *p != '\n')
			p++;
	}
	/* "NR ARG1 ... ARG6 SP PC", or "-1 SP PC" */
	if (nv == 9) {
		scan_words((const char *)&v[1], 8, 6 * sizeof(uintptr_t), 1);
		return v[7];
	}
	return nv == 3 ? v[1] : 0;
}

/* Every thread but the caller.  The directory is read into static
 * memory: scans run one at a time (under the life lock), on the stack
 * of whatever call took the request (mtrec ctl PID reach, from a malloc
 * on a small stack). */
static void other_threads(pid_t self)
{
	static char buf[4096];
	char n[24];
	unsigned long others = 0;
	int fd = prim_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	long len;

	if (fd < 0) {
		note("# reach unscanned other threads: /proc/self/task cannot be read", SAY_END);
		return;
	}
	while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < len;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);
			const char *c = d->d_name;
			const struct thr *t;
			unsigned long tid = 0;
			uintptr_t sp;

			off += d->d_reclen;
			while (*c >= '0' && *c <= '9')
				tid = tid * 10 + (unsigned long)(*c++ - '0');
			if (*c || !tid || (pid_t)tid == self)
				continue;
			others++;
			t = &thr[tid % NTHR];
			if (__atomic_load_n(&t->tid, __ATOMIC_ACQUIRE) != (pid_t)tid)
				t = NULL;
			sp = blocked_thread((pid_t)tid);
			if (!sp && !t)
				note("# reach unscanned stack of thread ", dec(n, tid), ": not found (it "
				     "is running, and made no allocation the recorder saw)", SAY_END);
			else
				stack_roots((pid_t)tid, t ? t->stack : 0, sp, t ? t->tp : 0);
		}
	}
	prim_close(fd);
	if (others)
		note("# reach unscanned registers of ", dec(n, others),
		     others == 1 ? " other thread" : " other threads",
		     ": not readable while they run (their stacks, and the arguments of "
		     "the system calls they are blocked in, are scanned)", SAY_END);
}

/* ---- the program's own mappings --------------------------------- */

/* Every other readable and writable mapping is a root too, as in
 * valgrind (mc_leakcheck.c scans every client segment that is readable
 * and writable but its own heap and devices): memory the program mapped
 * itself (pools, arrays, shared memory with other processes, files
 * mapped writable, memory named with PR_SET_VMA_ANON_NAME), the dynamic
 * linker's, libc's.  Never:
 *
 *   - malloc's memory, whose free chunks keep stale pointers that would
 *     hide leaks: the [heap] (the main arena), the heaps of the other
 *     arenas (at an address aligned to HEAP_MAX, a heap_info at their
 *     start), the chunks malloc mapped for large blocks, which are live
 *     blocks (only their own span is left out: the kernel merges a
 *     mapping with its neighbours of the same kind), and the memory malloc
 *     mapped for its main arena when brk() failed (found from the chunks
 *     of live blocks in it): said unscanned; when the blocks are another
 *     allocator's (no chunk header before them), no anonymous mapping at
 *     all, said unscanned;
 *   - the stacks of threads: a live thread's is scanned from its stack
 *     pointer (stack_roots), what lies below is stale; the stack of a
 *     thread that ended (glibc keeps up to 40 MB of them for the next
 *     threads) holds only stale words (valgrind makes a stack
 *     inaccessible as it unwinds): found from the thread pointer every
 *     thread noted, and from its thread control block at the top of the
 *     mapping (glibc, x86-64);
 *   - what is a root already (objects' segments, stacks, TLS);
 *   - the recorder's: the trace's reservation, the table, the scan's
 *     buffers, and its other tables, found from where libmtrec.so's data
 *     points (skip_self; some hold offsets in the trace, which would pass
 *     for addresses in the heap of a program built without -pie);
 *   - what is not read and write, guard pages and PROT_NONE reservations;
 *     devices (but /dev/zero), whose memory may be registers; the
 *     kernel's objects mapped through an anonymous inode or a socket.
 *
 * A mapping that is shared or backed by a file, or larger than
 * LARGE_MAP, is read only where its pages hold data (scan_resident). */

#define LARGE_MAP ((size_t)64 << 20)
#if UINTPTR_MAX > 0xffffffffu
#define HEAP_MAX ((uintptr_t)64 << 20)	/* glibc's HEAP_MAX_SIZE: 2 * DEFAULT_MMAP_THRESHOLD_MAX */
#else
#define HEAP_MAX ((uintptr_t)1 << 20)
#endif
#define MAX_ARENAS 64		/* arena heaps in one mapping: more, and it is left out */
/* What of the recorder's is left out from where its data points: its
 * largest tables that hold numbers (chunk.c's slots, 2 MB, and
 * events.c's offsets in the trace, 512 kB; unwind.c's cache,
 * 1 MB) are pointed to at their start.  The rest of the recorder's memory
 * holds addresses of code, strings, hashes: reading it costs time, not
 * verdicts. */
#define SELF_WINDOW ((uintptr_t)2 << 20)

static void skip(uintptr_t lo, uintptr_t hi)
{
	if (hi <= lo || sc.nskip >= sc.skip_cap)
		return;
	sc.skip[sc.nskip].lo = lo;
	sc.skip[sc.nskip++].hi = hi;
}

/* Every object's segments, whole pages: roots already, or read-only. */
static int object_spans(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD)
			skip(lo & ~(uintptr_t)(PAGE - 1), (lo + ph->p_memsz + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	}
	return 0;
}

/* The spans by their start (a heap sort: no recursion, no memory), then
 * merged where they overlap or touch. */
static void sort_skip(void)
{
	struct span *v = sc.skip, t;
	size_t n = sc.nskip, k = 0;

	for (size_t end = n, start = n / 2; end > 1;) {
		size_t root, child;

		if (start > 0) {
			start--;
		} else {
			end--;
			t = v[end];
			v[end] = v[0];
			v[0] = t;
		}
		for (root = start; (child = 2 * root + 1) < end; root = child) {
			if (child + 1 < end && v[child + 1].lo > v[child].lo)
				child++;
			if (v[root].lo >= v[child].lo)
				break;
			t = v[root];
			v[root] = v[child];
			v[child] = t;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].lo <= v[k - 1].hi) {
			if (v[i].hi > v[k - 1].hi)
				v[k - 1].hi = v[i].hi;
		} else {
			v[k++] = v[i];
		}
	}
	sc.nskip = k;
}

/* Is there a heap_info of a glibc malloc arena's heap at a (aligned to
 * HEAP_MAX)?  { ar_ptr, prev, size, mprotect_size }: the first heap of
 * an arena holds the arena (ar_ptr) just after it, the others have a
 * prev, aligned; sizes in pages, at most HEAP_MAX. */
static int arena_heap(uintptr_t a, uintptr_t hi)
{
	uintptr_t h[4];

	if (read_mem(h, a, sizeof(h)) != sizeof(h))
		return 0;
	if (!h[0] || h[0] % 8 || (h[1] ? h[1] % HEAP_MAX != 0 : h[0] - a >= PAGE))
		return 0;
	return h[2] >= PAGE && h[2] <= HEAP_MAX && h[2] % PAGE == 0 && h[3] >= h[2] &&
	       h[3] <= HEAP_MAX && h[3] % PAGE == 0 && h[3] <= hi - a;
}

/* A thread control block at a, as glibc makes it on x86-64: its tcb and
 * self words (at 0 and 16) point to it.  Elsewhere 0: the thread
 * pointers noted are trusted. */
static int is_tcb(const uintptr_t *w, uintptr_t a)
{
#if defined(__x86_64__) && defined(__GLIBC__)
	return w[0] == a && w[2] == a;
#else
	(void)w;
	(void)a;
	return 0;
#endif
}

/* The thread pointer of the main thread, or 0: its thread control block
 * is in memory of the dynamic linker's, not at the top of a stack. */
static uintptr_t main_tp(pid_t self)
{
	const struct thr *t = &thr[(unsigned)sc.pid % NTHR];

	if (self == sc.pid)
		return thread_pointer();
	return __atomic_load_n(&t->tid, __ATOMIC_ACQUIRE) == sc.pid ? t->tp : 0;
}

/* A thread's stack, the thread pointer tp in it (its mapping m): from
 * the start of the mapping to the page past its thread control block
 * (the mapping may have merged with the next one). */
static void skip_stack(struct map *m, uintptr_t tp)
{
	uintptr_t hi = tp + PAGE < m->hi ? tp + PAGE : m->hi;

#if !(defined(__x86_64__) && defined(__GLIBC__))
	hi = m->hi;		/* the TLS is above the thread pointer */
#endif
	skip(m->lo, hi);
}

/* The static TLS and the thread control block (struct pthread) of a
 * thread whose stack is no root (one that ended, whose stack glibc keeps
 * for its next threads, or one the scan did not find), thread pointer tp
 * in mapping m: valgrind reads them, for they stay addressable when the
 * stack below them is no longer (it unwound) -- so the DTV of an ended
 * thread is "possible" (its TCB points 16 bytes into it), a block its
 * __thread variable held "reachable", one only its stack held lost.
 * From the lowest static TLS block its DTV points to (the surplus below
 * holds nothing) to the page past the TCB (glibc, x86-64). */
static void tls_of_stack(const struct map *m, uintptr_t tp)
{
	uintptr_t hi = tp + PAGE < m->hi ? tp + PAGE : m->hi, lo = tp;
	uintptr_t dtv = peek(tp + 8), len = dtv > 16 ? peek(dtv - 16) : 0;
	/* no lower than the static TLS can be (the mapping may have merged
	 * with memory below: malloc's, whose stale words must not count) */
	uintptr_t floor = tp - m->lo > sc.tls_size + 4 * PAGE ? tp - sc.tls_size - 4 * PAGE : m->lo;
	const uintptr_t *e = (const uintptr_t *)(void *)sc.buf;

	for (size_t i = 0; i < sc.nroots; i++)
		if (tp >= sc.roots[i].lo && tp < sc.roots[i].hi)
			return;		/* a live thread's stack, read already */
	if (len && len < BUF_SIZE / 16) {
		/* dtv[1 ..] { val, to_free }: a static block lies below tp */
		size_t got = read_mem(sc.buf, dtv + 16, 16 * len) / 16;

		for (size_t i = 0; i < got; i++)
			if (e[2 * i] < lo && e[2 * i] >= floor)
				lo = e[2 * i];
	}
	add_root(lo & ~(uintptr_t)7, hi, "TLS of a thread that ended or was not found", NULL);
}

/* The stacks of the threads that noted their thread pointer, ended or
 * not (a live thread's is a root already, from its stack pointer). */
static void skip_thread_stacks(uintptr_t mtp)
{
	for (unsigned i = 0; i < NTHR; i++) {
		pid_t tid = __atomic_load_n(&thr[i].tid, __ATOMIC_ACQUIRE);
		uintptr_t tp = thr[i].tp, w[3];
		struct map *m;

		if (!tid || tid == sc.pid || !tp || tp == mtp ||
		    (m = (struct map *)map_of(tp)) == NULL || m->kind != MK_OTHER)
			continue;
#if defined(__x86_64__) && defined(__GLIBC__)
		/* still a thread's: the mapping was not reused */
		if (read_mem(w, tp, sizeof(w)) != sizeof(w) || !is_tcb(w, tp))
			continue;
#else
		(void)w;
		if (!map_of(thr[i].stack) || map_of(thr[i].stack) != m)
			continue;
#endif
		skip_stack(m, tp);
#if defined(__x86_64__) && defined(__GLIBC__)
		tls_of_stack(m, tp);
#endif
	}
}

/* An anonymous mapping with a thread control block in its last pages
 * (but the main thread's, mtp): the stack of a thread that made no
 * allocation, or of one that ended before. */
static int tcb_at_top(struct map *m, uintptr_t mtp)
{
	const uintptr_t *w = (const uintptr_t *)(void *)sc.buf;
	uintptr_t lo = m->hi - m->lo > 2 * PAGE ? m->hi - 2 * PAGE : m->lo;
	size_t got = read_mem(sc.buf, lo, m->hi - lo) / sizeof(uintptr_t);

	for (size_t i = 0; i + 2 < got; i++)
		if (is_tcb(&w[i], lo + i * sizeof(uintptr_t)) && w[i] != mtp) {
			uintptr_t tp = w[i];	/* sc.buf is read again */

			skip_stack(m, tp);
			tls_of_stack(m, tp);
			return 1;
		}
	return 0;
}

/* The chunk of a block malloc mapped alone (IS_MMAPPED in its size
 * word; prev_size: where the mapping starts before the chunk): its span
 * in *s, 1; 0 for any other block. */
static int mmapped_chunk(uintptr_t p, const struct map *m, struct span *s)
{
	uintptr_t h[2];	/* prev_size, size */

	if (p - m->lo < sizeof(h) || read_mem(h, p - sizeof(h), sizeof(h)) != sizeof(h) || !(h[1] & 2))
		return 0;
	s->lo = p - sizeof(h) - h[0];
	s->hi = p - sizeof(h) + (h[1] & ~(uintptr_t)7);
	return s->lo >= m->lo && s->lo < p && s->hi <= m->hi && s->hi > p &&
	       s->lo % PAGE == 0 && s->hi % PAGE == 0;
}

/* Is block p of size bytes in mapping m a chunk of one of glibc's arenas:
 * the word before it the chunk's size as glibc makes it for that request
 * (the request and a word, rounded up to 16, at least 32; less than a
 * chunk's worth more after a realloc or an aligned allocation), not
 * mapped alone?  Another allocator's blocks have no such word. */
static int arena_chunk(uintptr_t p, size_t size, const struct map *m)
{
	size_t want = (size + sizeof(size_t) + 15) & ~(size_t)15, c;
	uintptr_t h;

	if (want < 32)
		want = 32;
	if (p - m->lo < sizeof(h) || read_mem(&h, p - sizeof(h), sizeof(h)) != sizeof(h) || (h & 2))
		return 0;
	c = h & ~(uintptr_t)7;
	return c >= want && c < want + 32 && c <= m->hi - (p - 2 * sizeof(h));
}

/* What of m is malloc's: its arenas' heaps and the chunks it mapped for
 * blocks, left out; 0, -1 when m holds other chunks of glibc's arenas
 * (memory malloc mapped for the main arena when brk() failed), -2 when it
 * holds blocks of another allocator's (jemalloc, tcmalloc: their free
 * memory and their own tables may be in any anonymous mapping). */
static int skip_malloc(struct map *m)
{
	struct span heaps[MAX_ARENAS], s;
	int nheaps = 0;

	if (!(m->flags & (MF_SHARED | MF_FILE)))
		for (uintptr_t a = (m->lo + HEAP_MAX - 1) & ~(HEAP_MAX - 1); a >= m->lo && a < m->hi;
		     a += HEAP_MAX) {
			if (!arena_heap(a, m->hi))
				continue;
			if (nheaps == MAX_ARENAS)
				return -1;
			heaps[nheaps].lo = a;
			heaps[nheaps].hi = m->hi - a > HEAP_MAX ? a + HEAP_MAX : m->hi;
			skip(heaps[nheaps].lo, heaps[nheaps].hi);
			nheaps++;
		}
	for (size_t k = first_block_after(m->lo); k < sc.n && sc.blk[k].addr < m->hi; k++) {
		uintptr_t p = sc.blk[k].addr;
		int in_heap = 0;

		for (int i = 0; i < nheaps && !in_heap; i++)
			in_heap = p >= heaps[i].lo && p < heaps[i].hi;
		if (in_heap)
			continue;
		if (!mmapped_chunk(p, m, &s))
			return arena_chunk(p, sc.blk[k].size, m) ? -1 : -2;
		skip(s.lo, s.hi);
	}
	return 0;
}

/* Roots for what of [lo, hi) of mapping m is not left out. */
static void map_pieces(const struct map *m, uintptr_t lo, uintptr_t hi)
{
	size_t l = 0, r = sc.nskip;
	char name[80];
	size_t n = m->namelen < sizeof(name) - 1 ? m->namelen : sizeof(name) - 1;
	struct root *rt;

	memcpy(name, m->name, n);
	name[n] = '\0';
	while (l < r) {		/* the first span that ends after lo */
		size_t mid = (l + r) / 2;

		if (sc.skip[mid].hi <= lo)
			l = mid + 1;
		else
			r = mid;
	}
	for (; lo < hi; l++) {
		uintptr_t end = l < sc.nskip && sc.skip[l].lo < hi ? sc.skip[l].lo : hi;

		if (end > lo && (rt = add_root(lo, end, n ? "mapping " : "anonymous mapping", name)) != NULL)
			rt->resident = (m->flags & (MF_SHARED | MF_FILE)) || m->hi - m->lo > LARGE_MAP;
		if (l >= sc.nskip || sc.skip[l].lo >= hi)
			break;
		lo = sc.skip[l].hi;
	}
}

/* The recorder's other mappings: from each page of an anonymous mapping
 * that libmtrec.so's writable data points into, SELF_WINDOW on, but for
 * the words of this scan's state (its buffers are own() already; the
 * blocks' bounds it keeps may lie in a mapping of the program's).  Not
 * the whole mapping: the kernel merges the recorder's mappings with the
 * program's of the same kind (MAP_NORESERVE) on either side. */
static void skip_self(void)
{
	uintptr_t lo = sc.maps[0].lo, hi = sc.maps[sc.nmaps - 1].hi;
	const uintptr_t *w = (const uintptr_t *)sc.self_lo, *end = (const uintptr_t *)sc.self_hi;

	for (; w + 1 <= end; w++) {
		uintptr_t v, at;
		const struct map *m;

		if ((const void *)w >= (const void *)&sc && (const void *)w < (const void *)(&sc + 1))
			continue;
		v = *(const volatile uintptr_t *)w;
		if (v - lo >= hi - lo || (m = map_of(v)) == NULL || (m->flags & (MF_SHARED | MF_FILE)) ||
		    m->namelen)
			continue;
		at = v & ~(uintptr_t)(PAGE - 1);
		skip(at, m->hi - at > SELF_WINDOW ? at + SELF_WINDOW : m->hi);
	}
}

/* The program's own mappings, as roots.  Called after every other root
 * is known, the stacks' included. */
static void map_roots(pid_t self)
{
	uintptr_t mtp = main_tp(self);
	char a[24], b[24];
	int foreign = 0;

	if (!sc.nmaps)
		return;
	sc.skip_cap = sc.nloads + sc.nroots + sc.n + NTHR + 4 * sc.nmaps + 64 +
		(sc.self_hi - sc.self_lo) / sizeof(uintptr_t);
	if ((sc.skip = scan_map(sc.skip_cap * sizeof(struct span))) == NULL) {
		note("# reach unscanned mappings: no memory for the scan", SAY_END);
		return;
	}
	own(thr, NTHR * sizeof(*thr), 0);
	{
		/* the trace's whole reservation (its parts, when rotated) */
		char *base = __atomic_load_n(&mtrec_file.base, __ATOMIC_ACQUIRE);

		if (base)
			skip((uintptr_t)base, (uintptr_t)base + mtrec_file.maplen);
	}
	for (int i = 0; i < sc.nown; i++)	/* mapped: whole pages */
		skip(sc.own[i].lo, (sc.own[i].hi + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	prim_dl_iterate_phdr(object_spans, NULL);
	for (size_t i = 0; i < sc.nroots; i++)
		skip(sc.roots[i].from, sc.roots[i].hi);
	if (sc.self_hi)
		skip_self();
	skip_thread_stacks(mtp);
	for (size_t i = 0; i < sc.nmaps; i++) {
		struct map *m = &sc.maps[i];

		if (m->kind != MK_OTHER || (m->flags & (MF_RW | MF_SKIP)) != MF_RW)
			continue;
		if (!(m->flags & (MF_SHARED | MF_FILE)))
			tcb_at_top(m, mtp);
		switch (skip_malloc(m)) {
		case -2:
			foreign = 1;
			break;
		case -1:
			m->flags |= MF_SKIP;
			note("# reach unscanned mapping ", hex(a, m->lo), "-", hex(b, m->hi),
			     ": holds chunks of malloc's main arena (mapped when brk() failed): "
			     "its free memory would hide leaks", SAY_END);
			break;
		default:
			break;
		}
	}
	if (foreign) {
		for (size_t i = 0; i < sc.nmaps; i++)
			if (!(sc.maps[i].flags & (MF_SHARED | MF_FILE)))
				sc.maps[i].flags |= MF_SKIP;
		note("# reach unscanned anonymous mappings: malloc is not glibc's (live blocks without "
		     "its chunk headers): its free memory and its own tables cannot be told from the "
		     "program's", SAY_END);
	}
	if (sc.nskip >= sc.skip_cap) {
		note("# reach unscanned mappings: no memory for the scan", SAY_END);
		return;
	}
	sort_skip();
	for (size_t i = 0; i < sc.nmaps; i++) {
		const struct map *m = &sc.maps[i];

		if (m->kind == MK_OTHER && (m->flags & (MF_RW | MF_SKIP)) == MF_RW)
			map_pieces(m, m->lo, m->hi);
	}
}

/* ---- the scan ------------------------------------------------------- */

/* Each lost block not yet in a clique leads one: the lost blocks it
 * reaches are indirect.  The lost blocks are read once, together, for
 * their pointers to lost blocks, and the cliques made from those (one
 * system call for each lost block instead would take seconds for a
 * million leaks); without the memory for that, each leader's clique is
 * scanned on its own. */
static void cliques(void)
{
	uint64_t words = 0;

	for (size_t i = 0; i < sc.n; i++)
		if (sc.state[i] == UNREACHED)
			words += block_words(i) / 8;
	if (!words)
		return;		/* no lost block can point to another */
	sc.edge = scan_map(words * sizeof(uint32_t));
	sc.first = scan_map(sc.n * sizeof(size_t));
	sc.cnt = scan_map(sc.n * sizeof(uint32_t));
	if (!sc.edge || !sc.first || !sc.cnt) {
		for (size_t i = 0; i < sc.n; i++) {
			if (sc.state[i] != UNREACHED)
				continue;
			sc.leader = (long)i;
			push(i);
			scan_blocks();
		}
		sc.leader = -1;
		return;
	}
	sc.collect = 1;
	for (size_t i = sc.n; i-- > 0;)
		if (sc.state[i] == UNREACHED)
			push(i);
	scan_blocks();
	sc.collect = 0;
	for (size_t i = 0; i < sc.n; i++) {
		if (sc.state[i] != UNREACHED)
			continue;
		push(i);
		while (sc.top) {
			uint32_t b = sc.stack[--sc.top];

			for (size_t e = sc.first[b]; e < sc.first[b] + sc.cnt[b]; e++) {
				uint32_t k = sc.edge[e];

				if (sc.state[k] == UNREACHED && k != i) {
					sc.state[k] = INDIRECT;
					push(k);
				}
			}
		}
	}
}

/* The calling thread's stack pointer, below the caller's frame (where
 * __builtin_unwind_init() spilled its registers). */
static __attribute__((noinline)) uintptr_t current_sp(void)
{
	return (uintptr_t)__builtin_frame_address(0);
}

static __attribute__((noinline)) void scan(void)
{
	pid_t self = prim_gettid();
	uintptr_t sp;

	/* The caller's registers onto the stack, scanned from below here. */
	__builtin_unwind_init();
	sp = current_sp();
	if ((sc.roots = scan_map(MAX_ROOTS * sizeof(struct root))) == NULL) {
		note("# reach unscanned roots: no memory for the scan", SAY_END);
		return;
	}
	prim_dl_iterate_phdr(object_roots, NULL);
	if (load_maps() == 0) {
		stack_roots(self, sp, sp, thread_pointer());
		other_threads(self);
		map_roots(self);
	} else {
		note("# reach unscanned stacks and TLS: /proc/self/maps cannot be read", SAY_END);
	}
	scan_roots();
	cliques();
}

static void release(void)
{
	for (int i = 0; i < sc.nown; i++)
		if (sc.own[i].unmap)
			munmap((void *)sc.own[i].lo, sc.own[i].hi - sc.own[i].lo);
	if (sc.pipefd[0] >= 0) {
		prim_close(sc.pipefd[0]);
		prim_close(sc.pipefd[1]);
	}
	sc.nown = 0;
}

/* A scan asked for and not made says why: not an empty scan, which a
 * reader would take for the latest verdicts (none), and a gate on them
 * would pass. */
static void refuse(const struct mtrec_reach_out *to, const char *why)
{
	char line[256], *o = line, *lim = line + sizeof(line) - 1;

	o = prim_puts(o, lim, "# reach refused ");
	o = prim_puts(o, lim, why);
	*o++ = '\n';
	to->text(line, (size_t)(o - line));
}

/* The region for the lines of a scan of room blocks at most, in the
 * file, and the fence after it; or, when it cannot be had, the buffer
 * handed on in pieces: 0, or -1 without memory. */
static int open_output(size_t room)
{
	uintptr_t high = (uintptr_t)__builtin_frame_address(0) | (uintptr_t)&sc;
	size_t line = VERDICT_LINE(high >> 48 ? 16 : 12);
	size_t len = 512 + room * line + NOTES_ROOM + TAIL_ROOM;

	if (room < SIZE_MAX / 2 / line && (sc.region = sc.to->region(len)) != NULL) {
		sc.out = sc.region;
		sc.outcap = len;
		sc.to->fence();
		return 0;
	}
	sc.outcap = OUT_SIZE;
	sc.out = scan_map(OUT_SIZE);
	return sc.out ? 0 : -1;
}

/* The notes, as many whole lines as the region has room for (leaving the
 * last lines theirs); the others counted. */
static void put_notes(void)
{
	size_t keep = sc.noteslen;

	if (!keep)
		return;
	if (!sc.region) {
		flush();
		sc.to->text(sc.notes, sc.noteslen);
		return;
	}
	if (sc.outlen + keep + TAIL_ROOM > sc.outcap) {
		keep = sc.outcap - sc.outlen > TAIL_ROOM ? sc.outcap - sc.outlen - TAIL_ROOM : 0;
		while (keep && sc.notes[keep - 1] != '\n')
			keep--;
		for (size_t i = keep; i < sc.noteslen; i++)
			sc.notes_lost += sc.notes[i] == '\n';
	}
	memcpy(sc.out + sc.outlen, sc.notes, keep);
	sc.outlen += keep;
}

size_t mtrec_reach_scan(const struct mtrec_reach_out *to, int live)
{
	uint64_t t0 = prim_monotonic_ns();
	char a[24], b[24];
	size_t judged, room;

	if (!enabled) {
		refuse(to, "the table of live blocks could not be mapped at start (no memory)");
		return 0;
	}
	if (frozen) {
		refuse(to, "the table was frozen by the scan at exit");
		return 0;
	}
	if (live && in_table) {
		refuse(to, "asked from a signal handler that interrupted its thread in the table of "
		       "live blocks");
		return 0;
	}
	/* A signal handler's update from now on is queued: the table is ours. */
	in_table = 1;
	memset(&sc, 0, sizeof(sc));	/* (a fork child's copy of a scan under way) */
	sc.pid = (pid_t)syscall(SYS_getpid);
	sc.to = to;
	sc.leader = -1;
	sc.pipefd[0] = sc.pipefd[1] = -1;
	sc.notes = scan_map(NOTES_SIZE);
	sc.buf = scan_map(BUF_SIZE);
	room = table_room();
	if (!sc.notes || !sc.buf || open_output(room) < 0) {
		if (sc.region)
			to->region_end(sc.region);
		release();
		refuse(to, "no memory for the scan");
		if (live)
			table_leave();
		return 0;
	}
	if (copy_table(live, sc.region ? room : SIZE_MAX) < 0) {
		sc.n = 0;
		put_line("# reach begin 0", SAY_END);
		put_line("# reach unscanned all: no memory for the scan", SAY_END);
	} else {
		put_line("# reach begin ", dec(a, sc.n), SAY_END);
		if (sc.n)
			scan();
	}
	for (size_t i = 0; i < sc.n; i++)
		put_verdict(sc.blk[i].addr, sc.state[i]);
	put_notes();
	sc.tail = 1;
	if (sc.lines_lost)
		put_line("# reach unscanned ", dec(a, sc.lines_lost), " blocks: their verdicts did "
			 "not fit in the room taken for them (addresses above 2^48)", SAY_END);
	if (sc.roots_lost)
		put_line("# reach unscanned ", dec(a, sc.roots_lost), " roots: more than ",
			 dec(b, MAX_ROOTS), " (threads' stacks, objects' segments, mappings)", SAY_END);
	if (sc.notes_lost)
		put_line("# reach unscanned ", dec(a, sc.notes_lost), " more: the lines saying what "
			 "did not fit in memory", SAY_END);
	if (missed)
		put_line("# reach unscanned table: ", dec(a, missed), " allocations or frees are "
			 "not in it (no memory, or signal handlers nested in the recorder)", SAY_END);
	if (sc.unreadable)
		put_line("# reach unscanned blocks: ", dec(a, sc.unreadable_bytes), " bytes of ",
			 dec(b, sc.unreadable), " blocks unreadable (released meanwhile by a "
			 "running thread)", SAY_END);
	put_line("# reach end ", dec(a, sc.scanned), " ",
		 dec(b, (prim_monotonic_ns() - t0) / 1000000), SAY_END);
	flush();
	if (sc.region)
		to->region_end(sc.region + sc.outlen);
	judged = sc.n;
	release();
	/* The table goes on: the updates this thread's signal handlers
	 * queued meanwhile are made now. */
	if (live)
		table_leave();
	return judged;
}
