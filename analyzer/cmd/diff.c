/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* diff.c -- `mtanalyze diff BASE FEATURE`: which leaks are new or grew in
 * FEATURE, which are smaller or gone.
 *
 * Pairing the sites of two runs.  Addresses mean nothing from one build
 * to the next, and line numbers move whenever the code around them
 * changes (a feature patch inserts lines above old leaks), so a site is
 * not looked up by file:line.  Instead:
 *
 *  1. Sites are grouped by function and the base name of their source
 *     file (without debug information: function and the base name of the
 *     object; without a symbol the function is "0xOFFSET", so that is
 *     object+offset).  Directories never count: two builds made in two
 *     trees compare.  Function names are compared as recorded (mangled
 *     for C++), which is the same for the same compiler.
 *  2. Within a group, the sites of each side are sorted by line and
 *     aligned in order (an edit distance: a pair never crosses another),
 *     so that a site inserted between two old ones is the unpaired one.
 *     The cost of a pair says how alike the two sites are:
 *       - when both source lines can be read (the files exist and are not
 *         newer than the recording), the text of the lines, blanks
 *         ignored: equal pairs cheaply, different never pairs;
 *       - otherwise, the caller in the most leaking stack and the mean
 *         block size: each that differs costs, and a pair differing in
 *         both costs more than leaving both sites unpaired;
 *       - plus, as a tie-breaker, how much the pair's line shift differs
 *         from that of the pair before it (code moves in blocks).
 *  3. A paired site compares its counts; an unpaired FEATURE site is new,
 *     an unpaired BASE site is gone.
 *
 * Noise (leaks that vary from run to run) is left out by --suppressions
 * files (suppress.c) before pairing and by --min-blocks / --min-bytes,
 * which a change must reach to be reported.  With --base RUN (more
 * baseline runs), each FEATURE site is also paired with the sites of each
 * baseline, and it is new or grown only beyond what they show there: its
 * blocks (or bytes) above the most any baseline has plus the spread among
 * them (most - least) -- at least twice the square root of the most where
 * they differ at all (noise_room) --, smaller only below the least minus
 * that; in between it is noise, listed apart with the baselines' counts.
 * So are the two ends of a leak that moved to its caller or its callee
 * (match_moved).
 */
#include "diff.h"
#include "options.h"
#include "outputs.h"
#include "db-conn.h"
#include "escape.h"
#include "reach.h"
#include "html-diff.h"
#include "json-out.h"
#include "run.h"
#include "leak-set.h"
#include "suppress.h"
#include "trace-input.h"
#include "symbolize.h"
#include "wrappers.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* Alignment costs (see above). */
#define COST_UNPAIRED 10
#define COST_CALLER 8
#define COST_SIZE 8
#define COST_SHIFT_MAX 6
#define COST_NEVER 100000
/* Pairs looked back at, per side, in the alignment of one group. */
#define ALIGN_WINDOW 16
/* Source files larger than this are not read for their lines. */
#define MAX_SOURCE_SIZE (64 << 20)

static gint64 opt_min_blocks;
static gint64 opt_min_bytes;
static char **opt_suppressions;
static gboolean opt_no_source;
static MtaWarnFunc diff_warn;   /* main's, for the traces read */
static guint diff_kinds;        /* --leaks, parsed (1 << MtaReach); 0 all */
static char **opt_bases;

const GOptionEntry mta_diff_entries[] = {
	{ "min-blocks", 0, 0, G_OPTION_ARG_INT64, &opt_min_blocks,
	  "Report a site only when its leaked blocks changed by N or more", "N" },
	{ "min-bytes", 0, 0, G_OPTION_ARG_INT64, &opt_min_bytes,
	  "Report a site only when its leaked bytes changed by N or more", "N" },
	{ "suppressions", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_suppressions,
	  "Leave out the sites matched by FILE (share/suppressions.md); repeatable", "FILE" },
	{ "no-source", 0, 0, G_OPTION_ARG_NONE, &opt_no_source,
	  "Do not read source lines to pair the sites of the two runs", NULL },
	{ "base", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_bases,
	  "One more baseline run (as BASE takes it), repeatable: a site is new or grown only "
	  "beyond the most the baselines leak there plus how much they differ", "RUN" },
	{ NULL }
};

const MtaSharedSpec mta_diff_shared = {
	.set = MTA_SHARED_JSON | MTA_SHARED_SYSROOT | MTA_SHARED_SKIP | MTA_SHARED_QUIET |
	       MTA_SHARED_HTML | MTA_SHARED_LEAKS,
	.json_help = "Print the same facts as JSON (share/diff.md)",
	.html_help = "Also write the comparison as one self-contained HTML FILE (share/pictures.md)",
	.leaks_help = "Compare only the blocks not freed of KINDS: definite, indirect, possible, "
		      "reachable, unknown, all (runs recorded with mtrec --reach)",
};

const char mta_diff_params[] = "[--base RUN]... BASE FEATURE - the leaks FEATURE has and BASE has not";

const char mta_diff_description[] =
	"BASE is a run without the feature, FEATURE a run with it (enabled by a flag,\n"
	"or a patched build).  Each names one run, in one of these forms:\n"
	"\n"
	"  trace.log                  a trace; its programs are found from the trace\n"
	"  ./app:trace.log            a trace and the BINARY it was recorded from\n"
	"  ./app:t.log,t.log.part2    the parts of a rotated trace, in order\n"
	"  runs.db:2                  run 2 of a database loaded with --db\n"
	"  runs.db:-1                 its last run (-2: the one before it)\n"
	"  postgresql://h/db:2        run 2 of a PostgreSQL database loaded with --db\n"
	"\n"
	"Example:\n"
	"  mtrec -o base.log --depth 16 ./app            # without the feature\n"
	"  mtrec -o feat.log --depth 16 ./app --feature  # with it\n"
	"  mtanalyze diff base.log feat.log\n"
	"\n"
	"Sites are matched by function and source file:line, never by address, so\n"
	"two builds (in different directories) compare; lines that moved are\n"
	"paired by order within their function and by the text of the source line\n"
	"(see mtanalyze(1)).  Lists the sites whose leaks are new or grew in\n"
	"FEATURE, then those that are smaller or gone.\n"
	"\n"
	"Real programs leak a little at random (requests in flight at exit, races):\n"
	"give more runs without the feature with --base RUN (repeatable), and a\n"
	"site is new or grown only when FEATURE leaks there more than the most any\n"
	"baseline does plus the spread among them (most - least), and where they\n"
	"differ at all, plus at least twice the square root of that most; the sites\n"
	"within that are listed apart as noise, with the baselines' counts, as are\n"
	"a new or grown site and a smaller or gone one, the caller of the other,\n"
	"whose changes cancel exactly (a leak that moved).\n"
	"\n"
	"Exit status: 0 no new or grown leak, 1 FEATURE has one, 2 trouble\n"
	"(unusable input, a usage error, an I/O error).";

