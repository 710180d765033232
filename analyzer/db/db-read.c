/* db-read.c -- reading a run's leaking sites back from a database loaded
 * with --db (share/schema.sql), for `mtanalyze diff DB:RUN ...`.
 *
 * The file is opened read-only and must be one of ours (application_id),
 * so that diff never writes to it nor takes another program's database
 * for an empty one.  The caller of a site is taken, as for a trace, from
 * the stack that leaked the most there: its frame one level out.
 *
 * A postgresql:// URI is read the same way (db-conn.c), with the same
 * SQL: a run of a fleet's server compares with a run of a file or a
 * trace.
 */
#include "db-conn.h"
#include "leak-set.h"
#include "reach.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <string.h>

#define MTA_APPLICATION_ID 0x6d747263   /* "mtrc", as db-load.c */

#define MTA_DB_READ_ERROR (mta_db_read_error_quark ())
G_DEFINE_QUARK (mta-db-read-error-quark, mta_db_read_error)

/* The run: ?1 itself when ?2 is 0, else counted back from the last (?2
 * rows skipped: 0 the last, 1 the one before). */
static const char sql_run[] =
	"SELECT id, start_epoch, leaked_blocks, leaked_bytes FROM runs"
	" WHERE id = ?1 OR ?1 < 0 ORDER BY id DESC LIMIT 1 OFFSET ?2";

/* The caller of a site (SITE: its id) of the run ?1 in the site's most
 * leaking stack. */
#define SQL_CALLER(site) \
	"  (SELECT cs.function FROM stacks k" \
	"   JOIN frames f ON f.stack_id = k.id AND f.level = k.site_level + 1" \
	"   JOIN sites cs ON cs.id = f.site_id" \
	"   WHERE k.run_id = ?1 AND k.site_id = " site " AND k.leaked_blocks > 0" \
	"   ORDER BY k.leaked_bytes DESC, k.id LIMIT 1)"

/* The run's leaking sites, each with the caller in its most leaking stack. */
static const char sql_sites[] =
	"SELECT s.function, s.file, s.line, s.object, st.leaked_blocks, st.leaked_bytes,"
	SQL_CALLER ("st.site_id")
	" FROM site_stats st JOIN sites s ON s.id = st.site_id"
	" WHERE st.run_id = ?1 AND st.leaked_blocks > 0";

/* v6, --leaks: the run's leaking sites counting only the blocks of the
 * kinds named (?2: ",definite,indirect,"), from leaks.reach; and whether
 * the run has verdicts at all (a database from before v6 has no column
 * for them: none). */
static const char sql_sites_of_kinds[] =
	"SELECT s.function, s.file, s.line, s.object, count(*), sum (l.size),"
	SQL_CALLER ("s.id")
	" FROM leaks l JOIN sites s ON s.id = l.site_id"
	" WHERE l.run_id = ?1 AND ?2 LIKE '%,' || l.reach || ',%' GROUP BY s.id";
static const char sql_has_verdicts[] =
	"SELECT count(*) FROM runs WHERE id = ?1 AND reach_line IS NOT NULL";
/* v6: the kinds the run stored, when it was loaded with --leaks (NULL: all). */
static const char sql_stored_kinds[] =
	"SELECT leak_kinds FROM runs WHERE id = ?1";

/* v5: the tracked kinds' leaking sites, and the sites that took the
 * references of unbalanced objects (dropped, for objects below zero),
 * as leak-set.c makes them from a trace.  A database from before v5 has
 * no such tables, and its runs no kinds. */
static const char sql_kind_sites[] =
	"SELECT k.kind, s.function, s.file, s.line, s.object, k.leaked_blocks, k.leaked_bytes"
	" FROM kind_stats k JOIN sites s ON s.id = k.site_id"
	" WHERE k.run_id = ?1 AND k.leaked_blocks > 0"
	" UNION ALL "
	"SELECT r.kind || ' references', s.function, s.file, s.line, s.object, sum (r.objects), 0"
	" FROM refcounts r JOIN refcount_paths p"
	"  ON p.run_id = r.run_id AND p.kind = r.kind AND p.entry = r.entry"
	"  AND p.op = CASE WHEN r.below_zero = 1 THEN 'u' ELSE 'r' END"
	" JOIN sites s ON s.id = p.site_id"
	" WHERE r.run_id = ?1 GROUP BY r.kind, s.id";

static gboolean
fail (GError **error, MtaConn *c)
{
	g_set_error (error, MTA_DB_READ_ERROR, 0, "cannot read '%s': %s", mta_conn_name (c),
		     mta_conn_errmsg (c));
	return FALSE;
}

/* The integer of the one row SQL makes with ?1 ID bound, or the text of
 * its column into *OUT when OUT is given; FALSE on an error (in C's
 * message) or without a row. */
