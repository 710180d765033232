/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* db-read.c -- reading a run's leaking sites back from a database loaded
 * with --db (share/schema.sql), for `mtanalyze diff DB:RUN ...`.
 *
 * The file is opened read-only and must be one of ours (application_id),
 * so that diff never writes to it nor takes another program's database
 * for an empty one.  The caller of a site is taken, as for a trace, from
 * the stack that leaked the most there: its frame one level out.
 */
#include "leak-set.h"
#include "reach.h"

#include <inttypes.h>
#include <sqlite3.h>

#define MTA_APPLICATION_ID 0x6d747263   /* "mtrc", as db-load.c */

#define MTA_DB_READ_ERROR (mta_db_read_error_quark ())
G_DEFINE_QUARK (mta-db-read-error-quark, mta_db_read_error)

/* The run: RUN itself when positive, else counted back from the last
 * (-1 the last, -2 the one before). */
static const char sql_run[] =
	"SELECT id, start_epoch, leaked_blocks, leaked_bytes FROM runs"
	" WHERE (?1 > 0 AND id = ?1) OR ?1 < 0 ORDER BY id DESC LIMIT 1 OFFSET max (0, -?1 - 1)";

/* The caller of a site (X: the table with run_id and site_id) in the
 * site's most leaking stack. */
#define SQL_CALLER(x) \
	"  (SELECT cs.function FROM stacks k" \
	"   JOIN frames f ON f.stack_id = k.id AND f.level = k.site_level + 1" \
	"   JOIN sites cs ON cs.id = f.site_id" \
	"   WHERE k.run_id = " x ".run_id AND k.site_id = " x ".site_id AND k.leaked_blocks > 0" \
	"   ORDER BY k.leaked_bytes DESC, k.id LIMIT 1)"

/* The run's leaking sites, each with the caller in its most leaking stack. */
static const char sql_sites[] =
	"SELECT s.function, s.file, s.line, s.object, st.leaked_blocks, st.leaked_bytes,"
	SQL_CALLER ("st")
	" FROM site_stats st JOIN sites s ON s.id = st.site_id"
	" WHERE st.run_id = ?1 AND st.leaked_blocks > 0";

/* v6, --leaks: the run's leaking sites counting only the blocks of the
 * kinds named (?2: ",definite,indirect,"), from leaks.reach; and whether
 * the run has verdicts at all (a database from before v6 has no column
 * for them: none). */
static const char sql_sites_of_kinds[] =
	"SELECT s.function, s.file, s.line, s.object, count(*), sum (l.size),"
	SQL_CALLER ("l")
	" FROM leaks l JOIN sites s ON s.id = l.site_id"
	" WHERE l.run_id = ?1 AND instr (?2, ',' || l.reach || ',') > 0 GROUP BY l.site_id";
static const char sql_has_verdicts[] =
	"SELECT count(*) FROM runs WHERE id = ?1 AND reach_line IS NOT NULL";
/* v6: the kinds the run stored, when it was loaded with --leaks (NULL: all). */
static const char sql_stored_kinds[] =
	"SELECT leak_kinds FROM runs WHERE id = ?1";
/* Whether table ?1 has column ?2: a database from before v6 has no
 * column for verdicts, and SQLite refuses a statement naming it even in a
 * branch never taken ("no such column: reach_line"). */
static const char sql_has_column[] =
	"SELECT count(*) FROM pragma_table_info (?1) WHERE name = ?2";

/* v5: the tracked kinds' leaking sites, and the sites that took the
 * references of unbalanced objects (dropped, for objects below zero),
 * as leak-set.c makes them from a trace.  A database from before v5 has
 * no such tables, and its runs no kinds. */
static const char sql_has_kinds[] =
	"SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'refcount_paths'";
static const char sql_kind_sites[] =
	"SELECT k.kind, s.function, s.file, s.line, s.object, k.leaked_blocks, k.leaked_bytes"
	" FROM kind_stats k JOIN sites s ON s.id = k.site_id"
	" WHERE k.run_id = ?1 AND k.leaked_blocks > 0"
	" UNION ALL "
	"SELECT r.kind || ' references', s.function, s.file, s.line, s.object, sum (r.objects), 0"
	" FROM refcounts r JOIN refcount_paths p"
	"  ON p.run_id = r.run_id AND p.kind = r.kind AND p.entry = r.entry"
	"  AND p.op = CASE WHEN r.below_zero THEN 'u' ELSE 'r' END"
	" JOIN sites s ON s.id = p.site_id"
	" WHERE r.run_id = ?1 GROUP BY r.kind, p.site_id";

