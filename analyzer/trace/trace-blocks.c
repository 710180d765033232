/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-blocks.c -- read a part on several threads: splitting lines into
 * columns and classifying them is about half of an analysis's time, and
 * a line's place in the run is known from its place in the file.
 *
 * Worker threads read the part, one after the other, into blocks of whole
 * lines (the head of a line cut by a block's end is copied to the next
 * block), each splitting the lines of the block it read, and the main
 * thread delivers the lines of the oldest block, in order, while the
 * workers read and split the next ones.  Everything that depends on the
 * lines before -- numbers, "# at", the count of unreadable lines, the
 * callback -- stays on the main thread (mta_reader_deliver), so the
 * callback sees exactly what the serial reader hands it.
 *
 * A worker packs each line into a Rec of 40 bytes (offsets of its columns,
 * the event's fields) rather than an MtaLine of about 300, so that the
 * records of a block stay near the size of its text: they are written on
 * one core and read on another.  A line that does not fit one (more than
 * REC_COLS columns, NUL bytes, over 255 bytes) is only marked, and split
 * again on the main thread by the same code; so are the lines of a block
 * beyond its records' room (lines of 16 bytes on average).
 *
 * Only regular files take this path (plain or compressed: the workers
 * decompress); standard input and pipes are read serially, line by line
 * as they come.  A line longer than a block sends the rest of the part to
 * the serial reader, which cuts lines of 64 MiB and more (trace-reader.c).
 * A thread that cannot be made (ulimit -u, -v) leaves its work to the
 * others, or to the serial reader.  MTANALYZE_THREADS=1 (mtanalyze(1),
 * ENVIRONMENT) reads serially everywhere.
 */
#include "trace-reader-private.h"
#include "foreign-format.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The default block: about 27,000 lines of the usual 38 bytes; its
 * records take 1.1 MB. */
#define BLOCK_SIZE (1u << 20)
/* Below this, a file is read serially unless MTANALYZE_THREADS says: the
 * threads' start costs more than they save. */
#define MIN_PARALLEL (256u << 10)
#define MAX_WORKERS 16
#define REC_COLS 6
/* The slots of a block's table of the last event on each address
 * (pair_event): 128 KB, in a worker's L2 cache. */
#define PAIR_BITS 14

/* A line of at most 255 bytes and REC_COLS columns, with its event's
 * fields when they fit; else only OFF, and the main thread splits it. */
typedef struct {
	uint64_t addr;
	uint32_t off;               /* the line in its block's buffer */
	uint32_t size;
	int32_t stack_id;
	uint8_t len, kind, word;
	char op;
	uint8_t col[REC_COLS][2];   /* start (from the line's) and length */
	uint8_t ncols;
	uint8_t bits;               /* REC_WHOLE, REC_CANONICAL; caller, family: below */
	uint8_t pad[2];
	uint32_t events;            /* the block's plain events before this line */
} Rec;

#define REC_WHOLE 1
#define REC_CANONICAL 2
/* the caller's and the family's column, + 1 (0: empty), 3 bits each */
#define REC_CALLER_SHIFT 2
#define REC_FAMILY_SHIFT 5
G_STATIC_ASSERT (sizeof (Rec) == 48);

typedef struct {
	uint32_t event;             /* its index in the block, or NO_MAKER */
	uint32_t tag;               /* of its address */
} PairSlot;

typedef struct {
	char *mem, *buf;            /* PAD_FRONT + cap + PAD_BACK bytes */
	size_t cap;
	size_t fill;                /* bytes read into buf */
	size_t complete;            /* bytes of whole lines: buf[complete - 1] is '\n' */
	Rec *recs;                  /* made before the workers start: they allocate nothing */
	size_t nrecs, recs_cap;
	/* the plain events, when the reader hands them in bulk: as the
	 * consumer takes them, each with where its line starts in buf */
	MtaEvent *events;
	uint32_t *event_off;
	size_t nevents;
	/* the event that last made a block at each slot's addresses
	 * (pair_event), and the first event after the last line that is
	 * not one: no pair spans that line */
	PairSlot *pairs;
	size_t barrier;
	uint32_t no_pair;           /* where pair_event writes when it pairs nothing */
	size_t split_end;           /* the lines before are in recs, the rest the main thread splits */
	gboolean done;              /* split by a worker (under Blocks.lock) */
} Block;

/* Where a block's bytes come from: first what is left of the part's
 * first read, made into the reader's buffer as the serial reader makes it
 * (READ_CHUNK bytes asked: mta_foreign_magic sees the same ones), then
 * the input. */
typedef struct {
	MtaInput *in;
	const char *first;
	size_t first_left;
} Source;

/* The reading of one part: the workers read and split blocks, the main
 * thread delivers them. */
typedef struct {
	GMutex lock;
	GCond cond;
	GMutex fill_lock;           /* held by the worker filling a block */
	gint stop;                  /* the delivery failed: the workers stop */
	Block *blocks;
	guint nb;
	Source src;
	/* under lock: */
	uint64_t filled, delivered; /* blocks filled, delivered */
	gboolean filling;           /* the input is not all read */
	uint64_t offset;            /* of the input reached, for the progress */
	/* the filling worker's (under fill_lock), read once they ended: */
	uint64_t bytes;             /* read from the input */
	Block *last;                /* the last block filled: its tail is the next one's head */
	gboolean serial;            /* a line longer than a block: the rest is read serially */
	gboolean events;            /* the reader hands plain events in bulk */
	GError *read_error;
} Blocks;

static guint
env_number (const char *name, guint fallback, guint lo, guint hi)
{
	const char *s = g_getenv (name);
	guint64 v;

	if (s == NULL || !g_ascii_string_to_unsigned (s, 10, lo, hi, &v, NULL))
		return fallback;
	return (guint) v;
}

/* The index of S among L's columns, -1 when it is empty, -2 when it is
 * none of them. */
static int
col_index (const MtaLine *l, MtaSpan s)
{
	if (s.len == 0)
		return -1;
	for (int i = 0; i < l->ncols; i++)
		if (l->cols[i].p == s.p && l->cols[i].len == s.len)
			return i;
	return -2;
}

static void
block_alloc (Block *b, size_t cap)
{
	/* defined bytes wherever a window or hex load may reach */
	b->mem = g_malloc0 (PAD_FRONT + cap + PAD_BACK);
	b->buf = b->mem + PAD_FRONT;
	b->cap = cap;
	/* room for lines of 16 bytes on average; pages touched as used */
	b->recs_cap = cap / 16 + 16;
	b->recs = g_new (Rec, b->recs_cap);
	b->events = g_new (MtaEvent, b->recs_cap);
	b->event_off = g_new (uint32_t, b->recs_cap);
	b->pairs = g_new0 (PairSlot, 1u << PAIR_BITS);
}

/* The plain report's main thread spends most of its time on its table
 * of live blocks, and most blocks are freed soon after they were
 * allocated, often in the same block of lines.  So a worker pairs each
 * event that makes a block ("+", ">") with the next event on its
 * address when that one ends it ("-", "<"): one lookup on the main
 * thread then tells whether the pair changes nothing (mta_compat_events).
 *
 * Each address has one slot, without probing (a slot taken by another
 * address only loses a pair): the last event on it when that made a
 * block, else NO_MAKER, and a tag of the address.  The index of event J
 * is only ever written by J, and any later event on its address rewrites
 * a slot with its tag, so that a slot holding J, when J is an event of
 * this block before I that made a block at I's address, says that no
 * event on that address came in between -- whatever the slot held before
 * this block.  The slot is 8 bytes, not to miss the cache: event J is
 * read (to be sure of its address) only when the tags agree. */
#define NO_MAKER UINT32_MAX

static inline void
pair_event (Block *b, size_t i)
{
	MtaEvent *ev = &b->events[i];
	uint64_t h = ev->addr * 0x9e3779b97f4a7c15ULL;
	PairSlot *slot = &b->pairs[h >> (64 - PAIR_BITS)];
	uint32_t tag = (uint32_t) (h >> 16);

	if (ev->op == '+' || ev->op == '>') {
		*slot = (PairSlot) { (uint32_t) i, tag };
		return;
	}
	/* the rest without a branch on the slot, which is often not in
	 * the L1 cache: a branch mispredicted there would wait for it */
	PairSlot was = *slot;
	size_t j = was.event;   /* NO_MAKER: never below I */
	gboolean hit = was.tag == tag && j < i && j >= b->barrier;
	MtaEvent *made = &b->events[hit ? j : i];
	gboolean paired = hit & (ev->op == '-' || ev->op == '<') & (made->addr == ev->addr) &
		(made->op == '+' || made->op == '>');
	*(paired ? &made->pair : &b->no_pair) = (uint32_t) (i - j);
	slot->event = was.tag == tag ? NO_MAKER : was.event;
}

/* Store the split line L, at OFF in B's buffer, as B's next record. */
static void
pack (Block *b, const MtaLine *l, size_t off)
{
	Rec *rc = &b->recs[b->nrecs++];

	rc->off = (uint32_t) off;
	rc->bits = 0;
	rc->events = (uint32_t) b->nevents;
	if (l->ncols > REC_COLS || l->more_cols || l->has_nul || l->text.len > UINT8_MAX ||
	    l->text.p != b->buf + off || l->size > UINT32_MAX || l->stack_id > INT32_MAX)
		return;
	int caller = col_index (l, l->caller);
	int family = l->kind == MTA_LINE_TRACKED ? col_index (l, l->family) : -1;
	if (caller < -1 || family < -1)
		return;
	for (int i = 0; i < l->ncols; i++) {
		rc->col[i][0] = (uint8_t) (l->cols[i].p - l->text.p);
		rc->col[i][1] = (uint8_t) l->cols[i].len;
	}
	rc->len = (uint8_t) l->text.len;
	rc->ncols = (uint8_t) l->ncols;
	rc->kind = (uint8_t) l->kind;
	rc->word = (uint8_t) l->word;
	rc->op = l->op;
	rc->addr = l->addr;
	rc->size = (uint32_t) l->size;
	rc->stack_id = (int32_t) l->stack_id;
	rc->bits = (uint8_t) (REC_WHOLE | (l->addr_canonical ? REC_CANONICAL : 0) |
			      (caller + 1) << REC_CALLER_SHIFT | (family + 1) << REC_FAMILY_SHIFT);
}

/* The line of RC back into L (whose source is set). */
static void
unpack (const Rec *rc, const char *buf, MtaLine *l)
{
	const char *p = buf + rc->off;
	static const MtaSpan none = { "", 0 };
	int caller = (rc->bits >> REC_CALLER_SHIFT & 7) - 1;
	int family = (rc->bits >> REC_FAMILY_SHIFT & 7) - 1;

	l->text.p = p;
	l->text.len = rc->len;
	l->ncols = rc->ncols;
	l->more_cols = FALSE;
	l->has_nul = FALSE;
	for (int i = 0; i < rc->ncols; i++) {
		l->cols[i].p = p + rc->col[i][0];
		l->cols[i].len = rc->col[i][1];
	}
	l->kind = (MtaLineKind) rc->kind;
	l->word = (MtaWord) rc->word;
	l->op = rc->op;
	l->addr = rc->addr;
	l->addr_canonical = (rc->bits & REC_CANONICAL) != 0;
	l->size = rc->size;
	l->stack_id = rc->stack_id;
	l->caller = caller < 0 ? none : l->cols[caller];
	l->family = family < 0 ? none : l->cols[family];
}

/* Split the whole lines of B into its records, as many as they hold;
 * its plain events into its events instead when EVENTS, the consumer
 * taking them in bulk, those of the usual form in one pass. */
static void
split_block (Block *b, gboolean events)
{
	const char *p = b->buf, *end = b->buf + b->complete;
	MtaLine l;

	b->nrecs = b->nevents = b->barrier = 0;
	/* a line is either: the one bound holds both */
	while (p < end && b->nrecs + b->nevents < b->recs_cap) {
		if (G_LIKELY (events)) {
			const char *nl = mta_reader_split_event (p, &b->events[b->nevents]);
			if (G_LIKELY (nl != NULL)) {
				pair_event (b, b->nevents);
				b->event_off[b->nevents++] = (uint32_t) (p - b->buf);
				p = nl + 1;
				continue;
			}
		}
		const char *nl = mta_reader_split_line (&l, p, end);
		if (events && mta_reader_plain_event (&l, &b->events[b->nevents])) {
			pair_event (b, b->nevents);
			b->event_off[b->nevents++] = (uint32_t) (p - b->buf);
		} else {
			/* the consumer sees this line between two runs of events
			 * (and it may be an event on the same address) */
			pack (b, &l, (size_t) (p - b->buf));
			b->barrier = b->nevents;
		}
		p = nl + 1;
	}
	b->split_end = (size_t) (p - b->buf);
}

/* Hand over the lines of B, which a worker has split, in order. */
static gboolean
deliver_block (MtaReader *r, Part *pt, Block *b, GError **error)
{
	MtaLine l;
	const char *end = b->buf + b->complete;
	size_t done = 0;    /* events handed over */

	l.source = pt->name;
	for (size_t i = 0; i < b->nrecs; i++) {
		const Rec *rc = &b->recs[i];
		if (rc->events > done) {
			if (!mta_reader_hand_events (r, pt, b->events + done, rc->events - done,
						     b->buf, b->event_off + done, error))
				return FALSE;
			done = rc->events;
		}
		if (G_LIKELY (rc->bits & REC_WHOLE))
			unpack (rc, b->buf, &l);
		else
			mta_reader_split_line (&l, b->buf + rc->off, end);
		if (!mta_reader_deliver (r, pt, &l, error))
			return FALSE;
	}
	if (!mta_reader_hand_events (r, pt, b->events + done, b->nevents - done,
				     b->buf, b->event_off + done, error))
		return FALSE;
	for (const char *p = b->buf + b->split_end; p < end;) {
		const char *nl = mta_reader_split_line (&l, p, end);
		if (!mta_reader_deliver (r, pt, &l, error))
			return FALSE;
		p = nl + 1;
	}
	return TRUE;
}

/* Fill B after the bytes already in it, up to its end or the end of the
 * input.  FALSE at the end or on a read error (BS->read_error). */
static gboolean
fill_block (Blocks *bs, Block *b)
{
	Source *src = &bs->src;

	while (b->fill < b->cap) {
		size_t want = b->cap - b->fill;
		if (src->first_left > 0) {
			size_t n = MIN (want, src->first_left);
			memcpy (b->buf + b->fill, src->first, n);
			src->first += n;
			src->first_left -= n;
			b->fill += n;
			continue;
		}
		gssize n = mta_input_read (src->in, b->buf + b->fill, want, &bs->read_error);
		if (n <= 0)
			return FALSE;
		bs->bytes += (uint64_t) n;
		b->fill += (size_t) n;
	}
	return TRUE;
}

/* A worker: fill the next block -- one worker at a time, since the input
 * is read in order and each block takes the head of a line the one before
 * left -- as soon as that block is free (delivered), then split it while
 * another worker fills the next one: a worker splits the bytes it has
 * just read, still in its core's cache.  It decompresses too: the main
 * thread only delivers. */
static gpointer
work (gpointer data)
{
	Blocks *bs = data;

	for (;;) {
		g_mutex_lock (&bs->fill_lock);
		g_mutex_lock (&bs->lock);
		uint64_t seq = bs->filled;
		while (bs->filling && seq - bs->delivered == bs->nb && !g_atomic_int_get (&bs->stop))
			g_cond_wait (&bs->cond, &bs->lock);
		gboolean go = bs->filling && !g_atomic_int_get (&bs->stop);
		g_mutex_unlock (&bs->lock);
		if (!go) {
			g_mutex_unlock (&bs->fill_lock);
			break;
		}
		Block *b = &bs->blocks[seq % bs->nb], *prev = bs->last;
		b->fill = prev != NULL ? prev->fill - prev->complete : 0;
		if (b->fill > 0)
			memcpy (b->buf, prev->buf + prev->complete, b->fill);
		gboolean more = fill_block (bs, b);
		bs->last = b;
		const char *nl = memrchr (b->buf, '\n', b->fill);
		b->complete = nl != NULL ? (size_t) (nl + 1 - b->buf) : 0;
		gboolean lines = b->complete > 0;
		if (lines)
			b->buf[b->fill] = '\n';
		else
			bs->serial = more;    /* a line longer than a block */
		g_mutex_lock (&bs->lock);
		if (lines)
			bs->filled = seq + 1;
		if (!lines || !more)
			bs->filling = FALSE;
		bs->offset = mta_input_file_offset (bs->src.in);
		g_cond_broadcast (&bs->cond);
		g_mutex_unlock (&bs->lock);
		g_mutex_unlock (&bs->fill_lock);
		if (!lines)
			break;
		split_block (b, bs->events);
		g_mutex_lock (&bs->lock);
		b->done = TRUE;
		g_cond_broadcast (&bs->cond);
		g_mutex_unlock (&bs->lock);
	}
	return NULL;
}

/* The main thread's part: deliver the blocks in order as the workers
 * finish them, until the input is all read and every block delivered. */
static gboolean
deliver_blocks (MtaReader *r, Part *pt, Blocks *bs, uint64_t size, GError **error)
{
	MtaProgress progress;
	gboolean ok = TRUE;

	mta_progress_start (&progress, r, pt->name, size);

	for (uint64_t head = 0; ok; head++) {
		Block *b = &bs->blocks[head % bs->nb];
		g_mutex_lock (&bs->lock);
		while ((head == bs->filled && bs->filling) || (head < bs->filled && !b->done))
			g_cond_wait (&bs->cond, &bs->lock);
		gboolean end = head == bs->filled;
		uint64_t offset = bs->offset;
		b->done = FALSE;
		g_mutex_unlock (&bs->lock);
		if (end)
			break;
		ok = deliver_block (r, pt, b, error);
		g_mutex_lock (&bs->lock);
		bs->delivered = head + 1;
		g_cond_broadcast (&bs->cond);
		g_mutex_unlock (&bs->lock);
		mta_progress_at (&progress, offset);
	}
	mta_progress_end (&progress);
	return ok;
}

/* After the blocks: the head of a line left over (in the last block)
 * and what is left of the first read go to the serial reader's buffer,
 * which hands over their whole lines and reads the rest of the part when
 * a line was longer than a block; else that head is the part's last
 * line. */
static gboolean
finish_serially (MtaReader *r, MtaInput *in, Part *pt, Blocks *bs, GError **error)
{
	const Block *last = bs->last;
	size_t carry = last != NULL ? last->fill - last->complete : 0;

	/* the first read's rest is at the end of r->buf, beyond CARRY bytes
	 * taken from before it */
	if (bs->src.first_left > 0)
		memmove (r->buf + carry, bs->src.first, bs->src.first_left);
	if (carry > 0)
		memcpy (r->buf, last->buf + last->complete, carry);
	pt->fill = carry + bs->src.first_left;
	if (bs->read_error != NULL) {
		mta_reader_input_error (pt, g_steal_pointer (&bs->read_error), error);
		return FALSE;
	}
	if (!bs->serial)
		return mta_reader_part_end (r, pt, error);
	return mta_reader_part_input (r, pt, 0, error) &&
		mta_reader_read_serial (r, in, pt, READ_CHUNK, error);
}

/* The threads that are running or ready to run on the whole machine,
 * ours included (/proc/loadavg's fourth field, "R/TOTAL"), or -1 when
 * that cannot be read.  The fewest of three looks a millisecond apart:
 * one look saw 2 in a quarter of the runs started from a shell on an
 * idle machine (the shell itself, between its fork and its wait). */
static int
runnable_now (void)
{
	int fewest = -1;

	for (int look = 0; look < 3; look++) {
		gchar *text = NULL;
		int running;

		if (look > 0)
			g_usleep (1000);
		if (g_file_get_contents ("/proc/loadavg", &text, NULL, NULL) &&
		    sscanf (text, "%*f %*f %*f %d/", &running) == 1 &&
		    (fewest < 0 || running < fewest))
			fewest = running;
		g_free (text);
		if (fewest < 0)
			break;
	}
	return fewest;
}

/* How many threads read and split a part when MTANALYZE_THREADS does not
 * say: one per processor, when a processor is idle besides ours.  The
 * threads cost a third more CPU time than the serial reading (the lines'
 * bytes and records cross between cores), which pays only on an idle
 * core: at a load of 4-5 on 2 cores the bench trace took 0.45 s on
 * threads and 0.33 s serially (medians of 7, interleaved), its zstd copy
 * 0.69 and 0.48 s.  The plain report, whose events the workers hand over
 * in bulk, costs 7% more on threads (210 against 197 ms of CPU at load
 * 4.5-6, medians of 7), and still took 243 ms against 226 serially.
 * Since the workers pair blocks made and ended in a block of lines
 * (pair_event), it costs the same CPU on threads as serially on an idle
 * machine (194 and 193 ms, 11 interleaved rounds at load 1), and takes
 * 117 ms against 194.
 *
 * "Idle" is what runs now, not the 1-minute load average: that average
 * still counts, for a minute, a job that has just ended -- the mtrace
 * script run before mtanalyze on the same trace kept the average near 1
 * on 2 cores, and mtanalyze read serially on an idle machine (make
 * bench: 225 ms, 21.5x the script, against 150 ms on threads).  The
 * average stays the answer where /proc/loadavg has no count of runnable
 * threads. */
static guint
default_threads (void)
{
	guint n = g_get_num_processors ();
	int running = runnable_now ();
	double load;

	/* RUNNING counts this thread: another processor is idle when
	 * fewer threads than processors run */
	if (running >= 1)
		return (guint) running < n ? n : 1;
	if (getloadavg (&load, 1) != 1 || load > (double) n - 1.5)
		return 1;
	return n;
}

/* Read all of IN as one part of the run, on several threads when that
 * pays. */
static gboolean
read_blocks (MtaReader *r, MtaInput *in, Part *pt, GError **error)
{
	const char *forced = g_getenv ("MTANALYZE_THREADS");
	size_t bsize = env_number ("MTANALYZE_BLOCK_SIZE", BLOCK_SIZE, 64, READ_CHUNK);
	uint64_t size = mta_input_file_size (in);

	if (r->probing || !mta_input_is_regular (in) || (forced == NULL && size < MIN_PARALLEL))
		return mta_reader_read_serial (r, in, pt, SERIAL_CHUNK, error);
	guint threads = env_number ("MTANALYZE_THREADS", default_threads (), 1, 1024);
	if (threads < 2)
		return mta_reader_read_serial (r, in, pt, SERIAL_CHUNK, error);

	Blocks bs = { .filling = TRUE, .events = r->events_func != NULL };
	mta_reader_reserve (r, READ_CHUNK);
	gssize first = mta_input_read (in, r->buf, READ_CHUNK, &bs.read_error);
	if (first > 0) {
		if ((pt->foreign = mta_foreign_magic (r->buf, (size_t) first)) != NULL)
			return TRUE;    /* not to be read as lines */
		pt->bytes += (uint64_t) first;
		r->bytes += (uint64_t) first;
	}
	bs.src = (Source) { in, r->buf, first > 0 ? (size_t) first : 0 };
	if (first <= 0)
		return finish_serially (r, in, pt, &bs, error);

	guint nworkers = MIN (threads, MAX_WORKERS), started = 0;
	GThread *workers[MAX_WORKERS];
	bs.nb = nworkers + 2;
	g_mutex_init (&bs.lock);
	g_mutex_init (&bs.fill_lock);
	g_cond_init (&bs.cond);
	bs.blocks = g_new0 (Block, bs.nb);
	for (guint i = 0; i < bs.nb; i++)
		block_alloc (&bs.blocks[i], bsize);
	/* threads that cannot be made (ulimit -v, -u) leave the work to
	 * those that could, or to the serial reader */
	while (started < nworkers &&
	       (workers[started] = g_thread_try_new ("mtanalyze-read", work, &bs, NULL)) != NULL)
		started++;
	gboolean ok = TRUE;
	if (started > 0) {
		ok = deliver_blocks (r, pt, &bs, size, error);
		if (!ok) {
			g_mutex_lock (&bs.lock);
			g_atomic_int_set (&bs.stop, 1);
			g_cond_broadcast (&bs.cond);
			g_mutex_unlock (&bs.lock);
		}
	} else
		bs.serial = TRUE;
	for (guint i = 0; i < started; i++)
		g_thread_join (workers[i]);
	pt->bytes += bs.bytes;
	r->bytes += bs.bytes;
	if (ok)
		ok = finish_serially (r, in, pt, &bs, error);
	g_clear_error (&bs.read_error);
	for (guint i = 0; i < bs.nb; i++) {
		g_free (bs.blocks[i].mem);
		g_free (bs.blocks[i].recs);
		g_free (bs.blocks[i].events);
		g_free (bs.blocks[i].event_off);
		g_free (bs.blocks[i].pairs);
	}
	g_free (bs.blocks);
	g_mutex_clear (&bs.lock);
	g_mutex_clear (&bs.fill_lock);
	g_cond_clear (&bs.cond);
	return ok;
}

gboolean
mta_reader_read_file (MtaReader *reader, const char *path, GError **error)
{
	g_autoptr (MtaInput) in = mta_input_open (path, error);

	if (in == NULL)
		return FALSE;
	Part pt = { .name = mta_input_name (in) };
	gboolean probed = mta_input_is_regular (in) && strcmp (path, "-") != 0;
	return read_blocks (reader, in, &pt, error) &&
		mta_reader_check_part (reader, &pt, in, probed, error);
}

/* ------------------------------------------------------------ probing */

/* The first trace line is at the top of any trace: a probe reads little. */
#define PROBE_CHUNK (64u << 10)

static gboolean
probe_line (const MtaLine *line, gpointer data, GError **error)
{
	return TRUE;
}

gboolean
mta_reader_probe (const char *path, char **what, GError **error)
{
	g_autoptr (MtaInput) in = mta_input_open (path, error);

	*what = NULL;
	if (in == NULL)
		return FALSE;
	MtaReader *r = mta_reader_new (probe_line, NULL);
	Part pt = { .name = mta_input_name (in) };
	gboolean ok;

	r->probing = TRUE;
	/* the first trace line is at the top of any trace: read little */
	ok = mta_reader_read_serial (r, in, &pt, PROBE_CHUNK, error);
	mta_reader_free (r);
	if (ok && pt.foreign != NULL) {
		g_autofree char *desc = mta_part_describe_untraced (&pt, in);
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", pt.name, desc);
		return FALSE;
	}
	if (ok && !pt.traced)
		*what = mta_part_describe_untraced (&pt, in);
	return ok;
}
