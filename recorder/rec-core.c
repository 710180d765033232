/* rec-core.c -- recording: where each event line goes in the trace file,
 * and in what order.
 *
 * The file is mapped shared (rec-file.c), so a line is in the page cache,
 * and survives SIGKILL, as soon as it is written.  Each thread writes into
 * its own chunk of the file (CHUNK bytes, reserved with one atomic add), so
 * threads share no cache line per event.  Within a chunk, lines follow the
 * thread's own order.
 *
 * Across threads, what matters is the order of events on one address: the
 * allocation of p before the free of p in another thread, that free before
 * a later allocation returning p again.  Every event on p publishes, in
 * last_addr_event[] (keyed by p's page), the end of the chunk holding its
 * line: a free before the block is released, an allocation after it
 * returned.  Before writing an event on p, a thread reads that bucket; when
 * it holds a chunk end beyond the thread's position (a line written in a
 * chunk reserved after this thread's), the thread moves to a fresh chunk,
 * which lies after every chunk reserved so far, and so after that line.
 * Whatever made the program's second event happen after the first (the
 * allocator's locks, the hand-over of the pointer) also makes the second
 * thread see the bucket.  Buckets only grow (compare-and-swap to the
 * maximum), so a collision can cause a needless move, never a missed one;
 * they are keyed by page so that threads working in their own arenas touch
 * their own cache lines.
 *
 * A chunk's last byte is a newline written when it is reserved, and its
 * first a newline written before its "# T" line: a chunk cut short by a
 * crash ends as a line of NULs, and a chunk whose reservation never got as
 * far as its own last byte (its thread blocked, the process exiting) cannot
 * swallow the next chunk's first line.  A chunk left early is filled with
 * a '#' line.
 *
 * Signal handlers.  A handler that allocates while its thread is inside
 * the recorder (writing a line, holding a lock) makes a nested record
 * call.  Each nesting level of a thread has a slot of its own, so the
 * handler's lines go into a chunk of their own and never into the half
 * line below them; the ordering rule above holds between levels as it does
 * between threads.  Locks the thread already holds are never waited for
 * (mtrec_lock): the handler's event then goes without a stack, with the
 * lookup-free caller form, or, when it would need the file to grow, is
 * counted as lost.  Deeper than NEST levels, events are counted as lost.
 *
 * Stopping.  When recording must stop for good (full disk, a size limit,
 * the file truncated or gone), the recorder says so once on stderr and in
 * the trace ("# stopped WHY"), keeps counting the events it no longer
 * writes, and at exit writes "# lost N ..." and "= End" (rec-file.c keeps
 * room for these lines). */
#include "rec.h"
#include "unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CHUNK 2048		/* bytes a thread reserves at a time */
#define MAX_LINE 65536		/* longer extension lines are cut */
#define NBUCKETS (1u << 16)	/* last_addr_event[] entries, one per page (hashed) */
#define NSLOTS 16384		/* thread slots before dead ones are reused */
#define TIME_EVERY_NS 100000000ull	/* "# time" lines at most this often */
#define NAME_EVERY_NS 1000000000ull	/* thread names looked at this often */
#define CHUNK_HEAD 128		/* "# T", "# time" and "# thread" lines at most */
#define PART_ZONE MTREC_PART_ZONE	/* each part's header zone (MTREC_ROTATE) */
#define NEST 4			/* record calls of one thread nested by signal handlers */

extern void __libc_freeres(void);

int mtrec_recording;
__thread int mtrec_busy;
__thread unsigned mtrec_held;
/* Record calls of this thread in progress: a signal handler's comes at
 * depth 1 or more. */
static __thread unsigned depth;
struct mtrec_settings mtrec_settings = { .depth = 1, .freeres = 1 };

/* What a thread writes into.  Slots live in memory of our own, never in
 * TLS, so that the exit path can finish the chunks of other threads. */
struct thread_slot {
	char *pos;		/* next byte to write */
	char *end;		/* end of the chunk */
	unsigned long gen;	/* the chunk is stale once g.gen moves on */
	pid_t tid;
	uint64_t name_checked;	/* when the thread's name was last looked at */
	char name[16];		/* as last written in a "# thread" line */
	unsigned long lost_stopped;	/* events after recording stopped */
	unsigned long lost_nested;	/* events a signal handler could not write */
} __attribute__((aligned(64)));

/* The calling thread's slot at each nesting level. */
static __thread struct thread_slot *self[NEST];

