/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* leak-set.c -- the leaking sites of a run read from its trace.
 *
 * The trace is read exactly as `--by-site` reads it (an MtaRun, wrappers
 * skipped), and only what a comparison of two runs needs is kept: each
 * leaking site's location, counts, and the function that called it in
 * the stack that leaked the most there (evidence for pairing the sites of
 * two builds, see diff.c).
 */
#include "leak-set.h"
#include "kinds.h"
#include "run.h"
#include "symbolize.h"
#include "trace-input.h"
#include "parts.h"
#include "trace-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void
site_free (gpointer p)
{
	MtaLeakSite *s = p;
	g_free (s->kind);
	g_free (s->function);
	g_free (s->file);
	g_free (s->object);
	g_free (s->caller);
	g_free (s->curve);
	g_free (s);
}

MtaLeakSet *
mta_leak_set_new (const char *name)
{
	MtaLeakSet *set = g_new0 (MtaLeakSet, 1);
	set->name = g_strdup (name);
	set->sites = g_ptr_array_new_with_free_func (site_free);
	return set;
}

void
mta_leak_set_free (MtaLeakSet *set)
{
	if (set == NULL)
		return;
	g_free (set->name);
	g_free (set->curve_x);
	g_ptr_array_free (set->sites, TRUE);
	g_free (set);
}

void
mta_leak_set_add (MtaLeakSet *set, const char *function, const char *file, unsigned line,
		  const char *object, const char *caller, uint64_t blocks, uint64_t bytes)
{
	MtaLeakSite *s = g_new0 (MtaLeakSite, 1);
	s->kind = g_strdup ("");
	s->function = g_strdup (function ? function : "");
	s->file = g_strdup (file ? file : "");
	s->line = line;
	s->object = g_strdup (object ? object : "");
	s->caller = g_strdup (caller ? caller : "");
	s->blocks = blocks;
	s->bytes = bytes;
	g_ptr_array_add (set->sites, s);
}

void
mta_leak_set_set_kind (MtaLeakSet *set, const char *kind)
{
	MtaLeakSite *s = set->sites->pdata[set->sites->len - 1];
	g_free (s->kind);
	s->kind = g_strdup (kind);
}

/* The sites of the tracked kinds' leaks, and those where the references
 * of unbalanced objects were taken (or, for objects below zero, dropped),
 * counted in objects, as "KIND references". */
static void
add_kind_sites (MtaLeakSet *set, const MtaRun *run)
{
	const MtaKinds *ks = mta_run_kinds (run);
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);

	for (guint i = 0; i < mta_kinds_count (ks); i++) {
		const MtaKind *k = mta_kinds_get (ks, i);
		for (guint j = 0; j < k->leak_sites->len; j++) {
			const MtaKindSite *ksite = &g_array_index (k->leak_sites, MtaKindSite, j);
			const MtaSite *s = sites->pdata[ksite->site];
			mta_leak_set_add (set, s->function, s->file, s->line, s->object, NULL, ksite->blocks,
					  ksite->bytes);
			mta_leak_set_set_kind (set, k->name);
		}
		if (k->ref_groups == NULL)
			continue;
		g_autofree char *label = g_strdup_printf ("%s references", k->name);
		g_autoptr (GHashTable) objects = g_hash_table_new (g_direct_hash, g_direct_equal);
		for (guint j = 0; j < k->ref_groups->len; j++) {
			const MtaRefGroup *g = k->ref_groups->pdata[j];
			for (guint n = 0; n < g->paths->len; n++) {
				const MtaRefPath *rp = &g_array_index (g->paths, MtaRefPath, n);
				if ((g->negative ? rp->unrefs : rp->refs) == 0)
					continue;
				gpointer key = GINT_TO_POINTER (((const MtaPath *) paths->pdata[rp->path])->site + 1);
				uint64_t sum = GPOINTER_TO_SIZE (g_hash_table_lookup (objects, key)) + g->objects;
				g_hash_table_insert (objects, key, GSIZE_TO_POINTER (sum));
			}
		}
		GHashTableIter it;
		gpointer key, value;
		g_hash_table_iter_init (&it, objects);
		while (g_hash_table_iter_next (&it, &key, &value)) {
			const MtaSite *s = sites->pdata[GPOINTER_TO_INT (key) - 1];
			mta_leak_set_add (set, s->function, s->file, s->line, s->object, NULL,
					  GPOINTER_TO_SIZE (value), 0);
			mta_leak_set_set_kind (set, label);
		}
	}
}

gboolean
mta_is_sqlite_file (const char *path)
{
	char magic[16];
	struct stat st;
	int fd = mta_open_regular (path);   /* a FIFO is a trace: not opened here */
	gboolean r = FALSE;

	if (fd < 0)
		return FALSE;
	if (fstat (fd, &st) == 0 && read (fd, magic, sizeof magic) == (ssize_t) sizeof magic &&
	    memcmp (magic, "SQLite format 3", 16) == 0)
		r = TRUE;
	close (fd);
	return r;
}

/* The live bytes over the run of the site just added (diff --html draws
 * both runs' curves), on a scale both runs share: % of the run's lines
 * (the last timeline sample is the end). */
