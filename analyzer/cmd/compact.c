/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact.c -- `mtanalyze compact [--follow] [--delete] TRACE`: fold the
 * complete parts of a rotated trace into TRACE.compact while the program
 * runs, so that a week-long trace fits in bounded disk (share/compact.md).
 *
 * Each pass reads the previous TRACE.compact and the parts completed since
 * (compact-watch.c), and writes a new one keeping what shrink keeps (the
 * blocks live at the end of what it read, the blocks a duplicate met, bad
 * frees, duplicates, "=" lines, objects, marks, threads, the recorder's
 * notes) plus every "# time" line and every stack once.  Dropped lines
 * leave no trace in the file: "# at N" puts the next kept line at its line
 * number N, so reports name the full trace's lines.  What the dropped
 * events counted goes in summary lines (compact-sum.h): the run's totals
 * and peak, each call path's totals and growth evidence, each thread's
 * latest allocation -- computed as "full minus what the kept lines will
 * count again", by simulating the run's bookkeeping (run.c) on all events
 * and on the kept ones (these as the merged file has them, pass_line and
 * merge).  Each input is read once.  Memory follows the live blocks (with
 * the text of their allocation lines) and the call paths, never the
 * length of the trace.
 *
 * The new file is written under a hidden temporary name beside TRACE
 * (not matched by 'TRACE*') and renamed over TRACE.compact: a crash never
 * loses what was compacted; with --delete, parts are deleted only after
 * the file that holds them is in place.
 */
#include "compact.h"
#include "compact-text.h"
#include "trace-header.h"
#include "compact-sum.h"
#include "compact-watch.h"
#include "live-table.h"
#include "oom.h"
#include "script-hash.h"
#include "trace-input.h"
#include "trace-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean opt_follow, opt_delete, opt_quiet;
static gint64 opt_pid;

const GOptionEntry mta_compact_entries[] = {
	{ "follow", 'f', 0, G_OPTION_ARG_NONE, &opt_follow,
	  "Keep compacting (a look every 0.1 s) until the process writing TRACE has exited", NULL },
	{ "delete", 0, 0, G_OPTION_ARG_NONE, &opt_delete,
	  "Delete the parts once TRACE.compact holds them", NULL },
	{ "pid", 0, 0, G_OPTION_ARG_INT64, &opt_pid,
	  "With --follow: the process to wait for while TRACE does not exist yet", "PID" },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Do not print what each pass did", NULL },
	{ NULL }
};

const char mta_compact_params[] = "TRACE - fold the complete parts of a rotated trace";

const char mta_compact_description[] =
	"Reads the parts of TRACE (TRACE, TRACE.part2, ...) that are complete and\n"
	"not compacted yet, with TRACE.compact when it exists, and writes a new\n"
	"TRACE.compact that keeps what the analyses need: the blocks still live,\n"
	"bad frees and duplicates, with their stacks, and summary lines for the\n"
	"rest.  'mtanalyze TRACE.compact TRACE.partN...' (or simply 'mtanalyze\n"
	"TRACE*') then reports the leaks, bad frees (at their line numbers),\n"
	"growth classes, totals and peak of the full trace.  A part is complete\n"
	"when the next one exists and the process no longer maps it, or when the\n"
	"process has exited.\n"
	"\n"
	"Exit status: 0 done (or nothing to do yet), 2 trouble.  See share/compact.md.";

/* ------------------------------------------------------------ accounting */

/* A call path as the run keys it: its stack id, or its caller field. */
typedef struct {
	int64_t stack_id;
	char *caller;
	MtaCompactPath sum;        /* counters (caller span unused) */
} CPath;

typedef struct {
	uint64_t last_addr;
	gboolean valid;
} CThread;

/* A path's live bytes, and what it held at the peak: saved lazily, the
 * first time they change after a new peak (as the run does by site). */
typedef struct {
	uint64_t live, share, mark;
} CLive;

/* The run's bookkeeping (run.c, mta_run_line) over a stream of events:
 * once over every event (what the full trace counts), once over the kept
 * ones (what the compacted file will count again). */
typedef struct {
	MtaLiveTable live;
	GArray *paths;             /* MtaCompactPath by path index (caller unused) */
	GHashTable *thread_index;  /* tid -> index + 1 in threads */
	GArray *threads;           /* CThread; 0: before any "# T" */
	guint cur;                 /* index in threads */
	MtaCompactRun run;
	uint64_t live_bytes;
	GArray *lives;             /* CLive by path index */
	uint64_t epoch;            /* new peaks so far */
	uint64_t compact_epoch;    /* the epoch of a compacted file's peak, 0: none */
} Acct;

