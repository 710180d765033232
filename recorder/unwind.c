/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind.c -- the stack walker behind MTREC_DEPTH call stacks.
 *
 * Debian builds everything with -fomit-frame-pointer, so following the RBP
 * chain gives garbage; glibc's backtrace() goes through libgcc_s, which
 * allocates and locks.  This walker reads the DWARF call-frame information
 * of .eh_frame instead, in the manner of libunwind's x86-64 "fast trace"
 * that heaptrack relies on:
 *
 *   - for an instruction address, find its FDE through _dl_find_object
 *     (glibc 2.35+, lock-free) and the binary-search table of the object's
 *     .eh_frame_hdr, run the CIE and FDE instructions up to that address,
 *     and reduce the result to a frame rule: CFA = RSP+off or RBP+off, the
 *     return address at CFA-8, RBP saved at CFA+k or unchanged;
 *   - keep the rule in a direct-mapped table of 64-bit words, each holding
 *     the address tag and the rule together, so one atomic load gives both
 *     and a torn entry cannot exist; misses and "cannot unwind here" are
 *     cached alike;
 *   - a walk is then a table load and one or two stack loads per frame.
 *
 * Every stack read is checked against the mapping that holds the stack
 * pointer (read once per thread from /proc/self/maps with raw syscalls);
 * anything unexpected ends the walk early instead of guessing.  The rules
 * themselves are worked out by unwind-cfi.c, on a cache miss.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwind.h"
#include "unwind-rule.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#if defined(__x86_64__) && defined(__linux__)

/* ------------------------------------------------------------ rule cache
 *
 * 2^17 words (1 MiB of address space, touched as used).  The index mixes the
 * address so that libraries loaded at equal offsets modulo 128 KiB do not
 * collide; the tag is the address shifted right by the index width, and
 * (index, tag) determine the address, so an equal tag is an exact hit.
 * Addresses at or above 2^47 (never code in a 4-level address space) are not
 * cached.  Writers race benignly: the last store wins, every store is whole.
 */
#define CACHE_ORDER 17
#define CACHE_SIZE  (1ul << CACHE_ORDER)

static uint64_t *rule_cache;
static int cache_off;			/* test hook */
static uintptr_t self_lo, self_len;	/* this library's mapping */
static int init_done;

static inline uint64_t cache_get(uint64_t *cache, uintptr_t key)
{
	size_t idx = (key ^ (key >> CACHE_ORDER)) & (CACHE_SIZE - 1);
	uint64_t e = __atomic_load_n(&cache[idx], __ATOMIC_RELAXED);
	if ((e >> RULE_BITS) == (key >> CACHE_ORDER) && (e & RULE_KIND) != K_EMPTY)
		return e & RULE_MASK;
	return K_EMPTY;
}