static struct {
	unsigned long gen;	/* bumped to send every thread to a new chunk */
	int enabled;		/* MALLOC_TRACE is set */
	int first;		/* first process of the session: owns the name */
	int opened, ended, failed;
	uintptr_t *last_addr_event;
	struct thread_slot *slots;
	unsigned next_slot;
	uint64_t start_ns, last_time_ns;
	const void *hidden;	/* our putenv()'s environ array: not the program's */
	int toggle_pending;	/* MTREC_SIGNAL arrived inside the recorder */
	int refused;		/* the session's path was refused: no child records */
	unsigned long lost_deep;	/* events nested deeper than NEST */
	pid_t pid;		/* the process the state below belongs to */
	int forked;		/* a child made by fork: no trace of its own yet */
	int child_start;	/* ... and it should start recording at once */
	pthread_mutex_t lock;	/* start, stop, mark, open */
} g = { .gen = 1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- chunks ----------------------------------------------------------- */

/* A character of a label, name or path as it may stand in one line. */
static inline char flat(char c)
{
	if (c == '\n' || c == '\r' || c == '\0')
		c = ' ';
	return c;
}

static char *put_dec(char *o, unsigned long v)
{
	return prim_putu(o, o + 24, v);
}

/* Fill what is left of the slot's chunk with a comment line. */
static void chunk_close(struct thread_slot *s)
{
	size_t left = (size_t)(s->end - s->pos);

	if (s->pos && left >= 2) {
		s->pos[0] = '#';
		memset(s->pos + 1, ' ', left - 2);
	}
	s->pos = s->end = NULL;
}

/* The "# time" line, when one is due; returns the end of what it wrote.
 * Readers date a line from the "# time" lines around it, so every other
 * thread is sent to a new chunk (*gen moves on): a thread idle for seconds
 * would otherwise write its next events in the chunk it began before, among
 * lines seconds older (a daemon's shutdown dated to its start-up). */
static char *maybe_time(char *o, uint64_t now, unsigned long *gen)
{
	uint64_t last = __atomic_load_n(&g.last_time_ns, __ATOMIC_RELAXED);

	if (now - last < TIME_EVERY_NS ||
	    !__atomic_compare_exchange_n(&g.last_time_ns, &last, now, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return o;
	/* Our own chunk may stay only if nothing else moved the epoch since
	 * it was taken (a toggle's new_epoch() must still be obeyed). */
	unsigned long was = *gen;
	if (__atomic_compare_exchange_n(&g.gen, &was, was + 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		*gen = was + 1;
	else
		__atomic_add_fetch(&g.gen, 1, __ATOMIC_ACQ_REL);
	memcpy(o, "# time ", 7);
	o = put_dec(o + 7, (unsigned long)(now - g.start_ns));
	*o++ = '\n';
	return o;
}

/* "# thread TID NAME" when the thread's name changed (it is looked at once
 * a second at most: programs name their threads after starting them). */
static char *maybe_thread_name(struct thread_slot *s, char *o, uint64_t now)
{
	char name[16] = "";
	size_t len;

	if (s->name_checked && now - s->name_checked < NAME_EVERY_NS)
		return o;
	s->name_checked = now;
	if (prctl(PR_GET_NAME, name) < 0 || strncmp(name, s->name, sizeof(name)) == 0)
		return o;
	memcpy(s->name, name, sizeof(name));
	len = strnlen(name, sizeof(name));
	memcpy(o, "# thread ", 9);
	o = put_dec(o + 9, (unsigned long)s->tid);
	*o++ = ' ';
	for (size_t i = 0; i < len; i++)
		*o++ = flat(name[i]);
	*o++ = '\n';
	return o;
}

/* Fill [from, to) with one comment line (a newline alone for one byte). */
static void pad(char *from, char *to)
{
	if (to - from >= 2) {
		from[0] = '#';
		memset(from + 1, ' ', (size_t)(to - from - 2));
	}
	if (to > from)
		to[-1] = '\n';
}

/* The process header ("# pid" to "# depth"), made once when the trace is
 * opened: each part of a rotated trace starts with it again. */
static char header_text[8192];
static size_t header_len;

static char *chunk_new(struct thread_slot *s, size_t need);
static inline char *room(struct thread_slot *s, size_t need);

/* Write whole lines of text into the slot's chunks. */
static void write_text(struct thread_slot *s, const char *text, size_t len)
{
	while (len > 0) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) + 1 : len;
		char *o = room(s, n + 1);

		if (!o)
			return;
		memcpy(o, text, n);
		if (!nl)
			o[n++] = '\n';
		s->pos = o + n;
		text += n;
		len -= n;
	}
}

/* Copy the whole lines of text that fit before lim. */
static char *put_lines(char *o, char *lim, const char *text, size_t len)
{
	while (len > 0) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) + 1 : len;

		if (!nl || o + n > lim)
			break;
		memcpy(o, text, n);
		o += n;
		text += n;
		len -= n;
	}
	return o;
}

/* With MTREC_ROTATE, part k starts at offset (k-1) * part_size with a
 * header zone of PART_ZONE bytes that no chunk writes into: the thread
 * whose chunk holds the part's first byte fills it at once with "# mtrec 1",
 * "# part N", the process header and the objects loaded now, then a pad.
 * So every part describes itself, however the threads are scheduled, and
 * nothing here takes a lock (chunk_new may be called with any held). */
static void fill_part_zone(size_t b)
{
	char *o = mtrec_file.base + b, *lim = o + PART_ZONE - 1;

	memcpy(o, "# mtrec 1\n# part ", 17);
	o = put_dec(o + 17, (unsigned long)(b / mtrec_file.part_size + 1));
	*o++ = '\n';
	o = put_lines(o, lim, header_text, header_len);
	o = mtrec_objects_put(o, lim);
	pad(o, mtrec_file.base + b + PART_ZONE);
}

/* For the chunk [off, end): the start of the part whose zone it overlaps
 * (0 for none), and where the chunk's own lines may begin. */
static size_t zone_overlap(size_t off, size_t end, size_t *start)
{
	size_t ps = mtrec_file.part_size, b;

	*start = off;
	if (ps >= mtrec_file.maplen || (b = (end - 1) / ps * ps) == 0 || off >= b + PART_ZONE)
		return 0;
	*start = b + PART_ZONE;
	return b;
}

/* Move the slot to a new chunk with room for need bytes; NULL when
 * recording has stopped or the file cannot grow. */
static MTREC_COLD char *chunk_new(struct thread_slot *s, size_t need)
{
	unsigned long gen = __atomic_load_n(&g.gen, __ATOMIC_ACQUIRE);
	size_t len = CHUNK, off, end, start, b, backed;
	uint64_t now;
	char *c, *o;
	int owner;

	chunk_close(s);
	if (g.ended || g.failed || !g.opened)
		return NULL;
	if (unlikely(mtrec_file_lost())) {
		mtrec_give_up("the trace file was truncated by another process", 0);
		return NULL;
	}
	if (need + CHUNK_HEAD > len)
		len = (need + CHUNK_HEAD + 63) & ~(size_t)63;
again:
	off = __atomic_fetch_add(&mtrec_file.tail, len, __ATOMIC_RELAXED);
	end = off + len;
	b = zone_overlap(off, end, &start);
	owner = b > 0 && b >= off;	/* the chunk holds the part's first byte */
	backed = owner && b + PART_ZONE > end ? b + PART_ZONE : end;
	if (mtrec_file_ensure(backed) < 0)
		return NULL;
	if (owner) {
		pad(mtrec_file.base + off, mtrec_file.base + b);
		fill_part_zone(b);
	}
	if (start + need + CHUNK_HEAD > end) {
		/* The chunk lies (mostly) in a part's header zone: the
		 * bytes past the zone are filled, and we try again. */
		if (start < end)
			pad(mtrec_file.base + start, mtrec_file.base + end);
		goto again;
	}
	mtrec_file.base[end - 1] = '\n';
	c = mtrec_file.base + start;
	memcpy(c, "\n# T ", 5);
	o = put_dec(c + 5, (unsigned long)s->tid);
	*o++ = '\n';
	now = prim_monotonic_ns();
	o = maybe_time(o, now, &gen);
	o = maybe_thread_name(s, o, now);
	s->pos = o;
	s->end = mtrec_file.base + end;
	s->gen = gen;
	return o;
}

static inline char *room(struct thread_slot *s, size_t need)
{
	if (likely(s->gen == __atomic_load_n(&g.gen, __ATOMIC_RELAXED) &&
		   (size_t)(s->end - s->pos) >= need))
		return s->pos;
	return chunk_new(s, need);
}

/* A thread's first event gives it a slot; when none is left, the slot of a
 * thread that has exited is taken over. */
static MTREC_COLD struct thread_slot *slot_attach(unsigned level)
{
	pid_t tid = prim_gettid();
	unsigned i = __atomic_fetch_add(&g.next_slot, 1, __ATOMIC_RELAXED);

	if (!g.slots)
		return NULL;
	if (i >= NSLOTS) {
		pid_t pid = getpid();
		for (i = 0; i < NSLOTS; i++) {
			pid_t old = __atomic_load_n(&g.slots[i].tid, __ATOMIC_RELAXED);
			if (old && syscall(SYS_tgkill, pid, old, 0) < 0 && errno == ESRCH &&
			    __atomic_compare_exchange_n(&g.slots[i].tid, &old, tid, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				break;
		}
		if (i >= NSLOTS)
			return NULL;
		chunk_close(&g.slots[i]);
	}
	g.slots[i].tid = tid;
	self[level] = &g.slots[i];
	return self[level];
}

static void child_begin(void);
static int child_first_event(void);

static MTREC_COLD struct thread_slot *me_slow(unsigned level)
{
	struct thread_slot *s;

	if (level >= NEST) {
		__atomic_fetch_add(&g.lost_deep, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (getpid() != g.pid && level == 0)
		child_begin();
	s = slot_attach(level);
	if (unlikely(g.child_start) && s)
		child_first_event();
	return s;
}

/* The calling thread's slot at its current nesting level.  A slot found
 * empty (its thread's first event, or a child process: the slots are wiped
 * on fork, even by _Fork() or a raw clone that runs no fork handler) takes
 * the slow way. */
static inline struct thread_slot *me(void)
{
	unsigned level = depth - 1;
	struct thread_slot *s = level < NEST ? self[level] : NULL;

	if (likely(s != NULL) && likely(s->tid != 0))
		return s;
	return me_slow(level);
}

static void toggle_if_pending(void);

/* Every call into the core is bracketed by enter() and leave(): a toggle
 * signal that arrived inside is acted on when the outermost one leaves. */
static inline void enter(void)
{
	depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--depth == 0)
		toggle_if_pending();
}

/* After recording stopped, events are only counted. */
static inline int stopped(struct thread_slot *s)
{
	if (likely(!g.failed))
		return 0;
	s->lost_stopped++;
	return 1;
}

/* An event that found no room: recording stopped meanwhile, or a signal
 * handler needed a lock its own thread holds. */
static MTREC_COLD void count_lost(struct thread_slot *s)
{
	if (g.failed)
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

	return &g.last_addr_event[((a >> 12) + salt) & (NBUCKETS - 1)];
}

/* The latest line about p lies before chunk_end. */
static inline void publish(const void *p, char *chunk_end)
{
	uintptr_t *b = bucket(p), want = (uintptr_t)chunk_end;
	uintptr_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);

	while (cur < want && !__atomic_compare_exchange_n(b, &cur, want, 1,
							  __ATOMIC_SEQ_CST,
							  __ATOMIC_RELAXED))
		;
}

/* Is there a line about p in a chunk beyond our position? */
static inline int touched_ahead(const void *p, const struct thread_slot *s)
{
	uintptr_t v = __atomic_load_n(bucket(p), __ATOMIC_ACQUIRE);

	return v > (uintptr_t)s->pos && v != (uintptr_t)s->end;
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
};

/* The most an event can need: its line, and its stack's definition. */
static inline size_t event_room(const struct event_ctx *e)
{
	size_t n = e->c->len + sizeof("+ 0x0123456789abcdef 0x0123456789abcdef s=18446744073709551615\n");

	return e->st ? n + mtrec_stack_def_room(e->st) : n;
}

/* The stack's "# stack" line goes right before the first event of each
 * part that uses it: a part can then be read alone, and every thread's
 * events follow the definitions they use. */
static char *put_event(char *o, const struct event_ctx *e, char op,
		       const void *p, int with_size, size_t size)
{
	char *line;

	if (e->st) {
		unsigned part = (unsigned)((size_t)(o - mtrec_file.base) / mtrec_file.part_size) + 1;
		unsigned *defined_in = mtrec_stack_part(e->st);
		if (*defined_in != part) {
			o = mtrec_stack_put_def(o, e->st);
			*defined_in = part;
		}
	}
	line = o;
	/* The line's first byte, '@', is stored last: until the whole line is
	 * there it starts with a NUL (a chunk starts zeroed), so a process
	 * killed while writing it leaves no half event, only a line every
	 * reader skips. */
	memcpy(o + 1, e->c->text + 1, e->c->len - 1u);
	o += e->c->len;
	o[0] = op;
	o[1] = ' ';
	o = put_ptr(o + 2, p);
	if (with_size) {
		*o++ = ' ';
		o = put_size(o, size);
	}
	if (e->st) {
		memcpy(o, " s=", 3);
		o = put_dec(o + 3, mtrec_stack_id_of(e->st));
	}
	*o++ = '\n';
	__asm__ volatile("" ::: "memory");
	line[0] = e->c->text[0];
	return o;
}

/* The caller's string and, with MTREC_DEPTH > 1, the interned stack. */
static void describe_event(struct event_ctx *e, const void *caller)
{
	void *ips[64];
	int n;

	e->c = mtrec_caller_get(caller);
	e->st = NULL;
	if (mtrec_settings.depth <= 1)
		return;
	n = mtrec_unwind(ips, mtrec_settings.depth);
	if (n <= 0) {
		ips[0] = (void *)caller;
		n = 1;
	}
	e->st = mtrec_stack_get(ips, n);
}

/* Where a line about p goes: after any line about p another thread wrote
 * in a later chunk. */
static inline char *place(struct thread_slot *s, const void *p, size_t need)
{
	char *o = room(s, need);

	if (o && p && unlikely(touched_ahead(p, s)))
		o = chunk_new(s, need);
	return o;
}

/* Write "op p [size]" for an allocation-like event. */
static void write_alloc(struct thread_slot *s, const struct event_ctx *e,
			char op, const void *p, size_t size)
{
	char *o = place(s, p, event_room(e));

	if (!o) {
		count_lost(s);
		return;
	}
	s->pos = put_event(o, e, op, p, 1, size);
	if (p)
		publish(p, s->end);
}

void mtrec_record_alloc(const void *caller, const void *p, size_t size)
{
	struct thread_slot *s;
	struct event_ctx e;

	enter();
	if ((s = me()) != NULL && !stopped(s)) {
		describe_event(&e, caller);
		write_alloc(s, &e, '+', p, size);
	}
	leave();
}

void mtrec_record_free(const void *caller, const void *p)
{
	struct thread_slot *s;
	struct event_ctx e;
	char *o;

	if (unlikely(p == g.hidden)) {
		g.hidden = NULL;
		return;
	}
	enter();
	if ((s = me()) != NULL && !stopped(s)) {
		describe_event(&e, caller);
		o = place(s, p, event_room(&e));
		if (o) {
			s->pos = put_event(o, &e, '-', p, 0, 0);
			publish(p, s->end);
		} else {
			count_lost(s);
		}
	}
	leave();
}

/* realloc(old, n) may release old before it returns: the line that says
 * so gets its place, and old's bucket its mark, before the call.  Room for
 * both lines of the outcome ("< old" and "> new n") is taken now. */
void mtrec_realloc_before(struct mtrec_realloc *r, const void *caller,
			  const void *old)
{
	struct thread_slot *s;
	struct event_ctx e;

	r->at = NULL;
	r->first_sight = 0;
	if (!old)
		return;
	if (unlikely(old == g.hidden)) {
		/* Its growth is the program's first sight of the block. */
		r->first_sight = 1;
		return;
	}
	enter();
	if ((s = me()) != NULL && !g.failed) {
		describe_event(&e, caller);
		r->at = place(s, old, 2 * event_room(&e));
		if (r->at)
			publish(old, s->end);
	}
	leave();
}

/* The outcome, exactly as glibc's realloc_mtrace_after words it. */
void mtrec_realloc_after(struct mtrec_realloc *r, const void *caller,
			 const void *old, const void *new, size_t size)
{
	struct thread_slot *s;
	struct event_ctx e;
	char *o;

	enter();
	if ((s = me()) == NULL || stopped(s))
		goto out;
	describe_event(&e, caller);
	if (unlikely(old && r->first_sight)) {
		if (new) {
			g.hidden = NULL;
			write_alloc(s, &e, '+', new, size);
		}
		goto out;
	}
	if (!old) {
		if (new || size == 0)
			write_alloc(s, &e, '+', new, size);
		else
			write_alloc(s, &e, '!', NULL, size);
		goto out;
	}
	/* Our place, unless something was written meanwhile (an allocator
	 * calling malloc inside realloc): then the next free spot. */
	o = (r->at && r->at == s->pos) ? r->at : room(s, 2 * event_room(&e));
	if (!o) {
		count_lost(s);
		goto out;
	}
	if (!new) {
		s->pos = size ? put_event(o, &e, '!', old, 1, size)
			      : put_event(o, &e, '-', old, 0, 0);
		goto out;
	}
	s->pos = put_event(o, &e, '<', old, 0, 0);
	write_alloc(s, &e, '>', new, size);
out:
	leave();
}

/* ---- extension lines -------------------------------------------------- */

/* Room for len bytes and a newline in the calling thread's chunk; NULL
 * when not recording.  Finish with line_end(end of what was written). */
static char *line_begin(struct thread_slot **s, size_t len)
{
	*s = me();
	return *s ? room(*s, len + 1) : NULL;
}

static void line_end(struct thread_slot *s, char *end)
{
	*end++ = '\n';
	s->pos = end;
}

void mtrec_write_line(const char *text, size_t len)
{
	struct thread_slot *s;
	char *o;

	/* Called inside the core (enter() done): the line goes at the
	 * caller's own level, before the event it describes. */
	if (len > MAX_LINE)
		len = MAX_LINE;
	if ((o = line_begin(&s, len)) != NULL) {
		memcpy(o, text, len);
		line_end(s, o + len);
	}
}

/* MTREC_SIGNAL: each delivery starts or stops recording.  A signal that
 * interrupts the recorder itself (its locks or a half-written line) is
 * acted on when the recorder is next left. */
static void toggle(void)
{
	if (__atomic_load_n(&mtrec_recording, __ATOMIC_ACQUIRE))
		mtrec_stop();
	else
		mtrec_start();
}

static void on_toggle_signal(int sig)
{
	int saved = errno;

	if (depth || mtrec_held || mtrec_busy)
		__atomic_store_n(&g.toggle_pending, 1, __ATOMIC_RELEASE);
	else
		toggle();
	errno = saved;
}

static void toggle_if_pending(void)
{
	if (unlikely(__atomic_load_n(&g.toggle_pending, __ATOMIC_ACQUIRE)) &&
	    __atomic_exchange_n(&g.toggle_pending, 0, __ATOMIC_ACQ_REL))
		toggle();
}

/* "SIGUSR2", "USR2", "SIGRTMIN+3", "12": the signal number, or 0. */
static int parse_signal(const char *name)
{
	static const struct { const char *name; int sig; } known[] = {
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "HUP", SIGHUP },
		{ "WINCH", SIGWINCH }, { "URG", SIGURG }, { "PWR", SIGPWR },
	};
	char *end;
	long n;

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i].name) == 0)
			return known[i].sig;
	if (strncmp(name, "RTMIN", 5) == 0) {
		n = name[5] ? strtol(name + 5, &end, 10) : 0;
		return (!name[5] || !*end) && SIGRTMIN + n <= SIGRTMAX && n >= 0 ? SIGRTMIN + (int)n : 0;
	}
	n = strtol(name, &end, 10);
	return !*end && n > 0 && n < NSIG ? (int)n : 0;
}