static void
acct_init (Acct *a)
{
	mta_live_init (&a->live);
	a->paths = g_array_new (FALSE, TRUE, sizeof (MtaCompactPath));
	a->thread_index = g_hash_table_new (g_direct_hash, g_direct_equal);
	a->threads = g_array_new (FALSE, TRUE, sizeof (CThread));
	g_array_set_size (a->threads, 1);
	a->cur = 0;
	memset (&a->run, 0, sizeof a->run);
	a->live_bytes = 0;
	a->lives = g_array_new (FALSE, TRUE, sizeof (CLive));
	a->epoch = a->compact_epoch = 0;
}

static void
acct_release (Acct *a)
{
	mta_live_release (&a->live);
	g_array_free (a->paths, TRUE);
	g_hash_table_destroy (a->thread_index);
	g_array_free (a->threads, TRUE);
	g_array_free (a->lives, TRUE);
}

/* Path PI's live bytes, its share of the peak saved first when due. */
static CLive *
acct_live (Acct *a, uint32_t pi)
{
	if (pi >= a->lives->len)
		g_array_set_size (a->lives, MAX (pi + 1, a->lives->len * 2));
	CLive *v = &g_array_index (a->lives, CLive, pi);
	if (v->mark != a->epoch) {
		v->share = v->live;
		v->mark = a->epoch;
	}
	return v;
}

static guint
acct_thread (Acct *a, uint32_t tid)
{
	gpointer v = g_hash_table_lookup (a->thread_index, GUINT_TO_POINTER (tid));
	if (v != NULL)
		return GPOINTER_TO_UINT (v) - 1;
	guint i = a->threads->len;
	g_array_set_size (a->threads, i + 1);
	g_hash_table_insert (a->thread_index, GUINT_TO_POINTER (tid), GUINT_TO_POINTER (i + 1));
	return i;
}

static MtaCompactPath *
acct_path (Acct *a, uint32_t pi)
{
	if (pi >= a->paths->len)
		g_array_set_size (a->paths, MAX (pi + 1, a->paths->len * 2));
	return &g_array_index (a->paths, MtaCompactPath, pi);
}

/* Event L of path PI, as mta_run_line counts it. */
static void
acct_event (Acct *a, const MtaLine *l, uint32_t pi, uint32_t tid)
{
	MtaCompactPath *p = acct_path (a, pi);
	CThread *t = &g_array_index (a->threads, CThread, a->cur);
	gboolean nil = l->addr == 0 && !l->addr_canonical;
	MtaLiveEntry *b;

	a->run.events++;
	switch (l->op) {
	case '+':
	case '>':
		if (l->op == '>')
			a->run.reallocs++;
		if (nil) {
			a->run.failed_allocs++;
			break;
		}
		if (mta_live_lookup (&a->live, l->addr) != NULL) {
			a->run.duplicates++;
			break;
		}
		b = mta_live_insert (&a->live, l->addr);
		b->size = l->size;
		b->seq = l->lineno;
		b->tid = tid;
		b->path = pi;
		p->allocs++;
		p->bytes_allocated += l->size;
		a->run.allocs++;
		a->run.bytes_allocated += l->size;
		a->live_bytes += l->size;
		acct_live (a, pi)->live += l->size;
		if (a->live_bytes > a->run.peak_live_bytes) {
			a->run.peak_live_bytes = a->live_bytes;
			a->run.peak_line = l->lineno;
			a->epoch++;
		}
		t->last_addr = l->addr;
		t->valid = TRUE;
		break;
	case '-':
	case '<':
		if ((b = mta_live_lookup (&a->live, l->addr)) != NULL) {
			MtaCompactPath *bp = acct_path (a, b->path);
			bp->frees++;
			bp->last_free_line = l->lineno;
			bp->last_freed_born = MAX (bp->last_freed_born, b->seq);
			if (t->valid && t->last_addr == b->addr) {
				bp->temporary++;
				a->run.temporary++;
				t->valid = FALSE;
			}
			a->live_bytes -= b->size;
			acct_live (a, b->path)->live -= b->size;
			a->run.frees++;
			mta_live_remove_entry (&a->live, b);
			break;
		}
		p->bad_frees++;
		a->run.bad_frees++;
		break;
	case '!':
		a->run.failed_allocs++;
		break;
	default:
		break;
	}
}

