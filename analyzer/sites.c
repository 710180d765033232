/* sites.c -- one reading of the trace feeds an MtaRun; then the run goes
 * to the database, the JSON writer or the site report.
 *
 * The database is opened (and checked, and created when missing) before
 * the trace is read, so that a wrong --db argument fails at once and
 * nothing is written to it.  With --all-events the load's transaction
 * spans the reading, since the events are not kept in memory.
 */
#include "sites.h"
#include "db-load.h"
#include "json-out.h"
#include "run.h"
#include "site-report.h"
#include "wrappers.h"

#include <inttypes.h>

struct MtaSites {
	MtaSitesOptions opts;
	MtaWrappers *wrappers;
	MtaRun *run;
	MtaDb *db;
};

void
mta_sites_free (MtaSites *s)
{
	if (s == NULL)
		return;
	mta_db_close (s->db);
	mta_run_free (s->run);
	mta_wrappers_free (s->wrappers);
	g_free (s);
}

static gboolean
event_to_db (const MtaRunEvent *ev, gpointer data, GError **error)
{
	return mta_db_event (data, ev, error);
}

MtaSites *
mta_sites_new (const MtaSitesOptions *opts, MtaSymbolizer *sym, const char *binary,
	       char **traces, int ntraces, GError **error)
{
	g_autoptr (MtaSites) s = g_new0 (MtaSites, 1);

	s->opts = *opts;
	if (!opts->no_skip) {
		s->wrappers = mta_wrappers_new ();
		if (!mta_wrappers_load_default (s->wrappers, error))
			return NULL;   /* NOLINT(clang-analyzer-unix.Malloc): g_autoptr */
		for (char **p = opts->skip; p && *p; p++)
			mta_wrappers_add (s->wrappers, *p);
	}
	s->run = mta_run_new (sym, s->wrappers, binary);
	for (int i = 0; i < ntraces; i++)
		mta_run_add_trace (s->run, traces[i]);
	if (opts->db != NULL) {
		if ((s->db = mta_db_open (opts->db, error)) == NULL)
			return NULL;
		if (opts->all_events) {
			if (!mta_db_begin (s->db, s->run, TRUE, error))
				return NULL;
			mta_run_set_event_func (s->run, event_to_db, s->db);
		}
	}
	return g_steal_pointer (&s);
}

gboolean
mta_sites_line (const MtaLine *line, gpointer data, GError **error)
{
	MtaSites *s = data;
	return mta_run_line (line, s->run, error);
}

int
mta_sites_finish (MtaSites *s, uint64_t lines, uint64_t unreadable_lines, FILE *out, GError **error)
{
	const MtaRunInfo *info = mta_run_info (s->run);
	int64_t run_id = 0;

	mta_run_finish (s->run, lines, unreadable_lines);
	if (s->db != NULL) {
		if (!s->opts.all_events && !mta_db_begin (s->db, s->run, FALSE, error))
			return -1;
		if (!mta_db_store (s->db, s->run, &run_id, error))
			return -1;
	}
	if (s->opts.json)
		mta_json_write (s->run, s->opts.frames, run_id, out);
	else if (s->opts.by_site)
		mta_site_report (s->run, (guint) s->opts.frames, out);
	else
		fprintf (out, "run %" PRId64 " loaded into '%s': %" PRIu64 " leaked block%s, %" PRIu64
			 " bytes, %" PRIu64 " bad free%s\n", run_id, s->opts.db, info->leaked_blocks,
			 info->leaked_blocks == 1 ? "" : "s", info->leaked_bytes, info->bad_frees,
			 info->bad_frees == 1 ? "" : "s");
	return info->leaked_blocks > 0;
}