/* Installed from the constructor; a handler the program installs later
 * for the same signal simply replaces ours. */
void mtrec_install_signal(void)
{
	const char *name = prim_getenv("MTREC_SIGNAL");
	struct sigaction sa;
	int sig;

	if (!g.enabled || !name || !*name)
		return;
	if ((sig = parse_signal(name)) == 0) {
		prim_say("MTREC_SIGNAL: unknown signal '", name, "'", SAY_END);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_toggle_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	mtrec_real.sigaction(sig, &sa, NULL);
}

/* Send every thread to a new chunk: what they write next comes after
 * whatever the caller writes now. */
static void new_epoch(void)
{
	unsigned long gen = __atomic_add_fetch(&g.gen, 1, __ATOMIC_ACQ_REL);
	struct thread_slot *s = depth - 1 < NEST ? self[depth - 1] : NULL;

	/* The caller's own chunk can stay when no chunk was reserved after
	 * it: what it writes there still comes after every other chunk. */
	if (s && s->end && s->end == mtrec_file.base +
	    __atomic_load_n(&mtrec_file.tail, __ATOMIC_ACQUIRE))
		s->gen = gen;
}

/* "# KEY REST", with newlines in REST made spaces. */
static void write_keyed(const char *key, const char *rest, size_t len)
{
	size_t klen = strlen(key);
	struct thread_slot *s;
	char *o, *p;

	if (len > MAX_LINE)
		len = MAX_LINE;
	if ((o = line_begin(&s, klen + 3 + len)) == NULL)
		return;
	p = o;
	*p++ = '#';
	*p++ = ' ';
	memcpy(p, key, klen);
	p += klen;
	*p++ = ' ';
	for (size_t i = 0; i < len; i++)
		*p++ = flat(rest[i]);
	line_end(s, p);
}

/* Read a small /proc file into buf; its length. */
static size_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = prim_open(path, O_RDONLY | O_CLOEXEC, 0);
	ssize_t n = fd < 0 ? -1 : prim_read(fd, buf, cap);

	if (fd >= 0)
		prim_close(fd);
	return n > 0 ? (size_t)n : 0;
}