/* A previous compacted file's sums, added to the full count. */
static void
acct_add_sum (Acct *a, const MtaCompactSum *c, uint32_t pi)
{
	if (c->kind == MTA_COMPACT_RUN) {
		MtaCompactRun *r = &a->run;
		r->events += c->run.events;
		r->allocs += c->run.allocs;
		r->frees += c->run.frees;
		r->reallocs += c->run.reallocs;
		r->failed_allocs += c->run.failed_allocs;
		r->duplicates += c->run.duplicates;
		r->bytes_allocated += c->run.bytes_allocated;
		r->temporary += c->run.temporary;
		r->bad_frees += c->run.bad_frees;
		if (c->run.peak_live_bytes > r->peak_live_bytes ||
		    (c->run.peak_live_bytes == r->peak_live_bytes && c->run.peak_line < r->peak_line)) {
			r->peak_live_bytes = c->run.peak_live_bytes;
			r->peak_line = c->run.peak_line;
			a->compact_epoch = ++a->epoch;
		}
	} else if (c->kind == MTA_COMPACT_PATH) {
		MtaCompactPath *p = acct_path (a, pi);
		p->first_line = p->first_line ? MIN (p->first_line, c->path.first_line) : c->path.first_line;
		p->allocs += c->path.allocs;
		p->frees += c->path.frees;
		p->bytes_allocated += c->path.bytes_allocated;
		p->temporary += c->path.temporary;
		p->bad_frees += c->path.bad_frees;
		p->last_free_line = MAX (p->last_free_line, c->path.last_free_line);
		p->last_freed_born = MAX (p->last_freed_born, c->path.last_freed_born);
		if (a->compact_epoch != 0 && a->epoch == a->compact_epoch) {
			/* the peak is the previous file's: what each path held then */
			CLive *v = acct_live (a, pi);
			v->share = c->path.peak_share;
		}
	} else if (c->kind == MTA_COMPACT_THREAD) {
		CThread *t = &g_array_index (a->threads, CThread, acct_thread (a, c->thread.tid));
		t->valid = c->thread.valid;
		t->last_addr = c->thread.last_addr;
	}
}

/* ------------------------------------------------------------ the pass */

#define KEPT 1u

/* A line kept whose place comes from its line number: an allocation
 * decided on after the lines that follow it were written. */
typedef struct {
	uint64_t lineno;
	uint64_t text;             /* in the text store */
	int64_t tid;               /* its thread, -1: before any "# T" */
} Pending;

typedef struct {
	/* the script's bookkeeping (as shrink's): each live block's entry
	 * holds its line's text (size: a reference in texts) and thread
	 * (tid), its KEPT flag set when a duplicate of its address came */
	MtaScriptHash allocated;
	MtaTextStore texts;
	GArray *pending;           /* Pending: kept blocks freed */
	FILE *body;
	GString *head;             /* "# mtrec", "# compacted", the process header */
	GHashTable *header_seen;   /* header lines already in head */
	GHashTable *stacks_out;    /* stack ids written */
	GHashTable *objects_out;   /* object lines written since the last unload */
	uint64_t out_next;         /* number of the next line written; 0: unknown */
	uint32_t tid, out_tid;
	gboolean have_tid, have_out_tid;
	Acct full, kept;
	GHashTable *path_by_stack; /* int64 -> index + 1 */
	GArray *path_of_stack;     /* guint32 index + 1 by stack id, for ids below DENSE_STACKS */
	GHashTable *path_by_caller;/* char * -> index + 1 */
	GPtrArray *paths;          /* CPath *, by index */
	uint64_t events_in, events_out, lines;
	uint64_t first, last;      /* the parts read */
} Compact;

/* The recorder numbers stacks from 1 up: an array finds their paths, a
 * hash table the ids of a trace that does not. */
#define DENSE_STACKS (1 << 24)

static uint32_t
path_index (Compact *s, int64_t stack_id, MtaSpan caller, uint64_t lineno)
{
	gpointer v;
	GArray *dense = s->path_of_stack;
	if (stack_id >= 0 && stack_id < DENSE_STACKS) {
		if ((guint) stack_id < dense->len && g_array_index (dense, guint32, stack_id) != 0)
			return g_array_index (dense, guint32, stack_id) - 1;
	} else if (stack_id >= 0) {
		if ((v = g_hash_table_lookup (s->path_by_stack, &stack_id)) != NULL)
			return GPOINTER_TO_UINT (v) - 1;
	} else {
		g_autofree char *c = g_strndup (caller.p, caller.len);
		if ((v = g_hash_table_lookup (s->path_by_caller, c)) != NULL)
			return GPOINTER_TO_UINT (v) - 1;
	}
	CPath *p = g_new0 (CPath, 1);
	uint32_t i = s->paths->len;
	p->stack_id = stack_id;
	p->caller = g_strndup (caller.p, caller.len);
	g_ptr_array_add (s->paths, p);
	if (stack_id >= 0 && stack_id < DENSE_STACKS) {
		if ((guint) stack_id >= dense->len)
			g_array_set_size (dense, MAX ((guint) stack_id + 1, dense->len * 2));
		g_array_index (dense, guint32, stack_id) = i + 1;
	} else if (stack_id >= 0)
		g_hash_table_insert (s->path_by_stack, g_memdup2 (&stack_id, sizeof stack_id),
				     GUINT_TO_POINTER (i + 1));
	else
		g_hash_table_insert (s->path_by_caller, g_strdup (p->caller), GUINT_TO_POINTER (i + 1));
	acct_path (&s->full, i)->first_line = lineno;
	return i;
}