static gboolean
fail (GError **error, sqlite3 *db, const char *path)
{
	g_set_error (error, MTA_DB_READ_ERROR, db ? sqlite3_errcode (db) : 0, "cannot read '%s': %s",
		     path, db ? sqlite3_errmsg (db) : "out of memory");
	return FALSE;
}

static const char *
text (sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text (st, col);
	return t ? (const char *) t : "";
}

/* The integer of the one row SQL makes with ?1 ID and ?2 TEXT bound (when
 * not NULL), or the text of its column into *OUT when OUT is given; FALSE
 * on an SQLite error (in DB's message). */
static gboolean
query_one (sqlite3 *db, const char *sql, int64_t id, const char *bind_text, const char *bind_text2,
	   int64_t *v, char **out)
{
	sqlite3_stmt *st = NULL;
	gboolean ok;

	if (sqlite3_prepare_v2 (db, sql, -1, &st, NULL) != SQLITE_OK)
		return FALSE;
	if (bind_text != NULL) {
		sqlite3_bind_text (st, 1, bind_text, -1, SQLITE_STATIC);
		sqlite3_bind_text (st, 2, bind_text2, -1, SQLITE_STATIC);
	} else {
		sqlite3_bind_int64 (st, 1, id);
	}
	ok = sqlite3_step (st) == SQLITE_ROW;
	if (ok && v != NULL)
		*v = sqlite3_column_int64 (st, 0);
	if (ok && out != NULL)
		*out = sqlite3_column_type (st, 0) == SQLITE_NULL ? NULL : g_strdup (text (st, 0));
	sqlite3_finalize (st);
	return ok;
}

static gboolean
has_column (sqlite3 *db, const char *table, const char *column, gboolean *has)
{
	int64_t n = 0;

	if (!query_one (db, sql_has_column, 0, table, column, &n, NULL))
		return FALSE;
	*has = n > 0;
	return TRUE;
}

/* --leaks KINDS on run ID: FALSE with *ERROR set (an SQLite error: in DB's
 * message, *ERROR left unset) when the run cannot answer for them -- it
 * has no verdicts, or was loaded with --leaks of fewer kinds, whose other
 * blocks it did not store (they would all look new) -- else *VERDICTS:
 * whether it has verdicts at all. */
static gboolean
check_kinds (sqlite3 *db, int64_t id, const char *runname, const MtaLeakSet *set, guint leak_kinds,
	     gboolean *verdicts, GError **error)
{
	gboolean has = FALSE;
	int64_t n = 0;
	g_autofree char *stored = NULL;
	guint stored_mask = 0;

	if (!has_column (db, "runs", "reach_line", &has) ||
	    (has && !query_one (db, sql_has_verdicts, id, NULL, NULL, &n, NULL)))
		return FALSE;
	*verdicts = n > 0;
	if (!*verdicts && set->leaked_blocks > 0) {
		mta_leak_set_no_verdicts (runname, error);
		return FALSE;
	}
	if (!has_column (db, "runs", "leak_kinds", &has) ||
	    (has && !query_one (db, sql_stored_kinds, id, NULL, NULL, NULL, &stored)))
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

/* FALSE on an SQLite error (in DB's message). */
static gboolean
read_kind_sites (MtaLeakSet *set, sqlite3 *db, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2 (db, sql_has_kinds, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step (st) != SQLITE_ROW) {
		sqlite3_finalize (st);
		return FALSE;
	}
	gboolean has = sqlite3_column_int64 (st, 0) > 0;
	sqlite3_finalize (st);
	if (!has)
		return TRUE;
	if (sqlite3_prepare_v2 (db, sql_kind_sites, -1, &st, NULL) != SQLITE_OK)
		return FALSE;
	sqlite3_bind_int64 (st, 1, id);
	while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
		mta_leak_set_add (set, text (st, 1), text (st, 2), (unsigned) sqlite3_column_int64 (st, 3),
				  text (st, 4), NULL, (uint64_t) sqlite3_column_int64 (st, 5),
				  (uint64_t) sqlite3_column_int64 (st, 6));
		mta_leak_set_set_kind (set, text (st, 0));
	}
	sqlite3_finalize (st);
	return rc == SQLITE_DONE;
}