/* ------------------------------------------------------------ sides */

/* Read one side from its argument (the forms of mta_diff_description). */
static MtaLeakSet *
load_side (const char *arg, const MtaWrappers *wrappers, guint leak_kinds, GError **error)
{
	g_autofree char *binary = NULL;
	g_autofree char *db = NULL;
	const char *rest = arg;

	/* A PostgreSQL URI (which has ':' of its own) names its run after
	 * the last ':' (mta_conn_split_run). */
	if (mta_conn_is_uri (arg)) {
		if (!mta_conn_split_run (arg, &db, &rest)) {
			g_autofree char *shown = mta_conn_redact (arg);
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "'%s' is a database: name one of its runs, as '%s:1' or '%s:-1'",
				     shown, shown, shown);
			return NULL;
		}
	} else if (!g_file_test (arg, G_FILE_TEST_EXISTS)) {
	/* The whole argument, when it is a file, is a trace (or a database
	 * without a run); else the part before the first ':' that names a
	 * file says what the rest is. */
		for (const char *c = strchr (arg, ':'); c != NULL; c = strchr (c + 1, ':')) {
			g_autofree char *head = g_strndup (arg, (gsize) (c - arg));
			if (!g_file_test (head, G_FILE_TEST_IS_REGULAR))
				continue;
			if (mta_is_sqlite_file (head))
				db = g_steal_pointer (&head);
			else
				binary = g_steal_pointer (&head);
			rest = c + 1;
			break;
		}
	} else if (mta_is_sqlite_file (arg)) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "'%s' is a database: name one of its runs, as '%s:1' or '%s:-1'", arg, arg, arg);
		return NULL;
	}

	if (db != NULL) {
		char *end = NULL;
		int64_t run = -1;
		if (strcmp (rest, "last") != 0)
			run = g_ascii_strtoll (rest, &end, 10);
		if (end != NULL && (end == rest || *end != '\0' || run == 0)) {
			g_autofree char *shown = mta_conn_redact (arg), *shown_db = mta_conn_redact (db);
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "'%s': '%s' is not a run of '%s' (a run id, or -1 for the last)",
				     shown, rest, shown_db);
			return NULL;
		}
		return mta_leak_set_from_db (arg, db, run, leak_kinds, error);
	}

	g_auto (GStrv) traces = g_strsplit (rest, ",", -1);
	for (char **t = traces; *t != NULL; t++)
		if (!mta_input_check_readable (*t, error))
			return NULL;
	if (binary != NULL) {
		char magic[4] = { 0 };
		int fd = mta_open_regular (binary);
		if (fd < 0 || read (fd, magic, 4) != 4 || memcmp (magic, "\177ELF", 4) != 0) {
			if (fd >= 0)
				close (fd);
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "'%s': '%s' is neither a program (ELF) nor a database", arg, binary);
			return NULL;
		}
		close (fd);
	}
	MtaLeakSetOptions o = {
		.binary = binary, .sysroot = mta_shared.sysroot, .wrappers = wrappers, .quiet = mta_shared.quiet,
		.warn = diff_warn, .leak_kinds = leak_kinds,
	};
	return mta_leak_set_from_traces (arg, traces, g_strv_length (traces), &o, error);
}

/* ------------------------------------------------------------ sources */

/* The lines of the source files, read once each: path -> GPtrArray of
 * lines with their blanks removed, or NULL (unreadable, too large, or
 * changed since the run was recorded). */
typedef struct {
	GHashTable *files;
} SourceCache;

/* The cache also remembers the files it could not read, as NULL. */
static void
lines_unref (gpointer lines)
{
	if (lines != NULL)
		g_ptr_array_unref (lines);
}

static void
source_cache_init (SourceCache *c)
{
	c->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, lines_unref);
}

static void
source_cache_release (SourceCache *c)
{
	g_hash_table_destroy (c->files);
}

static char *
squeeze (const char *s, const char *end)
{
	char *r = g_malloc ((gsize) (end - s) + 1), *d = r;
	for (; s < end; s++)
		if (!g_ascii_isspace (*s))
			*d++ = *s;
	*d = '\0';
	return r;
}

/* The text of FILE:LINE, blanks removed, when FILE is no newer than START
 * (the recording; 0 unknown).  NULL when unknown. */