/* "# KEY VALUE\n" into o, with newlines in VALUE made spaces. */
static char *put_keyed(char *o, char *lim, const char *key, const char *val, size_t len)
{
	o = prim_puts(o, lim, "# ");
	o = prim_puts(o, lim, key);
	o = prim_puts(o, lim, " ");
	for (size_t i = 0; i < len && o < lim; i++)
		*o++ = flat(val[i]);
	return prim_puts(o, lim, "\n");
}

static void build_header(void)
{
	char *o = header_text, *lim = header_text + sizeof(header_text) - 1;
	char buf[4096];
	struct timespec now;
	ssize_t n;

	o = prim_puts(o, lim, "# pid ");
	o = prim_putu(o, lim, (unsigned long)getpid());
	o = prim_puts(o, lim, " ");
	o = prim_putu(o, lim, (unsigned long)getppid());
	o = prim_puts(o, lim, "\n");
	n = readlink("/proc/self/exe", buf, sizeof(buf));
	o = put_keyed(o, lim, "exe", buf, n > 0 ? (size_t)n : 0);
	n = (ssize_t)read_small("/proc/self/cmdline", buf, sizeof(buf));
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	o = put_keyed(o, lim, "cmdline", buf, n > 0 ? (size_t)n : 0);
	clock_gettime(CLOCK_REALTIME, &now);
	o = prim_puts(o, lim, "# start ");
	o = prim_putu(o, lim, (unsigned long)now.tv_sec);
	o = prim_puts(o, lim, ".");
	for (long d = 100000000; d >= 1 && o < lim; d /= 10)
		*o++ = (char)('0' + now.tv_nsec / d % 10);
	o = prim_puts(o, lim, "\n# depth ");
	o = prim_putu(o, lim, (unsigned long)mtrec_settings.depth);
	o = prim_puts(o, lim, "\n");
	header_len = (size_t)(o - header_text);
}

