/* lineage.c -- forks: the heap a child inherited, the blocks a parent
 * handed over (lineage.h; the lines are in share/trace-format.md).
 *
 * The parent's trace is read only up to the fork's mark, with the script's
 * bookkeeping of blocks (live from '+' or '>' to '-' or '<'), and that
 * live set is what the child starts from: a fork copies the heap, nothing
 * else.  The blocks keep the caller and the stack the parent recorded, so
 * a leak the child inherited is charged to the line that allocated it.
 * The stacks get ids of their own in the child's run, above any id a
 * recorder hands out (ids restart at 0 in each process). */
#include "lineage.h"
#include "trace-header.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "live-table.h"

#define MAX_GENERATIONS 32           /* parents of parents read, at most */
#define STACK_ID_BASE (UINT64_C(1) << 48)
#define UNRESOLVED (UINT64_C(1) << 63) /* a live entry's seq: stack id not yet defined */

/* When a process ended, as far as its trace says: "# start" (the wall
 * clock when the file was opened) plus the last "# time" (since then).
 * A recorder writes one just before the "= End" of the exit; a trace that
 * has no "= End" (the process left by _exit, as daemon(3)'s parent does,
 * or was killed, or still runs) ended some time after its last line. */
typedef struct {
	int64_t start_ns;            /* wall clock, ns since 1970; -1: unknown */
	uint64_t last_ns;            /* the last "# time" */
	gboolean ended;              /* its last "=" line is "= End" */
	gboolean exact;              /* a "# time" came after its last event: the moment of its end */
	gboolean exec;               /* "# exec", no event of its thread after: a new image replaced the heap */
	gboolean timed;              /* a "# time", no event of its thread since */
	uint64_t tid;                /* the thread of the lines ("# T") */
	uint64_t time_tid, exec_tid; /* the thread that wrote the last "# time", "# exec" */
} MtaLineageEnd;

typedef struct {
	uint64_t mark, line;
} ForkLine;

struct MtaLineage {
	MtaLineFunc func;
	gpointer data;
	MtaLineageSayFunc say;
	gpointer say_data;
	char *child_trace;
	char *parent_opt;            /* --parent */
	MtaLineageInfo info;
	MtaStrtab strings;           /* callers and stacks' frames */
	char **traces;               /* the run's, read again for a hand-over */
	/* What the child inherited (seq 0), then, for a hand-over, the blocks
	 * live at the end of the run (seq: the line that allocated it). */
	MtaLiveTable live;
	gboolean started;            /* an event or "=" line went by */
	gboolean stopped;            /* "# stopped": blocks live then are not the end */
	uint64_t last_fork_line;
	GArray *fork_lines;          /* ForkLine, in order: every "# fork" */
	GHashTable *kids;            /* pid (gint64 *) -> GPtrArray of ChildTrace: traces naming it */
	int64_t pid;                 /* its own "# pid", -1: none */
	MtaLineageEnd end;           /* when this process ended, as far as its trace says */
	uint64_t last_lineno;
	const char *last_source;
};

/* ------------------------------------------------------------ parsing */

static gboolean
span_u64 (MtaSpan s, uint64_t *v)
{
	uint64_t n = 0;

	if (s.len == 0 || s.len > 19)
		return FALSE;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return FALSE;
		n = n * 10 + (uint64_t) (s.p[i] - '0');
	}
	*v = n;
	return TRUE;
}

/* The text of L after its column N, leading blanks skipped: a REST field. */
static MtaSpan
rest_after (const MtaLine *l, int n)
{
	const char *p = l->cols[n].p + l->cols[n].len, *end = l->text.p + l->text.len;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	return (MtaSpan) { p, (size_t) (end - p) };
}

/* "# WORD ...", the word as the reader classified it */
static gboolean
ext_is (const MtaLine *l, MtaWord word, int min_cols)
{
	return l->kind == MTA_LINE_EXT && l->word == word && l->ncols >= min_cols;
}

/* "# parent PID MARK PATH" */
static gboolean
parse_parent (const MtaLine *l, int64_t *pid, uint64_t *mark, char **path)
{
	MtaHeader h;

	if (!mta_header_parse (l->text.p, l->text.len, &h) || h.kind != MTA_HEADER_PARENT)
		return FALSE;
	*pid = h.pid;
	*mark = h.n;
	*path = mta_header_dup (h.rest);
	return TRUE;
}

/* "# pid PID [PPID]": PID, or -1. */
static int64_t
parse_pid (const MtaLine *l)
{
	MtaHeader h;

	return mta_header_parse (l->text.p, l->text.len, &h) && h.kind == MTA_HEADER_PID ? h.pid : -1;
}

/* ------------------------------------------------------------ ends */