static const char *
source_line (SourceCache *c, const char *file, unsigned line, double start)
{
	GPtrArray *lines;
	struct stat st;

	if (opt_no_source || file[0] == '\0' || line == 0)
		return NULL;
	g_autofree char *path = mta_shared.sysroot && file[0] == '/' ? g_build_filename (mta_shared.sysroot, file, NULL)
							     : g_strdup (file);
	g_autofree char *key = g_strdup_printf ("%.0f\x1f%s", start, path);
	if (!g_hash_table_lookup_extended (c->files, key, NULL, (gpointer *) &lines)) {
		char *text = NULL;
		gsize len = 0;
		int fd = mta_open_regular (path);   /* the name comes from debug info */
		lines = NULL;
		if (fd >= 0 && fstat (fd, &st) == 0 && st.st_size < MAX_SOURCE_SIZE &&
		    (start <= 0 || (double) st.st_mtim.tv_sec <= start + 1)) {
			text = g_malloc ((gsize) st.st_size + 1);
			ssize_t n;
			while (len < (gsize) st.st_size &&
			       (n = read (fd, text + len, (gsize) st.st_size - len)) > 0)
				len += (gsize) n;
			text[len] = '\0';
		}
		if (fd >= 0)
			close (fd);
		if (text != NULL) {
			lines = g_ptr_array_new_with_free_func (g_free);
			const char *p = text, *end = text + len;
			while (p < end) {
				const char *nl = memchr (p, '\n', (size_t) (end - p));
				if (nl == NULL)
					nl = end;
				g_ptr_array_add (lines, squeeze (p, nl));
				p = nl + 1;
			}
			g_free (text);
		}
		g_hash_table_insert (c->files, g_steal_pointer (&key), lines);
	}
	return lines != NULL && line <= lines->len ? lines->pdata[line - 1] : NULL;
}

/* ------------------------------------------------------------ pairing */

typedef struct {
	const MtaLeakSite *site;
	const char *text;          /* source line, NULL unknown */
	int pair;                  /* index in the other side's group, -1 none */
} Entry;

typedef struct {
	GArray *side[2];           /* Entry, 0 base, 1 feature */
} Group;

static void
group_free (gpointer p)
{
	Group *g = p;
	g_array_unref (g->side[0]);
	g_array_unref (g->side[1]);
	g_free (g);
}

static const char *
base_name (const char *path)
{
	const char *s = strrchr (path, '/');
	return s ? s + 1 : path;
}

/* The key of a site's group: function and file, or function and object. */
static char *
group_key (const MtaLeakSite *s)
{
	/* a kind's sites pair only with the same kind's */
	if (s->file[0] != '\0')
		return g_strdup_printf ("%s\x1e%s\x1f%s", s->kind, s->function, base_name (s->file));
	return g_strdup_printf ("%s\x1e%s\x1f\x1f%s", s->kind, s->function, base_name (s->object));
}

static int
entry_cmp (gconstpointer a, gconstpointer b)
{
	const MtaLeakSite *x = ((const Entry *) a)->site, *y = ((const Entry *) b)->site;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return strcmp (x->object, y->object);
}

static int64_t
pair_cost (const Entry *b, const Entry *f)
{
	if (b->text != NULL && f->text != NULL)
		return strcmp (b->text, f->text) == 0 ? 0 : COST_NEVER;
	int64_t c = 0;
	if (b->site->caller[0] && f->site->caller[0] && strcmp (b->site->caller, f->site->caller) != 0)
		c += COST_CALLER;
	/* mean block sizes, compared without rounding */
	if (b->site->bytes * f->site->blocks != f->site->bytes * b->site->blocks)
		c += COST_SIZE;
	return c;
}

static int64_t
shift_cost (const Entry *b0, const Entry *f0, const Entry *b1, const Entry *f1)
{
	int64_t d = ((int64_t) f1->site->line - b1->site->line) - ((int64_t) f0->site->line - b0->site->line);
	d = d < 0 ? -d : d;
	return MIN (d, COST_SHIFT_MAX);
}

/* Align the two sorted sides of G: best[i][j] is the cost of the best
 * alignment of B[0..i] and F[0..j] whose last pair is (i, j). */
static void
align_group (Group *g)
{
	GArray *B = g->side[0], *F = g->side[1];
	gsize n = B->len, m = F->len;   /* gsize: i * m + j indexes n * m cells */
	if (n == 0 || m == 0)
		return;
	int64_t *best = g_new (int64_t, (gsize) n * m);
	int64_t *from = g_new (int64_t, (gsize) n * m);
	int64_t total = (int64_t) (n + m) * COST_UNPAIRED, last = -1;

	for (guint i = 0; i < n; i++)
		for (guint j = 0; j < m; j++) {
			Entry *b = &g_array_index (B, Entry, i), *f = &g_array_index (F, Entry, j);
			int64_t pc = pair_cost (b, f), c, prev = -1;
			int64_t bc = (int64_t) (i + j) * COST_UNPAIRED;   /* the first pair */
			if (pc >= COST_NEVER) {
				best[i * m + j] = COST_NEVER;
				from[i * m + j] = -1;
				continue;
			}
			for (guint i0 = i > ALIGN_WINDOW ? i - ALIGN_WINDOW : 0; i0 < i; i0++)
				for (guint j0 = j > ALIGN_WINDOW ? j - ALIGN_WINDOW : 0; j0 < j; j0++) {
					if (best[i0 * m + j0] >= COST_NEVER)
						continue;
					c = best[i0 * m + j0] + ((int64_t) i - i0 - 1 + (int64_t) j - j0 - 1) * COST_UNPAIRED +
						shift_cost (&g_array_index (B, Entry, i0), &g_array_index (F, Entry, j0), b, f);
					if (c < bc) {
						bc = c;
						prev = (int64_t) (i0 * m + j0);
					}
				}
			best[i * m + j] = bc + pc;
			from[i * m + j] = prev;
			c = best[i * m + j] + ((int64_t) n - 1 - i + (int64_t) m - 1 - j) * COST_UNPAIRED;
			if (c < total) {
				total = c;
				last = (int64_t) (i * m + j);
			}
		}
	for (int64_t k = last; k >= 0; k = from[k]) {
		guint i = (guint) (k / m), j = (guint) (k % m);
		g_array_index (B, Entry, i).pair = (int) j;
		g_array_index (F, Entry, j).pair = (int) i;
	}
	g_free (best);
	g_free (from);
}

/* ------------------------------------------------------------ changes */

typedef MtaDiffChange Change;   /* html-diff.h */

