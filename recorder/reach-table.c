/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-table.c -- MTREC_REACH=1: the table of the blocks the trace holds
 * live, which the scan (reach.c) reads at the end.
 * The table.  While recording, every allocation the trace records adds
 * its block (address, size) to a table, every free removes it: an open
 * addressing hash in 64 stripes, each behind a spin lock, in memory of
 * its own (mmap, never malloc: this runs inside malloc).  A thread waits
 * for a stripe only at its outer level: a signal handler that allocates
 * while its thread is inside the table queues its update for the thread
 * to make on the way out, so that no thread ever waits while it holds a
 * stripe, and nothing waits for a thread that cannot go on.  Each
 * thread's first update also notes where its stack and its thread
 * pointer are, for the scan (reach-roots.c). */
#include "reach-table.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the table ------------------------------------------------------ */

struct stripe stripes[NSTRIPES];
int enabled;
int frozen;		/* the scan took its copy: no more updates */
unsigned long missed;	/* updates dropped (no memory, queue full) */

/* Updates a signal handler made while its thread was inside the table. */
#define NPEND 16
struct pend {
	uintptr_t p;
	size_t size;
	int add;
};
__thread int in_table;
static __thread struct pend pend[NPEND];
static __thread unsigned npend;
static __thread int registered;
struct thr *thr;

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

void stripe_unlock(struct stripe *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* ---- the tables' memory -------------------------------------------- */

/* The stripes' tables are carved from one reservation of address space
 * that the kernel backs with 2 MiB pages (MADV_HUGEPAGE): a table of a
 * million blocks is 32 MB, and in 4 KiB pages each window's entries
 * took a TLB miss besides its cache miss, and each page a fault (issue
 * 30, point 5: the table's upkeep 68 -> 23 ms of CPU a million blocks,
 * measured with one such table).  64 stripes of 512 KB are each too
 * small for a 2 MiB page of their own: from one reservation, the tables
 * of a generation lie next to each other and share them.  Carved by a
 * bump pointer, never reused: a table replaced is given back to the
 * kernel (MADV_DONTNEED), its address space stays ours.  Reserved only
 * where that costs the program nothing: not under a limit on its
 * address space or its data (RLIMIT_AS, RLIMIT_DATA, which count the
 * whole reservation), nor where the kernel charges writable memory as
 * it is mapped (vm.overcommit_memory 2: there MAP_NORESERVE is ignored),
 * nor in 32 bits; without it, or when it is used up, each table is a
 * mapping of its own, as before. */
#define HUGE_PAGE ((size_t)2 << 20)

char *table_arena;
size_t table_arena_len;
static size_t arena_used;

static void arena_init(void)
{
	static const size_t sizes[] = { (size_t)1 << 34, (size_t)1 << 32, (size_t)1 << 30 };
	struct rlimit as, data;
	char mode = '2';
	int fd;

	if (sizeof(void *) < 8 || getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur != RLIM_INFINITY ||
	    getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY)
		return;
	if ((fd = prim_open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC, 0)) >= 0) {
		if (prim_read(fd, &mode, 1) != 1)
			mode = '2';
		prim_close(fd);
	}
	if (mode == '2')	/* or not known */
		return;
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *raw = prim_map_anon(sizes[i] + HUGE_PAGE), *a;

		if (!raw)
			continue;
		a = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
		if (a > raw)
			munmap(raw, (size_t)(a - raw));
		munmap(a + sizes[i], (size_t)(raw + HUGE_PAGE - a));
		madvise(a, sizes[i], MADV_HUGEPAGE);
		table_arena = a;
		table_arena_len = sizes[i];
		return;
	}
}

/* The program got no memory: the reservation, which counts in RLIMIT_AS
 * and RLIMIT_DATA, may be what it lacks (a limit set after start-up).
 * Its unused part is given back, and tables are mappings of their own
 * from now on: 1 when address space was given back.  Closed first (the
 * bump pointer set far past the end), so that a table carved meanwhile
 * lies below what is kept. */