static void write_header(void)
{
	struct thread_slot *s = me();

	build_header();
	if (s)
		write_text(s, header_text, header_len);
	mtrec_objects_sync();
}

/* ---- scoping ---------------------------------------------------------- */

static void refuse_session(void);

static int open_trace(void)
{
	if (g.opened)
		return 0;
	if (g.failed || mtrec_file_open(g.first) < 0) {
		g.failed = 1;
		if (g.first)
			refuse_session();
		return -1;
	}
	g.opened = 1;
	g.start_ns = g.last_time_ns = prim_monotonic_ns();
	write_header();
	return 0;
}

static void start_locked(void)
{
	if (!g.enabled || g.ended || mtrec_recording || open_trace() < 0)
		return;
	new_epoch();
	mtrec_write_line("= Start", 7);
	__atomic_store_n(&mtrec_recording, 1, __ATOMIC_RELEASE);
}

static void stop_locked(void)
{
	if (!mtrec_recording)
		return;
	__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	new_epoch();
	mtrec_write_line("= End", 5);
}

/* start, stop and mark from a signal handler that interrupted this very
 * thread inside one of them are dropped: the lock is its own. */
void mtrec_start(void)
{
	enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_CORE) == 0) {
		start_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_CORE);
	}
	leave();
}

void mtrec_stop(void)
{
	enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_CORE) == 0) {
		stop_locked();
		mtrec_unlock(&g.lock, MTREC_LOCK_CORE);
	}
	leave();
}