/* An allocation not decided on yet: its text held until its free. */
static void
store (Compact *s, const MtaScriptEvent *ev, const MtaLine *l)
{
	MtaLiveEntry *e = mta_script_hash_insert (&s->allocated, ev);
	e->seq = l->lineno;
	e->flags = 0;
	e->size = mta_text_put (&s->texts, l->text.p, l->text.len);
	e->tid = s->have_tid ? (int64_t) s->tid : -1;
}

static void
add_pending (Compact *s, const MtaLiveEntry *e)
{
	Pending p = { e->seq, e->size, e->tid };
	g_array_append_val (s->pending, p);
}

static gboolean
is_heap_key (const MtaScriptEvent *ev)
{
	return ev->op == '>' || (ev->key.len >= 2 && ev->key.p[0] == '0' && ev->key.p[1] == 'x');
}

static void
put (Compact *s, const char *p, size_t len, uint64_t lineno)
{
	if (s->out_next != lineno)
		fprintf (s->body, "# at %" PRIu64 "\n", lineno);
	fwrite (p, 1, len, s->body);
	fputc ('\n', s->body);
	s->out_next = lineno + 1;
}

/* A kept event, after the "# T" of its thread when the lines written so
 * far were another thread's: in the place of a dropped line (the "# T"
 * read was one). */
static void
put_event (Compact *s, const MtaLine *l)
{
	if (s->have_tid && (!s->have_out_tid || s->tid != s->out_tid)) {
		char buf[32];
		int n = g_snprintf (buf, sizeof buf, "# T %u", s->tid);
		put (s, buf, (size_t) n, l->lineno - 1);
		s->out_tid = s->tid;
		s->have_out_tid = TRUE;
	}
	put (s, l->text.p, l->text.len, l->lineno);
}

static gboolean
starts (const MtaLine *l, const char *prefix)
{
	size_t n = strlen (prefix);
	return l->text.len >= n && memcmp (l->text.p, prefix, n) == 0;
}

static gboolean
is_filler (const MtaLine *l)
{
	for (size_t i = 1; i < l->text.len; i++)
		if (l->text.p[i] != ' ' && l->text.p[i] != '\r')
			return FALSE;
	return TRUE;
}

static void
head_line (Compact *s, const MtaLine *l)
{
	/* the set owns the key: parts repeat the header, kept once */
	if (!g_hash_table_add (s->header_seen, g_bytes_new (l->text.p, l->text.len)))
		return;
	g_string_append_len (s->head, l->text.p, (gssize) l->text.len);
	g_string_append_c (s->head, '\n');
}

static gboolean
pass2_ext (Compact *s, const MtaLine *l, GError **error)
{
	MtaCompactSum c;

	if (!mta_compact_sum_parse (l, &c, error))
		return FALSE;
	if (c.kind != MTA_COMPACT_NOT) {
		/* a previous compacted file's: its counts join the full ones */
		uint32_t pi = 0;
		if (c.kind == MTA_COMPACT_PATH)
			pi = path_index (s, c.path.stack_id, c.path.caller, c.path.first_line);
		acct_add_sum (&s->full, &c, pi);
		return TRUE;
	}
	if (starts (l, "# T ")) {
		s->tid = (uint32_t) g_ascii_strtoull (l->text.p + 4, NULL, 10);
		s->have_tid = TRUE;
		s->full.cur = acct_thread (&s->full, s->tid);
	} else if (starts (l, "# stack ")) {
		int64_t id = g_ascii_strtoll (l->text.p + 8, NULL, 10);
		if (!g_hash_table_contains (s->stacks_out, &id)) {
			g_hash_table_add (s->stacks_out, g_memdup2 (&id, sizeof id));
			put (s, l->text.p, l->text.len, l->lineno);
		}
	} else if (starts (l, "# mtrec ") || starts (l, "# pid ") || starts (l, "# exe ") ||
		   starts (l, "# cmdline ") || starts (l, "# start ") || starts (l, "# depth ")) {
		head_line (s, l);
	} else if (starts (l, "# part ") || is_filler (l)) {
		/* the parts' own headers: the compacted file is one */
	} else if (starts (l, "# object ")) {
		/* every part repeats the objects loaded: one is enough */
		GBytes *b = g_bytes_new (l->text.p, l->text.len);
		if (g_hash_table_add (s->objects_out, b))
			put (s, l->text.p, l->text.len, l->lineno);
	} else {
		if (starts (l, "# unload "))
			g_hash_table_remove_all (s->objects_out);
		put (s, l->text.p, l->text.len, l->lineno);
	}
	return TRUE;
}

static uint32_t
kept_path (Compact *s, const MtaLine *l)
{
	return path_index (s, l->stack_id, l->caller, l->lineno);
}

/* One pass over the lines: what is kept for sure is written at once (in
 * the body, in order); an allocation waits in the table of live blocks
 * until its free (dropped with it unless a duplicate met it) or the end
 * (kept: live), and the body and those are merged by line number
 * (merge).  The two streaming passes this replaced (the first to find the
 * blocks a duplicate meets) read each part twice. */
