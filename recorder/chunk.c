/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chunk.c -- the chunk writer: where each line goes in the trace file.
 *
 * The file is mapped shared (file.c), so a line is in the page cache,
 * and survives SIGKILL, as soon as it is written.  Each thread writes into
 * its own chunk of the file (CHUNK bytes, reserved with one atomic add), so
 * threads share no cache line per event.  Within a chunk, lines follow the
 * thread's own order; across chunks, the order of reservation is the order
 * in the file, which is what the ordering table of events.c relies on.
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
 * line below them.  Deeper than MTREC_NEST levels, events are counted as
 * lost.
 *
 * Parts that complete (MTREC_ROTATE).  Once the tail has passed the end
 * of part k, no new chunk lands in it, but threads go on writing in the
 * chunks they have there: a busy thread until its chunk is full, an idle
 * one (a daemon's signal thread that allocated once at start) for ever.
 * So the thread that takes a chunk retires old parts, a few milliseconds
 * apart: it moves the epoch (every thread takes a new chunk at its next
 * event), runs a barrier in every thread (prim_membarrier), then looks
 * at each slot.  A writer marks its slot busy with a plain store before
 * it loads the epoch and clears it when it leaves the recorder; with the
 * barrier between the epoch's store and the look at busy, either the
 * look sees busy or the writer sees the new epoch and takes a new chunk
 * (a store-barrier-load handshake whose barrier only the rare side pays:
 * no fence, no atomic read-modify-write per event).  A slot that is not
 * busy, holds no realloc outcome, and whose chunk lies in part k has that
 * chunk closed for it, under the slot's claim, which its owner's slow
 * path takes too; a busy slot that writes past part k is no obstacle;
 * any other one makes the retirer try again later.  When every slot
 * lets go, the part is unmapped (mtrec_file_retire).  The exit path
 * closes other threads' chunks the same way, and leaves the busy ones
 * to their owners.
 *
 * Nothing here takes a lock but the file's growth (mtrec_lock, which a
 * nested handler never waits for) and a slot's claim, held only for a
 * chunk's close: a chunk may be needed with any lock of the modules above
 * held. */
#include "chunk.h"
#include "tables.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 2048		/* bytes a thread reserves at a time */
#define MAX_LINE 65536		/* longer extension lines are cut */
#define NSLOTS 16384		/* thread slots before dead ones are reused */
#define TIME_EVERY_NS 100000000ull	/* "# time" lines this often while events come */
#define NAME_EVERY_NS 1000000000ull	/* thread names looked at this often */
#define CHUNK_HEAD 128		/* "# T", "# time" and "# thread" lines at most */
#define PART_ZONE MTREC_PART_ZONE	/* each part's header zone (MTREC_ROTATE) */
#define RETIRE_EVERY_NS 2000000ull	/* tries at retiring a part, at most this often */
#define EXIT_WAIT_NS 3000000000ull	/* at exit, for the threads in a record to leave it */
#define EXIT_SETTLE_NS 20000000ull	/* ... and, after that, for those that came in since */

__thread unsigned mtrec_depth;
__thread struct mtrec_slot *mtrec_self[MTREC_NEST];
unsigned long mtrec_gen = 1;
int mtrec_failed;
int mtrec_pending;

static struct {
	int writing;		/* between mtrec_chunk_begin and _finish */
	int paused;		/* between mtrec_chunk_pause and _resume */
	pid_t owner;		/* the process the slots belong to */
	struct mtrec_slot *slots;
	unsigned next_slot;
	unsigned long lost_deep;	/* events nested deeper than MTREC_NEST */
	uint64_t start_ns, last_time_ns;
	uint64_t time_asked;	/* the last_time_ns after which a line was asked for */
	const char *header;	/* the process header, for part zones */
	size_t header_len;
	const struct mtrec_life_hooks *hooks;
	int retiring;		/* a thread is retiring parts (a try-lock) */
	int no_barrier;		/* the kernel has no membarrier: parts stay mapped */
	uint64_t retire_due_ns;	/* the next try, at the earliest */
	uint64_t exit_deadline;	/* mtrec_chunk_drain waited until then */
} c;