static inline void cache_put(uint64_t *cache, uintptr_t key, uint64_t rule)
{
	size_t idx = (key ^ (key >> CACHE_ORDER)) & (CACHE_SIZE - 1);
	__atomic_store_n(&cache[idx], (uint64_t)(key >> CACHE_ORDER) << RULE_BITS | rule,
			 __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ stack bounds
 *
 * A walk reads only [sp at entry, end of the mapping holding it).  The
 * mapping is looked up once per thread and stack, through raw syscalls (no
 * stdio, no cancellation point, errno kept): Linux 6.11+ answers the
 * PROCMAP_QUERY ioctl on /proc/self/maps for one address (a few
 * microseconds); older kernels get the file parsed byte by byte.  Two
 * ranges are remembered so that a handler on a sigaltstack does not evict
 * the thread's own stack.
 */
struct range {
	uintptr_t lo, hi;
};

static __thread struct range tls_stacks[2];

extern void *__libc_stack_end;

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return 0;
}

/* <linux/fs.h> of Linux 6.11; Debian 12's headers predate it. */
struct procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY 0xc0686611ul	/* _IOWR('f', 17, struct procmap_query) */
#define PROCMAP_QUERY_VMA_READABLE 1

/* Read a few lines at a time: this runs on the stack of whoever called
 * malloc (the kernel's seq_file hands the rest over at the next read). */
static int maps_lookup(uintptr_t addr, struct range *out)
{
	char buf[256];
	uintptr_t a = 0, b = 0;
	int field = 0, readable = 0, found = 0;
	long fd, n;
	struct procmap_query q;

	do
		fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof q);
	q.size = sizeof q;
	q.query_flags = PROCMAP_QUERY_VMA_READABLE;
	q.query_addr = addr;
	if (syscall(SYS_ioctl, (int)fd, PROCMAP_QUERY, &q) == 0) {
		out->lo = q.vma_start;
		out->hi = q.vma_end;
		found = q.vma_start <= addr && addr < q.vma_end;
	} else if (errno == ENOENT) {
		found = -1;	/* no readable mapping there */
	}
	while (!found) {
		n = syscall(SYS_read, (int)fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (long i = 0; i < n && !found; i++) {
			char ch = buf[i];
			switch (field) {
			case 0:
				if (ch == '-')
					field = 1;
				else
					a = a << 4 | hexval(ch);
				break;
			case 1:
				if (ch == ' ')
					field = 2;
				else
					b = b << 4 | hexval(ch);
				break;
			case 2:
				readable = ch == 'r';
				field = 3;
				break;
			default:
				if (ch != '\n')
					break;
				if (readable && a <= addr && addr < b) {
					out->lo = a;
					out->hi = b;
					found = 1;
				}
				a = b = 0;
				field = 0;
			}
		}
	}
	syscall(SYS_close, (int)fd);
	return found > 0 ? 0 : -1;
}

static void range_set(struct range *dst, struct range src)
{
	dst->hi = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	dst->lo = src.lo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	dst->hi = src.hi;
}

/* The end of the readable stack above SP, or 0 when unknown. */
static __attribute__((noinline, cold)) uintptr_t stack_refresh(uintptr_t sp)
{
	int saved = errno;
	struct range r;

	if (maps_lookup(sp, &r) < 0) {
		/* No /proc: trust glibc's layout.  The main thread's stack ends
		   at __libc_stack_end; another thread's descriptor sits at the
		   top of its stack block. */
		uintptr_t end = (uintptr_t)__libc_stack_end, self = (uintptr_t)pthread_self();
		if (sp < end && end - sp < (1ul << 30))
			r.hi = end;
		else if (sp < self && self - sp < (1ul << 30))
			r.hi = self;
		else
			r.hi = 0;
		r.lo = r.hi > (1ul << 30) ? r.hi - (1ul << 30) : 0;
	}
	errno = saved;
	if (r.hi == 0)
		return 0;
	/* A signal handler walking in between must never see a range made
	   of two halves: empty it (hi = 0), then fill it, hi last. */
	range_set(&tls_stacks[1], tls_stacks[0]);
	range_set(&tls_stacks[0], r);
	return r.hi;
}

static inline uintptr_t stack_end(uintptr_t sp)
{
	for (int i = 0; i < 2; i++) {
		uintptr_t hi = tls_stacks[i].hi;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (likely(hi != 0 && sp >= tls_stacks[i].lo && sp < hi))
			return hi;
	}
	return 0;
}

/* ------------------------------------------------------------ step memo
 *
 * With the rule cache alone a walk is a chain of dependent loads: the
 * return address, from it the cache slot, from it the CFA and so the next
 * return address -- some 20 cycles a frame, and a deep stack costs ten
 * times a shallow one.  A program's stacks repeat, so each thread also
 * remembers, for each step of its walks, the code address seen there, its
 * rule, and the RBP value loaded there.  A step whose address is the one
 * remembered takes the rule from the memo, whose address depends on the
 * step number only, and a loaded RBP equal to the remembered one is used
 * in its remembered form: the processor then runs ahead through the frames
 * of a repeated stack while the loads that confirm them complete.  Every
 * rule used is still the rule of the address actually found, so a stack
 * that differs anywhere is walked as it is.
 *
 * A memo is a block of a shared pool (the TLS of a library that mtrec
 * attach loads late must stay small), taken round-robin by threads; the
 * walk that uses one holds it (seq odd), so a thread sharing it or a
 * signal handler nested in the walk goes without.
 */
#define MEMO_STEPS 72
#define MEMO_POOL  256
#define MEMO_LOADS 160

struct memo_step {
	uintptr_t key;
	uint64_t rule;
	uintptr_t bp;		/* the RBP loaded at this step */
};

/* The last walk as a function of what it read: from the same entry (SP,
   the stack's end, RBP when the walk used it before reloading it) and the
   same words at the same addresses, a walk takes the same steps to the
   same end, so checking those words is the whole walk.  They all lie in
   [sp0, hi), which is mapped while this stack is. */
struct memo_rec {
	int ok, need_bp0, max, n;
	unsigned nloads;
	uintptr_t sp0, bp0, hi;
	const void *tag;	/* mtrec_unwind_tag's, for these frames */
	uintptr_t at[MEMO_LOADS], word[MEMO_LOADS];
	void *ips[MEMO_STEPS];
};

/* Records per memo: malloc and free reach the walk through different
   frames of the recorder, so a loop's events alternate between entries. */
#define MEMO_RECS 4

struct memo {
	unsigned seq;
	unsigned gen;
	struct memo_step step[MEMO_STEPS];
	struct memo_rec rec[MEMO_RECS];
};

static struct memo *memo_pool;
#ifdef MTREC_UNWIND_TEST
static int memo_shared;		/* test hook */
#endif
static unsigned memo_next, memo_gen;
static __thread struct memo *tls_memo;

static __attribute__((noinline, cold)) struct memo *memo_assign(void)
{
	struct memo *pool = __atomic_load_n(&memo_pool, __ATOMIC_ACQUIRE);

	if (!pool) {
		int saved = errno;
		void *m = mmap(NULL, MEMO_POOL * sizeof(struct memo), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct memo *expect = NULL;
		errno = saved;
		if (m == MAP_FAILED)
			return NULL;
		if (__atomic_compare_exchange_n(&memo_pool, &expect, (struct memo *)m, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			pool = m;
		} else {
			munmap(m, MEMO_POOL * sizeof(struct memo));
			pool = expect;
		}
	}
	tls_memo = &pool[__atomic_fetch_add(&memo_next, 1, __ATOMIC_RELAXED) % MEMO_POOL];
	return tls_memo;
}

/* This thread's memo, held for one walk (*SEQ for memo_give), or NULL. */
static inline struct memo *memo_take(unsigned *seq)
{
	struct memo *mo = tls_memo;
	unsigned s, gen;

	if (unlikely(mo == NULL) && (mo = memo_assign()) == NULL)
		return NULL;
#ifdef MTREC_UNWIND_TEST
	if (__atomic_load_n(&memo_shared, __ATOMIC_RELAXED))
		mo = __atomic_load_n(&memo_pool, __ATOMIC_RELAXED);
#endif
	s = __atomic_load_n(&mo->seq, __ATOMIC_RELAXED);
	if ((s & 1) || !__atomic_compare_exchange_n(&mo->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return NULL;
	gen = __atomic_load_n(&memo_gen, __ATOMIC_RELAXED);
	if (unlikely(mo->gen != gen)) {
		/* Code was unmapped since: its rules may be wrong now. */
		memset(mo->step, 0, sizeof(mo->step));
		for (int i = 0; i < MEMO_RECS; i++)
			mo->rec[i].ok = 0;
		mo->gen = gen;
	}
	*seq = s;
	return mo;
}

static inline void memo_give(struct memo *mo, unsigned seq)
{
	if (mo)
		__atomic_store_n(&mo->seq, seq + 2, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ the walk */

int mtrec_unwind_from(void **ips, int max, uintptr_t sp, uintptr_t bp,
		      struct mtrec_unwind_known *k) __attribute__((visibility("hidden")));

void mtrec_unwind_init(void)
{
	struct dl_find_object fo;

	if (__atomic_load_n(&init_done, __ATOMIC_ACQUIRE))
		return;
	if (_dl_find_object((void *)&mtrec_unwind_from, &fo) == 0) {
		__atomic_store_n(&self_lo, (uintptr_t)fo.dlfo_map_start, __ATOMIC_RELAXED);
		__atomic_store_n(&self_len, (uintptr_t)fo.dlfo_map_end - (uintptr_t)fo.dlfo_map_start,
				 __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&rule_cache, __ATOMIC_ACQUIRE) == NULL) {
		int saved = errno;
		void *m = mmap(NULL, CACHE_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t *expect = NULL;
		if (m != MAP_FAILED &&
		    !__atomic_compare_exchange_n(&rule_cache, &expect, (uint64_t *)m, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			munmap(m, CACHE_SIZE * sizeof(uint64_t));
		errno = saved;
	}
	__atomic_store_n(&init_done, 1, __ATOMIC_RELEASE);
}

void mtrec_unwind_forget_tags(void)
{
	/* the memos' records go with their step rules: both are rebuilt
	   from the rule cache */
	__atomic_fetch_add(&memo_gen, 1, __ATOMIC_RELEASE);
}

void mtrec_unwind_flush(void)
{
	uint64_t *cache = __atomic_load_n(&rule_cache, __ATOMIC_ACQUIRE);

	__atomic_fetch_add(&memo_gen, 1, __ATOMIC_RELEASE);	/* the memos' rules too */
	if (cache) {
		int saved = errno;
		/* Private anonymous pages read back as zero: every entry empty. */
		madvise(cache, CACHE_SIZE * sizeof(uint64_t), MADV_DONTNEED);
		errno = saved;
	}
}

#ifdef MTREC_UNWIND_TEST
void mtrec_unwind_test_cache(int on)
{
	__atomic_store_n(&cache_off, !on, __ATOMIC_RELAXED);
}

void mtrec_unwind_test_share(int on)
{
	__atomic_store_n(&memo_shared, on, __ATOMIC_RELAXED);
}
#endif

static __attribute__((noinline)) uint64_t rule_miss(uint64_t *cache, uintptr_t key)
{
	uint64_t rule = mtrec_unwind_rule(key);
	if (rule & RULE_NOCACHE)
		return rule;	/* K_STOP: the walk ends, not to be replayed */
	if (cache && (key >> 47) == 0)
		cache_put(cache, key, rule);
	return rule;
}

static inline uint64_t rule_of(uint64_t *cache, uintptr_t key)
{
	uint64_t rule = K_EMPTY;

	if (likely(cache != NULL) && likely((key >> 47) == 0))
		rule = cache_get(cache, key);
	if (unlikely(rule == K_EMPTY))
		rule = rule_miss(cache, key);
	return rule;
}

/* The word at slot_at, RBP's saved value: the memo's copy when equal, so
   that what follows does not wait for the load. */
static inline uintptr_t load_bp(uintptr_t slot_at, struct memo_step *st)
{
	uintptr_t v = *(const uintptr_t *)slot_at, known;

	if (!st)
		return v;
	known = st->bp;
	if (unlikely(v != known)) {
		st->bp = v;
		return v;
	}
	__asm__("" : "+r"(known));	/* not to be replaced by v */
	return known;
}

struct walk {
	void **ips;
	int max;
	uintptr_t hi, lo_self, len_self;
	uint64_t *cache;
	struct memo *mo;
	struct memo_rec *rec;	/* being recorded, or NULL */
};

/* Note a word the walk read, the *NL'th (the walk stays replayable while
   they fit). */
static inline uintptr_t noted(struct memo_rec *rec, unsigned *nl, uintptr_t at, uintptr_t word)
{
	if (rec) {
		if (likely(*nl < MEMO_LOADS)) {
			rec->at[*nl] = at;
			rec->word[*nl] = word;
		}
		++*nl;
	}
	return word;
}

/* The record for a walk from SP: chosen by the return address there too
   (SP is not enough: the same entry serves every allocating call). */
static inline struct memo_rec *memo_rec_for(struct memo *mo, uintptr_t sp, uintptr_t hi)
{
	uintptr_t ra = hi - sp >= 8 ? *(const uintptr_t *)sp : 0;

	return &mo->rec[((sp >> 3) ^ (ra >> 2) ^ (ra >> 9)) % MEMO_RECS];
}

/* The walk, when the record R of an earlier one holds: its frames
   into W->ips (or, when K asks and R has a tag, the tag into K) and
   their number, else -1. */
static int replay(const struct walk *w, const struct memo_rec *r, uintptr_t sp, uintptr_t bp,
		  struct mtrec_unwind_known *k)
{
	uintptr_t diff = 0;

	if (!r->ok || r->sp0 != sp || r->hi != w->hi || r->max != w->max ||
	    (r->need_bp0 && r->bp0 != bp))
		return -1;
	for (unsigned i = 0; i < r->nloads; i++)
		diff |= *(const uintptr_t *)r->at[i] ^ r->word[i];
	if (diff)
		return -1;
	if (k && r->tag)
		k->tag = r->tag;
	else
		memcpy(w->ips, r->ips, (size_t)r->n * sizeof(void *));
	return r->n;
}

static inline __attribute__((always_inline)) int walk(const struct walk *w, uintptr_t sp, uintptr_t bp)
{
	struct memo_rec *rec = w->rec;
	uintptr_t hi = w->hi, ip;
	int n = 0, exact = 0, bp_ok = 1, steps = 0, bp_entry = 1, bp_pending = 0;
	uintptr_t bp_at = 0;
	unsigned nl = 0;

	if (hi - sp < 8)
		return 0;
	ip = noted(rec, &nl, sp, *(const uintptr_t *)sp);
	sp += 8;

	for (;;) {
		struct memo_step *st = NULL;
		uintptr_t key, cfa, slot_at;
		uint64_t rule;
		int slot;

		if (ip < 4096 || ++steps > 4096)
			break;		/* 0 ends the stack; small values are junk */
		/* Not only the leading frames: a tracked function's wrapper
		   (rec-track.c) stays on the stack while the function runs,
		   and the malloc it makes unwinds through it to the program. */
		if (ip - w->lo_self >= w->len_self) {
			w->ips[n++] = (void *)ip;
			if (n == w->max)
				break;
		}

		key = exact ? ip : ip - 1;
		if (likely(w->mo != NULL) && likely(steps <= MEMO_STEPS)) {
			st = &w->mo->step[steps - 1];
			if (likely(st->key == key)) {
				rule = st->rule;
			} else {
				rule = rule_of(w->cache, key);
				if (likely(!(rule & RULE_NOCACHE))) {
					st->key = key;
					st->rule = rule;
				}
			}
		} else {
			rule = rule_of(w->cache, key);
		}

		switch (rule & RULE_KIND) {
		case K_FRAME:
			if (rule & RULE_CFA_RBP) {
				if (!bp_ok)
					goto out;
				/* Only an RBP that makes a CFA is an input of
				   the walk (most saved values are never used). */
				if (rec && bp_entry)
					rec->need_bp0 = 1;
				else if (bp_pending)
					noted(rec, &nl, bp_at, bp);
				bp_pending = 0;
				cfa = bp + rule_off(rule);
			} else {
				cfa = sp + rule_off(rule);
			}
			/* The frame lies in [sp, cfa): the return address is
			   its top word, and the caller's frame is above it. */
			if (cfa < sp + 8 || cfa > hi)
				goto out;
			slot = rule_bp_slot(rule);
			if (slot == BP_LOST) {
				bp_ok = 0;
				bp_entry = 0;
				bp_pending = 0;
			} else if (slot != 0) {
				slot_at = cfa + (intptr_t)slot * 8;
				if (slot_at < sp || slot_at > hi - 8)
					goto out;
				bp = load_bp(slot_at, st);
				bp_at = slot_at;
				bp_pending = 1;
				bp_ok = 1;
				bp_entry = 0;
			}
			ip = noted(rec, &nl, cfa - 8, *(const uintptr_t *)(cfa - 8));
			sp = cfa;
			exact = 0;
			break;
		case K_SIGNAL: {
			/* SP is the ucontext_t the kernel pushed; its gregs
			   start at byte 40 (REG_RBP 10, REG_RSP 15, REG_RIP 16). */
			const uintptr_t *gregs = (const uintptr_t *)(sp + 40);
			uintptr_t nsp;
			nl = MEMO_LOADS + 1;	/* may go on another stack: not replayed */
			bp_pending = 0;
			if (hi - sp < 40 + 17 * 8)
				goto out;
			nsp = gregs[15];
			if (nsp <= sp || nsp >= hi) {
				/* The handler ran on an alternate stack. */
				hi = stack_end(nsp);
				if (hi == 0 || nsp + 8 > hi)
					goto out;
			}
			ip = gregs[16];
			bp = gregs[10];
			bp_ok = 1;
			sp = nsp;
			exact = 1;
			break;
		}
		default:
			if (rule & RULE_NOCACHE)	/* a later dlopen may map code there */
				nl = MEMO_LOADS + 1;
			goto out;
		}
	}
out:
	if (rec)
		rec->nloads = nl;
	return n;
}

/* Walk from the state right after a return from mtrec_unwind or
   mtrec_unwind_known: SP points at that return address, BP is the
   caller's RBP; K is NULL from mtrec_unwind. */
int mtrec_unwind_from(void **ips, int max, uintptr_t sp, uintptr_t bp,
		      struct mtrec_unwind_known *k)
{
	struct walk w;
	struct memo_rec *r = NULL;
	unsigned seq = 0;
	int n;

	if (k) {
		k->tag = NULL;
		k->memo = k->rec = NULL;
	}
	if (max <= 0)
		return 0;
	if (unlikely(!__atomic_load_n(&init_done, __ATOMIC_ACQUIRE)))
		mtrec_unwind_init();
	w.ips = ips;
	w.max = max;
	w.cache = __atomic_load_n(&rule_cache, __ATOMIC_RELAXED);
	w.lo_self = __atomic_load_n(&self_lo, __ATOMIC_RELAXED);
	w.len_self = __atomic_load_n(&self_len, __ATOMIC_RELAXED);
	w.mo = NULL;
	if (unlikely(__atomic_load_n(&cache_off, __ATOMIC_RELAXED)))
		w.cache = NULL;
	else
		w.mo = memo_take(&seq);

	w.rec = NULL;
	w.hi = stack_end(sp);
	if (unlikely(w.hi == 0))
		w.hi = stack_refresh(sp);
	if (w.mo)
		r = memo_rec_for(w.mo, sp, w.hi);
	if (w.hi == 0) {
		n = 0;
		r = NULL;
	} else if (r == NULL || (n = replay(&w, r, sp, bp, k)) < 0) {
		if (r) {
			w.rec = r;
			r->ok = 0;
			r->nloads = 0;
			r->need_bp0 = 0;
			r->tag = NULL;
		}
		n = walk(&w, sp, bp);
		if (r && r->nloads <= MEMO_LOADS && n <= MEMO_STEPS) {
			r->sp0 = sp;
			r->bp0 = bp;
			r->hi = w.hi;
			r->max = max;
			r->n = n;
			memcpy(r->ips, ips, (size_t)n * sizeof(void *));
			r->ok = 1;
		} else {
			r = NULL;
		}
	}
	memo_give(w.mo, seq);
	if (k && r && !k->tag) {
		k->memo = w.mo;
		k->rec = r;
		k->seq = seq + 2;
	}
	return n;
}

void mtrec_unwind_tag(const struct mtrec_unwind_known *k, const void *tag)
{
	struct memo *mo = k->memo;
	unsigned s = k->seq;

	/* Only if no walk took the memo since (another thread sharing it,
	   a signal handler): the record may hold other frames now. */
	if (!mo || !__atomic_compare_exchange_n(&mo->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
		return;
	((struct memo_rec *)k->rec)->tag = tag;
	__atomic_store_n(&mo->seq, s + 2, __ATOMIC_RELEASE);
}

/* The entry point is a three-instruction stub so that the walk starts from
   exact register values: the caller's RSP right after the return and its
   RBP, with no compiler-chosen frame in between. */
__asm__(
	"	.text\n"
	"	.globl	mtrec_unwind\n"
	"	.hidden	mtrec_unwind\n"
	"	.type	mtrec_unwind, @function\n"
	"	.p2align 4\n"
	"mtrec_unwind:\n"
	"	.cfi_startproc\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	movq	%rsp, %rdx\n"
	"	movq	%rbp, %rcx\n"
	"	xorl	%r8d, %r8d\n"
	"	jmp	mtrec_unwind_from\n"
	"	.cfi_endproc\n"
	"	.size	mtrec_unwind, .-mtrec_unwind\n"
	"	.globl	mtrec_unwind_known\n"
	"	.hidden	mtrec_unwind_known\n"
	"	.type	mtrec_unwind_known, @function\n"
	"	.p2align 4\n"
	"mtrec_unwind_known:\n"
	"	.cfi_startproc\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	movq	%rdx, %r8\n"
	"	movq	%rsp, %rdx\n"
	"	movq	%rbp, %rcx\n"
	"	jmp	mtrec_unwind_from\n"
	"	.cfi_endproc\n"
	"	.size	mtrec_unwind_known, .-mtrec_unwind_known\n");

#else /* not x86-64 Linux */

void mtrec_unwind_init(void)
{
}

int mtrec_unwind(void **ips, int max)
{
	(void)ips;
	(void)max;
	return 0;
}

int mtrec_unwind_known(void **ips, int max, struct mtrec_unwind_known *k)
{
	(void)ips;
	(void)max;
	k->tag = NULL;
	k->memo = k->rec = NULL;
	return 0;
}

void mtrec_unwind_tag(const struct mtrec_unwind_known *k, const void *tag)
{
	(void)k;
	(void)tag;
}

void mtrec_unwind_forget_tags(void)
{
}

void mtrec_unwind_flush(void)
{
}

#ifdef MTREC_UNWIND_TEST
void mtrec_unwind_test_cache(int on)
{
	(void)on;
}

void mtrec_unwind_test_share(int on)
{
	(void)on;
}
#endif

#endif