void mtrec_mark(const char *label)
{
	enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_CORE) == 0) {
		if (mtrec_recording && !g.failed) {
			new_epoch();
			write_keyed("mark", label, strlen(label));
		}
		mtrec_unlock(&g.lock, MTREC_LOCK_CORE);
	}
	leave();
}

void mtrec_forget_callers(void)
{
	mtrec_caller_reset();
	mtrec_unwind_flush();
}

/* "# KEY TEXT[: ERR]\n" into buf (at most cap bytes); its length. */
static size_t note_line(char *buf, size_t cap, const char *key, const char *text, int err)
{
	char *o = buf, *lim = buf + cap - 1;

	o = prim_puts(o, lim, "# ");
	o = prim_puts(o, lim, key);
	o = prim_puts(o, lim, " ");
	o = prim_puts(o, lim, text);
	if (err) {
		o = prim_puts(o, lim, ": ");
		o = prim_puts(o, lim, prim_strerror(err));
	}
	*o++ = '\n';
	return (size_t)(o - buf);
}

/* Recording stops for good; events from now on are counted, and the trace
 * says where it stopped and why ("# stopped"). */
void mtrec_give_up(const char *why, int err)
{
	char line[256];

	if (__atomic_exchange_n(&g.failed, 1, __ATOMIC_ACQ_REL))
		return;
	mtrec_file_stop();
	mtrec_file_note(line, note_line(line, sizeof(line), "stopped", why, err));
	if (err)
		prim_say("stopped recording to '", mtrec_file.path, "': ", why, ": ",
			 prim_strerror(err), SAY_END);
	else
		prim_say("stopped recording to '", mtrec_file.path, "': ", why, SAY_END);
}