static int
change_cmp (gconstpointer a, gconstpointer b)
{
	const Change *x = a, *y = b;
	int64_t bx = x->dbytes < 0 ? -x->dbytes : x->dbytes, by = y->dbytes < 0 ? -y->dbytes : y->dbytes;
	if (bx != by)
		return bx > by ? -1 : 1;
	int64_t kx = x->dblocks < 0 ? -x->dblocks : x->dblocks, ky = y->dblocks < 0 ? -y->dblocks : y->dblocks;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	const MtaLeakSite *sx = x->feature ? x->feature : x->base, *sy = y->feature ? y->feature : y->base;
	int r = strcmp (sx->function, sy->function);
	if (r != 0)
		return r;
	r = strcmp (sx->file, sy->file);
	return r != 0 ? r : (sx->line > sy->line) - (sx->line < sy->line);
}

typedef struct {
	GArray *grown;             /* Change: new or grown */
	GArray *shrunk;            /* Change: smaller or gone */
	GArray *noise;             /* Noise: within what the baselines show (--base) */
	guint suppressed;          /* sites left out, both sides */
	guint below;               /* changes under the thresholds */
} DiffResult;

static gboolean
reaches_threshold (const Change *c)
{
	int64_t kb = c->dblocks < 0 ? -c->dblocks : c->dblocks;
	int64_t kB = c->dbytes < 0 ? -c->dbytes : c->dbytes;
	return kb >= opt_min_blocks && kB >= opt_min_bytes;
}

static void
add_change (DiffResult *r, const MtaLeakSite *b, const MtaLeakSite *f)
{
	Change c = { b, f, 0, 0 };
	c.dblocks = (int64_t) (f ? f->blocks : 0) - (int64_t) (b ? b->blocks : 0);
	c.dbytes = (int64_t) (f ? f->bytes : 0) - (int64_t) (b ? b->bytes : 0);
	if (c.dblocks == 0 && c.dbytes == 0)
		return;
	if (!reaches_threshold (&c)) {
		r->below++;
		return;
	}
	if (c.dblocks > 0 || c.dbytes > 0)
		g_array_append_val (r->grown, c);
	else
		g_array_append_val (r->shrunk, c);
}

/* What the other baselines (--base) leak at the sites of FEATURE. */
typedef struct {
	guint n;                   /* baselines, BASE included */
	GHashTable **pairs;        /* [n - 1]: FEATURE site -> that baseline's paired site */
} Baselines;

/* A FEATURE site whose change from BASE is within what the baselines show,
 * or one of a leak that moved (moved: the site at the other end). */
typedef struct {
	Change c;
	uint64_t lo_blocks, hi_blocks, lo_bytes, hi_bytes;   /* least and most over the baselines */
	uint64_t room_blocks, room_bytes;                    /* what FEATURE may differ beyond them */
	const MtaLeakSite *moved;
} Noise;

typedef void (*PairFunc) (const MtaLeakSite *b, const MtaLeakSite *f, gpointer data);

static void pair_sets (const MtaLeakSet *base, const MtaLeakSet *feature, const MtaSuppressions *supp,
		       guint *suppressed, PairFunc func, gpointer data);

typedef struct {
	DiffResult *r;
	const Baselines *bl;
} CompareData;

/* The least and most the baselines leak at FEATURE's site F, BASE's being B. */
static void
baseline_range (const Baselines *bl, const MtaLeakSite *b, const MtaLeakSite *f, Noise *n)
{
	n->lo_blocks = n->hi_blocks = b ? b->blocks : 0;
	n->lo_bytes = n->hi_bytes = b ? b->bytes : 0;
	for (guint i = 0; i + 1 < bl->n; i++) {
		const MtaLeakSite *o = g_hash_table_lookup (bl->pairs[i], f);
		uint64_t k = o ? o->blocks : 0, B = o ? o->bytes : 0;
		n->lo_blocks = MIN (n->lo_blocks, k);
		n->hi_blocks = MAX (n->hi_blocks, k);
		n->lo_bytes = MIN (n->lo_bytes, B);
		n->hi_bytes = MAX (n->hi_bytes, B);
	}
}

/* How far beyond the baselines' most (or below their least) FEATURE may
 * leak at a site and still be noise: the spread among them, and at a site
 * where they differ at all, at least twice the square root of the most
 * blocks (where the bytes differ, as many of its mean block in bytes).  A few baselines
 * measure a spread too small: a count that varies from run to run as
 * random events do (requests in flight at exit, caches sized by races)
 * varies by about its square root, and two or three runs often happen to
 * agree more closely -- nfs-ganesha's per-connection caches, 95 to 103 in
 * 9 runs of one script, gave 97 and 98 in two, and a third run of 103
 * counted as grown.  A site where they agree keeps no room: any growth
 * there is found. */
static void
noise_room (Noise *n)
{
	uint64_t floor_blocks = (uint64_t) ceil (2.0 * sqrt ((double) n->hi_blocks));
	uint64_t mean = n->hi_blocks ? n->hi_bytes / n->hi_blocks : 0;

	n->room_blocks = n->hi_blocks - n->lo_blocks;
	n->room_bytes = n->hi_bytes - n->lo_bytes;
	if (n->room_blocks > 0)
		n->room_blocks = MAX (n->room_blocks, floor_blocks);
	if (n->room_bytes > 0)
		n->room_bytes = MAX (n->room_bytes, floor_blocks * mean);
}

/* With baselines: new or grown beyond the most plus the room, smaller
 * below the least minus it, noise in between (listed when it differs
 * from BASE: without the baselines it would have counted). */
static void
judge_change (const MtaLeakSite *b, const MtaLeakSite *f, gpointer data)
{
	CompareData *d = data;
	Noise n = { { b, f, 0, 0 }, 0, 0, 0, 0, 0, 0, NULL };

	if (d->bl == NULL || d->bl->n <= 1 || f == NULL) {
		add_change (d->r, b, f);
		return;
	}
	n.c.dblocks = (int64_t) f->blocks - (int64_t) (b ? b->blocks : 0);
	n.c.dbytes = (int64_t) f->bytes - (int64_t) (b ? b->bytes : 0);
	baseline_range (d->bl, b, f, &n);
	noise_room (&n);
	uint64_t sb = n.room_blocks, sB = n.room_bytes;
	gboolean grown = f->blocks > n.hi_blocks + sb || f->bytes > n.hi_bytes + sB;
	gboolean smaller = !grown && (f->blocks + sb < n.lo_blocks || f->bytes + sB < n.lo_bytes);

	if (grown || smaller) {
		if (!reaches_threshold (&n.c))
			d->r->below++;
		else
			g_array_append_val (grown ? d->r->grown : d->r->shrunk, n.c);
	} else if (n.c.dblocks != 0 || n.c.dbytes != 0) {
		g_array_append_val (d->r->noise, n);
	}
}