int mtrec_reach_release(void)
{
	size_t used, keep, len = table_arena_len;

	if (!table_arena)
		return 0;
	used = __atomic_exchange_n(&arena_used, SIZE_MAX / 2, __ATOMIC_ACQ_REL);
	if (used >= SIZE_MAX / 4)
		return 0;	/* closed already */
	keep = (used + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (keep >= len)
		return 0;
	/* no longer ours: a mapping of the program's may come there */
	__atomic_store_n(&table_arena_len, keep, __ATOMIC_RELEASE);
	munmap(table_arena + keep, len - keep);
	return 1;
}

int in_table_arena(const void *p)
{
	return table_arena && (const char *)p >= table_arena &&
	       (const char *)p < table_arena + table_arena_len;
}

/* Zeroed memory for a table of len bytes (a multiple of the page size):
 * NULL without memory. */
static struct ent *table_map(size_t len)
{
	if (table_arena) {
		size_t at = __atomic_fetch_add(&arena_used, len, __ATOMIC_RELAXED);

		if (at + len <= table_arena_len && at + len > at)
			return (struct ent *)(void *)(table_arena + at);
		__atomic_fetch_sub(&arena_used, len, __ATOMIC_RELAXED);
	}
	return prim_map_anon(len);
}

static void table_unmap(void *p, size_t len)
{
	if (in_table_arena(p))
		madvise(p, len, MADV_DONTNEED);
	else
		munmap(p, len);
}

/* A new table for each growth, the old one given back, took a page fault
 * a page of it (a million blocks: 64 MB of tables mapped over the run for
 * the last 32 MB, 1.6 us a page on a 2-core machine): instead the table
 * is extended where it is (mremap() keeps its pages), its entries put
 * aside meanwhile in a scratch the stripes share, and put back.  The
 * scratch holds blocks' addresses only while in use, and is the scan's
 * own memory, never a root.  0, or -1: then a new table as before. */
struct stripe table_aside;

static int grow_in_place(struct stripe *s, size_t cap)
{
	size_t old_cap = s->cap, n = 0;
	struct ent *e = s->e;

	if (!e || !old_cap || (cap != old_cap && in_table_arena(e)))
		return -1;
	stripe_lock(&table_aside);
	if (table_aside.cap < s->live) {
		size_t want = table_aside.cap ? table_aside.cap : STRIPE_MIN;
		struct ent *a;

		while (want < s->live)
			want *= 2;
		if ((a = prim_map_anon(want * sizeof(*a))) == NULL)
			goto fail;
		if (table_aside.e)
			munmap(table_aside.e, table_aside.cap * sizeof(*a));
		__atomic_store_n(&table_aside.e, a, __ATOMIC_RELEASE);
		__atomic_store_n(&table_aside.cap, want, __ATOMIC_RELEASE);
	}
	for (size_t i = 0; i < old_cap && n < table_aside.cap; i++)
		if (e[i].addr > TOMB)
			table_aside.e[n++] = e[i];
	if (cap != old_cap) {
		void *m = mremap(e, old_cap * sizeof(*e), cap * sizeof(*e), MREMAP_MAYMOVE);

		if (m == MAP_FAILED) {
			memset(table_aside.e, 0, n * sizeof(*e));
			goto fail;
		}
		e = m;
	}
	memset(e, 0, old_cap * sizeof(*e));	/* the rest is new, and zero */
	for (size_t k = 0; k < n; k++) {
		size_t j = slot_of(hash_addr(table_aside.e[k].addr), cap);

		while (e[j].addr != EMPTY)
			j = (j + 1) & (cap - 1);
		e[j] = table_aside.e[k];
	}
	memset(table_aside.e, 0, n * sizeof(*e));
	stripe_unlock(&table_aside);
	/* read without the lock by the scan (copy_held), through
	 * process_vm_readv: the old place may be gone, never faulted on */
	__atomic_store_n(&s->e, e, __ATOMIC_RELEASE);
	__atomic_store_n(&s->cap, cap, __ATOMIC_RELEASE);
	s->used = n;
	return 0;
fail:
	stripe_unlock(&table_aside);
	return -1;
}

/* A larger (or a cleaner) table for s: 0, or -1 without memory. */
static int grow(struct stripe *s)
{
	size_t cap = s->cap ? s->cap : STRIPE_MIN, old_cap;
	struct ent *e, *old;

	while ((s->live + 1) * 2 > cap)
		cap *= 2;
	if (grow_in_place(s, cap) == 0)
		return 0;
	if ((e = table_map(cap * sizeof(*e))) == NULL)
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
		table_unmap(old, old_cap * sizeof(*old));
	return 0;
}

/* The entry the window after p's would take, fetched into the cache
 * ahead: blocks carved one after the other from the top of a heap come
 * in address order, and each new window's place in a large table is a
 * cache miss otherwise (a million blocks of 32 bytes: about half of the
 * table's time).  Read without the lock: a prefetch never faults, and a
 * table replaced meanwhile only makes it useless. */
static __thread uintptr_t last_add;	/* complemented: the scan reads our TLS, and
					 * must find no block's address there */

static inline void fetch_next(uintptr_t p)
{
	const uintptr_t span = (uintptr_t)16 * WINDOW;	/* of addresses a window holds */
	uint64_t h = hash_addr(p + span);
	struct stripe *s = stripe_of(h);
	struct ent *e = __atomic_load_n(&s->e, __ATOMIC_RELAXED);
	size_t cap = __atomic_load_n(&s->cap, __ATOMIC_RELAXED);
	uintptr_t last = ~last_add;

	last_add = ~p;
	/* only when this thread's blocks come in order: elsewhere a line
	 * fetched for nothing */
	if (p - last <= span && e && cap)
		__builtin_prefetch(&e[slot_of(h, cap)], 1);
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
	fetch_next(p);
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
void table_leave(void)
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
		/* Nothing queued (the usual case): no atomic exchange to make. */
		if (n && !__atomic_compare_exchange_n(&npend, &n, 0, 0, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
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
	arena_init();
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
	table_aside.lock = 0;
	frozen = 0;
	in_table = 0;
	npend = 0;
	registered = 0;
	/* A child's threads are not its parent's. */
	if (thr)
		madvise(thr, NTHR * sizeof(*thr), MADV_DONTNEED);
}