static gboolean
query_one (MtaConn *c, const char *sql, int64_t id, int64_t *v, char **out)
{
	MtaStmt *st = mta_stmt_prepare (c, sql);
	gboolean ok;

	if (st == NULL)
		return FALSE;
	mta_stmt_bind_int64 (st, 1, id);
	ok = mta_stmt_step (st) == MTA_STEP_ROW;
	if (ok && v != NULL)
		*v = mta_stmt_int64 (st, 0);
	if (ok && out != NULL)
		*out = mta_stmt_is_null (st, 0) ? NULL : g_strdup (mta_stmt_text (st, 0));
	mta_stmt_finalize (st);
	return ok;
}

/* Whether TABLE has COLUMN: a database from before v6 has no column for
 * verdicts, and SQLite refuses a statement naming it even in a branch
 * never taken ("no such column: reach_line"). */
static gboolean
has_column (MtaConn *c, const char *table, const char *column, gboolean *has)
{
	int n = mta_conn_has (c, table, column);

	*has = n > 0;
	return n >= 0;
}

/* --leaks KINDS on run ID: FALSE with *ERROR set (an engine error: in C's
 * message, *ERROR left unset) when the run cannot answer for them -- it
 * has no verdicts, or was loaded with --leaks of fewer kinds, whose other
 * blocks it did not store (they would all look new) -- else *VERDICTS:
 * whether it has verdicts at all. */
static gboolean
check_kinds (MtaConn *c, int64_t id, const char *runname, const MtaLeakSet *set, guint leak_kinds,
	     gboolean *verdicts, GError **error)
{
	gboolean has = FALSE;
	int64_t n = 0;
	g_autofree char *stored = NULL;
	guint stored_mask = 0;

	if (!has_column (c, "runs", "reach_line", &has) ||
	    (has && !query_one (c, sql_has_verdicts, id, &n, NULL)))
		return FALSE;
	*verdicts = n > 0;
	if (!*verdicts && set->leaked_blocks > 0) {
		mta_leak_set_no_verdicts (runname, error);
		return FALSE;
	}
	if (!has_column (c, "runs", "leak_kinds", &has) ||
	    (has && !query_one (c, sql_stored_kinds, id, NULL, &stored)))
		return FALSE;
	if (stored == NULL || !mta_reach_parse_kinds (stored, &stored_mask, NULL) ||
	    (leak_kinds & ~stored_mask) == 0)
		return TRUE;
	g_autofree char *asked = mta_reach_mask_names (leak_kinds & ~stored_mask, ",");
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		     "--leaks: '%s' holds only the blocks of the kinds it was loaded with (--leaks %s): "
		     "it cannot say which of its blocks were %s (load its trace again without --leaks, "
		     "or compare only %s)", runname, stored, asked, stored);
	return FALSE;
}

/* FALSE on an engine error (in C's message). */
static gboolean
read_kind_sites (MtaLeakSet *set, MtaConn *c, int64_t id)
{
	int has = mta_conn_has (c, "refcount_paths", NULL);
	MtaStmt *st;
	int rc;

	if (has <= 0)
		return has == 0;
	if ((st = mta_stmt_prepare (c, sql_kind_sites)) == NULL)
		return FALSE;
	mta_stmt_bind_int64 (st, 1, id);
	while ((rc = mta_stmt_step (st)) == MTA_STEP_ROW) {
		mta_leak_set_add (set, mta_stmt_text (st, 1), mta_stmt_text (st, 2),
				  (unsigned) mta_stmt_int64 (st, 3), mta_stmt_text (st, 4), NULL,
				  (uint64_t) mta_stmt_int64 (st, 5), (uint64_t) mta_stmt_int64 (st, 6));
		mta_leak_set_set_kind (set, mta_stmt_text (st, 0));
	}
	mta_stmt_finalize (st);
	return rc == MTA_STEP_DONE;
}

/* PATH opened read-only, or the server of a URI; NULL with ERROR set. */
static MtaConn *
open_db (const char *path, GError **error)
{
	sqlite3 *db = NULL;
	int64_t app;

	if (mta_conn_is_uri (path)) {
		MtaConn *c = mta_conn_open_pg (path, error);
		if (c == NULL)
			return NULL;
		if ((app = mta_conn_pragma (c, "application_id")) < 0) {
			fail (error, c);
			mta_conn_close (c);
			return NULL;
		}
		if (app != MTA_APPLICATION_ID) {
			g_set_error (error, MTA_DB_READ_ERROR, 0, "cannot read '%s': no run of mtanalyze --db "
				     "there", mta_conn_name (c));
			mta_conn_close (c);
			return NULL;
		}
		return c;
	}
	if (!mta_is_sqlite_file (path)) {
		g_set_error (error, MTA_DB_READ_ERROR, 0, "cannot read '%s': not a SQLite database", path);
		return NULL;
	}
	int rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL);
	MtaConn *c = mta_conn_wrap_sqlite (db, path);
	if (rc != SQLITE_OK || db == NULL) {
		if (db == NULL)
			g_set_error (error, MTA_DB_READ_ERROR, 0, "cannot read '%s': out of memory", path);
		else
			fail (error, c);
		mta_conn_close (c);
		return NULL;
	}
	sqlite3_busy_timeout (db, 60 * 1000);
	if ((app = mta_conn_pragma (c, "application_id")) < 0) {
		fail (error, c);
		mta_conn_close (c);
		return NULL;
	}
	if (app != MTA_APPLICATION_ID) {
		g_set_error (error, MTA_DB_READ_ERROR, 0,
			     "cannot read '%s': not a database of mtanalyze --db", path);
		mta_conn_close (c);
		return NULL;
	}
	return c;
}

