/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* events.c -- event lines ("@ CALLER + ADDR SIZE" ...) and the order
 * they take in the file.
 *
 * Across threads, what matters is the order of events on one address: the
 * allocation of p before the free of p in another thread, that free before
 * a later allocation returning p again.  Every event on p publishes, in
 * last_addr_event[] (keyed by p's page), the end of the chunk holding its
 * line, as an offset in the trace (slot->end_off: with rotation, a later
 * part may lie at a lower address): a free before the block is released,
 * an allocation after it returned.  Before writing an event on p, a thread
 * reads that bucket; when it holds a chunk end beyond the thread's chunk
 * (a line written in a chunk reserved after this thread's), the thread
 * moves to a fresh chunk,
 * which lies after every chunk reserved so far, and so after that line.
 * Whatever made the program's second event happen after the first (the
 * allocator's locks, the hand-over of the pointer) also makes the second
 * thread see the bucket.  Buckets only grow (compare-and-swap to the
 * maximum), so a collision can cause a needless move, never a missed one;
 * they are keyed by page so that threads working in their own arenas touch
 * their own cache lines.  The same rule holds between the nesting levels
 * of one thread (chunk.c) as between threads.
 *
 * Locks the thread already holds are never waited for (mtrec_lock): a
 * signal handler's event then goes without a stack, with the lookup-free
 * caller form, or, when it would need the file to grow, is counted as
 * lost.
 *
 * The caller and stack tables say when an entry is new; the objects that
 * may hold it are then described ("# object") before the event. */
#include "chunk.h"
#include "events.h"
#include "got.h"
#include "reach-table.h"
#include "rec.h"
#include "tables.h"
#include "unwind.h"

#include <string.h>
#include <sys/mman.h>

__thread const void *mtrec_wrapper_caller;	/* events.h */

#define NBUCKETS (1u << 16)	/* last_addr_event[] entries, one per page (hashed) */

static uintptr_t *last_addr_event;
static int stack_depth = 1;	/* MTREC_DEPTH: frames per stack, 1 = caller only */
static const void *hidden;	/* our putenv()'s environ array: not the program's */

int mtrec_events_init(int depth)
{
	stack_depth = depth;
	last_addr_event = prim_map_anon(NBUCKETS * sizeof(uintptr_t));
	if (!last_addr_event)
		return -1;
	/* A child starts with empty buckets, whatever made it. */
	madvise(last_addr_event, NBUCKETS * sizeof(uintptr_t), MADV_WIPEONFORK);
	return 0;
}

void mtrec_events_hide(const void *p)
{
	hidden = p;
}

void mtrec_events_fork_child(void)
{
	if (last_addr_event)
		memset(last_addr_event, 0, NBUCKETS * sizeof(uintptr_t));
}

/* After recording stopped, events are only counted. */
static inline int stopped(struct mtrec_slot *s)
{
	if (likely(!mtrec_failed))
		return 0;
	s->lost_stopped++;
	return 1;
}

/* An event that found no room: recording stopped meanwhile, or a signal
 * handler needed a lock its own thread holds. */
static MTREC_COLD void count_lost(struct mtrec_slot *s)
{
	if (mtrec_failed)
		s->lost_stopped++;
	else
		s->lost_nested++;
}

/* ---- the ordering table ---------------------------------------------- */

static inline uintptr_t *bucket(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	/* Pages of one region stay adjacent; regions are spread apart. */
	uintptr_t salt = ((a >> 30) * 0x9e3779b97f4a7c15ull) >> 48;

	return &last_addr_event[((a >> 12) + salt) & (NBUCKETS - 1)];
}

/* The latest line about p lies before chunk_end (an offset). */
static inline void publish(const void *p, size_t chunk_end)
{
	uintptr_t *b = bucket(p), want = (uintptr_t)chunk_end;
	uintptr_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);

	while (cur < want && !__atomic_compare_exchange_n(b, &cur, want, 1,
							  __ATOMIC_SEQ_CST,
							  __ATOMIC_RELAXED))
		;
}

void mtrec_events_fence(void)
{
	struct mtrec_slot *s = mtrec_me();

	if (!s || !last_addr_event)
		return;
	for (unsigned i = 0; i < NBUCKETS; i++) {
		uintptr_t *b = &last_addr_event[i], cur = __atomic_load_n(b, __ATOMIC_RELAXED);

		while (cur < s->end_off && !__atomic_compare_exchange_n(b, &cur, s->end_off, 1,
									__ATOMIC_SEQ_CST,
									__ATOMIC_RELAXED))
			;
	}
}

/* Is there a line about p in a chunk beyond our position?  Chunks do not
 * overlap, so another chunk's end is beyond ours or before our chunk
 * starts, and our own chunk's lines are all behind our position. */
static inline int touched_ahead(const void *p, const struct mtrec_slot *s)
{
	uintptr_t v = __atomic_load_n(bucket(p), __ATOMIC_ACQUIRE);

	return v > (uintptr_t)s->end_off;
}

/* ---- event lines ------------------------------------------------------ */

static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* "0x" and v in lowercase hex without leading zeros (v != 0), as %p and
 * %#lx print it. */
static inline char *put_hex(char *o, uintptr_t v)
{
	int digits = (67 - __builtin_clzl(v)) / 4;
	char *e = o + 2 + digits, *w = e;

	o[0] = '0';
	o[1] = 'x';
	while (w - o > 3) {
		w -= 2;
		memcpy(w, hex_pairs + 2 * (v & 0xff), 2);
		v >>= 8;
	}
	if (w - o == 3)
		w[-1] = hex_pairs[2 * v + 1];
	return e;
}

static inline char *put_ptr(char *o, const void *p)
{
	if (p)
		return put_hex(o, (uintptr_t)p);
	memcpy(o, "(nil)", 5);
	return o + 5;
}

static inline char *put_size(char *o, size_t size)
{
	if (size)
		return put_hex(o, size);
	*o = '0';
	return o + 1;
}

/* What an event line is made of besides its operation and address. */
struct event_ctx {
	const struct mtrec_caller *c;
	struct mtrec_stack *st;	/* NULL without stacks */
	int def;		/* write the stack's definition first (decided where
				 * the line goes, with the room: see with_def) */
};

/* An event's line alone. */
static inline size_t line_room(const struct event_ctx *e)
{
	return e->c->len + sizeof("+ 0x0123456789abcdef 0x0123456789abcdef s=18446744073709551615\n");
}

/* The most an event can need: its line, and its stack's definition. */
static inline size_t event_room(const struct event_ctx *e)
{
	size_t n = line_room(e);

	return e->st ? n + mtrec_stack_def_room(e->st) : n;
}

/* Whether the line at o carries its stack's definition: the first in each
 * part that uses it.  Decided once, where the room is taken, and not again
 * when the line is written: another thread writing in the next part of a
 * rotated trace may mark the stack meanwhile, and a definition written
 * then would overrun room taken without it. */
static inline void with_def(struct event_ctx *e, const char *o)
{
	e->def = e->st && *mtrec_stack_part(e->st) != mtrec_part_of(o);
}

/* The stack's "# stack" line goes right before the first event of each
 * part that uses it: a part can then be read alone, and every thread's
 * events follow the definitions they use. */
/* An event line, after PREFIX (plen bytes, none when NULL): "# k KIND "
 * makes a tracked allocator's event of one (share/trace-format.md).
 * Inlined into each writer, so that the prefix test folds away for
 * malloc's events (out of line it cost 2% more instructions an event). */
static inline __attribute__((always_inline)) char *
put_line(char *o, const struct event_ctx *e, const char *prefix, size_t plen,
	 char op, const void *p, int with_size, size_t size)
{
	char *line;
	char first;

	if (e->def) {
		*mtrec_stack_part(e->st) = mtrec_part_of(o);
		o = mtrec_stack_put_def(o, e->st);
	}
	line = o;
	/* The line's first byte, '@' (or the prefix's '#'), is stored last:
	 * until the whole line is there it starts with a NUL (a chunk starts
	 * zeroed), so a process killed while writing it leaves no half
	 * event, only a line every reader skips. */
	if (prefix) {
		first = prefix[0];
		memcpy(o + 1, prefix + 1, plen - 1u);
		memcpy(o + plen, e->c->text, e->c->len);
	} else {
		first = e->c->text[0];
		memcpy(o + 1, e->c->text + 1, e->c->len - 1u);
	}
	o += plen + e->c->len;
	o[0] = op;
	o[1] = ' ';
	o = put_ptr(o + 2, p);
	if (with_size) {
		*o++ = ' ';
		o = put_size(o, size);
	}
	if (e->st) {
		memcpy(o, " s=", 3);
		o = prim_putu(o + 3, o + 24, mtrec_stack_id_of(e->st));
	}
	*o++ = '\n';
	__asm__ volatile("" ::: "memory");
	line[0] = first;
	return o;
}

static char *put_event(char *o, const struct event_ctx *e, char op,
		       const void *p, int with_size, size_t size)
{
	return put_line(o, e, NULL, 0, op, p, with_size, size);
}

/* A caller or a stack seen for the first time may lie in an object loaded
 * since the objects were last described: describe them first, and
 * redirect the slots of any that bypass the preload (got.c). */
static MTREC_COLD void loader_moved(void)
{
	struct mtrec_got_report r = { 0, 0, 0, 0, 0 };

	mtrec_objects_sync(mtrec_chunk_line);
	mtrec_got_sync(&r);
}

static MTREC_COLD const struct mtrec_caller *new_caller(const void *caller)
{
	/* Under the loader's lock: a caller string without dladdr, not kept
	 * (the next event from there, outside, gets the full one). */
	if (prim_loader_depth > 0)
		return mtrec_caller_unlisted(caller);
	loader_moved();
	return mtrec_caller_add(caller);
}

static MTREC_COLD struct mtrec_stack *new_stack(void *const *ips, int n)
{
	loader_moved();
	return mtrec_stack_add(ips, n);
}

/* The caller's string and, with MTREC_DEPTH > 1, the interned stack. */
static void describe_event(struct event_ctx *e, const void *caller)
{
	struct mtrec_unwind_known known;
	void *ips[64];
	int n;

	/* a tracked function that ended in a tail call of malloc's family
	 * returns into the recorder's wrapper: the program's line instead
	 * (no frame of the recorder is recorded: SPEC) */
	if (unlikely(mtrec_wrapper_caller != NULL) && prim_in_recorder(caller))
		caller = mtrec_wrapper_caller;
	e->c = mtrec_caller_find(caller);
	if (unlikely(e->c == NULL))
		e->c = new_caller(caller);
	e->st = NULL;
	e->def = 0;
	if (stack_depth <= 1)
		return;
	/* A stack walked before comes back as its interned entry. */
	n = mtrec_unwind_known(ips, stack_depth, &known);
	if (known.tag) {
		e->st = (struct mtrec_stack *)known.tag;
		return;
	}
	if (n <= 0) {
		/* no frames: the caller stands in, and the walk gets no tag */
		known.memo = NULL;
		ips[0] = (void *)caller;
		n = 1;
	}
	e->st = mtrec_stack_find(ips, n);
	if (unlikely(e->st == NULL))
		e->st = new_stack(ips, n);
	if (e->st)
		mtrec_unwind_tag(&known, e->st);
}

/* Where a line about p goes: after any line about p another thread wrote
 * in a later chunk. */
static inline char *place(struct mtrec_slot *s, const void *p, size_t need)
{
	char *o = mtrec_room(s, need);

	if (o && p && unlikely(touched_ahead(p, s)))
		o = mtrec_chunk_new(s, need);
	return o;
}

/* Where an event about p goes, EXTRA bytes before its line: room for its
 * stack's definition is taken only when the part there lacks it.  At
 * depth 64 a definition is most of a chunk, and taking its room for every
 * event left most of each chunk as filler. */
static inline char *place_event(struct mtrec_slot *s, const void *p, struct event_ctx *e,
				size_t extra)
{
	size_t need = line_room(e) + extra;
	char *o = place(s, p, need);

	if (o && e->st) {
		with_def(e, o);
		if (e->def && (size_t)(s->end - o) < need + mtrec_stack_def_room(e->st)) {
			/* a fresh chunk lies after every chunk reserved so far:
			 * still after any line about p */
			o = mtrec_chunk_new(s, need + mtrec_stack_def_room(e->st));
			if (o)
				with_def(e, o);
		}
	}
	return o;
}

/* Write "op p [size]" for an allocation-like event. */
static void write_alloc(struct mtrec_slot *s, struct event_ctx *e,
			char op, const void *p, size_t size)
{
	char *o = place_event(s, p, e, 0);

	if (!o) {
		count_lost(s);
		return;
	}
	s->pos = put_event(o, e, op, p, 1, size);
	if (p)
		publish(p, s->end_off);
}

void mtrec_record_alloc(const void *caller, const void *p, size_t size)
{
	struct mtrec_slot *s;
	struct event_ctx e;

	mtrec_enter();
	if ((s = mtrec_me()) != NULL && !stopped(s)) {
		describe_event(&e, caller);
		write_alloc(s, &e, '+', p, size);
	}
	mtrec_leave_slot(s);
}

void mtrec_record_free(const void *caller, const void *p)
{
	struct mtrec_slot *s;
	struct event_ctx e;
	char *o;

	if (unlikely(p == hidden)) {
		hidden = NULL;
		return;
	}
	mtrec_enter();
	if ((s = mtrec_me()) != NULL && !stopped(s)) {
		describe_event(&e, caller);
		o = place_event(s, p, &e, 0);
		if (o) {
			s->pos = put_event(o, &e, '-', p, 0, 0);
			publish(p, s->end_off);
		} else {
			count_lost(s);
		}
	}
	mtrec_leave_slot(s);
}

/* ---- tracked kinds (mtrec.h: mtrec_alloc, mtrec_free, ...) ------------- */

#define KIND_MAX 63

/* "# k KIND " with KIND made of [A-Za-z0-9_.:-] (others become '_', cut
 * at KIND_MAX bytes; "unnamed" when empty): one field, whatever the
 * program passed. */
static size_t kind_prefix(char *buf, const char *kind)
{
	size_t n = mtrec_word_len(MTREC_W_K);

	mtrec_put_word(buf, MTREC_W_K);
	for (const char *k = kind ? kind : ""; *k && n < mtrec_word_len(MTREC_W_K) + KIND_MAX; k++) {
		char ch = *k;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == ':' || ch == '-';
		buf[n++] = (char)(ok ? ch : '_');
	}
	if (n == 4) {
		memcpy(buf + 4, "unnamed", 7);
		n += 7;
	}
	buf[n++] = ' ';
	return n;
}

void mtrec_record_kind(const void *caller, const char *kind, char op, const void *p,
		       int with_size, size_t size)
{
	char prefix[4 + KIND_MAX + 1];
	size_t plen = kind_prefix(prefix, kind);
	struct mtrec_slot *s;
	struct event_ctx e;
	char *o;

	mtrec_enter();
	if ((s = mtrec_me()) != NULL && !stopped(s)) {
		describe_event(&e, caller);
		o = place_event(s, p, &e, plen);
		if (o) {
			s->pos = put_line(o, &e, prefix, plen, op, p, with_size, size);
			if (p)
				publish(p, s->end_off);
		} else {
			count_lost(s);
		}
	}
	mtrec_leave_slot(s);
}

/* ---- realloc ---------------------------------------------------------- */

/* realloc(old, n) may release old before it returns, and another thread
 * may then get old back and write "+ old" before this one writes its
 * outcome.  So the outcome's place is taken, and old's bucket marked,
 * before the call: the last bytes of the thread's chunk are held for it.
 * Checking the place afterwards is not enough.  Whatever the thread
 * writes meanwhile at the same level -- an allocator that calls malloc
 * inside realloc, a signal handler that runs while realloc is in the
 * allocator -- moves its position, and the outcome then went wherever
 * there was room: after a full chunk or a new epoch (another thread's
 * trace_mark, a "# time" line), a chunk reserved after the other thread's
 * "+ old" (t2510 shows it every time).  Now those lines go before the held
 * bytes, or into a later chunk, and the outcome into the held bytes. */
static void hold(struct mtrec_slot *s, struct mtrec_realloc *r, size_t need)
{
	r->state = MTREC_REALLOC_HELD;
	r->end = s->end;
	r->at = s->end - need;
	/* The slot's chunk now ends at r->at; like every chunk end, its last
	 * byte is a newline (or is the newline that ends the line before). */
	r->at[-1] = '\n';
	s->end = r->at;
	s->end_off -= need;
	s->held++;		/* its part stays mapped until the outcome */
}

/* Where the outcome goes: the held bytes, in the chunk they belong to;
 * *apart is set when that chunk is no longer the thread's.  A thread with
 * no chunk at all (the trace ended meanwhile) does not write there, as
 * for any other event; an outcome that needs more than was held (its
 * stack found now, not before) goes where there is room. */
static char *outcome_place(struct mtrec_slot *s, struct mtrec_realloc *r, size_t need,
			   int *apart)
{
	*apart = 0;
	if (r->state != MTREC_REALLOC_HELD)
		return mtrec_room(s, need);
	if (s->end == r->at) {
		/* Still in that chunk: it is whole again, whatever the epoch. */
		s->end = r->end;
		s->end_off += (size_t)(r->end - r->at);
		if ((size_t)(s->end - s->pos) >= need)
			return s->pos;
	} else if (s->end && (size_t)(r->end - r->at) >= need) {
		*apart = 1;
		return r->at;
	} else {
		mtrec_pad(r->at, r->end);
	}
	return mtrec_room(s, need);
}

/* The outcome is not written: give the held bytes back as a filler. */
static void let_go(struct mtrec_slot *s, struct mtrec_realloc *r)
{
	if (r->state != MTREC_REALLOC_HELD)
		return;
	if (s && s->end == r->at) {
		s->end = r->end;
		s->end_off += (size_t)(r->end - r->at);
	} else {
		mtrec_pad(r->at, r->end);
	}
}

void mtrec_realloc_before(struct mtrec_realloc *r, const void *caller,
			  const void *old)
{
	struct mtrec_slot *s;
	struct event_ctx e;
	size_t need;

	r->state = old ? MTREC_REALLOC_ADRIFT : MTREC_REALLOC_NEW;
	r->at = r->end = NULL;
	if (!old)
		return;
	if (unlikely(old == hidden)) {
		/* Its growth is the program's first sight of the block. */
		r->state = MTREC_REALLOC_FIRST_SIGHT;
		return;
	}
	mtrec_enter();
	if ((s = mtrec_me()) != NULL && !mtrec_failed) {
		describe_event(&e, caller);
		need = 2 * event_room(&e);
		if (place(s, old, need)) {
			publish(old, s->end_off);
			hold(s, r, need);
		}
	}
	mtrec_leave_slot(s);
}

/* "< old" (or the "-" or "!" that stands for it) at o; its end. */
static char *put_release(char *o, const struct event_ctx *e, const void *old,
			 const void *new, size_t size)
{
	if (new)
		return put_event(o, e, '<', old, 0, 0);
	return size ? put_event(o, e, '!', old, 1, size) : put_event(o, e, '-', old, 0, 0);
}

/* The outcome, exactly as glibc's realloc_mtrace_after words it. */
void mtrec_realloc_after(struct mtrec_realloc *r, const void *caller,
			 const void *old, const void *new, size_t size)
{
	struct mtrec_slot *s;
	struct event_ctx e;
	char *o, *end;
	int apart, was_held = r->state == MTREC_REALLOC_HELD;

	mtrec_enter();
	if ((s = mtrec_me()) == NULL || stopped(s)) {
		let_go(s, r);
		goto out;
	}
	describe_event(&e, caller);
	switch (r->state) {
	case MTREC_REALLOC_FIRST_SIGHT:
		if (new) {
			hidden = NULL;
			write_alloc(s, &e, '+', new, size);
		}
		goto out;
	case MTREC_REALLOC_NEW:
		if (new || size == 0)
			write_alloc(s, &e, '+', new, size);
		else
			write_alloc(s, &e, '!', NULL, size);
		goto out;
	case MTREC_REALLOC_HELD:
	case MTREC_REALLOC_ADRIFT:
		break;
	}
	o = outcome_place(s, r, 2 * event_room(&e), &apart);
	if (!o) {
		count_lost(s);
		goto out;
	}
	with_def(&e, o);	/* its room was held whole */
	end = put_release(o, &e, old, new, size);
	if (apart)
		mtrec_pad(end, r->end);
	else
		s->pos = end;
	if (new)
		write_alloc(s, &e, '>', new, size);
out:
	if (s && was_held)
		s->held--;
	mtrec_leave_slot(s);
}

/* ---- MTREC_REACH: the table of live blocks (reach-table.h) ------------- */

/* A block is added after its allocation returned and removed before it
 * is released, as its lines are ordered: another thread can be handed
 * the address only after the removal.  realloc removes the old block
 * before the call, which may release it, and puts it back if the call
 * fails. */
static void alloc_reach(const void *caller, const void *p, size_t size)
{
	mtrec_reach_add(p, size);
	mtrec_record_alloc(caller, p, size);
}

static void free_reach(const void *caller, const void *p)
{
	size_t size;

	mtrec_reach_remove(p, &size);
	mtrec_record_free(caller, p);
}

static void realloc_before_reach(struct mtrec_realloc *r, const void *caller, const void *old)
{
	mtrec_realloc_before(r, caller, old);
	r->reach_had = (r->state == MTREC_REALLOC_HELD || r->state == MTREC_REALLOC_ADRIFT) &&
		       mtrec_reach_remove(old, &r->reach_size);
}

static void realloc_after_reach(struct mtrec_realloc *r, const void *caller,
				const void *old, const void *new, size_t size)
{
	int had = r->reach_had;
	size_t old_size = r->reach_size;

	mtrec_realloc_after(r, caller, old, new, size);
	if (new)
		mtrec_reach_add(new, size);
	else if (had && size != 0)
		mtrec_reach_add(old, old_size);		/* failed: old stays */
}

struct mtrec_record_calls mtrec_record = {
	mtrec_record_alloc, mtrec_record_free, mtrec_realloc_before, mtrec_realloc_after,
};

void mtrec_events_reach(void)
{
	mtrec_record.alloc = alloc_reach;
	mtrec_record.free = free_reach;
	mtrec_record.realloc_before = realloc_before_reach;
	mtrec_record.realloc_after = realloc_after_reach;
}