static gboolean
pass_line (const MtaLine *l, gpointer data, GError **error)
{
	Compact *s = data;
	MtaScriptEvent ev;
	MtaLiveEntry *e;
	gboolean keep = FALSE;

	s->lines = l->lineno;
	if (l->kind == MTA_LINE_EXT)
		return pass2_ext (s, l, error);
	/* "# k" lines (kinds.h) are kept whole: the per-kind reports of the
	 * compacted file are the full trace's */
	if (l->kind == MTA_LINE_MARKER || l->kind == MTA_LINE_BAD || l->kind == MTA_LINE_TRACKED) {
		put (s, l->text.p, l->text.len, l->lineno);
		return TRUE;
	}
	if (l->kind != MTA_LINE_EVENT)
		return TRUE;
	s->events_in++;
	uint32_t pi = kept_path (s, l);
	acct_event (&s->full, l, pi, s->tid);

	mta_script_event (l, &ev);
	switch (ev.op) {
	case '+':
	case '>':
		if ((e = mta_script_hash_lookup (&s->allocated, &ev)) != NULL) {
			e->flags |= KEPT;    /* the block a duplicate meets stays */
			keep = TRUE;         /* and so does the duplicate */
		} else if (is_heap_key (&ev))
			store (s, &ev, l);
		break;
	case '-':
	case '<':
		if ((e = mta_script_hash_lookup (&s->allocated, &ev)) != NULL) {
			keep = (e->flags & KEPT) != 0;
			if (keep)
				add_pending (s, e);
			else
				mta_text_drop (&s->texts, e->size);
			mta_script_hash_remove (&s->allocated, &ev, e);
		} else
			keep = TRUE;         /* never allocated */
		break;
	default:
		break;
	}
	if (keep)
		put_event (s, l);
	return TRUE;
}

/* The blocks live at the end stay. */
static void
keep_live (const char *key, size_t len, const MtaLiveEntry *e, gpointer data)
{
	(void) key;
	(void) len;
	add_pending (data, e);
}

static FILE *open_body (const char *trace, GError **error);

static int
pending_cmp (const void *a, const void *b)
{
	uint64_t x = ((const Pending *) a)->lineno, y = ((const Pending *) b)->lineno;
	return x < y ? -1 : x > y;
}

/* Kept event TEXT at line LINENO of thread TID (-1: none), into the
 * merged body: after the "# T" of its thread when the lines written so far
 * were another thread's (as put_event); counted as the compacted file
 * will count it. */
static void
merge_event (Compact *s, const char *text, size_t len, uint64_t lineno, int64_t tid)
{
	MtaLine l;

	memset (&l, 0, sizeof l);
	mta_line_parse (&l, text, len);
	l.lineno = lineno;
	if (l.kind != MTA_LINE_EVENT) {
		put (s, text, len, lineno);
		return;
	}
	if (tid >= 0 && (!s->have_out_tid || (uint32_t) tid != s->out_tid)) {
		char buf[32];
		int n = g_snprintf (buf, sizeof buf, "# T %u", (uint32_t) tid);
		put (s, buf, (size_t) n, lineno - 1);
		s->out_tid = (uint32_t) tid;
		s->have_out_tid = TRUE;
	}
	put (s, text, len, lineno);
	s->events_out++;
	uint32_t t = tid >= 0 ? (uint32_t) tid : 0;
	s->kept.cur = acct_thread (&s->kept, t);
	acct_event (&s->kept, &l, path_index (s, l.stack_id, l.caller, lineno), t);
}

/* The pending lines before line number UPTO, into the merged body. */
static void
merge_pending (Compact *s, guint *next, uint64_t upto)
{
	while (*next < s->pending->len) {
		const Pending *p = &g_array_index (s->pending, Pending, *next);
		size_t len;
		if (p->lineno >= upto)
			break;
		const char *text = mta_text_get (&s->texts, p->text, &len);
		merge_event (s, text, len, p->lineno, p->tid);
		(*next)++;
	}
}

/* The body written in the pass and the pending lines, in the order of
 * their line numbers, into a new body: "# at" and "# T" lines written
 * anew for the merged order (the body's own say where its lines are and
 * whose its events are). */