static const MtaLeakSite *
change_site (const Change *c)
{
	return c->feature ? c->feature : c->base;
}

/* Is A's caller B (the same kind of blocks, in the same object)? */
static gboolean
called_by (const MtaLeakSite *a, const MtaLeakSite *b)
{
	return a->caller[0] != '\0' && strcmp (a->caller, b->function) == 0 &&
		strcmp (a->kind, b->kind) == 0 && strcmp (base_name (a->object), base_name (b->object)) == 0;
}

/* With baselines: a leak that moved one frame along its stack is noise
 * at both ends.  A block left in flight at exit is charged to the frame
 * that called malloc, and the same request can reach it by another path
 * through the same caller: one healthy ovs-vswitchd run in nine under the
 * same script had its 48-byte block of the others' site (a function
 * offset, the binary stripped) at the callee the others pass through --
 * a site no baseline had, so new.  So a new or grown site and a smaller
 * or gone one, either the caller of the other, whose changes from BASE
 * cancel exactly (blocks and bytes) are listed as noise, each naming the
 * other: the caller's leak is as it was.  A real leak added in a callee
 * is found still, unless FEATURE lost exactly as much at its caller. */
static void
match_moved (DiffResult *r, const Baselines *bl)
{
	for (guint i = 0; i < r->grown->len; i++) {
		const Change *g = &g_array_index (r->grown, Change, i);
		const MtaLeakSite *gs = change_site (g);
		for (guint j = 0; j < r->shrunk->len; j++) {
			const Change *k = &g_array_index (r->shrunk, Change, j);
			const MtaLeakSite *ks = change_site (k);
			if (g->dblocks != -k->dblocks || g->dbytes != -k->dbytes ||
			    !(called_by (gs, ks) || called_by (ks, gs)))
				continue;
			Noise a = { *g, 0, 0, 0, 0, 0, 0, ks }, b = { *k, 0, 0, 0, 0, 0, 0, gs };
			if (g->feature)
				baseline_range (bl, g->base, g->feature, &a);
			if (k->feature)
				baseline_range (bl, k->base, k->feature, &b);
			g_array_append_val (r->noise, a);
			g_array_append_val (r->noise, b);
			g_array_remove_index (r->shrunk, j);
			g_array_remove_index (r->grown, i);
			i--;
			break;
		}
	}
}

static void
compare (const MtaLeakSet *base, const MtaLeakSet *feature, const MtaSuppressions *supp,
	 const Baselines *bl, DiffResult *r)
{
	CompareData d = { r, bl };

	pair_sets (base, feature, supp, &r->suppressed, judge_change, &d);
	if (bl != NULL && bl->n > 1)
		match_moved (r, bl);
	g_array_sort (r->grown, change_cmp);
	g_array_sort (r->shrunk, change_cmp);
	g_array_sort (r->noise, change_cmp);
}

static void
record_pair (const MtaLeakSite *b, const MtaLeakSite *f, gpointer data)
{
	if (b != NULL && f != NULL)
		g_hash_table_insert (data, (gpointer) f, (gpointer) b);
}

/* Each FEATURE site's pair in each other baseline (BASE's is compare's). */
static void
pair_baselines (GPtrArray *others, const MtaLeakSet *feature, const MtaSuppressions *supp, Baselines *bl)
{
	guint dummy = 0;

	bl->n = others->len + 1;
	bl->pairs = g_new0 (GHashTable *, others->len + 1);
	for (guint i = 0; i < others->len; i++) {
		bl->pairs[i] = g_hash_table_new (NULL, NULL);
		pair_sets (others->pdata[i], feature, supp, &dummy, record_pair, bl->pairs[i]);
	}
}

static void
baselines_release (Baselines *bl)
{
	for (guint i = 0; bl->pairs && i + 1 < bl->n; i++)
		g_hash_table_destroy (bl->pairs[i]);
	g_free (bl->pairs);
}

/* Pair the sites of BASE and FEATURE (those SUPP matches left out, counted
 * in *SUPPRESSED): FUNC (b, f) for each FEATURE site with its pair or
 * NULL, then (b, NULL) for each BASE site left unpaired. */
static void
pair_sets (const MtaLeakSet *base, const MtaLeakSet *feature, const MtaSuppressions *supp,
	   guint *suppressed, PairFunc func, gpointer data)
{
	const MtaLeakSet *sets[2] = { base, feature };
	g_autoptr (GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, group_free);
	g_autoptr (GPtrArray) order = g_ptr_array_new ();
	SourceCache sources;

	source_cache_init (&sources);
	for (int side = 0; side < 2; side++)
		for (guint i = 0; i < sets[side]->sites->len; i++) {
			const MtaLeakSite *s = sets[side]->sites->pdata[i];
			if (mta_suppressions_match (supp, s)) {
				(*suppressed)++;
				continue;
			}
			char *key = group_key (s);
			Group *g = g_hash_table_lookup (groups, key);
			if (g == NULL) {
				g = g_new0 (Group, 1);
				g->side[0] = g_array_new (FALSE, FALSE, sizeof (Entry));
				g->side[1] = g_array_new (FALSE, FALSE, sizeof (Entry));
				g_hash_table_insert (groups, key, g);
				g_ptr_array_add (order, g);
			} else
				g_free (key);
			Entry e = { s, source_line (&sources, s->file, s->line, sets[side]->start), -1 };
			g_array_append_val (g->side[side], e);
		}

	for (guint k = 0; k < order->len; k++) {
		Group *g = order->pdata[k];
		g_array_sort (g->side[0], entry_cmp);
		g_array_sort (g->side[1], entry_cmp);
		align_group (g);
		for (guint j = 0; j < g->side[1]->len; j++) {
			const Entry *f = &g_array_index (g->side[1], Entry, j);
			func (f->pair >= 0 ? g_array_index (g->side[0], Entry, f->pair).site : NULL, f->site, data);
		}
		for (guint i = 0; i < g->side[0]->len; i++) {
			const Entry *b = &g_array_index (g->side[0], Entry, i);
			if (b->pair < 0)
				func (b->site, NULL, data);
		}
	}
	source_cache_release (&sources);
}