/* The program got no memory: under RLIMIT_AS, the trace's reservation may
 * be what it lacks.  Stop recording and give the reservation back; 1 when
 * the program should try again. */
int mtrec_out_of_memory(size_t size)
{
	int again;

	if (!g.opened || !mtrec_file.maplen || size > mtrec_file.maplen)
		return 0;
	enter();
	mtrec_give_up("the program ran out of address space (ulimit -v); "
		      "the recorder gave its reservation back", 0);
	again = mtrec_file_release();
	leave();
	return again;
}

/* ---- process life ----------------------------------------------------- */

static int env_int(const char *name, int dflt)
{
	const char *v = prim_getenv(name);

	return v && *v ? atoi(v) : dflt;
}

/* The session marker tells an exec'd program that it is not the first
 * process and must not take the trace file's name, and which absolute name
 * pattern the session uses (see rec-file.c). */
static char session_env[4096 + 16] = "MTREC_SESSION=";

void mtrec_init(void)
{
	const char *trace = prim_getenv("MALLOC_TRACE");
	const char *session = prim_getenv("MTREC_SESSION");

	mtrec_settings.depth = env_int("MTREC_DEPTH", 1);
	if (mtrec_settings.depth < 1)
		mtrec_settings.depth = 1;
	if (mtrec_settings.depth > 64)
		mtrec_settings.depth = 64;
	mtrec_settings.scoped = env_int("MTREC_SCOPED", 0);
	mtrec_settings.freeres = env_int("MTREC_FREERES", 1);
	mtrec_settings.quiet = env_int("MTREC_QUIET", 0);
	prim_quiet = mtrec_settings.quiet;
	if (!trace || !*trace)
		return;		/* like glibc: no MALLOC_TRACE, no trace */
	/* The session's first process refused the name and said so: its
	 * children do not write beside a device, a FIFO or a directory. */
	if (session && strcmp(session, "-") == 0)
		return;
	g.first = session == NULL;
	mtrec_file_pattern_init(session);
	g.pid = getpid();
	g.last_addr_event = prim_map_anon(NBUCKETS * sizeof(uintptr_t));
	g.slots = prim_map_anon(NSLOTS * sizeof(struct thread_slot));
	if (!g.last_addr_event || !g.slots) {
		prim_say("cannot map memory for the recorder; not recording", SAY_END);
		return;
	}
	/* A child starts with empty slots and buckets, whatever made it. */
	madvise(g.slots, NSLOTS * sizeof(struct thread_slot), MADV_WIPEONFORK);
	madvise(g.last_addr_event, NBUCKETS * sizeof(uintptr_t), MADV_WIPEONFORK);
	g.enabled = 1;
	if (!mtrec_settings.scoped)
		mtrec_start();
}

/* Called from the library constructor, outside any libc call. */
void mtrec_mark_session(void)
{
	char *o;

	if (!g.enabled || !g.first)
		return;
	o = prim_puts(session_env + 14, session_env + sizeof(session_env) - 1,
		      g.refused ? "-" : mtrec_file_pattern());
	*o = '\0';
	/* putenv() grows libc's environ array with malloc: that block is ours,
	 * not the program's, and is left out of the trace until the program
	 * itself reallocates it. */
	mtrec_busy = 1;
	putenv(session_env);
	mtrec_busy = 0;
	g.hidden = environ;
}

/* The session's path was refused (a device, a FIFO, a directory, no
 * such directory): the processes it starts record nothing either.  The
 * environment string is ours (putenv), so a later refusal edits it. */
static void refuse_session(void)
{
	g.refused = 1;
	if (session_env[14])
		memcpy(session_env + 14, "-", 2);
}

/* libc's private buffers are freed while still recording, so that they
 * are not reported as leaks (as glibc's mtrace and valgrind do), but only
 * when no other thread can still use them: __libc_freeres() frees stdio
 * buffers and locale data under threads that may be using them (a crash
 * at exit in most runs of a program that exits with threads in printf or
 * localtime).  Not in a forked child: most of what it would free was
 * allocated by the parent before the fork, and would show as frees of
 * memory never allocated in the child's trace.  What happened, for the
 * "# freeres" line. */
static const char *release_libc_caches(char *buf, size_t cap)
{
	char *o;
	int n;

	if (!mtrec_settings.freeres)
		return "skipped: MTREC_FREERES=0";
	if (g.forked)
		return "skipped: a forked child";
	/* A thread just joined can still be in /proc/self/task for a moment
	 * (pthread_join returns when the kernel clears its tid, before the
	 * task is gone): look again for up to 20 ms before deciding. */
	for (int tries = 0; (n = prim_count_threads()) > 1 && tries < 20; tries++)
		syscall(SYS_nanosleep, &(struct timespec){ 0, 1000000 }, NULL);
	if (n == 1) {
		__libc_freeres();
		return "done";
	}
	if (n < 1)
		return "skipped: the threads cannot be counted (no /proc)";
	o = prim_puts(buf, buf + cap - 1, "skipped: ");
	o = prim_putu(o, buf + cap - 1, (unsigned long)(n - 1));
	o = prim_puts(o, buf + cap - 1, n == 2 ? " other thread running" : " other threads running");
	*o = '\0';
	return buf;
}