static void
keep_curve (MtaLeakSet *set, const MtaRun *run, const MtaRunInfo *info, const MtaSite *s)
{
	MtaLeakSite *added = set->sites->pdata[set->sites->len - 1];

	if (!s->charged || info->tl_len == 0 || info->tl_lines[info->tl_len - 1] == 0)
		return;
	if (set->curve_x == NULL) {
		set->ncurve = info->tl_len;
		set->curve_x = g_new (double, info->tl_len);
		for (guint k = 0; k < info->tl_len; k++)
			set->curve_x[k] = 100.0 * (double) info->tl_lines[k] /
					  (double) info->tl_lines[info->tl_len - 1];   /* the end */
	}
	added->curve = g_new (uint64_t, info->tl_len);
	mta_run_site_timeline (run, s, added->curve, NULL);
}

void
mta_leak_set_no_verdicts (const char *name, GError **error)
{
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		     "--leaks: '%s' has no reachability verdicts ('# reach' lines): record with "
		     "'mtrec --reach' (MTREC_REACH=1)", name);
}

MtaLeakSet *
mta_leak_set_from_traces (const char *name, char **traces, guint ntraces,
			  const MtaLeakSetOptions *opts, GError **error)
{
	g_autoptr (MtaLeakSet) set = mta_leak_set_new (name);
	MtaSymbolizer *sym = mta_symbolizer_new (opts->sysroot, opts->warn, NULL);
	mta_symbolizer_set_binary (sym, opts->binary);
	g_autoptr (MtaRun) run = mta_run_new (sym, opts->wrappers, opts->binary);
	MtaReader *reader = mta_reader_new (mta_run_line, run);

	mta_run_set_leak_kinds (run, opts->leak_kinds);
	gboolean ok = TRUE;

	mta_reader_set_progress (reader, opts->quiet);
	double newest = 0;

	/* rotated parts in the order of their "# part" headers, as the
	 * other analyses read them */
	int n = (int) ntraces;
	ok = mta_parts_order (traces, &n, opts->warn, NULL, error);
	ntraces = (guint) n;
	for (guint i = 0; i < ntraces && ok; i++)
		mta_run_add_trace (run, traces[i]);
	for (guint i = 0; i < ntraces && ok; i++) {
		struct stat st;
		if (strcmp (traces[i], "-") != 0 && stat (traces[i], &st) == 0) {
			if (S_ISDIR (st.st_mode)) {
				g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR,
					     "cannot read '%s': %s", traces[i], g_strerror (EISDIR));
				ok = FALSE;
				break;
			}
			newest = MAX (newest, (double) st.st_mtim.tv_sec + (double) st.st_mtim.tv_nsec / 1e9);
		}
		ok = mta_reader_read_file (reader, traces[i], error);
	}
	ok = ok && mta_reader_check_events (reader, error);
	if (ok) {
		uint64_t bad = mta_reader_bad_lines (reader);
		mta_run_finish (run, mta_reader_lines (reader), bad);
		if (bad > 0 && !opts->quiet) {
			fflush (stdout);
			fprintf (stderr, "mtanalyze: %s: %" PRIu64 " unreadable line%s\n", name, bad,
				 bad == 1 ? "" : "s");
		}

		const MtaRunInfo *info = mta_run_info (run);
		if (opts->leak_kinds != 0 && !info->reach && info->all_leaked_blocks > 0) {
			if (mta_run_left_before_exit (info))
				g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
					     "--leaks: '%s' has no reachability verdicts: %s", name,
					     MTA_RUN_LEFT_BEFORE_EXIT);
			else
				mta_leak_set_no_verdicts (name, error);
			ok = FALSE;
		}
	}
	if (ok) {
		const MtaRunInfo *info = mta_run_info (run);
		GPtrArray *sites = mta_run_sites (run);
		GPtrArray *paths = mta_run_paths (run);
		/* the caller of each site: that of its path that leaked most */
		int64_t *best = g_new (int64_t, sites->len);
		for (guint i = 0; i < sites->len; i++)
			best[i] = -1;
		for (guint i = 0; i < paths->len; i++) {
			const MtaPath *p = paths->pdata[i];
			if (p->site < 0 || p->leaked_blocks == 0 || p->site_frame + 1 >= p->nframes)
				continue;
			int64_t *b = &best[p->site];
			if (*b < 0 || p->leaked_bytes > ((MtaPath *) paths->pdata[*b])->leaked_bytes)
				*b = i;
		}
		set->start = info->start ? g_ascii_strtod (info->start, NULL) : newest;
		set->leaked_blocks = info->leaked_blocks;
		set->leaked_bytes = info->leaked_bytes;
		for (guint i = 0; i < sites->len; i++) {
			const MtaSite *s = sites->pdata[i];
			const char *caller = NULL;
			if (s->t->leaked_blocks == 0)
				continue;
			if (best[i] >= 0) {
				const MtaPath *p = paths->pdata[best[i]];
				caller = ((MtaSite *) sites->pdata[p->frames[p->site_frame + 1]])->function;
			}
			mta_leak_set_add (set, s->function, s->file, s->line, s->object, caller,
					  s->t->leaked_blocks, s->t->leaked_bytes);
			keep_curve (set, run, info, s);
		}
		add_kind_sites (set, run);
		g_free (best);
	}
	mta_reader_free (reader);
	mta_run_free (g_steal_pointer (&run));   /* before the symbolizer it uses */
	mta_symbolizer_free (sym);
	return ok ? g_steal_pointer (&set) : NULL;   /* NOLINT(clang-analyzer-unix.Malloc): g_autoptr */
}
