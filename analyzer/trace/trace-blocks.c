/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-blocks.c -- read a part on several threads: splitting lines into
 * columns and classifying them is about half of an analysis's time, and
 * a line's place in the run is known from its place in the file.
 *
 * The main thread reads the part into blocks of whole lines (the head of
 * a line cut by a block's end is copied to the next block), hands each
 * block to a worker, and delivers the lines of the oldest block, in
 * order, while the workers split the next ones.  Everything that depends
 * on the lines before -- numbers, "# at", the count of unreadable lines,
 * the callback -- stays on the main thread (mta_reader_deliver), so the
 * callback sees exactly what the serial reader hands it.
 *
 * A worker packs each line into a Rec of 64 bytes (offsets of its columns,
 * the event's fields) rather than an MtaLine of about 300, so that the
 * records of a block stay near the size of its text.  A line that does
 * not fit one (more than REC_COLS columns, NUL bytes, over 64 KiB) is
 * only marked, and split again on the main thread by the same code.
 *
 * Only regular files take this path (plain or compressed: decompression
 * stays on the main thread, ahead of the delivery); standard input and
 * pipes are read serially, line by line as they come.  A line longer than
 * a block sends the rest of the part to the serial reader, which cuts
 * lines of 64 MiB and more (trace-reader.c).  MTANALYZE_THREADS=1 (mtanalyze(1),
 * ENVIRONMENT) reads serially everywhere.
 */
#include "trace-reader-private.h"
#include "foreign-format.h"

#include <stdio.h>
#include <time.h>

/* The default block: about 27,000 lines of the usual 38 bytes; its
 * records take 1.7 MB. */
#define BLOCK_SIZE (1u << 20)
/* Below this, a file is read serially unless MTANALYZE_THREADS says: the
 * threads' start costs more than they save. */
#define MIN_PARALLEL (256u << 10)
#define MAX_WORKERS 16
#define REC_COLS 6

typedef struct {
	uint64_t addr, size;
	int64_t stack_id;
	uint32_t off, len;          /* the line in its block's buffer */
	uint16_t col[REC_COLS][2];  /* start (from the line's) and length */
	uint8_t kind, word, ncols, canonical;
	char op;
	int8_t caller, family;      /* a column's index; -1: empty */
	uint8_t whole;              /* 0: split again on the main thread */
} Rec;

typedef struct {
	char *mem, *buf;            /* PAD_FRONT + cap + PAD_BACK bytes */
	size_t cap;
	size_t fill;                /* bytes read into buf */
	size_t complete;            /* bytes of whole lines: buf[complete - 1] is '\n' */
	Rec *recs;
	size_t nrecs, recs_cap;
	gboolean done;              /* split by a worker (under Blocks.lock) */
} Block;

typedef struct {
	GMutex lock;
	GCond cond;
	gint stop;                  /* the reading failed: workers skip their blocks */
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
	g_free (b->mem);
	/* defined bytes wherever a window or hex load may reach */
	b->mem = g_malloc0 (PAD_FRONT + cap + PAD_BACK);
	b->buf = b->mem + PAD_FRONT;
	b->cap = cap;
}

/* Store the split line L, at OFF in B's buffer, as B's next record. */
static void
pack (Block *b, const MtaLine *l, size_t off)
{
	if (b->nrecs == b->recs_cap) {
		b->recs_cap = MAX (b->recs_cap * 2, b->complete / 32 + 16);
		b->recs = g_renew (Rec, b->recs, b->recs_cap);
	}
	Rec *rc = &b->recs[b->nrecs++];
	rc->off = (uint32_t) off;
	rc->len = (uint32_t) l->text.len;
	rc->whole = 0;
	if (l->ncols > REC_COLS || l->more_cols || l->has_nul || l->text.len > UINT16_MAX ||
	    l->text.p != b->buf + off)
		return;
	int caller = col_index (l, l->caller);
	int family = l->kind == MTA_LINE_TRACKED ? col_index (l, l->family) : -1;
	if (caller < -1 || family < -1)
		return;
	for (int i = 0; i < l->ncols; i++) {
		rc->col[i][0] = (uint16_t) (l->cols[i].p - l->text.p);
		rc->col[i][1] = (uint16_t) l->cols[i].len;
	}
	rc->ncols = (uint8_t) l->ncols;
	rc->kind = (uint8_t) l->kind;
	rc->word = (uint8_t) l->word;
	rc->op = l->op;
	rc->addr = l->addr;
	rc->canonical = (uint8_t) l->addr_canonical;
	rc->size = l->size;
	rc->stack_id = l->stack_id;
	rc->caller = (int8_t) caller;
	rc->family = (int8_t) family;
	rc->whole = 1;
}

/* The line of RC back into L (whose source is set). */
static void
unpack (const Rec *rc, const char *buf, MtaLine *l)
{
	const char *p = buf + rc->off;
	static const MtaSpan none = { "", 0 };

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
	l->addr_canonical = rc->canonical;
	l->size = rc->size;
	l->stack_id = rc->stack_id;
	l->caller = rc->caller < 0 ? none : l->cols[rc->caller];
	l->family = rc->family < 0 ? none : l->cols[rc->family];
}

/* A worker: split the whole lines of a block into its records. */
static void
split_block (gpointer data, gpointer user_data)
{
	Block *b = data;
	Blocks *bs = user_data;

	b->nrecs = 0;
	if (!g_atomic_int_get (&bs->stop)) {
		const char *p = b->buf, *end = b->buf + b->complete;
		MtaLine l;
		while (p < end) {
			const char *nl = mta_reader_split_line (&l, p, end);
			pack (b, &l, (size_t) (p - b->buf));
			p = nl + 1;
		}
	}
	g_mutex_lock (&bs->lock);
	b->done = TRUE;
	g_cond_broadcast (&bs->cond);
	g_mutex_unlock (&bs->lock);
}

/* Hand over the lines of B, in order, once a worker has split them. */
static gboolean
deliver_block (MtaReader *r, Part *pt, Blocks *bs, Block *b, GError **error)
{
	g_mutex_lock (&bs->lock);
	while (!b->done)
		g_cond_wait (&bs->cond, &bs->lock);
	b->done = FALSE;
	g_mutex_unlock (&bs->lock);

	MtaLine l;
	const char *end = b->buf + b->complete;
	l.source = pt->name;
	for (size_t i = 0; i < b->nrecs; i++) {
		const Rec *rc = &b->recs[i];
		if (G_LIKELY (rc->whole))
			unpack (rc, b->buf, &l);
		else
			mta_reader_split_line (&l, b->buf + rc->off, end);
		if (!mta_reader_deliver (r, pt, &l, error))
			return FALSE;
	}
	return TRUE;
}

static double
now_seconds (void)
{
	struct timespec ts;
	clock_gettime (CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Where a block's bytes come from: first what is left of the part's
 * first read, made into the reader's buffer as the serial reader makes it
 * (READ_CHUNK bytes asked: mta_foreign_magic sees the same ones), then
 * the input. */
typedef struct {
	MtaInput *in;
	const char *first;
	size_t first_left;
} Source;

/* Fill B after the bytes already in it, up to its end or the end of the
 * input.  FALSE at the end or on a read error (*READ_ERROR). */
static gboolean
fill_block (MtaReader *r, Source *src, Part *pt, Block *b, GError **read_error)
{
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
		gssize n = mta_input_read (src->in, b->buf + b->fill, want, read_error);
		if (n <= 0)
			return FALSE;
		pt->bytes += (uint64_t) n;
		r->bytes += (uint64_t) n;
		b->fill += (size_t) n;
	}
	return TRUE;
}

/* After the blocks: the head of a line left over (CARRY bytes at TAIL)
 * and what is left of the first read go to the serial reader's buffer,
 * which hands over their whole lines and reads the rest of the part when
 * SERIAL; else that head is the part's last line. */
static gboolean
finish_serially (MtaReader *r, MtaInput *in, Part *pt, Source *src, const char *tail,
		 size_t carry, gboolean serial, GError *read_error, GError **error)
{
	/* the first read's rest is at the end of r->buf, beyond CARRY bytes
	 * taken from before it */
	if (src->first_left > 0)
		memmove (r->buf + carry, src->first, src->first_left);
	if (carry > 0)
		memcpy (r->buf, tail, carry);
	pt->fill = carry + src->first_left;
	if (read_error != NULL) {
		mta_reader_input_error (pt, read_error, error);
		return FALSE;
	}
	if (!serial)
		return mta_reader_part_end (r, pt, error);
	return mta_reader_part_input (r, pt, 0, error) &&
		mta_reader_read_serial (r, in, pt, READ_CHUNK, error);
}

/* Read all of IN as one part of the run, on several threads when that
 * pays. */
static gboolean
read_blocks (MtaReader *r, MtaInput *in, Part *pt, GError **error)
{
	const char *forced = g_getenv ("MTANALYZE_THREADS");
	guint threads = env_number ("MTANALYZE_THREADS", g_get_num_processors (), 1, 1024);
	size_t bsize = env_number ("MTANALYZE_BLOCK_SIZE", BLOCK_SIZE, 64, READ_CHUNK);
	uint64_t size = mta_input_file_size (in);

	if (threads < 2 || r->probing || !mta_input_is_regular (in) ||
	    (forced == NULL && size < MIN_PARALLEL))
		return mta_reader_read_serial (r, in, pt, READ_CHUNK, error);

	GError *read_error = NULL;
	mta_reader_reserve (r, READ_CHUNK);
	gssize first = mta_input_read (in, r->buf, READ_CHUNK, &read_error);
	if (first > 0) {
		if ((pt->foreign = mta_foreign_magic (r->buf, (size_t) first)) != NULL)
			return TRUE;    /* not to be read as lines */
		pt->bytes += (uint64_t) first;
		r->bytes += (uint64_t) first;
	}
	Source src = { in, r->buf, first > 0 ? (size_t) first : 0 };

	guint workers = MIN (threads, MAX_WORKERS), nb = workers + 2;
	Blocks bs = { 0 };
	g_mutex_init (&bs.lock);
	g_cond_init (&bs.cond);
	Block *blocks = g_new0 (Block, nb);
	for (guint i = 0; i < nb; i++)
		block_alloc (&blocks[i], bsize);
	GThreadPool *pool = g_thread_pool_new (split_block, &bs, (gint) workers, FALSE, NULL);

	gboolean ok = TRUE, more = first > 0, serial = FALSE;
	gboolean progress = r->progress && size > (64 << 20);
	double next_report = progress ? now_seconds () : 0;
	uint64_t seq = 0, head = 0;   /* blocks filled, blocks delivered */
	Block *prev = NULL;           /* the last one filled: its tail is the next one's head */

	while (more) {
		Block *b = &blocks[seq % nb];
		if (seq - head == nb) {
			ok = deliver_block (r, pt, &bs, b, error);
			head++;
			if (!ok)
				break;
		}
		b->fill = prev != NULL ? prev->fill - prev->complete : 0;
		if (b->fill > 0)
			memcpy (b->buf, prev->buf + prev->complete, b->fill);
		more = fill_block (r, &src, pt, b, &read_error);
		prev = b;
		const char *last = memrchr (b->buf, '\n', b->fill);
		b->complete = last != NULL ? (size_t) (last + 1 - b->buf) : 0;
		if (b->complete == 0) {
			serial = more;    /* a line longer than a block */
			break;
		}
		b->buf[b->fill] = '\n';
		g_thread_pool_push (pool, b, NULL);
		seq++;
		if (progress && now_seconds () >= next_report) {
			fprintf (stderr, "\rmtanalyze: reading '%s': %3d%%", pt->name,
				 (int) (100.0 * (double) mta_input_file_offset (in) / (double) size));
			next_report = now_seconds () + 0.5;
		}
	}
	for (; ok && head < seq; head++)
		ok = deliver_block (r, pt, &bs, &blocks[head % nb], error);
	if (!ok)
		g_atomic_int_set (&bs.stop, 1);
	g_thread_pool_free (pool, FALSE, TRUE);
	if (progress)
		fprintf (stderr, "\r%*s\r", (int) strlen (pt->name) + 30, "");
	if (ok)
		ok = finish_serially (r, in, pt, &src, prev != NULL ? prev->buf + prev->complete : NULL,
				      prev != NULL ? prev->fill - prev->complete : 0, serial,
				      g_steal_pointer (&read_error), error);
	g_clear_error (&read_error);
	for (guint i = 0; i < nb; i++) {
		g_free (blocks[i].mem);
		g_free (blocks[i].recs);
	}
	g_free (blocks);
	g_mutex_clear (&bs.lock);
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