/* ------------------------------------------------------------ text */

/* The site, after its kind in brackets when it is not malloc's. */
static char *
site_label (const MtaLeakSite *s)
{
	g_autofree char *where = mta_location_label (s->function, s->file, s->line, s->object);
	if (s->kind[0] == '\0')
		return g_steal_pointer (&where);
	return g_strdup_printf ("[%s] %s", s->kind, where);
}

static const char *
change_word (const Change *c)
{
	if (c->base == NULL)
		return "new";
	if (c->feature == NULL)
		return "gone";
	return c->dblocks > 0 || c->dbytes > 0 ? "grew" : "less";
}

static void
sum_changes (const GArray *a, int64_t *blocks, int64_t *bytes)
{
	*blocks = *bytes = 0;
	for (guint i = 0; i < a->len; i++) {
		*blocks += g_array_index (a, Change, i).dblocks;
		*bytes += g_array_index (a, Change, i).dbytes;
	}
}

/* Why a site is noise: what the baselines leak there, and from what on
 * it would count. */
static char *
noise_why (const Noise *n)
{
	if (n->moved != NULL) {
		g_autofree char *other = site_label (n->moved);
		return g_strdup_printf ("moved %s %s %s: the same blocks and bytes",
					n->c.dblocks > 0 ? "from" : "to",
					called_by (change_site (&n->c), n->moved) ? "its caller" : "its callee", other);
	}
	return g_strdup_printf ("baselines %" PRIu64 "..%" PRIu64 " blocks, %" PRIu64 "..%" PRIu64
				" bytes: new or grown above %" PRIu64 " blocks or %" PRIu64 " bytes",
				n->lo_blocks, n->hi_blocks, n->lo_bytes, n->hi_bytes,
				n->hi_blocks + n->room_blocks, n->hi_bytes + n->room_bytes);
}

/* The changes of A (Change), or of NOISE (Noise) when A is NULL. */
static void
print_changes (const GArray *a, const GArray *noise, FILE *out)
{
	g_autoptr (GArray) own = NULL;

	if (a == NULL) {
		own = g_array_new (FALSE, FALSE, sizeof (Change));
		for (guint i = 0; i < noise->len; i++)
			g_array_append_val (own, g_array_index (noise, Noise, i).c);
		a = own;
	}
	g_autoptr (GPtrArray) cols = g_ptr_array_new_with_free_func (g_free);
	int wb = (int) strlen ("Blocks"), wB = (int) strlen ("Bytes");

	for (guint i = 0; i < a->len; i++) {
		const Change *c = &g_array_index (a, Change, i);
		char *blocks = g_strdup_printf ("%" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")",
						c->base ? c->base->blocks : 0,
						c->feature ? c->feature->blocks : 0, c->dblocks);
		char *bytes = g_strdup_printf ("%" PRIu64 " -> %" PRIu64 " (%+" PRId64 ")",
					       c->base ? c->base->bytes : 0,
					       c->feature ? c->feature->bytes : 0, c->dbytes);
		wb = MAX (wb, (int) strlen (blocks));
		wB = MAX (wB, (int) strlen (bytes));
		g_ptr_array_add (cols, blocks);
		g_ptr_array_add (cols, bytes);
	}
	fprintf (out, "  Change %*s  %*s  Site\n", wb, "Blocks", wB, "Bytes");
	for (guint i = 0; i < a->len; i++) {
		const Change *c = &g_array_index (a, Change, i);
		const MtaLeakSite *s = c->feature ? c->feature : c->base;
		g_assert (s != NULL);   /* a change has one side at least */
		g_autofree char *label = site_label (s);
		fprintf (out, "  %-6s %*s  %*s  %s", own ? "noise" : change_word (c), wb,
			 (char *) cols->pdata[2 * (gsize) i], wB, (char *) cols->pdata[2 * (gsize) i + 1], label);
		if (c->base && c->feature && c->base->line != c->feature->line)
			fprintf (out, " (line %u in BASE)", c->base->line);
		if (own) {
			g_autofree char *why = noise_why (&g_array_index (noise, Noise, i));
			fprintf (out, " (%s)", why);
		}
		fputc ('\n', out);
	}
}

static void
print_run (FILE *out, const char *role, const MtaLeakSet *set, const char *after)
{
	fprintf (out, "%-8s %s: %" PRIu64 " leaked block%s, %" PRIu64 " bytes%s\n", role, set->name,
		 set->leaked_blocks, set->leaked_blocks == 1 ? "" : "s", set->leaked_bytes, after);
}