MtaLeakSet *
mta_leak_set_from_db (const char *name, const char *path, int64_t run, guint leak_kinds,
		      GError **error)
{
	g_autofree char *shown = mta_conn_redact (name);
	g_autoptr (MtaLeakSet) set = mta_leak_set_new (shown);
	g_autofree char *runname = NULL;
	g_autofree char *kinds = NULL, *names = NULL;
	MtaConn *c = open_db (path, error);
	MtaStmt *st = NULL;
	gboolean ok = FALSE;
	int64_t id = 0;
	int rc;

	if (c == NULL)
		return NULL;
	if ((st = mta_stmt_prepare (c, sql_run)) == NULL) {
		fail (error, c);
		goto out;
	}
	mta_stmt_bind_int64 (st, 1, run);
	mta_stmt_bind_int64 (st, 2, run > 0 ? 0 : -run - 1);
	rc = mta_stmt_step (st);
	if (rc == MTA_STEP_DONE) {
		if (run > 0)
			g_set_error (error, MTA_DB_READ_ERROR, 0, "'%s' has no run %" PRId64, mta_conn_name (c), run);
		else
			g_set_error (error, MTA_DB_READ_ERROR, 0, "'%s' has fewer than %" PRId64 " run%s",
				     mta_conn_name (c), -run, run == -1 ? "" : "s");
		goto out;
	}
	if (rc != MTA_STEP_ROW) {
		fail (error, c);
		goto out;
	}
	id = mta_stmt_int64 (st, 0);
	set->start = mta_stmt_double (st, 1);
	set->leaked_blocks = (uint64_t) mta_stmt_int64 (st, 2);
	set->leaked_bytes = (uint64_t) mta_stmt_int64 (st, 3);
	mta_stmt_finalize (st);
	st = NULL;

	runname = g_strdup_printf ("%s (run %" PRId64 ")", shown, id);
	if (leak_kinds != 0) {
		gboolean verdicts = FALSE;
		if (!check_kinds (c, id, runname, set, leak_kinds, &verdicts, error)) {
			if (error != NULL && *error == NULL)
				fail (error, c);
			goto out;
		}
		names = mta_reach_mask_names (leak_kinds, ",");
		kinds = g_strdup_printf (",%s,", names);
		set->leaked_blocks = set->leaked_bytes = 0;
		if (!verdicts)     /* nothing leaked: no sites, whatever the schema */
			goto kinds;
	}
	if ((st = mta_stmt_prepare (c, leak_kinds ? sql_sites_of_kinds : sql_sites)) == NULL) {
		fail (error, c);
		goto out;
	}
	mta_stmt_bind_int64 (st, 1, id);
	if (leak_kinds)
		mta_stmt_bind_text (st, 2, kinds);
	while ((rc = mta_stmt_step (st)) == MTA_STEP_ROW) {
		uint64_t blocks = (uint64_t) mta_stmt_int64 (st, 4), bytes = (uint64_t) mta_stmt_int64 (st, 5);
		mta_leak_set_add (set, mta_stmt_text (st, 0), mta_stmt_text (st, 1),
				  (unsigned) mta_stmt_int64 (st, 2), mta_stmt_text (st, 3), mta_stmt_text (st, 6),
				  blocks, bytes);
		if (leak_kinds) {
			set->leaked_blocks += blocks;
			set->leaked_bytes += bytes;
		}
	}
	if (rc != MTA_STEP_DONE) {
		fail (error, c);
		goto out;
	}
	mta_stmt_finalize (st);
	st = NULL;
kinds:
	if (!read_kind_sites (set, c, id)) {
		fail (error, c);
		goto out;
	}
	g_free (set->name);
	set->name = g_steal_pointer (&runname);
	ok = TRUE;
out:
	mta_stmt_finalize (st);
	mta_conn_close (c);
	return ok ? g_steal_pointer (&set) : NULL;
}
