/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analysis.c -- one reading of the trace feeds an MtaRun; then the run goes
 * to the database, to the files asked for and to the writer of standard
 * output that outputs.c chose (the tables below), and the exit status says
 * whether it leaks (only leaks of the --growth classes count).
 *
 * The database is opened (and checked, and created when missing) before
 * the trace is read, so that a wrong --db argument fails at once and
 * nothing is written to it.  With --all-events the load's transaction
 * spans the reading, since the events are not kept in memory.
 *
 * The gate fails on proven leaks only (mta_run_site_proven): a trace that
 * stopped early cannot prove that a block was never freed.
 */
#include "analysis.h"
#include "db-conn.h"
#include "db-load.h"
#include "folded-out.h"
#include "html-out.h"
#include "pprof-out.h"
#include "json-out.h"
#include "kinds.h"
#include "run.h"
#include "site-report.h"
#include "wrappers.h"

#include <inttypes.h>

struct MtaAnalysis {
	MtaAnalysisOptions opts;
	MtaWrappers *wrappers;
	MtaRun *run;
	MtaDb *db;
	const MtaLineageInfo *lineage;
};

void
mta_analysis_set_lineage (MtaAnalysis *a, const MtaLineageInfo *lineage)
{
	a->lineage = lineage;
}

void
mta_analysis_free (MtaAnalysis *a)
{
	if (a == NULL)
		return;
	mta_db_close (a->db);
	mta_run_free (a->run);
	mta_wrappers_free (a->wrappers);
	g_free (a);
}

static gboolean
event_to_db (const MtaRunEvent *ev, gpointer data, GError **error)
{
	return mta_db_event (data, ev, error);
}

MtaAnalysis *
mta_analysis_new (const MtaAnalysisOptions *opts, MtaSymbolizer *sym, const char *binary,
		  char **traces, int ntraces, GError **error)
{
	g_autoptr (MtaAnalysis) a = g_new0 (MtaAnalysis, 1);

	a->opts = *opts;
	a->wrappers = opts->wrappers;
	a->run = mta_run_new (sym, a->wrappers, binary);
	mta_run_set_auto_skip (a->run, !opts->no_auto_skip);
	mta_run_set_leak_kinds (a->run, opts->leak_kinds);
	for (int i = 0; i < ntraces; i++)
		mta_run_add_trace (a->run, traces[i]);
	if (opts->db != NULL) {
		if ((a->db = mta_db_open (opts->db, error)) == NULL)
			return NULL;   /* NOLINT(clang-analyzer-unix.Malloc): g_autoptr */
		if (opts->host != NULL)
			mta_db_set_host (a->db, opts->host);
		if (opts->all_events) {
			if (!mta_db_begin (a->db, a->run, TRUE, error))
				return NULL;   /* NOLINT(clang-analyzer-unix.Malloc): g_autoptr */
			mta_run_set_event_func (a->run, event_to_db, a->db);
		}
	}
	return g_steal_pointer (&a);
}

gboolean
mta_analysis_line (const MtaLine *line, gpointer data, GError **error)
{
	MtaAnalysis *a = data;
	return mta_run_line (line, a->run, error);
}

/* ------------------------------------------------------------ writers */

typedef gboolean (*FileWriter) (const char *path, MtaAnalysis *a, GError **error);
typedef void (*OutWriter) (MtaAnalysis *a, int64_t run_id, FILE *out);

static gboolean
file_html (const char *path, MtaAnalysis *a, GError **error)
{
	return mta_html_write_report (path, a->run, a->opts.frames, a->opts.growth, error);
}

static gboolean
file_pprof (const char *path, MtaAnalysis *a, GError **error)
{
	return mta_pprof_write (path, a->run, error);
}

static const FileWriter file_writers[MTA_FILE_N] = {
	[MTA_FILE_HTML] = file_html,
	[MTA_FILE_PPROF] = file_pprof,
};

static void
out_folded (MtaAnalysis *a, int64_t run_id, FILE *out)
{
	(void) run_id;
	mta_folded_write (a->run, a->opts.outputs.folded, a->opts.outputs.folded_blocks,
			  a->opts.growth, out);
}

static void
out_json (MtaAnalysis *a, int64_t run_id, FILE *out)
{
	mta_json_write_growth (a->run, a->opts.frames, a->opts.growth, run_id, a->lineage, out);
}

static void
out_text (MtaAnalysis *a, int64_t run_id, FILE *out)
{
	(void) run_id;
	mta_site_report_growth (a->run, (guint) a->opts.frames, a->opts.growth, out);
}