MtaLeakSet *
mta_leak_set_from_db (const char *name, const char *path, int64_t run, guint leak_kinds,
		      GError **error)
{
	g_autoptr (MtaLeakSet) set = mta_leak_set_new (name);
	g_autofree char *runname = NULL;
	g_autofree char *kinds = NULL, *names = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	gboolean ok = FALSE;
	int64_t id = 0;
	int rc;

	if (!mta_is_sqlite_file (path)) {
		g_set_error (error, MTA_DB_READ_ERROR, 0, "cannot read '%s': not a SQLite database", path);
		return NULL;
	}
	if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		fail (error, db, path);
		goto out;
	}
	sqlite3_busy_timeout (db, 60 * 1000);
	if (sqlite3_prepare_v2 (db, "PRAGMA application_id", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step (st) != SQLITE_ROW) {
		fail (error, db, path);
		goto out;
	}
	if (sqlite3_column_int64 (st, 0) != MTA_APPLICATION_ID) {
		g_set_error (error, MTA_DB_READ_ERROR, 0,
			     "cannot read '%s': not a database of mtanalyze --db", path);
		goto out;
	}
	sqlite3_finalize (st);
	st = NULL;

	if (sqlite3_prepare_v2 (db, sql_run, -1, &st, NULL) != SQLITE_OK) {
		fail (error, db, path);
		goto out;
	}
	sqlite3_bind_int64 (st, 1, run);
	rc = sqlite3_step (st);
	if (rc == SQLITE_DONE) {
		if (run > 0)
			g_set_error (error, MTA_DB_READ_ERROR, 0, "'%s' has no run %" PRId64, path, run);
		else
			g_set_error (error, MTA_DB_READ_ERROR, 0, "'%s' has fewer than %" PRId64 " run%s",
				     path, -run, run == -1 ? "" : "s");
		goto out;
	}
	if (rc != SQLITE_ROW) {
		fail (error, db, path);
		goto out;
	}
	id = sqlite3_column_int64 (st, 0);
	set->start = sqlite3_column_double (st, 1);
	set->leaked_blocks = (uint64_t) sqlite3_column_int64 (st, 2);
	set->leaked_bytes = (uint64_t) sqlite3_column_int64 (st, 3);
	sqlite3_finalize (st);
	st = NULL;

	runname = g_strdup_printf ("%s (run %" PRId64 ")", name, id);
	if (leak_kinds != 0) {
		gboolean verdicts = FALSE;
		if (!check_kinds (db, id, runname, set, leak_kinds, &verdicts, error)) {
			if (error != NULL && *error == NULL)
				fail (error, db, path);
			goto out;
		}
		names = mta_reach_mask_names (leak_kinds, ",");
		kinds = g_strdup_printf (",%s,", names);
		set->leaked_blocks = set->leaked_bytes = 0;
		if (!verdicts)     /* nothing leaked: no sites, whatever the schema */
			goto kinds;
	}
	if (sqlite3_prepare_v2 (db, leak_kinds ? sql_sites_of_kinds : sql_sites, -1, &st, NULL) != SQLITE_OK) {
		fail (error, db, path);
		goto out;
	}
	sqlite3_bind_int64 (st, 1, id);
	if (leak_kinds)
		sqlite3_bind_text (st, 2, kinds, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step (st)) == SQLITE_ROW) {
		uint64_t blocks = (uint64_t) sqlite3_column_int64 (st, 4), bytes = (uint64_t) sqlite3_column_int64 (st, 5);
		mta_leak_set_add (set, text (st, 0), text (st, 1), (unsigned) sqlite3_column_int64 (st, 2),
				  text (st, 3), text (st, 6), blocks, bytes);
		if (leak_kinds) {
			set->leaked_blocks += blocks;
			set->leaked_bytes += bytes;
		}
	}
	if (rc != SQLITE_DONE) {
		fail (error, db, path);
		goto out;
	}
	sqlite3_finalize (st);
	st = NULL;
kinds:
	if (!read_kind_sites (set, db, id)) {
		fail (error, db, path);
		goto out;
	}
	g_free (set->name);
	set->name = g_steal_pointer (&runname);
	ok = TRUE;
out:
	sqlite3_finalize (st);
	sqlite3_close (db);
	return ok ? g_steal_pointer (&set) : NULL;
}