/* "SEC.NSEC" in ns, or -1. */
static int64_t
parse_start (MtaSpan s)
{
	uint64_t sec = 0, ns = 0;
	size_t i = 0, d = 0;

	for (; i < s.len && s.p[i] >= '0' && s.p[i] <= '9' && i < 12; i++)
		sec = sec * 10 + (uint64_t) (s.p[i] - '0');
	if (i == 0 || i >= s.len || s.p[i] != '.')
		return -1;
	for (i++; i < s.len && d < 9 && s.p[i] >= '0' && s.p[i] <= '9'; i++, d++)
		ns = ns * 10 + (uint64_t) (s.p[i] - '0');
	for (; d < 9; d++)
		ns *= 10;
	return (int64_t) (sec * 1000000000u + ns);
}

static void
end_time (MtaLineageEnd *e, uint64_t ns)
{
	if (ns > e->last_ns)
		e->last_ns = ns;
	e->timed = TRUE;
	e->time_tid = e->tid;
}

/* Any line of the trace, in order: KIND, and whether it is "= End".  The
 * exit's "# time" and an "# exec" are written by the thread that exits or
 * execs: another thread's event in a chunk of its own after them does not
 * make them stale (only one of that thread's does). */
static void
end_line (MtaLineageEnd *e, MtaLineKind kind, gboolean is_end)
{
	if (kind == MTA_LINE_EVENT || kind == MTA_LINE_TRACKED) {
		if (e->tid == e->time_tid)
			e->timed = FALSE;
		if (e->tid == e->exec_tid)
			e->exec = FALSE;
	} else if (kind == MTA_LINE_MARKER) {
		e->ended = is_end;
		e->exact = is_end && e->timed;
		if (is_end)
			e->exec = FALSE;
	}
}

/* The last moment the trace shows its process alive (wall clock, ns). */
static int64_t
end_last (const MtaLineageEnd *e)
{
	return e->start_ns + (int64_t) e->last_ns;
}

/* The trace's own lines that say when its process ended. */
static void
end_feed (MtaLineageEnd *e, const MtaLine *l)
{
	uint64_t ns;

	end_line (e, l->kind, l->kind == MTA_LINE_MARKER && l->ncols >= 2 && mta_span_eq (l->cols[1], "End"));
	if (ext_is (l, MTA_WORD_TIME, 3) && span_u64 (l->cols[2], &ns))
		end_time (e, ns);
	else if (ext_is (l, MTA_WORD_T, 3) && span_u64 (l->cols[2], &ns))
		e->tid = ns;
	else if (ext_is (l, MTA_WORD_EXEC, 2)) {
		e->exec = TRUE;
		e->exec_tid = e->tid;
	}
}

/* ------------------------------------------------------------ the parent's heap */

typedef struct {
	MtaLineage *lg;
	const char *path;
	int generation;
	uint64_t mark;
	int64_t pid;                 /* its "# pid", -1 until seen */
	MtaLiveTable live;           /* caller: string id; seq: frames' string id, or UNRESOLVED | id */
	GHashTable *stacks;          /* this trace's stack id (gint64 *) -> frames' string id + 1 */
	gboolean started, found;
} ParentRead;

static gboolean read_parent (MtaLineage *lg, const char *path, uint64_t mark, int64_t want_pid,
			     int generation, MtaLiveTable *out);

G_DEFINE_QUARK (mta-lineage-stop, stop)

/* PATH, or PATH compressed since (the reader takes either), or NULL. */
static char *
existing (const char *path)
{
	static const char *const suffixes[] = { "", ".gz", ".zst", ".xz" };

	for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++) {
		g_autofree char *p = g_strconcat (path, suffixes[i], NULL);
		if (g_file_test (p, G_FILE_TEST_IS_REGULAR))
			return g_steal_pointer (&p);
	}
	return NULL;
}

/* The trace named in a "# parent" line: as named, else beside the
 * child's trace (traces copied elsewhere together), else NULL. */
static char *
find_trace (MtaLineage *lg, const char *named)
{
	g_autofree char *dir = NULL, *base = NULL, *beside = NULL;
	char *found = existing (named);

	if (found != NULL)
		return found;
	dir = g_path_get_dirname (lg->child_trace ? lg->child_trace : ".");
	base = g_path_get_basename (named);
	beside = g_build_filename (dir, base, NULL);
	return existing (beside);
}

