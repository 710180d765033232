/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach.c -- MTREC_REACH=1: which of the blocks still live at the end
 * of the recorded run the program could still reach, told as valgrind's
 * leak check tells it ("# reach" lines, share/trace-format.md).
 *
 * The table (reach-table.c).  While recording, every allocation the trace
 * records adds its block (address, size) to a table, every free removes
 * it; malloc and free call nothing else of MTREC_REACH.
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
 * memory unmapped meanwhile is counted as unreadable and never faults.
 *
 * The files: reach-table.c (the table, hot), reach-mark.c (the scan's
 * state, its lines, reading memory, marking), reach-roots.c (the roots),
 * this file (the copy of the table, the cliques, the scan as a whole). */
#include "reach.h"
#include "reach-mark.h"
#include "reach-roots.h"
#include "reach-table.h"
#include "words.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the copy of the table ------------------------------------------ */

/* LSD radix sort of the blocks by address, on the bits in which they
 * differ only: (address - lowest) without the low bits all addresses
 * share, in digits of RADIX_BITS at most.  A million blocks of a heap of
 * 48 MB take 2 passes (22 bits), where a byte a pass took 4.  0, or -1
 * without memory. */
static __attribute__((noinline)) int sort_blocks(struct ent *scratch)
{
	size_t len = sc.n * sizeof(struct ent);
	struct ent *from = sc.blk, *to, *tmp = scratch;
	uintptr_t lo = UINTPTR_MAX, hi = 0, bits = 0;
	unsigned shift, width, passes, digit;

	if (sc.n < 2)
		return 0;
	for (size_t i = 0; i < sc.n; i++) {
		uintptr_t a = sc.blk[i].addr;

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
		bits |= a;
	}
	if (lo == hi)
		return 0;
	shift = (unsigned)__builtin_ctzl(bits);	/* a - lo has those zero bits too */
	width = 64 - (unsigned)__builtin_clzl((hi - lo) >> shift);
	passes = (width + RADIX_BITS - 1) / RADIX_BITS;
	digit = (width + passes - 1) / passes;
	if (!tmp && (tmp = prim_map_anon(len)) == NULL)
		return -1;
	to = tmp;
	memset(sc.counts, 0, sizeof(sc.counts));
	for (size_t i = 0; i < sc.n; i++) {
		uintptr_t key = (from[i].addr - lo) >> shift;

		for (unsigned d = 0; d < passes; d++)
			sc.counts[d][(key >> (digit * d)) & ((1u << digit) - 1)]++;
	}
	for (unsigned d = 0; d < passes; d++) {
		uint32_t *c = sc.counts[d], sum = 0;
		unsigned at = shift + digit * d;
		struct ent *t;

		for (unsigned v = 0; v < (1u << digit); v++) {
			uint32_t x = c[v];

			c[v] = sum;
			sum += x;
		}
		for (size_t i = 0; i < sc.n; i++)
			to[c[((from[i].addr - lo) >> at) & ((1u << digit) - 1)]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != sc.blk)
		memcpy(sc.blk, from, len);
	if (tmp != scratch)
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

/* At exit, with every stripe let go: the table's own memory, already in
 * place, becomes the scan's -- its stripes moved (mremap(), no copy) one
 * after the other into one mapping, their entries packed at its start
 * (sc.blk, sorted there), the rest the sort's scratch and then the
 * marking's stack and states.  Fresh memory costs a page fault a page
 * (a million blocks: 32 MB of table, where the copy and the sort mapped
 * 16 MB each): the scratch, or NULL when a stripe could not be moved
 * (those that were are read where they are now).  The table is frozen
 * for good: a stripe moved is left empty, for a child forked later. */
static struct ent *take_table(size_t n, size_t *left)
{
	size_t total = 0, at = 0, len;
	struct ent *all;

	for (int i = 0; i < NSTRIPES; i++)
		total += stripes[i].cap;
	if (total < 2 * n + 2)
		total = 2 * n + 2;
	len = (total * sizeof(struct ent) + PAGE - 1) & ~(PAGE - 1);
	if ((all = scan_map(len)) == NULL)
		return NULL;
	for (int i = 0; i < NSTRIPES; i++) {
		struct stripe *s = &stripes[i];
		size_t bytes = s->cap * sizeof(struct ent);
		void *to = (char *)all + at;

		if (!s->cap)
			continue;
		/* a table of the reservation leaves no hole in it, which a
		 * mapping of the program's could take while the scan skips
		 * the whole reservation (MREMAP_DONTUNMAP: Linux 5.7) */
		int keep = in_table_arena(s->e) ? MREMAP_DONTUNMAP : 0;

		if (bytes % PAGE || (uintptr_t)s->e % PAGE ||
		    mremap(s->e, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED | keep, to) != to) {
			/* the stripes moved stay there, and so does the mapping */
			if (sc.nown && sc.own[sc.nown - 1].lo == (uintptr_t)all)
				sc.own[sc.nown - 1].unmap = 0;
			return NULL;
		}
		s->e = to;
		at += bytes;
	}
	/* packed: an entry moves down or stays, never over one not read */
	for (size_t i = 0, end = at / sizeof(struct ent); i < end; i++) {
		if (all[i].addr <= TOMB)
			continue;
		if (sc.n < n)
			all[sc.n++] = all[i];
		else
			++*left;
	}
	for (int i = 0; i < NSTRIPES; i++) {
		stripes[i].e = NULL;
		stripes[i].cap = stripes[i].used = stripes[i].live = 0;
	}
	sc.blk = all;
	return all + n + 1;
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
static __attribute__((noinline)) int copy_table(int live, size_t room)
{
	uint64_t deadline = prim_monotonic_ns() + 500000000u;
	int held[NSTRIPES], stuck = 0;
	size_t n = 0, left = 0;
	struct ent *scratch = NULL;

	if (!live)
		__atomic_store_n(&frozen, 1, __ATOMIC_SEQ_CST);
	/* the tables' reservation, and where a growing stripe puts its
	 * entries aside: never roots */
	own(table_arena, table_arena_len, 0);
	own(__atomic_load_n(&table_aside.e, __ATOMIC_ACQUIRE),
	    __atomic_load_n(&table_aside.cap, __ATOMIC_ACQUIRE) * sizeof(struct ent), 0);
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
	if (!live && !stuck && (scratch = take_table(n, &left)) != NULL)
		goto sort;
	sc.n = 0;
	left = 0;
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
sort:
	if (left) {
		char a[24];

		note(mtrec_word(MTREC_W_REACH), "unscanned table: ", dec(a, (unsigned long)left), " blocks allocated "
		     "while it was copied", SAY_END);
	}
	if (stuck) {
		char a[24];

		note(mtrec_word(MTREC_W_REACH), "unscanned table: ", dec(a, (unsigned long)stuck), " of 64 parts held by a "
		     "thread that did not let go (in a signal handler?), read as they were", SAY_END);
	}
	if (sort_blocks(scratch) < 0)
		return -1;
	if (scratch) {	/* the sort is done with it: (2n + 1) * 4 + n + 1 <= 16n bytes */
		sc.stack = (uint32_t *)(void *)scratch;
		sc.state = (unsigned char *)(sc.stack + 2 * n + 1);
		memset(sc.state, 0, n + 1);
	}
	sc.lo = sc.n ? sc.blk[0].addr : 1;
	sc.hi = sc.lo;
	for (size_t i = 0; i < sc.n; i++) {
		uintptr_t end = sc.blk[i].addr + (sc.blk[i].size ? sc.blk[i].size : 1);

		if (end > sc.hi)
			sc.hi = end;
	}
	return 0;
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
		note(mtrec_word(MTREC_W_REACH), "unscanned roots: no memory for the scan", SAY_END);
		return;
	}
	prim_dl_iterate_phdr(object_roots, NULL);
	if (load_maps() == 0) {
		stack_roots(self, sp, sp, thread_pointer());
		other_threads(self);
		map_roots(self);
	} else {
		note(mtrec_word(MTREC_W_REACH), "unscanned stacks and TLS: /proc/self/maps cannot be read", SAY_END);
	}
	scan_roots();
	cliques();
}

/* Zero the stack the copy of the table used, below the caller's frame:
 * the scan reads the stack from its own frame up, and a block's address
 * left in a slot of it that the scan's frame does not overwrite (the
 * sort keeps the lowest one) would make that block reachable.  Hence
 * also copy_table() and sort_blocks() not inlined: their frames below
 * ours, not in it.  What the scan reads of those is scan()'s frame,
 * current_sp()'s and the red zone below it (208 bytes at -O2, gcc's
 * -fstack-usage): 1 KiB covers that with room for larger frames.  Not
 * 2 KiB: this runs inside the malloc call that takes mtrec ctl's reach
 * request, on the caller's stack, which the README bounds (t2350). */
static __attribute__((noinline)) void wipe_stack(void)
{
	volatile char pad[1024];

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
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

	o = prim_puts(o, lim, mtrec_word(MTREC_W_REACH));
	o = prim_puts(o, lim, "refused ");
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
		put_line(mtrec_word(MTREC_W_REACH), "begin 0", SAY_END);
		put_line(mtrec_word(MTREC_W_REACH), "unscanned all: no memory for the scan", SAY_END);
	} else {
		put_line(mtrec_word(MTREC_W_REACH), "begin ", dec(a, sc.n), SAY_END);
		wipe_stack();
		if (sc.n)
			scan();
	}
	put_verdicts();
	put_notes();
	sc.tail = 1;
	if (sc.lines_lost)
		put_line(mtrec_word(MTREC_W_REACH), "unscanned ", dec(a, sc.lines_lost), " blocks: their verdicts did "
			 "not fit in the room taken for them (addresses above 2^48)", SAY_END);
	if (sc.roots_lost)
		put_line(mtrec_word(MTREC_W_REACH), "unscanned ", dec(a, sc.roots_lost), " roots: more than ",
			 dec(b, MAX_ROOTS), " (threads' stacks, objects' segments, mappings)", SAY_END);
	if (sc.notes_lost)
		put_line(mtrec_word(MTREC_W_REACH), "unscanned ", dec(a, sc.notes_lost), " more: the lines saying what "
			 "did not fit in memory", SAY_END);
	if (missed)
		put_line(mtrec_word(MTREC_W_REACH), "unscanned table: ", dec(a, missed), " allocations or frees are "
			 "not in it (no memory, or signal handlers nested in the recorder)", SAY_END);
	if (sc.unreadable)
		put_line(mtrec_word(MTREC_W_REACH), "unscanned blocks: ", dec(a, sc.unreadable_bytes), " bytes of ",
			 dec(b, sc.unreadable), " blocks unreadable (released meanwhile by a "
			 "running thread)", SAY_END);
	put_line(mtrec_word(MTREC_W_REACH), "end ", dec(a, sc.scanned), " ",
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