/* ---- chunks ----------------------------------------------------------- */

static char *put_dec(char *o, unsigned long v)
{
	return prim_putu(o, o + 24, v);
}

/* Fill what is left of the slot's chunk with a comment line. */
static void chunk_close(struct mtrec_slot *s)
{
	size_t left = (size_t)(s->end - s->pos);

	if (s->pos && left >= 2) {
		s->pos[0] = '#';
		memset(s->pos + 1, ' ', left - 2);
	}
	__atomic_store_n(&s->pos, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&s->end, NULL, __ATOMIC_RELEASE);
}

/* The slot's claim, for its owner's slow path: a retirer holds it only
 * while it closes the chunk (a few microseconds, unless descheduled). */
static void slot_claim(struct mtrec_slot *s)
{
	unsigned free_ = 0;

	while (!__atomic_compare_exchange_n(&s->claim, &free_, 1, 0, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		free_ = 0;
		sched_yield();
	}
}

static void slot_unclaim(struct mtrec_slot *s)
{
	__atomic_store_n(&s->claim, 0, __ATOMIC_RELEASE);
}

/* The "# time" line, when one is due; returns the end of what it wrote.
 * Readers date a line from the "# time" lines around it, so every other
 * thread is sent to a new chunk (*gen moves on): a thread idle for seconds
 * would otherwise write its next events in the chunk it began before, among
 * lines seconds older (a daemon's shutdown dated to its start-up). */
static char *maybe_time(char *o, uint64_t now, unsigned long *gen)
{
	uint64_t last = __atomic_load_n(&c.last_time_ns, __ATOMIC_RELAXED);

	if (now - last < TIME_EVERY_NS ||
	    !__atomic_compare_exchange_n(&c.last_time_ns, &last, now, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return o;
	/* Our own chunk may stay only if nothing else moved the epoch since
	 * it was taken (a toggle's new epoch must still be obeyed). */
	unsigned long was = *gen;
	if (__atomic_compare_exchange_n(&mtrec_gen, &was, was + 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		*gen = was + 1;
	else
		__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_ACQ_REL);
	o = mtrec_put_word(o, MTREC_W_TIME);
	o = put_dec(o, (unsigned long)(now - c.start_ns));
	*o++ = '\n';
	return o;
}


void mtrec_chunk_tick(uint64_t now)
{
	uint64_t last = __atomic_load_n(&c.last_time_ns, __ATOMIC_RELAXED);
	uint64_t asked = __atomic_load_n(&c.time_asked, __ATOMIC_RELAXED);

	/* The coarse clock may lag the one the lines are written with. */
	if (!c.writing || now <= last || now - last < TIME_EVERY_NS || asked == last ||
	    !__atomic_compare_exchange_n(&c.time_asked, &asked, last, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_ACQ_REL);
}

/* "# thread TID NAME" when the thread's name changed (it is looked at once
 * a second at most: programs name their threads after starting them). */
static char *maybe_thread_name(struct mtrec_slot *s, char *o, uint64_t now)
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
	o = mtrec_put_word(o, MTREC_W_THREAD);
	o = put_dec(o, (unsigned long)s->tid);
	*o++ = ' ';
	for (size_t i = 0; i < len; i++)
		*o++ = prim_flat(name[i]);
	*o++ = '\n';
	return o;
}

void mtrec_pad(char *from, char *to)
{
	if (to - from >= 2) {
		from[0] = '#';
		memset(from + 1, ' ', (size_t)(to - from - 2));
	}
	if (to > from)
		to[-1] = '\n';
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
 * So every part describes itself, however the threads are scheduled.  The
 * objects' lines are copied without a lock. */
static void fill_part_zone(size_t b)
{
	char *zone = mtrec_file_at(b), *o = zone, *lim = o + PART_ZONE - 1;

	o = mtrec_put_word(o, MTREC_W_MTREC);
	*o++ = '1';
	*o++ = '\n';
	o = mtrec_put_word(o, MTREC_W_PART);
	o = put_dec(o, (unsigned long)(b / mtrec_file.part_size + 1));
	*o++ = '\n';
	o = put_lines(o, lim, c.header, c.header_len);
	o = mtrec_objects_put(o, lim);
	mtrec_pad(o, zone + PART_ZONE);
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

/* The file is gone from under us, or cannot hold the chunk: the file
 * layer says why, and recording stops here. */
static int file_ready(size_t backed)
{
	struct mtrec_file_err e = { NULL, 0 };

	if (unlikely(mtrec_file_lost())) {
		mtrec_give_up("the trace file was truncated by another process", 0);
		return -1;
	}
	if (mtrec_file_ensure(backed, &e) == 0)
		return 0;
	if (e.why)
		mtrec_give_up(e.why, e.err);
	return -1;
}

/* The file lost its last name since the last look (file.c, "The
 * file taken away"): recording stops here, saying so. */
static int file_named(uint64_t now)
{
	struct mtrec_file_err e = { NULL, 0 };

	if (likely(mtrec_file_watch(now, &e) == 0))
		return 0;
	mtrec_give_up(e.why, e.err);
	mtrec_file_drop();
	return -1;
}

/* Reserve the bytes of a chunk of len bytes that has room for need bytes
 * of lines; the start of its lines, or NULL.  Offsets become addresses
 * on each side of a part's start apart: the part before and the part
 * after may lie anywhere in the range (file.c, "Rotation"). */
static char *reserve(size_t len, size_t need, char **endp, size_t *end_offp)
{
	size_t off, end, start, b, backed;
	int owner;

	for (;;) {
		off = __atomic_fetch_add(&mtrec_file.tail, len, __ATOMIC_RELAXED);
		end = off + len;
		b = zone_overlap(off, end, &start);
		owner = b > 0 && b >= off;	/* the chunk holds the part's first byte */
		backed = owner && b + PART_ZONE > end ? b + PART_ZONE : end;
		if (file_ready(backed) < 0)
			return NULL;
		if (owner) {
			if (b > off)
				mtrec_pad(mtrec_file_at(off), mtrec_file_end_at(b));
			fill_part_zone(b);
		}
		if (start + need + CHUNK_HEAD <= end)
			break;
		/* The chunk lies (mostly) in a part's header zone: the bytes
		 * past the zone are filled, and we try again. */
		if (start < end)
			mtrec_pad(mtrec_file_at(start), mtrec_file_end_at(end));
	}
	*endp = mtrec_file_end_at(end);
	*end_offp = end;
	(*endp)[-1] = '\n';
	return mtrec_file_at(start);
}

/* ---- parts that complete ---------------------------------------------- */

/* The part the chunk that ends at end lies in. */
static unsigned chunk_part(const char *end)
{
	return mtrec_part_of(end - 1);
}

/* Close the chunk of a slot that is not busy, under its claim, if it still
 * lies in part k or before; 0 when its owner holds the claim.  A slot of
 * the calling thread (another nesting level) is closed with signals
 * blocked: its owner is a signal handler that would wait for the claim for
 * ever. */
static int close_idle(struct mtrec_slot *s, unsigned k, pid_t self)
{
	sigset_t all, old;
	char *end;
	int own = s->tid == self;

	if (own) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
	}
	unsigned free_ = 0;
	int got = __atomic_compare_exchange_n(&s->claim, &free_, 1, 0, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED);
	if (got) {
		end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
		if (end && chunk_part(end) <= k)
			chunk_close(s);
		slot_unclaim(s);
	}
	if (own)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	return got;
}

/* Does the slot write nothing more in part k (the part to retire) or
 * before?  Called after the epoch moved and the barrier ran. */
static int lets_go(struct mtrec_slot *s, unsigned k, pid_t self)
{
	char *end = __atomic_load_n(&s->end, __ATOMIC_ACQUIRE);
	pid_t tid = __atomic_load_n(&s->tid, __ATOMIC_RELAXED);
	int busy = (int)__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&s->held, __ATOMIC_ACQUIRE))
		return 0;	/* a realloc's outcome will be written there */
	if (busy && end && chunk_part(end) > k)
		return 1;	/* writing, but in a later part */
	/* Busy with no chunk: it may be reserving one in part k.  A thread
	 * that died inside the recorder (cancelled in a handler) is idle. */
	if (busy && tid && (tid == self || syscall(SYS_tgkill, getpid(), tid, 0) == 0 ||
			    errno != ESRCH))
		return 0;
	if (!end || chunk_part(end) > k)
		return 1;
	return close_idle(s, k, self);
}

/* Retire the oldest parts whose writers are gone; called by a thread that
 * just took a chunk, at most every RETIRE_EVERY_NS. */
static MTREC_COLD void retire_parts(uint64_t now)
{
	int free_ = 0;
	pid_t self = prim_gettid();
	unsigned k;

	if (c.no_barrier || !__atomic_compare_exchange_n(&c.retiring, &free_, 1, 0,
							 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&c.retire_due_ns, now + RETIRE_EVERY_NS, __ATOMIC_RELAXED);
	while ((k = mtrec_file_retirable()) != 0) {
		unsigned i, n = __atomic_load_n(&c.next_slot, __ATOMIC_ACQUIRE);

		__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_SEQ_CST);
		if (prim_membarrier() < 0) {
			c.no_barrier = 1;
			break;
		}
		for (i = 0; i < n && i < NSLOTS; i++)
			if (!lets_go(&c.slots[i], k, self))
				break;
		if (i < n && i < NSLOTS)
			break;
		mtrec_file_retire(k);
	}
	__atomic_store_n(&c.retiring, 0, __ATOMIC_RELEASE);
}

/* Move the slot to a new chunk with room for need bytes; NULL when
 * recording has stopped or the file cannot grow. */
MTREC_COLD char *mtrec_chunk_new(struct mtrec_slot *s, size_t need)
{
	unsigned long gen = __atomic_load_n(&mtrec_gen, __ATOMIC_ACQUIRE);
	size_t len = CHUNK, end_off;
	uint64_t now;
	char *ch, *o, *end;

	slot_claim(s);
	chunk_close(s);
	slot_unclaim(s);
	if (!c.writing || mtrec_failed)
		return NULL;
	if (need + CHUNK_HEAD > len)
		len = (need + CHUNK_HEAD + 63) & ~(size_t)63;
	now = prim_monotonic_ns();
	if (file_named(now) < 0 || (ch = reserve(len, need, &end, &end_off)) == NULL)
		return NULL;
	*ch = '\n';
	o = mtrec_put_word(ch + 1, MTREC_W_T);
	o = put_dec(o, (unsigned long)s->tid);
	*o++ = '\n';
	o = maybe_time(o, now, &gen);
	o = maybe_thread_name(s, o, now);
	s->pos = o;
	s->end_off = end_off;
	__atomic_store_n(&s->end, end, __ATOMIC_RELEASE);
	s->gen = gen;
	if (now >= __atomic_load_n(&c.retire_due_ns, __ATOMIC_RELAXED) && mtrec_file_retirable())
		retire_parts(now);
	return o;
}

/* ---- slots ------------------------------------------------------------ */

int mtrec_chunk_init(void)
{
	c.owner = getpid();
	c.slots = prim_map_anon(NSLOTS * sizeof(struct mtrec_slot));
	if (!c.slots)
		return -1;
	/* A child starts with empty slots, whatever made it. */
	madvise(c.slots, NSLOTS * sizeof(struct mtrec_slot), MADV_WIPEONFORK);
	return 0;
}

void mtrec_chunk_set_hooks(const struct mtrec_life_hooks *hooks)
{
	c.hooks = hooks;
}

pid_t mtrec_chunk_owner(void)
{
	return c.owner;
}

/* A thread's first event gives it a slot; when none is left, the slot of a
 * thread that has exited is taken over. */
static MTREC_COLD struct mtrec_slot *slot_attach(unsigned level)
{
	pid_t tid = prim_gettid();
	unsigned i = __atomic_fetch_add(&c.next_slot, 1, __ATOMIC_RELAXED);

	if (!c.slots)
		return NULL;
	if (i >= NSLOTS) {
		pid_t pid = getpid();
		for (i = 0; i < NSLOTS; i++) {
			pid_t old = __atomic_load_n(&c.slots[i].tid, __ATOMIC_RELAXED);
			if (old && syscall(SYS_tgkill, pid, old, 0) < 0 && errno == ESRCH &&
			    __atomic_compare_exchange_n(&c.slots[i].tid, &old, tid, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				break;
		}
		if (i >= NSLOTS)
			return NULL;
		slot_claim(&c.slots[i]);
		chunk_close(&c.slots[i]);
		slot_unclaim(&c.slots[i]);
	}
	c.slots[i].tid = tid;
	mtrec_self[level] = &c.slots[i];
	return mtrec_slot_in_use(mtrec_self[level]);
}

MTREC_COLD struct mtrec_slot *mtrec_me_slow(unsigned level)
{
	struct mtrec_slot *s;
	int ok;

	if (level >= MTREC_NEST) {
		__atomic_fetch_add(&c.lost_deep, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if (level == 0 && getpid() != c.owner && c.hooks)
		c.hooks->new_process();
	if ((s = slot_attach(level)) == NULL || !c.hooks || (ok = c.hooks->attached()) == 0)
		return s;
	/* Not recorded.  A trace that could not start now (its lock held) is
	 * tried again at the next event, from a fresh slot; this one only
	 * keeps the count when a signal handler's event is lost. */
	if (ok == -2) {
		if (level > 0)
			s->lost_nested++;
		mtrec_self[level] = NULL;
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);	/* no leave will */
	}
	return NULL;
}

MTREC_COLD void mtrec_run_pending(void)
{
	if (__atomic_exchange_n(&mtrec_pending, 0, __ATOMIC_ACQ_REL) && c.hooks)
		c.hooks->deferred();
}

/* ---- lines that are not events ---------------------------------------- */

void mtrec_chunk_text(const char *text, size_t len)
{
	struct mtrec_slot *s = mtrec_me();

	while (s && len > 0) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) + 1 : len;
		char *o = mtrec_room(s, n + 1);

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

/* Room for len bytes and a newline in the calling thread's chunk; NULL
 * when not recording.  Finish with line_end(end of what was written). */
static char *line_begin(struct mtrec_slot **s, size_t len)
{
	*s = mtrec_me();
	return *s ? mtrec_room(*s, len + 1) : NULL;
}

static void line_end(struct mtrec_slot *s, char *end)
{
	*end++ = '\n';
	s->pos = end;
}

void mtrec_chunk_line(const char *text, size_t len)
{
	struct mtrec_slot *s;
	char *o;

	/* Called inside the recorder (mtrec_enter done): the line goes at the
	 * caller's own level, before the event it describes. */
	if (len > MAX_LINE)
		len = MAX_LINE;
	if ((o = line_begin(&s, len)) != NULL) {
		memcpy(o, text, len);
		line_end(s, o + len);
	}
}

char *mtrec_chunk_region(size_t len)
{
	struct mtrec_slot *s = mtrec_me();

	if (!s || (mtrec_file.part_size < mtrec_file.maplen &&
		   len + CHUNK_HEAD + PART_ZONE > mtrec_file.part_size / 2))
		return NULL;
	return mtrec_room(s, len + 1);
}

void mtrec_chunk_region_end(char *end)
{
	struct mtrec_slot *s = mtrec_me();

	if (s)
		s->pos = end;
}

void mtrec_chunk_keyed(enum mtrec_word w, const char *rest, size_t len)
{
	struct mtrec_slot *s;
	char *o, *p;

	if (len > MAX_LINE)
		len = MAX_LINE;
	if ((o = line_begin(&s, mtrec_word_len(w) + 1 + len)) == NULL)
		return;
	p = mtrec_put_word(o, w);
	for (size_t i = 0; i < len; i++)
		*p++ = prim_flat(rest[i]);
	line_end(s, p);
}

void mtrec_chunk_time(void)
{
	char digits[24];
	uint64_t now = prim_monotonic_ns();

	__atomic_store_n(&c.last_time_ns, now, __ATOMIC_RELAXED);
	mtrec_new_epoch();
	mtrec_chunk_keyed(MTREC_W_TIME, digits, (size_t)(put_dec(digits, (unsigned long)(now - c.start_ns)) - digits));
}

void mtrec_new_epoch(void)
{
	unsigned long gen = __atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_ACQ_REL);
	struct mtrec_slot *s = mtrec_depth - 1 < MTREC_NEST ? mtrec_self[mtrec_depth - 1] : NULL;

	/* The caller's own chunk can stay when no chunk was reserved after
	 * it: what it writes there still comes after every other chunk. */
	if (s && s->end && s->end_off == __atomic_load_n(&mtrec_file.tail, __ATOMIC_ACQUIRE))
		s->gen = gen;
}

/* ---- the trace's life --------------------------------------------------- */

void mtrec_chunk_begin(const char *header, size_t len)
{
	c.header = header;
	c.header_len = len;
	c.start_ns = c.last_time_ns = prim_monotonic_ns();
	c.writing = 1;
}

/* "# WORD TEXT[: ERR]\n" into buf (at most cap bytes); its length. */
static size_t note_line(char *buf, size_t cap, enum mtrec_word w, const char *text, int err)
{
	char *o = buf, *lim = buf + cap - 1;

	o = prim_puts(o, lim, mtrec_word(w));
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

	if (__atomic_exchange_n(&mtrec_failed, 1, __ATOMIC_ACQ_REL))
		return;
	mtrec_file_stop();
	mtrec_file_note(line, note_line(line, sizeof(line), MTREC_W_STOPPED, why, err));
	if (err)
		prim_say("stopped recording to '", mtrec_file.path, "': ", why, ": ",
			 prim_strerror(err), SAY_END);
	else
		prim_say("stopped recording to '", mtrec_file.path, "': ", why, SAY_END);
}

void mtrec_chunk_watch(uint64_t now)
{
	if (__atomic_load_n(&c.writing, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&mtrec_failed, __ATOMIC_ACQUIRE))
		file_named(now);
}

void mtrec_chunk_refuse(void)
{
	__atomic_store_n(&mtrec_failed, 1, __ATOMIC_RELEASE);
}

void mtrec_chunk_lost(unsigned long *stopped, unsigned long *nested)
{
	*stopped = 0;
	*nested = __atomic_load_n(&c.lost_deep, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NSLOTS && i < c.next_slot; i++) {
		*stopped += __atomic_load_n(&c.slots[i].lost_stopped, __ATOMIC_RELAXED);
		*nested += __atomic_load_n(&c.slots[i].lost_nested, __ATOMIC_RELAXED);
	}
}

/* Wait, until deadline at most, for another thread's slot to be out of
 * the recorder with no realloc outcome held; 1 when it is.  A thread
 * waited for may be waiting for a CPU (on a loaded machine, for tens of
 * milliseconds): after a few yields, sleep, so that it gets one. */
static int settled(struct mtrec_slot *o, uint64_t deadline)
{
	for (unsigned tries = 0; __atomic_load_n(&o->busy, __ATOMIC_ACQUIRE) ||
				 __atomic_load_n(&o->held, __ATOMIC_ACQUIRE); tries++) {
		if (prim_monotonic_ns() >= deadline)
			return 0;
		if (tries < 64)
			sched_yield();
		else
			syscall(SYS_nanosleep, &(struct timespec){ 0, 100000 }, NULL);
	}
	return 1;
}

/* The slots of the other threads that are inside the recorder now: each
 * is waited for until it leaves (its line written whole), or until the
 * deadline.  Threads outside it are never waited for: the epoch moves and
 * the barrier runs first, so that a thread either is seen in the recorder
 * or sees the new epoch when it next comes in (as for parts that
 * complete).  Without the barrier nothing is waited for. */
static unsigned wait_writers(pid_t self, uint64_t deadline)
{
	unsigned left = 0;

	__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_SEQ_CST);
	if (prim_membarrier() < 0)
		return 0;
	for (unsigned i = 0; c.slots && i < NSLOTS && i < c.next_slot; i++)
		if (c.slots[i].tid != self && !settled(&c.slots[i], deadline))
			left++;
	return left;
}

unsigned mtrec_chunk_drain(void)
{
	c.exit_deadline = prim_monotonic_ns() + EXIT_WAIT_NS;
	return wait_writers(prim_gettid(), c.exit_deadline);
}

/* Finish every chunk and cut the file at what was written: by exit (for
 * good) or before an exec (until mtrec_chunk_resume). */
static void finish_chunks(int (*cut)(char *pos, char *end))
{
	struct mtrec_slot *s = mtrec_depth - 1 < MTREC_NEST ? mtrec_self[mtrec_depth - 1] : NULL;
	char *pos = NULL, *end = NULL;

	pid_t self = prim_gettid();

	c.writing = 0;
	/* The file ends where our last line does when our chunk is the last. */
	if (s && s->pos) {
		pos = s->pos;
		end = s->end;
		s->pos = s->end = NULL;
	}
	/* Other threads may be writing: as when a part is retired, only the
	 * chunks of those that are not are closed here.  A thread in the
	 * middle of a line (or of a realloc whose outcome is held) is waited
	 * for, so that the exit does not leave its torn line in the file;
	 * after that it writes nothing more (c.writing is 0, its chunk is
	 * stale).  At exit, mtrec_chunk_drain has waited already, up to its
	 * deadline; what came in since gets EXIT_SETTLE_NS more.  One that
	 * does not leave in time keeps its chunk as it is.  Without the
	 * barrier, every slot is taken for busy but those of this thread. */
	uint64_t deadline = prim_monotonic_ns() + EXIT_SETTLE_NS;
	if (c.exit_deadline > deadline)
		deadline = c.exit_deadline;
	__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_SEQ_CST);
	int barrier = prim_membarrier() == 0;
	for (unsigned i = 0; c.slots && i < NSLOTS && i < c.next_slot; i++) {
		struct mtrec_slot *o = &c.slots[i];
		int mine = o->tid == self;

		if ((!barrier && !mine) || (!mine && !settled(o, deadline)))
			continue;
		if (!__atomic_load_n(&o->held, __ATOMIC_ACQUIRE) &&
		    (o == s || !__atomic_load_n(&o->busy, __ATOMIC_ACQUIRE)))
			close_idle(o, ~0u, self);
	}
	if (!cut(pos, end) && pos)
		chunk_close(&(struct mtrec_slot){ .pos = pos, .end = end });
}

void mtrec_chunk_finish(void)
{
	finish_chunks(mtrec_file_close);
}

void mtrec_chunk_pause(void)
{
	if (!c.writing)
		return;
	c.paused = 1;
	finish_chunks(mtrec_file_trim);
}

void mtrec_chunk_resume(void)
{
	struct mtrec_file_err e;

	if (!c.paused)
		return;
	if (mtrec_file_untrim(&e) < 0 && e.why)
		mtrec_give_up(e.why, e.err);
	/* Every slot was closed: each takes a new chunk, from the cut on. */
	__atomic_add_fetch(&mtrec_gen, 1, __ATOMIC_ACQ_REL);
	c.writing = 1;
	c.paused = 0;
}

void mtrec_chunk_fork_child(void)
{
	c.paused = 0;
	c.owner = getpid();
	c.writing = 0;
	memset(mtrec_self, 0, sizeof(mtrec_self));
	c.lost_deep = 0;
	if (c.slots)
		memset(c.slots, 0, sizeof(struct mtrec_slot) *
		       (c.next_slot < NSLOTS ? c.next_slot : NSLOTS));
	c.next_slot = 0;
	c.retiring = 0;		/* a thread of the parent's may have been retiring */
	c.retire_due_ns = 0;
	mtrec_file_fork_child();
	mtrec_new_epoch();
}