static void
print_text (const MtaLeakSet *base, const GPtrArray *others, const MtaLeakSet *feature,
	    const DiffResult *r, FILE *out)
{
	int64_t blocks, bytes;

	print_run (out, "BASE", base, "");
	for (guint i = 0; i < others->len; i++)
		print_run (out, "BASE", others->pdata[i], " (--base)");
	print_run (out, "FEATURE", feature, "");
	if (others->len > 0)
		fprintf (out, "A site is new or grown only when FEATURE leaks there more blocks or bytes than\n"
			 "the most of the %u baselines plus the spread among them, and where they differ\n"
			 "at all, plus at least twice the square root of that most (--base).\n",
			 others->len + 1);
	if (diff_kinds != 0) {
		g_autofree char *kinds = mta_reach_mask_text (diff_kinds);
		fprintf (out, "Only the blocks %s are compared (--leaks).\n", kinds);
	}
	fputc ('\n', out);
	if (r->grown->len == 0)
		fputs ("No new or grown leaks in FEATURE.\n", out);
	else {
		sum_changes (r->grown, &blocks, &bytes);
		fprintf (out, "New or grown leaks in FEATURE: %u site%s, %+" PRId64 " blocks, %+" PRId64
			 " bytes\n\n", r->grown->len, r->grown->len == 1 ? "" : "s", blocks, bytes);
		print_changes (r->grown, NULL, out);
	}
	if (r->shrunk->len > 0) {
		sum_changes (r->shrunk, &blocks, &bytes);
		fprintf (out, "\nLeaks smaller or gone in FEATURE: %u site%s, %+" PRId64 " blocks, %+" PRId64
			 " bytes\n\n", r->shrunk->len, r->shrunk->len == 1 ? "" : "s", blocks, bytes);
		print_changes (r->shrunk, NULL, out);
	}
	if (r->noise->len > 0) {
		fprintf (out, "\nNoise: %u site%s whose change from BASE is within what the baselines show,\n"
			 "or a leak that moved to its caller or callee\n\n",
			 r->noise->len, r->noise->len == 1 ? "" : "s");
		print_changes (NULL, r->noise, out);
	}
	if (r->suppressed > 0 || r->below > 0) {
		fputc ('\n', out);
		if (r->suppressed > 0)
			fprintf (out, "(%u leaking site%s of the two runs suppressed)\n", r->suppressed,
				 r->suppressed == 1 ? "" : "s");
		if (r->below > 0)
			fprintf (out, "(%u change%s under --min-blocks %" G_GINT64_FORMAT " --min-bytes %"
				 G_GINT64_FORMAT " not shown)\n", r->below, r->below == 1 ? "" : "s",
				 opt_min_blocks, opt_min_bytes);
	}
}

/* ------------------------------------------------------------ JSON */

static void
put_run (FILE *out, const char *key, const MtaLeakSet *set)
{
	fprintf (out, "  \"%s\": {\"run\": ", key);
	mta_json_put_string (out, set->name);
	fprintf (out, ", \"leaked_blocks\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64 "},\n",
		 set->leaked_blocks, set->leaked_bytes);
}

static void
put_changes (FILE *out, const char *key, const GArray *a, gboolean comma)
{
	fprintf (out, "  \"%s\": [", key);
	for (guint i = 0; i < a->len; i++) {
		const Change *c = &g_array_index (a, Change, i);
		const MtaLeakSite *s = c->feature ? c->feature : c->base;
		fprintf (out, "%s\n    {\"change\": \"%s\", ", i ? "," : "", change_word (c));
		if (s->kind[0] != '\0') {
			fputs ("\"kind\": ", out);
			mta_json_put_string (out, s->kind);
			fputs (", ", out);
		}
		mta_json_put_location (out, s->function, s->file, s->line, s->object);
		if (c->base)
			fprintf (out, ", \"base_line\": %u", c->base->line);
		else
			fputs (", \"base_line\": null", out);
		fprintf (out, ", \"base_blocks\": %" PRIu64 ", \"feature_blocks\": %" PRIu64
			 ", \"delta_blocks\": %" PRId64 ", \"base_bytes\": %" PRIu64
			 ", \"feature_bytes\": %" PRIu64 ", \"delta_bytes\": %" PRId64 "}",
			 c->base ? c->base->blocks : 0, c->feature ? c->feature->blocks : 0, c->dblocks,
			 c->base ? c->base->bytes : 0, c->feature ? c->feature->bytes : 0, c->dbytes);
	}
	fprintf (out, "%s]%s\n", a->len ? "\n  " : "", comma ? "," : "");
}

static void
put_noise (FILE *out, const GArray *noise)
{
	fputs ("  \"noise\": [", out);
	for (guint i = 0; i < noise->len; i++) {
		const Noise *n = &g_array_index (noise, Noise, i);
		const MtaLeakSite *s = change_site (&n->c);
		fprintf (out, "%s\n    {", i ? "," : "");
		if (s->kind[0] != '\0') {
			fputs ("\"kind\": ", out);
			mta_json_put_string (out, s->kind);
			fputs (", ", out);
		}
		mta_json_put_location (out, s->function, s->file, s->line, s->object);
		fprintf (out, ", \"base_blocks\": %" PRIu64 ", \"feature_blocks\": %" PRIu64
			 ", \"delta_blocks\": %" PRId64 ", \"base_bytes\": %" PRIu64
			 ", \"feature_bytes\": %" PRIu64 ", \"delta_bytes\": %" PRId64,
			 n->c.base ? n->c.base->blocks : 0, n->c.feature ? s->blocks : 0, n->c.dblocks,
			 n->c.base ? n->c.base->bytes : 0, n->c.feature ? s->bytes : 0, n->c.dbytes);
		if (n->moved == NULL || n->c.feature != NULL)
			fprintf (out, ", \"baselines_blocks\": [%" PRIu64 ", %" PRIu64 "], \"baselines_bytes\": [%"
				 PRIu64 ", %" PRIu64 "]", n->lo_blocks, n->hi_blocks, n->lo_bytes, n->hi_bytes);
		if (n->moved == NULL)
			fprintf (out, ", \"grown_above_blocks\": %" PRIu64 ", \"grown_above_bytes\": %" PRIu64,
				 n->hi_blocks + n->room_blocks, n->hi_bytes + n->room_bytes);
		else {
			fprintf (out, ", \"moved_%s\": {", n->c.dblocks > 0 ? "from" : "to");
			mta_json_put_location (out, n->moved->function, n->moved->file, n->moved->line,
					       n->moved->object);
			fputc ('}', out);
		}
		fputc ('}', out);
	}
	fprintf (out, "%s]\n", noise->len ? "\n  " : "");
}