static gboolean
merge (Compact *s, const char *trace, GError **error)
{
	FILE *in = s->body;
	g_autofree char *buf = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t next = 1;
	int64_t tid = -1;
	guint pi = 0;

	mta_script_hash_foreach (&s->allocated, keep_live, s);
	g_array_sort (s->pending, pending_cmp);
	if ((s->body = open_body (trace, error)) == NULL) {
		s->body = in;
		return FALSE;
	}
	rewind (in);
	s->out_next = 0;
	s->have_out_tid = FALSE;
	while ((n = getline (&buf, &cap, in)) > 0) {
		size_t len = (size_t) n - (buf[n - 1] == '\n');
		if (len > 5 && memcmp (buf, "# at ", 5) == 0) {
			next = g_ascii_strtoull (buf + 5, NULL, 10);
			continue;
		}
		uint64_t lineno = next++;
		if (len > 4 && memcmp (buf, "# T ", 4) == 0) {
			tid = (int64_t) g_ascii_strtoull (buf + 4, NULL, 10);
			continue;
		}
		merge_pending (s, &pi, lineno);
		if (buf[0] == '#' || buf[0] == '=')
			put (s, buf, len, lineno);
		else
			merge_event (s, buf, len, lineno, tid);
	}
	merge_pending (s, &pi, UINT64_MAX);
	if (ferror (in)) {
		fclose (in);
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot read back the compacted body");
		return FALSE;
	}
	fclose (in);
	return TRUE;
}

/* ------------------------------------------------------------ writing */

static uint64_t
minus (uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/* The summary lines: what the full count has and the kept lines do not. */
static void
write_sums (Compact *s, GString *out)
{
	MtaCompactRun r = s->full.run, k = s->kept.run;
	r.events = minus (r.events, k.events);
	r.allocs = minus (r.allocs, k.allocs);
	r.frees = minus (r.frees, k.frees);
	r.reallocs = minus (r.reallocs, k.reallocs);
	r.failed_allocs = minus (r.failed_allocs, k.failed_allocs);
	r.duplicates = minus (r.duplicates, k.duplicates);
	r.bytes_allocated = minus (r.bytes_allocated, k.bytes_allocated);
	r.temporary = minus (r.temporary, k.temporary);
	r.bad_frees = minus (r.bad_frees, k.bad_frees);
	mta_compact_format_run (out, &r);
	for (guint i = 0; i < s->paths->len; i++) {
		const CPath *cp = s->paths->pdata[i];
		MtaCompactPath p = *acct_path (&s->full, i);
		const MtaCompactPath *kp = acct_path (&s->kept, i);
		p.stack_id = cp->stack_id;
		p.caller.p = cp->caller;
		p.caller.len = strlen (cp->caller);
		p.allocs = minus (p.allocs, kp->allocs);
		p.frees = minus (p.frees, kp->frees);
		p.bytes_allocated = minus (p.bytes_allocated, kp->bytes_allocated);
		p.temporary = minus (p.temporary, kp->temporary);
		p.bad_frees = minus (p.bad_frees, kp->bad_frees);
		const CLive *v = i < s->full.lives->len ? &g_array_index (s->full.lives, CLive, i) : NULL;
		p.peak_share = v == NULL ? 0 : v->mark == s->full.epoch ? v->share : v->live;
		mta_compact_format_path (out, &p);
	}
}

/* The threads' latest allocations, as the full trace leaves them. */
static void
write_threads (Compact *s)
{
	GHashTableIter it;
	gpointer k, v;
	g_autoptr (GString) out = g_string_new (NULL);

	g_hash_table_iter_init (&it, s->full.thread_index);
	while (g_hash_table_iter_next (&it, &k, &v)) {
		const CThread *t = &g_array_index (s->full.threads, CThread, GPOINTER_TO_UINT (v) - 1);
		MtaCompactThread ct = { GPOINTER_TO_UINT (k), t->valid, t->last_addr };
		mta_compact_format_thread (out, &ct);
	}
	fwrite (out->str, 1, out->len, s->body);
	fprintf (s->body, "# at %" PRIu64 "\n", s->lines + 1);
}

static gboolean
io_error (const char *path, int e, GError **error)
{
	g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write '%s': %s", path,
		     g_strerror (e));
	return FALSE;
}

/* A hidden name beside TRACE, not matched by 'TRACE*'. */
static char *
temp_name (const char *trace, const char *what)
{
	g_autofree char *dir = g_path_get_dirname (trace);
	g_autofree char *base = g_path_get_basename (trace);
	g_autofree char *name = g_strdup_printf (".%s.compact.%s", base, what);
	return g_build_filename (dir, name, NULL);
}

/* HEAD then the body, into TMP, renamed to OUT. */
static gboolean
write_out (Compact *s, const char *trace, const char *out, GError **error)
{
	g_autofree char *tmp = temp_name (trace, "tmp");
	char buf[1 << 16];
	size_t n;
	int e = 0;

	unlink (tmp);
	int fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return io_error (tmp, errno, error);
	FILE *f = fdopen (fd, "we");
	if (f == NULL) {
		e = errno;
		close (fd);
		unlink (tmp);
		return io_error (tmp, e, error);
	}
	guint oom = mta_oom_add (mta_oom_unlink, tmp);
	fwrite (s->head->str, 1, s->head->len, f);
	rewind (s->body);
	while ((n = fread (buf, 1, sizeof buf, s->body)) > 0)
		fwrite (buf, 1, n, f);
	if (ferror (s->body))
		e = EIO;
	if (fflush (f) != 0 && e == 0)
		e = errno;
	if (e == 0 && fsync (fileno (f)) != 0)
		e = errno;
	if (fclose (f) != 0 && e == 0)
		e = errno;
	if (e == 0 && rename (tmp, out) != 0)
		e = errno;
	mta_oom_remove (oom);
	if (e != 0) {
		unlink (tmp);
		return io_error (out, e, error);
	}
	return TRUE;
}