static void
out_loaded (MtaAnalysis *a, int64_t run_id, FILE *out)
{
	const MtaRunInfo *info = mta_run_info (a->run);
	g_autofree char *shown = mta_conn_redact (a->opts.db);

	fprintf (out, "run %" PRId64 " loaded into '%s': %" PRIu64 " leaked block%s, %" PRIu64
		 " bytes, %" PRIu64 " bad free%s\n", run_id, shown, info->leaked_blocks,
		 info->leaked_blocks == 1 ? "" : "s", info->leaked_bytes, info->bad_frees,
		 info->bad_frees == 1 ? "" : "s");
}

static void
out_written (MtaAnalysis *a, int64_t run_id, FILE *out)
{
	(void) run_id;
	for (int i = 0; i < MTA_FILE_N; i++)
		if (a->opts.outputs.files[i] != NULL)
			mta_html_print_written (a->opts.outputs.files[i], mta_run_info (a->run), out);
}

/* The script's report is not the run's: mtrace-compat.c prints it. */
static const OutWriter out_writers[MTA_OUT_N] = {
	[MTA_OUT_TEXT] = out_text,
	[MTA_OUT_JSON] = out_json,
	[MTA_OUT_FOLDED] = out_folded,
	[MTA_OUT_LOADED] = out_loaded,
	[MTA_OUT_WRITTEN] = out_written,
};

int
mta_analysis_finish (MtaAnalysis *a, uint64_t lines, uint64_t unreadable_lines, FILE *out,
		     GError **error)
{
	const MtaRunInfo *info = mta_run_info (a->run);
	int64_t run_id = 0;

	mta_run_finish (a->run, lines, unreadable_lines);
	/* a gate on kinds the trace cannot tell must not pass in silence */
	if (a->opts.leak_kinds != 0 && !info->reach && info->all_leaked_blocks > 0) {
		g_autoptr (GString) traces = g_string_new (NULL);
		for (guint i = 0; i < info->traces->len; i++)
			g_string_append_printf (traces, "%s'%s'", i ? ", " : "",
						(const char *) info->traces->pdata[i]);
		if (info->reach_refused->len > 0)
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "--leaks: %s %s no reachability verdicts: the recorder did not "
				     "make the scan asked for (%s)", traces->str,
				     info->traces->len == 1 ? "has" : "have",
				     (const char *) info->reach_refused->pdata[info->reach_refused->len - 1]);
		else if (mta_run_left_before_exit (info))
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "--leaks: %s %s no reachability verdicts: %s", traces->str,
				     info->traces->len == 1 ? "has" : "have", MTA_RUN_LEFT_BEFORE_EXIT);
		else
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "--leaks: %s %s no reachability verdicts ('# reach' lines): record "
				     "with 'mtrec --reach' (MTREC_REACH=1)", traces->str,
				     info->traces->len == 1 ? "has" : "have");
		return -1;
	}
	if (a->db != NULL) {
		if (!a->opts.all_events && !mta_db_begin (a->db, a->run, FALSE, error))
			return -1;
		if (!mta_db_store (a->db, a->run, &run_id, error))
			return -1;
	}
	/* the files first: when one cannot be written, nothing is printed */
	for (int i = 0; i < MTA_FILE_N; i++) {
		const char *path = a->opts.outputs.files[i];
		if (path != NULL && file_writers[i] != NULL && !file_writers[i] (path, a, error))
			return -1;
	}
	OutWriter write = out_writers[a->opts.outputs.out];
	g_return_val_if_fail (write != NULL, -1);
	write (a, run_id, out);
	if (a->opts.growth == 0 && a->opts.leak_kinds != 0)
		return info->leaked_blocks > 0;
	if (a->opts.growth == 0)
		return info->leaked_blocks > 0 || mta_kinds_any_leak (mta_run_kinds (a->run));
	/* Only proven leaks fail the gate: in a run the recorder did not
	 * record whole, classes are those of the recorded window, and the
	 * blocks live when it stopped are not leaks yet (issue 18). */
	g_autoptr (GArray) gated = mta_run_leak_sites_filtered (a->run, a->opts.growth);
	GPtrArray *sites = mta_run_sites (a->run);
	for (guint i = 0; i < gated->len; i++)
		if (mta_run_site_proven (a->run, sites->pdata[g_array_index (gated, uint32_t, i)]))
			return 1;
	return 0;
}