static void
say (MtaLineage *lg, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

static void
say (MtaLineage *lg, const char *fmt, ...)
{
	va_list ap;
	g_autofree char *msg = NULL;

	va_start (ap, fmt);
	msg = g_strdup_vprintf (fmt, ap);
	va_end (ap);
	if (lg->say)
		lg->say (msg, lg->say_data);
}

/* A trace that is itself a forked child's starts from its parent's heap. */
static void
seed_from_parent (ParentRead *pr, const MtaLine *l)
{
	int64_t pid;
	uint64_t mark;
	g_autofree char *named = NULL, *found = NULL;

	if (!parse_parent (l, &pid, &mark, &named))
		return;
	if (pr->generation + 1 >= MAX_GENERATIONS) {
		say (pr->lg, "warning: '%s': more than %d generations of forks; not reading further back",
		     pr->path, MAX_GENERATIONS);
		return;
	}
	found = find_trace (pr->lg, named);
	if (found == NULL) {
		say (pr->lg, "warning: '%s' names its parent's trace '%s', which was not found: "
		     "the blocks it inherited are left out", pr->path, named);
		return;
	}
	read_parent (pr->lg, found, mark, pid, pr->generation + 1, &pr->live);
}

static void
parent_ext (ParentRead *pr, const MtaLine *l)
{
	uint64_t v;

	if (ext_is (l, MTA_WORD_PID, 3) && pr->pid < 0)
		pr->pid = parse_pid (l);
	else if (ext_is (l, MTA_WORD_PARENT, 5) && !pr->started)
		seed_from_parent (pr, l);
	else if (ext_is (l, MTA_WORD_STACK, 3) && span_u64 (l->cols[2], &v)) {
		MtaSpan frames = rest_after (l, 2);
		gint64 id = (gint64) v;
		if (!g_hash_table_contains (pr->stacks, &id)) {
			uint32_t s = mta_strtab_intern (&pr->lg->strings, frames.p, frames.len);
			g_hash_table_insert (pr->stacks, g_memdup2 (&id, sizeof id), GUINT_TO_POINTER (s + 1));
		}
	}
}

static gboolean
parent_line (const MtaLine *l, gpointer data, GError **error)
{
	ParentRead *pr = data;
	uint64_t mark;

	if (l->kind == MTA_LINE_EXT) {
		if (ext_is (l, MTA_WORD_FORK, 3) && span_u64 (l->cols[2], &mark) && mark == pr->mark) {
			pr->found = TRUE;
			g_set_error_literal (error, stop_quark (), 0, "found");
			return FALSE;
		}
		parent_ext (pr, l);
		return TRUE;
	}
	if (l->kind == MTA_LINE_MARKER)
		pr->started = TRUE;
	if (l->kind != MTA_LINE_EVENT)
		return TRUE;
	pr->started = TRUE;
	if ((l->op == '+' || l->op == '>') && l->addr != 0 && mta_live_lookup (&pr->live, l->addr) == NULL) {
		MtaLiveEntry *e = mta_live_insert (&pr->live, l->addr);
		e->size = l->size;
		e->caller = mta_strtab_intern (&pr->lg->strings, l->caller.p, l->caller.len);
		e->seq = l->stack_id >= 0 ? UNRESOLVED | (uint64_t) l->stack_id : 0;
	} else if (l->op == '-' || l->op == '<') {
		mta_live_remove (&pr->live, l->addr);
	}
	return TRUE;
}

/* Stack ids of this trace to the frames' string ids (0: no stack). */
static void
resolve_stacks (ParentRead *pr)
{
	MtaLiveEntry *e;

	for (size_t i = 0; i <= pr->live.mask; i++) {
		e = &pr->live.slots[i];
		if (!e->used || !(e->seq & UNRESOLVED))
			continue;
		gint64 id = (gint64) (e->seq & ~UNRESOLVED);
		e->seq = GPOINTER_TO_UINT (g_hash_table_lookup (pr->stacks, &id));
		if (e->seq)
			e->seq--;
	}
}

/* The parts of the trace whose part 1 is PATH: PATH, PATH.part2, ... */
static gboolean
read_parts (MtaReader *reader, const char *path, GError **error)
{
	if (!mta_reader_read_file (reader, path, error))
		return FALSE;
	for (unsigned n = 2;; n++) {
		g_autofree char *part = g_strdup_printf ("%s.part%u", path, n);
		if (!g_file_test (part, G_FILE_TEST_IS_REGULAR))
			return TRUE;
		if (!mta_reader_read_file (reader, part, error))
			return FALSE;
	}
}

/* Fill OUT (empty) with the blocks live at "# fork MARK" in the trace
 * PATH of process WANT_PID; FALSE, having said why, when that cannot be
 * known. */
static gboolean
read_parent (MtaLineage *lg, const char *path, uint64_t mark, int64_t want_pid, int generation,
	     MtaLiveTable *out)
{
	ParentRead pr = { .lg = lg, .path = path, .generation = generation, .mark = mark, .pid = -1 };
	g_autoptr (GError) error = NULL;
	gboolean ok;

	mta_live_init (&pr.live);
	pr.stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	MtaReader *reader = mta_reader_new (parent_line, &pr);
	ok = read_parts (reader, path, &error);
	mta_reader_free (reader);
	if (!ok && !g_error_matches (error, stop_quark (), 0))
		say (lg, "warning: cannot read the parent's trace '%s': %s; the blocks it handed "
		     "to its child are left out", path, error->message);
	else if (want_pid >= 0 && pr.pid != want_pid)
		say (lg, "warning: '%s' is not the trace of process %" G_GINT64_FORMAT
		     " (it is of %" G_GINT64_FORMAT "): not read as its parent's", path, want_pid, pr.pid);
	else if (!pr.found)
		say (lg, "warning: the parent's trace '%s' has no '# fork %" G_GUINT64_FORMAT "' line "
		     "(it was cut short, or is of another run): the blocks the child inherited are "
		     "left out", path, mark);
	ok = pr.found && (want_pid < 0 || pr.pid == want_pid);
	if (ok) {
		resolve_stacks (&pr);
		mta_live_release (out);
		*out = pr.live;
	} else {
		mta_live_release (&pr.live);
	}
	g_hash_table_destroy (pr.stacks);
	return ok;
}

/* ------------------------------------------------------------ lines of our own */

static gboolean
emit (MtaLineage *lg, const char *text, size_t len, uint64_t lineno, const char *source, GError **error)
{
	MtaLine l;

	mta_line_parse (&l, text, len);
	l.lineno = lineno;
	l.source = source;
	l.source_lineno = 0;
	return lg->func (&l, lg->data, error);
}

static int
by_addr (const void *a, const void *b)
{
	const MtaLiveEntry *x = *(MtaLiveEntry *const *) a, *y = *(MtaLiveEntry *const *) b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The live entries of T, by address (the order the script prints). */
static GPtrArray *
sorted_entries (const MtaLiveTable *t)
{
	GPtrArray *a = g_ptr_array_sized_new ((guint) t->count);
	const MtaLiveEntry *e;

	for (size_t i = 0; mta_live_next (t, &i, &e);)
		g_ptr_array_add (a, (gpointer) e);
	qsort (a->pdata, a->len, sizeof (gpointer), by_addr);
	return a;
}

/* The inherited blocks, as '+' lines (and the "# stack" lines they use),
 * just before line BEFORE. */
static gboolean
inject_inherited (MtaLineage *lg, const MtaLiveTable *inherited, const MtaLine *before, GError **error)
{
	g_autoptr (GPtrArray) blocks = sorted_entries (inherited);
	g_autoptr (GHashTable) defined = g_hash_table_new (NULL, NULL);
	g_autoptr (GString) s = g_string_new (NULL);
	uint64_t lineno = before->lineno > 1 ? before->lineno - 1 : 1;
	const char *source = lg->info.parent_trace;

	for (guint i = 0; i < blocks->len; i++) {
		const MtaLiveEntry *e = blocks->pdata[i];
		if (e->seq == 0 || g_hash_table_contains (defined, GSIZE_TO_POINTER (e->seq)))
			continue;
		g_hash_table_add (defined, GSIZE_TO_POINTER (e->seq));
		g_string_printf (s, "# stack %" G_GUINT64_FORMAT " %s", STACK_ID_BASE + e->seq,
				 mta_strtab_get (&lg->strings, (uint32_t) e->seq));
		if (!emit (lg, s->str, s->len, lineno, source, error))
			return FALSE;
	}
	for (guint i = 0; i < blocks->len; i++) {
		const MtaLiveEntry *e = blocks->pdata[i];
		const char *caller = mta_strtab_get (&lg->strings, e->caller);
		g_string_truncate (s, 0);
		if (*caller)
			g_string_append_printf (s, "@ %s ", caller);
		/* %p and %#lx, as glibc writes them */
		g_string_append_printf (s, "+ 0x%" PRIx64 " %#" PRIx64, e->addr, e->size);
		if (e->seq)
			g_string_append_printf (s, " s=%" G_GUINT64_FORMAT, STACK_ID_BASE + e->seq);
		if (!emit (lg, s->str, s->len, lineno, source, error))
			return FALSE;
		lg->info.inherited_blocks++;
		lg->info.inherited_bytes += e->size;
		MtaLiveEntry *mine = mta_live_insert (&lg->live, e->addr);
		mine->size = e->size;
		mine->seq = 0;
	}
	return TRUE;
}

/* The child's header named its parent: read the parent's heap at the
 * fork, and hand it to the report before line L. */
static gboolean
start_child (MtaLineage *lg, const MtaLine *l, GError **error)
{
	MtaLiveTable inherited;
	gboolean ok = TRUE;
	char *path;

	if (lg->info.parent_pid < 0 && lg->parent_opt == NULL)
		return TRUE;
	if (lg->info.parent_pid < 0) {
		say (lg, "warning: '%s' is not a forked child's trace (no '# parent' line): "
		     "--parent '%s' is not used", lg->child_trace, lg->parent_opt);
		return TRUE;
	}
	path = lg->parent_opt ? g_strdup (lg->parent_opt) : find_trace (lg, lg->info.parent_trace);
	if (path == NULL) {
		say (lg, "note: '%s' is the trace of a forked child of process %" G_GINT64_FORMAT
		     ", whose trace '%s' was not found: the blocks the child inherited are not known, "
		     "its frees of them show as frees of memory never allocated (give the parent's "
		     "trace with --parent FILE)", lg->child_trace, lg->info.parent_pid, lg->info.parent_trace);
		g_clear_pointer (&lg->info.parent_trace, g_free);
		return TRUE;
	}
	g_free (lg->info.parent_trace);
	lg->info.parent_trace = path;
	mta_live_init (&inherited);
	if (read_parent (lg, path, lg->info.parent_mark, lg->info.parent_pid, 1, &inherited))
		ok = inject_inherited (lg, &inherited, l, error);
	else
		g_clear_pointer (&lg->info.parent_trace, g_free);
	mta_live_release (&inherited);
	if (ok && lg->info.parent_trace != NULL)
		say (lg, "note: '%s' starts from the %" G_GUINT64_FORMAT " blocks (%" G_GUINT64_FORMAT
		     " bytes) its parent, process %" G_GINT64_FORMAT ", had allocated at its fork "
		     "(read from '%s')", lg->child_trace, lg->info.inherited_blocks,
		     lg->info.inherited_bytes, lg->info.parent_pid, lg->info.parent_trace);
	return ok;
}

/* ------------------------------------------------------------ the filter */

static void
own_ext (MtaLineage *lg, const MtaLine *l)
{
	uint64_t mark, pid;

	if (!lg->started && lg->info.parent_pid < 0 && ext_is (l, MTA_WORD_PARENT, 5)) {
		char *path = NULL;
		if (parse_parent (l, &lg->info.parent_pid, &lg->info.parent_mark, &path))
			lg->info.parent_trace = path;
	} else if (ext_is (l, MTA_WORD_FORK, 3) && span_u64 (l->cols[2], &mark)) {
		lg->info.forks++;
		lg->last_fork_line = l->lineno;
		lg->info.handed_mark = mark;
		g_array_append_val (lg->fork_lines, ((ForkLine) { mark, l->lineno }));
		lg->info.handed_to_pid = l->ncols >= 4 && span_u64 (l->cols[3], &pid) ? (int64_t) pid : 0;
	} else if (ext_is (l, MTA_WORD_PID, 3) && lg->pid < 0) {
		lg->pid = parse_pid (l);
	} else if (ext_is (l, MTA_WORD_STOPPED, 2)) {
		lg->stopped = TRUE;
	} else if (ext_is (l, MTA_WORD_START, 3) && lg->end.start_ns < 0) {
		lg->end.start_ns = parse_start (l->cols[2]);
	}
}

/* The second reading, of a run that forked: the script's bookkeeping of
 * its blocks, from what it inherited. */
static gboolean
own_line (const MtaLine *l, gpointer data, GError **error)
{
	MtaLiveTable *live = data;

	(void) error;
	if (l->kind != MTA_LINE_EVENT)
		return TRUE;
	if ((l->op == '+' || l->op == '>') && l->addr != 0) {
		if (mta_live_lookup (live, l->addr) == NULL) {
			MtaLiveEntry *e = mta_live_insert (live, l->addr);
			e->size = l->size;
			e->seq = l->lineno;
		}
	} else if (l->op == '-' || l->op == '<') {
		mta_live_remove (live, l->addr);
	}
	return TRUE;
}

/* The blocks live at the end of the run, into lg->live.  The run is read
 * a second time, and only when it forked: the filter keeps no table of
 * its own while a report reads (most traces never fork). */
static gboolean
read_own_blocks (MtaLineage *lg)
{
	g_autoptr (GError) error = NULL;
	MtaReader *reader;
	gboolean ok = TRUE;

	for (char **t = lg->traces; t && *t; t++)
		if (strcmp (*t, "-") == 0) {
			say (lg, "note: a trace read from standard input is not read again: the "
			     "blocks its process had at its last fork are reported as its leaks");
			return FALSE;
		}
	reader = mta_reader_new (own_line, &lg->live);
	for (char **t = lg->traces; ok && t && *t; t++)
		ok = mta_reader_read_file (reader, *t, &error);
	mta_reader_free (reader);
	if (!ok)
		say (lg, "warning: cannot read '%s' again: %s", lg->child_trace, error->message);
	return ok;
}

gboolean
mta_lineage_line (const MtaLine *line, gpointer lineage, GError **error)
{
	MtaLineage *lg = lineage;

	lg->last_lineno = line->lineno;
	lg->last_source = line->source;
	end_feed (&lg->end, line);
	if (line->kind == MTA_LINE_EXT)
		own_ext (lg, line);
	else if (!lg->started && (line->kind == MTA_LINE_EVENT || line->kind == MTA_LINE_MARKER)) {
		lg->started = TRUE;
		if (!start_child (lg, line, error))
			return FALSE;
	}
	return lg->func (line, lg->data, error);
}

/* The blocks live at the end of this process's trace, into lg->live,
 * each with the line that allocated it; only for a trace whose process
 * forked, is whole and says its pid. */
static gboolean
own_blocks (MtaLineage *lg)
{
	return lg->info.forks > 0 && !lg->stopped && lg->pid >= 0 && read_own_blocks (lg) &&
	       lg->live.count > 0;
}

/* How many of them were allocated before line LINE (a fork: the child
 * holds a copy of those); with DROP, the others are left out of lg->live. */
static guint
blocks_before (MtaLineage *lg, uint64_t line, gboolean drop)
{
	g_autoptr (GArray) later = g_array_new (FALSE, FALSE, sizeof (uint64_t));
	const MtaLiveEntry *e;
	guint n = 0;

	for (size_t i = 0; mta_live_next (&lg->live, &i, &e);) {
		if (e->seq <= line)
			n++;
		else
			g_array_append_val (later, e->addr);
	}
	for (guint i = 0; drop && i < later->len; i++)
		mta_live_remove (&lg->live, g_array_index (later, uint64_t, i));
	return n;
}

static int
by_name (gconstpointer a, gconstpointer b)
{
	return strcmp (*(char *const *) a, *(char *const *) b);
}

/* A trace beside this one whose header says it is the trace of a child
 * that inherited the heap at this process's last fork. */
typedef struct {
	char *path;
	int64_t pid;
	uint64_t part;
	uint64_t mark;               /* the fork of its parent's it names */
	uint64_t last_fork;          /* its last "# fork MARK" in the part's last MiB, 0: none */
	MtaLineageEnd end;
} ChildTrace;

static void
child_trace_free (gpointer p)
{
	ChildTrace *c = p;
	g_free (c->path);
	g_free (c);
}

/* Each line of BUF (N bytes) to FUNC; NUL bytes end a line as a newline does. */
static void
each_line (const char *buf, size_t n, void (*func) (const char *p, size_t len, gpointer data), gpointer data)
{
	for (const char *p = buf, *end = buf + n; p < end;) {
		const char *q = p;
		while (q < end && *q != '\n' && *q != '\0')
			q++;
		if (q > p)
			func (p, (size_t) (q - p), data);
		p = q + 1;
	}
}

typedef struct {
	int64_t parent;              /* the pid its "# parent" line must name */
	ChildTrace *c;
	gboolean found, is_trace;
} HeaderScan;

static void
header_line (const char *p, size_t len, gpointer data)
{
	HeaderScan *hs = data;
	MtaHeader h;

	if (len == 9 && memcmp (p, "# mtrec 1", 9) == 0)
		hs->is_trace = TRUE;
	if (!mta_header_parse (p, len, &h))
		return;
	if (h.kind == MTA_HEADER_PARENT && h.pid == hs->parent && !hs->found) {
		hs->found = TRUE;
		hs->c->mark = h.n;
	} else if (h.kind == MTA_HEADER_PID && hs->c->pid < 0)
		hs->c->pid = h.pid;
	else if (h.kind == MTA_HEADER_PART)
		hs->c->part = h.n;
	else if (h.kind == MTA_HEADER_START && hs->c->end.start_ns < 0)
		hs->c->end.start_ns = parse_start ((MtaSpan) { h.rest.p, h.rest.len });
}

static void
tail_line (const char *p, size_t len, gpointer data)
{
	ChildTrace *c = data;
	MtaLine l;
	uint64_t mark;

	mta_line_parse (&l, p, len);
	end_feed (&c->end, &l);
	if (ext_is (&l, MTA_WORD_FORK, 3) && span_u64 (l.cols[2], &mark))
		c->last_fork = mark;
}

#define HEADER_BYTES 65536           /* a part's header zone */
#define TAIL_BYTES (1 << 20)         /* where a trace's end is looked for */

/* The trace at PATH when its header (its first 64 KiB) says it is of a
 * forked child of process PARENT ("# parent PARENT MARK"), with when it
 * ended read from its last MiB; else NULL. */
static ChildTrace *
child_trace_read (const char *path, int64_t parent)
{
	g_autofree char *buf = g_malloc (HEADER_BYTES);
	ChildTrace *c = g_new0 (ChildTrace, 1);
	HeaderScan hs = { parent, c, FALSE, FALSE };
	FILE *f = fopen (path, "rb");
	size_t n;
	off_t size, from;

	c->pid = -1;
	c->part = 1;
	c->end.start_ns = -1;
	if (f == NULL)
		goto none;
	n = fread (buf, 1, HEADER_BYTES, f);
	each_line (buf, n, header_line, &hs);
	if (!hs.is_trace || !hs.found || fseeko (f, 0, SEEK_END) != 0 || (size = ftello (f)) < 0)
		goto none;
	from = size > TAIL_BYTES ? size - TAIL_BYTES : 0;
	if (fseeko (f, from, SEEK_SET) != 0)
		goto none;
	buf = g_realloc (buf, TAIL_BYTES);
	n = fread (buf, 1, TAIL_BYTES, f);
	fclose (f);
	/* the first line of a tail is cut: from the next one */
	const char *p = buf;
	if (from > 0)
		while (p < buf + n && *p++ != '\n')
			;
	each_line (p, n - (size_t) (p - buf), tail_line, c);
	c->path = g_strdup (path);
	return c;
none:
	if (f != NULL)
		fclose (f);
	g_free (c);
	return NULL;
}

/* The traces of the children that inherited the heap of process PID at
 * one of its forks: files beside this trace whose header says "# parent
 * PID MARK" (any name: MALLOC_TRACE may hold %p; the child of a double
 * fork, and the children a middle process forked before any event of its
 * own, name the grandparent), the last part of each, by name; the
 * directory is read once per PID.  A child that exec'd before its first
 * event left no such trace: it dropped the heap. */
static GPtrArray *
find_child_traces (MtaLineage *lg, int64_t pid)
{
	g_autofree char *dir = g_path_get_dirname (lg->child_trace ? lg->child_trace : ".");
	g_autoptr (GDir) d = NULL;
	g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
	g_autoptr (GHashTable) by_pid = g_hash_table_new (g_int64_hash, g_int64_equal);
	GPtrArray *children = g_hash_table_lookup (lg->kids, &pid);
	const char *name;

	if (children != NULL)
		return children;
	children = g_ptr_array_new_with_free_func (child_trace_free);
	g_hash_table_insert (lg->kids, g_memdup2 (&pid, sizeof pid), children);
	d = g_dir_open (dir, 0, NULL);

	while (d != NULL && (name = g_dir_read_name (d)) != NULL)
		g_ptr_array_add (names, g_build_filename (dir, name, NULL));
	g_ptr_array_sort (names, by_name);
	for (guint i = 0; i < names->len; i++) {
		const char *path = names->pdata[i];
		ChildTrace *c, *had;
		if (!g_file_test (path, G_FILE_TEST_IS_REGULAR) || (c = child_trace_read (path, pid)) == NULL)
			continue;
		had = g_hash_table_lookup (by_pid, &c->pid);
		if (had != NULL && had->part >= c->part) {
			child_trace_free (c);
			continue;
		}
		if (had != NULL)
			g_ptr_array_remove (children, had);
		g_ptr_array_add (children, c);
		g_hash_table_insert (by_pid, &c->pid, c);
	}
	return children;
}

/* NULL when the child C lived on after this process ended; else why it
 * did not, as far as the traces say. */
static const char *
outlived_not (const MtaLineage *lg, const ChildTrace *c)
{
	if (c->end.exec)
		return "exec'd, and its copy of the heap went with the exec";
	if (lg->end.start_ns < 0 || c->end.start_ns < 0)
		return "cannot be ordered with this process's end (a trace has no '# start' line)";
	if (lg->end.ended && !lg->end.exact)
		return "cannot be ordered with this process's end (its trace does not say when it "
		       "exited: a recorder older than the '# time' line at exit)";
	if (end_last (&c->end) > end_last (&lg->end))
		return NULL;
	return c->end.ended ? "ended before this process did (it waited for its child)"
			    : "shows no sign of life after this process ended";
}

/* The heir of this process's heap: a process that inherited it at the
 * fork MARK of process PID (this one, or a descendant that forked again:
 * the middle process of a double fork that recorded) and lived on after
 * this process ended, without exec, into *PATH and *PID_OUT.  Else FALSE,
 * with the first reason met into *WHY and the trace it is about into
 * *WHY_PATH (NULL: no child's trace at all). */
static gboolean
find_heir (MtaLineage *lg, int64_t pid, uint64_t mark, int depth, char **path, int64_t *pid_out,
	   const char **why, char **why_path)
{
	GPtrArray *children = find_child_traces (lg, pid);

	for (guint i = 0; i < children->len; i++) {
		const ChildTrace *c = children->pdata[i];
		if (c->mark != mark)
			continue;
		const char *not = outlived_not (lg, c);
		if (not == NULL) {
			*path = g_strdup (c->path);
			*pid_out = c->pid;
			return TRUE;
		}
		if (*why_path == NULL) {
			*why = not;
			*why_path = g_strdup (c->path);
		}
		if (!c->end.exec && c->last_fork > 0 && c->pid >= 0 && depth + 1 < MAX_GENERATIONS &&
		    find_heir (lg, c->pid, c->last_fork, depth + 1, path, pid_out, why, why_path))
			return TRUE;
	}
	return FALSE;
}

#define MAX_FORKS_LOOKED 64         /* forks looked at, from the last back */

/* Handed over: the process ended while a process that inherited its heap
 * at one of its forks -- the last for which there is one -- lived on, and
 * that process did not exec: it holds the blocks allocated before that
 * fork, and its trace reports those it never frees.  Otherwise the blocks
 * stay this process's (it outlived its children, or they dropped their
 * copy at an exec), and a note says why, for its last fork. */
static gboolean
handed_over (MtaLineage *lg)
{
	g_autofree char *why_path = NULL;
	const char *why = NULL;
	int64_t pid = -1;

	if (!own_blocks (lg))
		return FALSE;
	for (guint k = lg->fork_lines->len; k > 0 && lg->fork_lines->len - k < MAX_FORKS_LOOKED; k--) {
		const ForkLine *f = &g_array_index (lg->fork_lines, ForkLine, k - 1);
		const char *w = NULL;
		g_autofree char *wp = NULL;
		if (blocks_before (lg, f->line, FALSE) == 0)
			break;
		if (find_heir (lg, lg->pid, f->mark, 0, &lg->info.handed_trace, &pid, &w, &wp)) {
			blocks_before (lg, f->line, TRUE);
			lg->info.handed_mark = f->mark;
			if (pid >= 0)
				lg->info.handed_to_pid = pid;
			return TRUE;
		}
		if (k == lg->fork_lines->len) {
			why = w;
			why_path = g_steal_pointer (&wp);
		}
	}
	if (why_path == NULL)
		say (lg, "note: no trace of a child that inherited this process's heap at its last "
		     "fork ('# fork %" G_GUINT64_FORMAT "') was found beside '%s': the blocks it still "
		     "had are reported as its leaks (its child may have exec'd, or recorded nothing)",
		     lg->info.handed_mark, lg->child_trace);
	else
		say (lg, "note: the blocks this process had at its last fork ('# fork %" G_GUINT64_FORMAT
		     "') and still had at its end are reported as its leaks, not handed to its child: "
		     "the child whose trace is '%s' %s", lg->info.handed_mark, why_path, why);
	return FALSE;
}

gboolean
mta_lineage_finish (MtaLineage *lg, GError **error)
{
	g_autoptr (GPtrArray) blocks = NULL;
	g_autoptr (GString) s = g_string_new (NULL);
	g_autofree char *child = NULL;

	if (!lg->started && !start_child (lg, &(MtaLine) { .lineno = lg->last_lineno + 1 }, error))
		return FALSE;
	lg->info.exec_at_end = lg->end.exec;
	if (!handed_over (lg)) {
		lg->info.handed_to_pid = -1;
		return TRUE;
	}
	blocks = sorted_entries (&lg->live);
	/* In no thread of the program: no block was "freed before any other
	 * allocation in its thread" here. */
	if (!emit (lg, "# T 0", 5, lg->last_lineno, lg->last_source, error))
		return FALSE;
	for (guint i = 0; i < blocks->len; i++) {
		const MtaLiveEntry *e = blocks->pdata[i];
		g_string_printf (s, "- 0x%" PRIx64, e->addr);
		lg->info.handed_blocks++;
		lg->info.handed_bytes += e->size;
		if (!emit (lg, s->str, s->len, lg->last_lineno, lg->last_source, error))
			return FALSE;
	}
	child = lg->info.handed_to_pid > 0 ?
		g_strdup_printf ("process %" G_GINT64_FORMAT, lg->info.handed_to_pid) :
		g_strdup ("the process");
	say (lg, "note: this process ended while %s, which holds a copy of its heap from its "
	     "fork '# fork %" G_GUINT64_FORMAT "', lived on: the %" G_GUINT64_FORMAT
	     " blocks (%" G_GUINT64_FORMAT " bytes) it had allocated before that fork and still "
	     "had were handed to it, and its trace '%s' reports them; they are not counted as "
	     "leaks here (--no-inherit: count them)", child, lg->info.handed_mark,
	     lg->info.handed_blocks, lg->info.handed_bytes, lg->info.handed_trace);
	return TRUE;
}

/* ------------------------------------------------------------ life */

MtaLineage *
mta_lineage_new (MtaLineFunc func, gpointer data, const char *child_trace,
		 MtaLineageSayFunc say_func, gpointer say_data)
{
	MtaLineage *lg = g_new0 (MtaLineage, 1);

	lg->func = func;
	lg->data = data;
	lg->say = say_func;
	lg->say_data = say_data;
	lg->child_trace = g_strdup (child_trace);
	lg->info.parent_pid = -1;
	lg->info.handed_to_pid = -1;
	lg->pid = -1;
	lg->end.start_ns = -1;
	lg->fork_lines = g_array_new (FALSE, FALSE, sizeof (ForkLine));
	lg->kids = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
					  (GDestroyNotify) g_ptr_array_unref);
	mta_strtab_init (&lg->strings);
	mta_live_init (&lg->live);
	return lg;
}

void
mta_lineage_set_traces (MtaLineage *lg, char **traces, int n)
{
	g_strfreev (lg->traces);
	lg->traces = g_new0 (char *, n + 1);
	for (int i = 0; i < n; i++)
		lg->traces[i] = g_strdup (traces[i]);
}

void
mta_lineage_set_parent (MtaLineage *lg, const char *path)
{
	g_free (lg->parent_opt);
	lg->parent_opt = g_strdup (path);
}

const MtaLineageInfo *
mta_lineage_info (const MtaLineage *lg)
{
	return &lg->info;
}

void
mta_lineage_free (MtaLineage *lg)
{
	if (lg == NULL)
		return;
	mta_live_release (&lg->live);
	mta_strtab_release (&lg->strings);
	g_array_unref (lg->fork_lines);
	g_hash_table_destroy (lg->kids);
	g_free (lg->info.parent_trace);
	g_free (lg->info.handed_trace);
	g_strfreev (lg->traces);
	g_free (lg->child_trace);
	g_free (lg->parent_opt);
	g_free (lg);
}