/* "# lost N REST" for the events counted instead of written. */
static void say_lost(void)
{
	unsigned long stopped_n = 0, nested_n = __atomic_load_n(&g.lost_deep, __ATOMIC_RELAXED);
	char line[128], *o;
	size_t len;

	for (unsigned i = 0; i < NSLOTS && i < g.next_slot; i++) {
		stopped_n += __atomic_load_n(&g.slots[i].lost_stopped, __ATOMIC_RELAXED);
		nested_n += __atomic_load_n(&g.slots[i].lost_nested, __ATOMIC_RELAXED);
	}
	if (g.failed) {
		o = prim_puts(line, line + sizeof(line), "# lost ");
		o = prim_putu(o, line + sizeof(line), stopped_n);
		o = prim_puts(o, line + sizeof(line) - 1, " events after recording stopped\n");
		mtrec_file_note(line, (size_t)(o - line));
	}
	if (nested_n == 0)
		return;
	o = prim_putu(line, line + sizeof(line), nested_n);
	o = prim_puts(o, line + sizeof(line) - 1, " events in signal handlers that the recorder could not write");
	len = (size_t)(o - line);
	if (g.failed) {
		*o++ = '\n';
		mtrec_file_note("# lost ", 7);
		mtrec_file_note(line, len + 1);
	} else {
		write_keyed("lost", line, len);
	}
}

void mtrec_fini(void)
{
	char *pos = NULL, *end = NULL, buf[64];
	const char *freeres = NULL;
	struct thread_slot *s;

	if (!g.opened || g.ended)
		return;
	/* Outside enter(): libc's frees are the program's events. */
	if (mtrec_recording && !g.failed)
		freeres = release_libc_caches(buf, sizeof(buf));
	enter();
	if (mtrec_lock(&g.lock, MTREC_LOCK_CORE) < 0) {
		leave();
		return;
	}
	if (!g.failed && mtrec_file_lost())
		mtrec_give_up("the trace file was truncated by another process", 0);
	if (freeres && !g.failed)
		write_keyed("freeres", freeres, strlen(freeres));
	say_lost();
	if (g.failed) {
		if (mtrec_recording)
			mtrec_file_note("= End\n", 6);
		__atomic_store_n(&mtrec_recording, 0, __ATOMIC_RELEASE);
	} else {
		stop_locked();
	}
	g.ended = 1;
	/* The file ends where our "= End" does when our chunk is the last. */
	s = depth - 1 < NEST ? self[depth - 1] : NULL;
	if (s && s->pos) {
		pos = s->pos;
		end = s->end;
		s->pos = s->end = NULL;
	}
	for (unsigned i = 0; i < NSLOTS && i < g.next_slot; i++)
		chunk_close(&g.slots[i]);
	if (!mtrec_file_close(pos, end) && pos)
		chunk_close(&(struct thread_slot){ .pos = pos, .end = end });
	mtrec_unlock(&g.lock, MTREC_LOCK_CORE);
	leave();
}

static pthread_mutex_t *const module_locks[] = {
	&mtrec_objects_lock, &mtrec_caller_lock, &mtrec_stack_lock, &mtrec_grow_lock,
};
#define NLOCKS (sizeof(module_locks) / sizeof(module_locks[0]))

/* No lock is held across fork (there are no prepare or parent handlers):
 * other libraries' fork handlers may allocate (they run around ours), and
 * the child discards everything the locks protect anyway.  The child
 * re-creates them (child_begin). */

/* The child keeps nothing of the parent's trace: it records into a file
 * of its own (named by the rule in rec-file.c), opened at its first event,
 * so that a child that only execs or exits leaves no file.  Called by our
 * fork handler, or from me() when a child made without handlers records. */
static void child_begin(void)
{
	int was_recording = mtrec_recording;

	pthread_mutex_init(&g.lock, NULL);
	for (unsigned i = 0; i < NLOCKS; i++)
		pthread_mutex_init(module_locks[i], NULL);
	g.pid = getpid();
	if (!g.enabled)
		return;
	mtrec_recording = 0;
	memset(self, 0, sizeof(self));
	mtrec_held = 0;
	g.lost_deep = 0;
	memset(g.slots, 0, sizeof(struct thread_slot) * (g.next_slot < NSLOTS ? g.next_slot : NSLOTS));
	g.next_slot = 0;
	memset(g.last_addr_event, 0, NBUCKETS * sizeof(uintptr_t));
	if (g.opened)
		mtrec_file_forget();
	g.opened = g.ended = 0;
	g.first = 0;
	g.forked = 1;
	mtrec_objects_reset();
	mtrec_stack_reset();
	new_epoch();
	/* A parent that could not record has said why; its children are quiet. */
	if (was_recording && !g.failed) {
		g.child_start = 1;
		mtrec_recording = 1;	/* so that the first event comes here */
	}
}

/* Another library's fork handler (they run before ours in the child) may
 * have made this process a child already. */
void mtrec_fork_child(void)
{
	if (g.pid != getpid())
		child_begin();
}

/* The child's first event: open its trace.  Returns 0 when the event may be
 * recorded. */
static MTREC_COLD int child_first_event(void)
{
	int ok;

	if (pthread_mutex_trylock(&g.lock) != 0)
		return -1;
	if (g.child_start) {
		g.child_start = 0;
		mtrec_recording = 0;
		start_locked();
	}
	ok = mtrec_recording ? 0 : -1;
	pthread_mutex_unlock(&g.lock);
	return ok;
}