static void
print_json (const MtaLeakSet *base, const GPtrArray *others, const MtaLeakSet *feature,
	    const DiffResult *r, FILE *out)
{
	fputs ("{\n  \"format\": \"mtanalyze-diff\", \"version\": 1,\n", out);
	put_run (out, "base", base);
	put_run (out, "feature", feature);
	fputs ("  \"baselines\": [", out);
	for (guint i = 0; i < others->len; i++) {
		const MtaLeakSet *o = others->pdata[i];
		fprintf (out, "%s{\"run\": ", i ? ", " : "");
		mta_json_put_string (out, o->name);
		fprintf (out, ", \"leaked_blocks\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64 "}",
			 o->leaked_blocks, o->leaked_bytes);
	}
	fputs ("],\n  \"leak_kinds\": ", out);
	if (diff_kinds == 0)
		fputs ("null,\n", out);
	else {
		g_autofree char *names = mta_reach_mask_names (diff_kinds, "\", \"");
		fprintf (out, "[\"%s\"],\n", names);
	}
	fprintf (out, "  \"min_blocks\": %" G_GINT64_FORMAT ", \"min_bytes\": %" G_GINT64_FORMAT
		 ", \"suppressed_sites\": %u, \"below_threshold\": %u,\n",
		 opt_min_blocks, opt_min_bytes, r->suppressed, r->below);
	put_changes (out, "new_or_grown", r->grown, TRUE);
	put_changes (out, "smaller_or_gone", r->shrunk, TRUE);
	put_noise (out, r->noise);
	fputs ("}\n", out);
}

/* ------------------------------------------------------------ command */

/* ------------------------------------------------------------ writers */

/* What the writers of a comparison get. */
typedef struct {
	const MtaLeakSet *base;
	const GPtrArray *others;
	const MtaLeakSet *feature;
	const DiffResult *r;
	const MtaOutputs *outputs;
} Comparison;

static gboolean
file_html (const char *path, const Comparison *c, GError **error)
{
	return mta_html_write_diff (path, c->base, c->feature, c->r->grown, c->r->shrunk, error);
}

static void
out_text (const Comparison *c, FILE *out)
{
	print_text (c->base, c->others, c->feature, c->r, out);
}

static void
out_json (const Comparison *c, FILE *out)
{
	print_json (c->base, c->others, c->feature, c->r, out);
}

static void
out_written (const Comparison *c, FILE *out)
{
	guint n = c->r->grown->len;
	fprintf (out, "comparison written to '%s': %u site%s new or grown in FEATURE\n",
		 c->outputs->files[MTA_FILE_HTML], n, n == 1 ? "" : "s");
}

static gboolean (*const file_writers[MTA_FILE_N]) (const char *, const Comparison *, GError **) = {
	[MTA_FILE_HTML] = file_html,
};

static void (*const out_writers[MTA_OUT_N]) (const Comparison *, FILE *) = {
	[MTA_OUT_TEXT] = out_text,
	[MTA_OUT_JSON] = out_json,
	[MTA_OUT_WRITTEN] = out_written,
};

/* The files first: when one cannot be written, nothing is printed. */
static gboolean
write_outputs (const Comparison *c, GError **error)
{
	for (int i = 0; i < MTA_FILE_N; i++) {
		const char *path = c->outputs->files[i];
		if (path != NULL && file_writers[i] != NULL && !file_writers[i] (path, c, error))
			return FALSE;
	}
	void (*write) (const Comparison *, FILE *) = out_writers[c->outputs->out];
	g_return_val_if_fail (write != NULL, FALSE);
	FILE *out = mta_outputs_stream (c->outputs->out);
	write (c, out);
	mta_text_out_close (out);
	return TRUE;
}

gboolean
mta_diff (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error)
{
	g_autoptr (MtaWrappers) wrappers = NULL;
	g_autoptr (MtaSuppressions) supp = mta_suppressions_new ();
	g_autoptr (MtaLeakSet) base = NULL;
	g_autoptr (MtaLeakSet) feature = NULL;
	g_autoptr (GPtrArray) others = g_ptr_array_new_with_free_func ((GDestroyNotify) mta_leak_set_free);
	Baselines bl = { 0 };
	DiffResult r = { 0 };

	diff_warn = warn;
	MtaOutputRequest request = {
		.fallback = MTA_OUT_TEXT, .json = mta_shared.json,
		.files = { [MTA_FILE_HTML] = mta_shared.html },
	};
	MtaOutputs outputs;
	if (!mta_outputs_resolve (&request, &outputs, error))
		return FALSE;

	if (argc != 2) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "diff takes two runs, BASE and FEATURE");
		return FALSE;
	}
	if (opt_min_blocks < 0 || opt_min_bytes < 0) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "--min-blocks and --min-bytes take a count, 0 or more");
		return FALSE;
	}
	for (char **p = opt_suppressions; p && *p; p++)
		if (!mta_suppressions_load (supp, *p, error))
			return FALSE;
	guint leak_kinds = 0;
	if (!mta_shared_wrappers (&wrappers, error) || !mta_shared_leak_kinds (&leak_kinds, error))
		return FALSE;
	diff_kinds = leak_kinds;
	if ((base = load_side (argv[0], wrappers, leak_kinds, error)) == NULL ||
	    (feature = load_side (argv[1], wrappers, leak_kinds, error)) == NULL)
		return FALSE;
	for (char **p = opt_bases; p && *p; p++) {
		MtaLeakSet *o = load_side (*p, wrappers, leak_kinds, error);
		if (o == NULL)
			return FALSE;
		g_ptr_array_add (others, o);
	}

	r.grown = g_array_new (FALSE, FALSE, sizeof (Change));
	r.shrunk = g_array_new (FALSE, FALSE, sizeof (Change));
	r.noise = g_array_new (FALSE, FALSE, sizeof (Noise));
	pair_baselines (others, feature, supp, &bl);
	compare (base, feature, supp, &bl, &r);
	Comparison c = { base, others, feature, &r, &outputs };
	gboolean ok = write_outputs (&c, error);
	*status = r.grown->len > 0;
	g_array_unref (r.grown);
	g_array_unref (r.shrunk);
	g_array_unref (r.noise);
	baselines_release (&bl);
	return ok;
}