static void
cpath_free (gpointer p)
{
	CPath *cp = p;
	g_free (cp->caller);
	g_free (cp);
}

static void
compact_init (Compact *s)
{
	memset (s, 0, sizeof *s);
	mta_script_hash_init (&s->allocated);
	mta_text_init (&s->texts);
	s->pending = g_array_new (FALSE, FALSE, sizeof (Pending));
	s->head = g_string_new (NULL);
	s->header_seen = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
						(GDestroyNotify) g_bytes_unref, NULL);
	s->objects_out = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
						(GDestroyNotify) g_bytes_unref, NULL);
	s->stacks_out = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	s->path_by_stack = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	s->path_by_caller = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
	s->path_of_stack = g_array_new (FALSE, TRUE, sizeof (guint32));
	s->paths = g_ptr_array_new_with_free_func (cpath_free);
	acct_init (&s->full);
	acct_init (&s->kept);
}

static void
compact_release (Compact *s)
{
	mta_script_hash_release (&s->allocated);
	mta_text_release (&s->texts);
	g_array_free (s->pending, TRUE);
	g_string_free (s->head, TRUE);
	g_hash_table_destroy (s->header_seen);
	g_hash_table_destroy (s->objects_out);
	g_hash_table_destroy (s->stacks_out);
	g_hash_table_destroy (s->path_by_stack);
	g_hash_table_destroy (s->path_by_caller);
	g_array_free (s->path_of_stack, TRUE);
	g_ptr_array_free (s->paths, TRUE);
	acct_release (&s->full);
	acct_release (&s->kept);
	if (s->body != NULL)
		fclose (s->body);
}

static gboolean
read_all (MtaLineFunc func, Compact *s, char **files, guint n, GError **error)
{
	g_autoptr (MtaReader) reader = mta_reader_new (func, s);
	mta_reader_set_progress (reader, TRUE);
	for (guint i = 0; i < n; i++)
		if (!mta_reader_read_file (reader, files[i], error))
			return FALSE;
	return TRUE;
}

/* An unlinked file beside TRACE for the body: on the trace's disk, which
 * is where the space is planned, and gone whatever happens. */
static FILE *
open_body (const char *trace, GError **error)
{
	g_autofree char *name = temp_name (trace, "body");
	unlink (name);
	int fd = open (name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		io_error (name, errno, error);
		return NULL;
	}
	unlink (name);
	FILE *f = fdopen (fd, "w+e");
	if (f == NULL) {
		io_error (name, errno, error);
		close (fd);
	}
	return f;
}

/* Fold FILES (the previous compacted file, if any, then parts FIRST..LAST)
 * into OUT. */
static gboolean
fold (const char *trace, const char *out, GPtrArray *files, uint64_t last, GError **error)
{
	Compact s;
	gboolean ok = FALSE;
	g_autoptr (GString) head = g_string_new ("# mtrec 1\n");

	compact_init (&s);
	char **f = (char **) files->pdata;
	if ((s.body = open_body (trace, error)) == NULL)
		goto done;
	if (!read_all (pass_line, &s, f, files->len, error) || !merge (&s, trace, error))
		goto done;
	write_threads (&s);
	/* the head: "# mtrec 1", what it holds, the process, the sums */
	g_string_append_printf (head, "# compacted 1 %" PRIu64 "\n", last);
	const char *h = s.head->str;
	if (g_str_has_prefix (h, "# mtrec "))
		h = strchr (h, '\n') + 1;
	g_string_append (head, h);
	write_sums (&s, head);
	g_string_assign (s.head, head->str);
	if (!write_out (&s, trace, out, error))
		goto done;
	if (!opt_quiet) {
		struct stat st;
		printf ("%s: parts 1-%" PRIu64 ", %" PRIu64 " of %" PRIu64 " events kept, %jd bytes\n",
			out, last, s.events_out, s.events_in,
			stat (out, &st) == 0 ? (intmax_t) st.st_size : (intmax_t) -1);
		fflush (stdout);
	}
	ok = TRUE;
done:
	compact_release (&s);
	return ok;
}

/* ------------------------------------------------------------ passes */

/* The part LAST a compacted file holds (0: no such file). */
static gboolean
compacted_upto (const char *out, uint64_t *last, GError **error)
{
	char buf[256];
	*last = 0;
	FILE *f = fopen (out, "re");
	if (f == NULL) {
		if (errno == ENOENT)
			return TRUE;
		int e = errno;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot read '%s': %s",
			     out, g_strerror (e));
		return FALSE;
	}
	for (int i = 0; i < 2 && fgets (buf, sizeof buf, f) != NULL; i++) {
		MtaHeader h;
		if (mta_header_parse (buf, strlen (buf), &h) && h.kind == MTA_HEADER_COMPACTED) {
			*last = h.last;
			break;
		}
	}
	fclose (f);
	if (*last == 0) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			     "'%s' is not a compacted trace (no '# compacted' line at its top)", out);
		return FALSE;
	}
	return TRUE;
}

/* The writer's pid from the first header found, -1: none yet; *START
 * its "# start" (to free; NULL: not known). */
static int64_t
writer_pid (const char *trace, const char *out, char **start)
{
	const char *files[] = { out, trace };
	*start = NULL;
	for (size_t i = 0; i < G_N_ELEMENTS (files); i++) {
		g_autofree char *pid = NULL;
		if (access (files[i], F_OK) == 0 && mta_parts_process (files[i], &pid, start, NULL) &&
		    pid != NULL)
			return g_ascii_strtoll (pid, NULL, 10);
		g_clear_pointer (start, g_free);
	}
	return opt_pid > 0 ? opt_pid : -1;
}

/* Parts FROM..TO that are held by OUT: gone. */
static gboolean
delete_parts (const char *trace, uint64_t from, uint64_t to, MtaWarnFunc warn)
{
	for (uint64_t n = from; n <= to; n++) {
		g_autofree char *p = mta_compact_part_path (trace, n);
		if (unlink (p) != 0 && errno != ENOENT && warn != NULL) {
			g_autofree char *m = g_strdup_printf ("cannot delete '%s': %s", p, g_strerror (errno));
			warn (m, NULL);
		}
	}
	return TRUE;
}

/* One pass: fold what is complete.  *FINISHED: the writer has exited and
 * every part is folded. */
static gboolean
compact_pass (const char *trace, MtaWarnFunc warn, gboolean *finished, GError **error)
{
	g_autofree char *out = g_strconcat (trace, ".compact", NULL);
	g_autofree char *start = NULL;
	uint64_t done, upto;
	int64_t pid = writer_pid (trace, out, &start);
	gboolean exited = mta_compact_process_exited (pid, start);

	*finished = FALSE;
	if (!compacted_upto (out, &done, error))
		return FALSE;
	if (opt_delete && done > 0)
		delete_parts (trace, 1, done, warn);   /* a pass killed before it deleted them */
	upto = mta_compact_complete_upto (trace, done + 1, pid, exited);
	if (upto > done) {
		g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
		if (done > 0)
			g_ptr_array_add (files, g_strdup (out));
		for (uint64_t n = done + 1; n <= upto; n++)
			g_ptr_array_add (files, mta_compact_part_path (trace, n));
		int n = (int) files->len;
		for (guint i = 0; i < files->len; i++)
			if (!mta_input_check_readable (files->pdata[i], error))
				return FALSE;
		/* one process, parts in order: the analyses' own check */
		if (!mta_parts_order_prefix ((char **) files->pdata, &n, warn, NULL, error))
			return FALSE;
		if (!fold (trace, out, files, upto, error))
			return FALSE;
		if (opt_delete)
			delete_parts (trace, done + 1, upto, warn);
		done = upto;
	}
	if (exited) {
		g_autofree char *next = mta_compact_part_path (trace, done + 1);
		*finished = access (next, F_OK) != 0;
	} else if (!opt_follow && upto == done && warn != NULL) {
		/* a pass that folds nothing says why, not a silent success */
		g_autofree char *part = mta_compact_part_path (trace, done + 1);
		g_autofree char *m = g_strdup_printf (
			"'%s' is still being written by process %" PRId64
			": nothing compacted yet (--follow compacts its parts as they complete)",
			part, pid);
		warn (m, NULL);
	}
	return TRUE;
}

gboolean
mta_compact (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error)
{
	gboolean finished = FALSE;

	*status = 0;
	if (argc != 1) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     argc < 1 ? "compact needs a trace" : "compact takes one TRACE (part 1's name)");
		return FALSE;
	}
	const char *trace = argv[0];
	g_autofree char *out = g_strconcat (trace, ".compact", NULL);
	for (;;) {
		if (access (trace, F_OK) == 0 || access (out, F_OK) == 0) {
			if (!compact_pass (trace, warn, &finished, error))
				return FALSE;
		} else if (!opt_follow) {
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
				     "cannot read '%s': %s", trace, g_strerror (ENOENT));
			return FALSE;
		} else
			finished = mta_compact_process_exited (opt_pid > 0 ? opt_pid : -1, NULL);
		if (!opt_follow || finished)
			return TRUE;
		g_usleep (G_USEC_PER_SEC / 10);
	}
}
