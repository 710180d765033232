/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* db-load.c -- all of mtanalyze's SQL but the schema (share/schema.sql).
 *
 * A load is one IMMEDIATE transaction: it takes the write lock at once (a
 * concurrent load waits for it, up to BUSY_TIMEOUT_MS, instead of failing
 * when it upgrades a read lock), runs the schema (idempotent), inserts the
 * run and commits.  A load that is killed leaves a hot journal that the
 * next opener rolls back: never a partial run.  Without --all-events the
 * trace is read before the transaction starts, so the lock is held for the
 * inserts only.  Every statement is prepared once per load and reused.
 *
 * The file is checked before SQLite is let near it: a file that is not a
 * database, or is read-only, is refused without being opened for writing.
 *
 * PostgreSQL (a postgresql:// URI, db-conn.c): many hosts load at once, so
 * nothing is locked for a load's length.  The schema is made, or checked,
 * under an advisory lock; the run's sites are added first, each in its
 * own short statement (ON CONFLICT DO NOTHING: the unique constraint on
 * sites decides, and a site two loads add is added once); then one
 * transaction inserts the run, which gets its id from the engine
 * (RETURNING) and a block of stack ids from the sequence of stacks.id,
 * moved past the block at once under the advisory lock.  A load that
 * fails leaves at most sites no run uses yet.
 */
#include "db-load.h"
#include "db-conn.h"
#include "growth.h"
#include "kinds.h"
#include "oom.h"
#include "pkgdata.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#define MTA_APPLICATION_ID 0x6d747263   /* "mtrc" */
#define MTA_SCHEMA_VERSION 8
#define BUSY_TIMEOUT_MS (10 * 60 * 1000)

#define MTA_DB_ERROR (mta_db_error_quark ())
G_DEFINE_QUARK (mta-db-error-quark, mta_db_error)

enum { ST_EVENT, ST_SITE_ADD, ST_SITE_ID, ST_STACK, ST_FRAME, ST_SITE_STATS, ST_LEAK,
       ST_BAD_FREE, ST_THREAD, ST_RUN_TOTALS, ST_RUN_V2, ST_RUN_V3, ST_RUN_V6, ST_TIMELINE, ST_SITE_TIMELINE,
       ST_KIND, ST_KIND_STATS, ST_KIND_LEAK, ST_KIND_BAD_FREE, ST_REFCOUNT, ST_REFCOUNT_PATH, N_ST };

/* One statement per row kind; the run's id is always parameter 1 where
 * there is one. */
static const char *const sql_text[N_ST] = {
	[ST_EVENT] = "INSERT INTO events (run_id, line, op, address, size, stack_id, thread)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_SITE_ADD] = "INSERT INTO sites (function, file, line, object)"
		" VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
	[ST_SITE_ID] = "SELECT id FROM sites WHERE function = ?1 AND file = ?2 AND line = ?3"
		" AND object = ?4",
	[ST_STACK] = "INSERT INTO stacks (run_id, id, trace_stack, caller, site_id, site_level, depth,"
		" allocations, frees, bytes_allocated, leaked_blocks, leaked_bytes, bad_frees)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
	[ST_FRAME] = "INSERT INTO frames (stack_id, level, address, site_id, inlined, build_id,"
		" object_offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_SITE_STATS] = "INSERT INTO site_stats (run_id, site_id, allocations, frees, bytes_allocated,"
		" peak_live_bytes, leaked_blocks, leaked_bytes, bad_frees, first_line,"
		" temporary_allocations, peak_share_bytes, growth, growth_exponent)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	[ST_LEAK] = "INSERT INTO leaks (run_id, address, size, site_id, stack_id, line, thread, reach)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_BAD_FREE] = "INSERT INTO bad_frees (run_id, address, kind, site_id, stack_id, line, thread)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
	[ST_THREAD] = "INSERT INTO threads (run_id, tid, name) VALUES (?1, ?2, ?3)",
	[ST_RUN_TOTALS] = "UPDATE runs SET pid = ?2, ppid = ?3, exe = ?4, cmdline = ?5, start_time = ?6,"
		" start_epoch = ?7, stack_depth = ?8, lines = ?9, unreadable_lines = ?10, events = ?11,"
		" allocations = ?12, frees = ?13, reallocations = ?14, failed_allocations = ?15,"
		" duplicate_allocations = ?16, bytes_allocated = ?17, peak_live_bytes = ?18,"
		" leaked_blocks = ?19, leaked_bytes = ?20, bad_frees = ?21, build_id = ?22 WHERE id = ?1",
	[ST_RUN_V2] = "UPDATE runs SET peak_line = ?2, peak_time_ns = ?3, temporary_allocations = ?4,"
		" timeline_axis = ?5 WHERE id = ?1",
	[ST_RUN_V3] = "UPDATE runs SET stopped_line = ?2, stop_reason = ?3, lost_events = ?4,"
		" lost_reason = ?5, freeres = ?6 WHERE id = ?1",
	[ST_RUN_V6] = "UPDATE runs SET reach_line = ?2, reach_finished = ?3, reach_notes = ?4,"
		" leak_kinds = ?5, all_leaked_blocks = ?6, all_leaked_bytes = ?7 WHERE id = ?1",
	[ST_TIMELINE] = "INSERT INTO timeline (run_id, seq, line, time_ns) VALUES (?1, ?2, ?3, ?4)",
	[ST_SITE_TIMELINE] = "INSERT INTO site_timeline_ranges (run_id, site_id, seq, until_seq,"
		" live_blocks, live_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	/* v5: the tracked kinds */
	[ST_KIND] = "INSERT INTO kinds (run_id, kind, allocations, releases, bytes_allocated,"
		" leaked_blocks, leaked_bytes, bad_frees, references_taken, references_dropped)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_KIND_STATS] = "INSERT INTO kind_stats (run_id, kind, site_id, leaked_blocks, leaked_bytes,"
		" bad_frees, first_line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
		" ON CONFLICT (run_id, kind, site_id) DO UPDATE SET bad_frees = excluded.bad_frees,"
		" first_line = CASE WHEN excluded.first_line < kind_stats.first_line"
		" THEN excluded.first_line ELSE kind_stats.first_line END",
	[ST_KIND_LEAK] = "INSERT INTO kind_leaks (run_id, kind, address, size, site_id, stack_id, line,"
		" thread) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_KIND_BAD_FREE] = "INSERT INTO kind_bad_frees (run_id, kind, address, site_id, stack_id, line,"
		" thread) VALUES (?1, ?2, ?3, ?5, ?6, ?7, ?8)",   /* ?4: a leak's size */
	[ST_REFCOUNT] = "INSERT INTO refcounts (run_id, kind, entry, objects, net_count, below_zero,"
		" lowest_count, example, first_line) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	[ST_REFCOUNT_PATH] = "INSERT INTO refcount_paths (run_id, kind, entry, op, stack_id, site_id, count)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
};

/* Version 1 -> 2 (issue 7): the new columns of existing tables; the new
 * tables and views come from schema.sql, run right after. */
static const char sql_migrate_v1[] =
	"ALTER TABLE runs ADD COLUMN peak_line INTEGER;"
	"ALTER TABLE runs ADD COLUMN peak_time_ns INTEGER;"
	"ALTER TABLE runs ADD COLUMN temporary_allocations INTEGER;"
	"ALTER TABLE runs ADD COLUMN timeline_axis TEXT;"
	"ALTER TABLE site_stats ADD COLUMN growth TEXT;"
	"ALTER TABLE site_stats ADD COLUMN growth_exponent REAL;"
	"ALTER TABLE site_stats ADD COLUMN temporary_allocations INTEGER;"
	"ALTER TABLE site_stats ADD COLUMN peak_share_bytes INTEGER;"
	"DROP VIEW IF EXISTS leaks_by_site;"
	"DROP VIEW IF EXISTS site_summary;";

/* Version 2 -> 3 (issue 18): what the recorder did not record. */
static const char sql_migrate_v2[] =
	"ALTER TABLE runs ADD COLUMN stopped_line INTEGER;"
	"ALTER TABLE runs ADD COLUMN stop_reason TEXT;"
	"ALTER TABLE runs ADD COLUMN lost_events INTEGER;"
	"ALTER TABLE runs ADD COLUMN lost_reason TEXT;"
	"ALTER TABLE runs ADD COLUMN freeres TEXT;";

/* v4: frames.inlined (when there is a frames table without it); the view
 * that shows it is made again by the schema */
static const char sql_has_frames_inlined[] =
	"SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'frames')"
	" - (SELECT count(*) FROM pragma_table_info ('frames') WHERE name = 'inlined')";
static const char sql_migrate_v3[] =
	"ALTER TABLE frames ADD COLUMN inlined INTEGER;";

/* Version 5 -> 6 (issue 17): reachability, in each table that lacks it
 * (a table's count minus its column's: 1 when the table lacks it);
 * leak_list is made again by the schema to show it. */
#define LACKS(table, column) \
	"SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '" table "')" \
	" - (SELECT count(*) FROM pragma_table_info ('" table "') WHERE name = '" column "')"
static const char *const sql_migrate_v5[][2] = {
	{ LACKS ("leaks", "reach"), "ALTER TABLE leaks ADD COLUMN reach TEXT;" },
	{ LACKS ("runs", "reach_line"),
	  "ALTER TABLE runs ADD COLUMN reach_line INTEGER;"
	  "ALTER TABLE runs ADD COLUMN reach_finished INTEGER;"
	  "ALTER TABLE runs ADD COLUMN reach_notes TEXT;"
	  "ALTER TABLE runs ADD COLUMN leak_kinds TEXT;"
	  "ALTER TABLE runs ADD COLUMN all_leaked_blocks INTEGER;"
	  "ALTER TABLE runs ADD COLUMN all_leaked_bytes INTEGER;" },
};

/* Version 6 -> 7 (issue 31): frames by build-id and offset, the host and
 * build of a run; the views made again (portable to PostgreSQL). */
static const char *const sql_migrate_v6[][2] = {
	{ "frames", "ALTER TABLE frames ADD COLUMN build_id TEXT;"
	  "ALTER TABLE frames ADD COLUMN object_offset INTEGER;" },
	{ "runs", "ALTER TABLE runs ADD COLUMN host TEXT;"
	  "ALTER TABLE runs ADD COLUMN build_id TEXT;" },
};
static const char sql_migrate_v6_views[] =
	"DROP VIEW IF EXISTS leaks_by_reach;"
	"DROP VIEW IF EXISTS stack_frames;";

/* The run's row; its id from the engine (?6: loaded_at, from here: the
 * engines spell the time differently). */
static const char sql_new_run[] =
	"INSERT INTO runs (loaded_at, traces, \"binary\", skip_wrappers, all_events, analyzer_version,"
	" lines, unreadable_lines, events, allocations, frees, reallocations, failed_allocations,"
	" duplicate_allocations, bytes_allocated, peak_live_bytes, leaked_blocks, leaked_bytes,"
	" bad_frees, host)"
	" VALUES (?6, ?1, ?2, ?3, ?4, ?5,"
	" 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ?7) RETURNING id";

struct MtaDb {
	char *path;                /* as messages name it: a URI without its password */
	MtaConn *c;
	gboolean pg;
	gboolean created;          /* the file did not exist before */
	gboolean in_tx;
	gboolean locked;           /* PostgreSQL: the advisory lock (all events) */
	gboolean all_events;
	gboolean committed;
	char *host;                /* runs.host */
	int64_t run_id;
	int64_t stack_base;        /* stacks.id of path 0 */
	MtaStmt *st[N_ST];
	guint oom;                 /* mta_oom_add handle */
};

/* Out of memory: roll the load back, and remove a file it created and
 * left empty (as mta_db_close does, without freeing anything). */
static void
db_oom (gpointer data)
{
	MtaDb *d = data;
	struct stat st;

	if (d->in_tx)
		mta_conn_exec (d->c, "ROLLBACK");
	if (d->created && !d->committed && stat (d->path, &st) == 0 && st.st_size == 0) {
		char journal[4096];
		unlink (d->path);
		if (g_snprintf (journal, sizeof journal, "%s-journal", d->path) < (int) sizeof journal)
			unlink (journal);
	}
}

/* SQLite ran out of memory: the same words as when GLib does (oom.c). */
static gboolean
nomem (MtaDb *d, int rc, GError **error)
{
	if (rc != SQLITE_NOMEM)
		return FALSE;
	g_set_error (error, MTA_DB_ERROR, rc, "out of memory (loading into '%s')", d->path);
	return TRUE;
}

static gboolean
db_fail (MtaDb *d, GError **error, const char *what)
{
	if (!nomem (d, mta_conn_errcode (d->c), error))
		g_set_error (error, MTA_DB_ERROR, 0, "cannot load into '%s': %s: %s",
			     d->path, what, mta_conn_errmsg (d->c));
	return FALSE;
}

static gboolean
exec (MtaDb *d, const char *sql, GError **error)
{
	if (!mta_conn_exec (d->c, sql)) {
		if (!nomem (d, mta_conn_errcode (d->c), error))
			g_set_error (error, MTA_DB_ERROR, 0, "cannot load into '%s': %s", d->path,
				     mta_conn_errmsg (d->c));
		return FALSE;
	}
	return TRUE;
}

/* The first column of the first row of SQL, or -1 with ERROR set. */
static int64_t
query_int (MtaDb *d, const char *sql, GError **error)
{
	MtaStmt *st = mta_stmt_prepare (d->c, sql);
	int64_t v = -1;
	int rc = st ? mta_stmt_step (st) : MTA_STEP_ERROR;
	if (rc == MTA_STEP_ROW)
		v = mta_stmt_int64 (st, 0);
	else if (rc == MTA_STEP_DONE)
		v = 0;
	if (v < 0 && !nomem (d, mta_conn_errcode (d->c), error))
		g_set_error (error, MTA_DB_ERROR, 0, "cannot use '%s': %s", d->path, mta_conn_errmsg (d->c));
	mta_stmt_finalize (st);
	return v;
}

/* An engine's answer of -1 (db-conn.h) as ERROR. */
static int64_t
checked (MtaDb *d, int64_t v, GError **error)
{
	if (v < 0 && !nomem (d, mta_conn_errcode (d->c), error))
		g_set_error (error, MTA_DB_ERROR, 0, "cannot use '%s': %s", d->path, mta_conn_errmsg (d->c));
	return v;
}

/* ------------------------------------------------------------ open */

/* Refuse what is not ours to write, before SQLite opens it. */
static gboolean
check_file (const char *path, gboolean *exists, GError **error)
{
	struct stat st;
	char magic[16];

	*exists = FALSE;
	if (stat (path, &st) < 0) {
		if (errno == ENOENT)
			return TRUE;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
			     "cannot load into '%s': %s", path, g_strerror (errno));
		return FALSE;
	}
	*exists = TRUE;
	if (!S_ISREG (st.st_mode)) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			     "cannot load into '%s': not a regular file", path);
		return FALSE;
	}
	/* No write permission bit at all is read-only, for root too. */
	if (access (path, W_OK) < 0 || (st.st_mode & 0222) == 0) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ACCES,
			     "cannot load into '%s': the file is read-only", path);
		return FALSE;
	}
	if (st.st_size == 0)
		return TRUE;
	/* O_NONBLOCK: if the name became a FIFO since stat(), do not wait. */
	int fd = open (path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd < 0 ? -1 : read (fd, magic, sizeof magic);
	int e = errno;
	if (fd >= 0)
		close (fd);
	if (n < 0) {
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
			     "cannot load into '%s': %s", path, g_strerror (e));
		return FALSE;
	}
	if (n != sizeof magic || memcmp (magic, "SQLite format 3", 16) != 0) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
			     "cannot load into '%s': not a SQLite database (left untouched)", path);
		return FALSE;
	}
	return TRUE;
}

/* An existing database: ours (or empty), and not from a newer mtanalyze. */
static gboolean
check_schema (MtaDb *d, GError **error)
{
	int64_t app = checked (d, mta_conn_pragma (d->c, "application_id"), error);
	if (app < 0)
		return FALSE;
	if (app != MTA_APPLICATION_ID) {
		/* SQLite: anything in the file; PostgreSQL: a table of ours
		 * without our mark (another program's "runs") */
		int64_t n = d->pg ? checked (d, mta_conn_has (d->c, "runs", NULL), error)
			: query_int (d, "SELECT count(*) FROM sqlite_master", error);
		if (n < 0)
			return FALSE;
		if (n > 0) {
			g_set_error (error, MTA_DB_ERROR, 0, "cannot load into '%s': a %s database, "
				     "but not one of mtanalyze (left untouched)", d->path,
				     d->pg ? "PostgreSQL" : "SQLite");
			return FALSE;
		}
		return TRUE;
	}
	int64_t version = checked (d, mta_conn_pragma (d->c, "user_version"), error);
	if (version < 0)
		return FALSE;
	if (version > MTA_SCHEMA_VERSION) {
		g_set_error (error, MTA_DB_ERROR, 0, "cannot load into '%s': its schema (version %"
			     PRId64 ") is newer than this mtanalyze's (%d)", d->path, version,
			     MTA_SCHEMA_VERSION);
		return FALSE;
	}
	return TRUE;
}

static MtaDb *
db_new (const char *name, gboolean created)
{
	MtaDb *d = g_new0 (MtaDb, 1);
	d->path = mta_conn_redact (name);
	d->created = created;
	d->host = g_strdup (g_get_host_name ());
	d->oom = mta_oom_add (db_oom, d);
	return d;
}

static MtaDb *
open_pg (const char *uri, GError **error)
{
	MtaConn *c = mta_conn_open_pg (uri, error);

	if (c == NULL)
		return NULL;
	MtaDb *d = db_new (uri, FALSE);
	d->c = c;
	d->pg = TRUE;
	if (!check_schema (d, error)) {
		mta_db_close (d);
		return NULL;
	}
	return d;
}

MtaDb *
mta_db_open (const char *path, GError **error)
{
	gboolean exists;
	sqlite3 *db = NULL;

	if (mta_conn_is_uri (path))
		return open_pg (path, error);
	if (!check_file (path, &exists, error))
		return NULL;
	MtaDb *d = db_new (path, !exists);
	int rc = sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	d->c = mta_conn_wrap_sqlite (db, path);
	if (rc != SQLITE_OK) {
		if (!nomem (d, rc, error))
			g_set_error (error, MTA_DB_ERROR, rc, "cannot load into '%s': %s", path,
				     db ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
		mta_db_close (d);
		return NULL;
	}
	sqlite3_busy_timeout (db, BUSY_TIMEOUT_MS);
	if (sqlite3_db_readonly (db, "main") == 1) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ACCES,
			     "cannot load into '%s': the file is read-only", path);
		mta_db_close (d);
		return NULL;
	}
	if (exists && !check_schema (d, error)) {
		mta_db_close (d);
		return NULL;
	}
	return d;
}

void
mta_db_set_host (MtaDb *d, const char *host)
{
	g_free (d->host);
	d->host = g_strdup (host);
}

/* ------------------------------------------------------------ load */

/* An older SQLite database of ours: brought up to date in the load's
 * transaction.  (PostgreSQL's start at version 7.) */
static gboolean
migrate (MtaDb *d, GError **error)
{
	int64_t app = query_int (d, "PRAGMA application_id", error);
	int64_t version = app < 0 ? -1 : query_int (d, "PRAGMA user_version", error);
	if (version < 0)
		return FALSE;
	if (app != MTA_APPLICATION_ID || version < 1)
		return TRUE;
	if (version == 1 && !exec (d, sql_migrate_v1, error))
		return FALSE;
	if (version <= 2 && !exec (d, sql_migrate_v2, error))
		return FALSE;
	if (version <= 3) {
		int64_t lacks = query_int (d, sql_has_frames_inlined, error);
		if (lacks < 0 || (lacks > 0 && !exec (d, sql_migrate_v3, error)) ||
		    !exec (d, "DROP VIEW IF EXISTS stack_frames", error))
			return FALSE;
	}
	if (version <= 5) {
		for (guint k = 0; k < G_N_ELEMENTS (sql_migrate_v5); k++) {
			int64_t lacks = query_int (d, sql_migrate_v5[k][0], error);
			if (lacks < 0 || (lacks > 0 && !exec (d, sql_migrate_v5[k][1], error)))
				return FALSE;
		}
		if (!exec (d, "DROP VIEW IF EXISTS leak_list", error))
			return FALSE;
	}
	if (version <= 6) {
		for (guint k = 0; k < G_N_ELEMENTS (sql_migrate_v6); k++) {
			int has = mta_conn_has (d->c, sql_migrate_v6[k][0], NULL);
			int has_col = mta_conn_has (d->c, "frames", "build_id");
			if (k == 1)
				has_col = mta_conn_has (d->c, "runs", "host");
			if (checked (d, MIN (has, has_col), error) < 0)
				return FALSE;
			if (has && !has_col && !exec (d, sql_migrate_v6[k][1], error))
				return FALSE;
		}
		if (!exec (d, sql_migrate_v6_views, error))
			return FALSE;
	}
	return TRUE;
}

/* v8: site_timeline, a table of a row a sample (versions 2 to 7),
 * becomes the view of site_timeline_ranges; its rows are kept as ranges
 * of one sample each.  leak_growth goes first: renaming a table takes
 * the views that read it along (SQLite since 3.26, PostgreSQL always),
 * and the schema makes it again on the view. */
static const char sql_migrate_v7_pre[] =
	"DROP VIEW IF EXISTS leak_growth;\n"
	"ALTER TABLE site_timeline RENAME TO site_timeline_v7;\n";
static const char sql_migrate_v7_post[] =
	"\nINSERT INTO site_timeline_ranges (run_id, site_id, seq, until_seq, live_blocks, live_bytes)"
	" SELECT run_id, site_id, seq, seq + 1, live_blocks, live_bytes FROM site_timeline_v7;\n"
	"DROP TABLE site_timeline_v7;\n";

/* SCHEMA, with the v8 change of site_timeline around it when the
 * database still has the table (in either engine: the one SQL text is
 * one transaction), or NULL on an error. */
static char *
schema_sql (MtaDb *d, const char *schema, GError **error)
{
	int64_t ranges = checked (d, mta_conn_has (d->c, "site_timeline_ranges", NULL), error);
	int64_t table = ranges == 0 ? checked (d, mta_conn_has (d->c, "site_timeline", NULL), error) : 0;

	if (ranges < 0 || table < 0)
		return NULL;
	if (table == 0)
		return g_strdup (schema);
	return g_strconcat (sql_migrate_v7_pre, schema, sql_migrate_v7_post, NULL);
}

/* The schema, made or brought up to date: SQLite in the load's
 * transaction, PostgreSQL under the advisory lock (two loads making the
 * same table at once would fail) and only when not up to date. */
static gboolean
setup_schema (MtaDb *d, GError **error)
{
	g_autofree char *text = mta_pkgdata_read ("schema.sql", error);

	if (text == NULL)
		return FALSE;
	g_autofree char *schema = mta_conn_schema (d->c, text);
	if (!d->pg) {
		/* Another process may have made the file something else meanwhile. */
		if (!check_schema (d, error) || !migrate (d, error))
			return FALSE;
		g_autofree char *sql = schema_sql (d, schema, error);
		return sql != NULL && exec (d, sql, error);
	}
	if (!mta_conn_lock (d->c, TRUE))
		return db_fail (d, error, "advisory lock");
	gboolean ok = check_schema (d, error);
	int64_t version = ok ? checked (d, mta_conn_pragma (d->c, "user_version"), error) : -1;
	ok = version >= 0;
	if (ok && version != MTA_SCHEMA_VERSION) {
		g_autofree char *sql = schema_sql (d, schema, error);
		ok = sql != NULL && exec (d, sql, error);
	}
	mta_conn_lock (d->c, FALSE);
	return ok;
}

/* BEGIN, the run's row, the first stack id. */
static gboolean
start_run (MtaDb *d, const MtaRun *run, GError **error)
{
	const MtaRunInfo *info = mta_run_info (run);
	MtaStmt *st = NULL;

	if (d->pg) {
		if (!exec (d, "BEGIN", error))
			return FALSE;
		d->in_tx = TRUE;
	}
	g_autoptr (GString) traces = g_string_new (NULL);
	for (guint i = 0; i < info->traces->len; i++)
		g_string_append_printf (traces, "%s%s", i ? "\n" : "", (char *) info->traces->pdata[i]);
	if ((st = mta_stmt_prepare (d->c, sql_new_run)) == NULL)
		return db_fail (d, error, "prepare");
	g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
	g_autofree char *when = g_date_time_format (now, "%Y-%m-%dT%H:%M:%S");
	g_autofree char *loaded_at = g_strdup_printf ("%s.%03dZ", when, g_date_time_get_microsecond (now) / 1000);
	mta_stmt_bind_text (st, 1, traces->str);
	mta_stmt_bind_text_or_null (st, 2, info->binary);
	mta_stmt_bind_int64 (st, 3, info->skip_wrappers);
	mta_stmt_bind_int64 (st, 4, d->all_events);
	mta_stmt_bind_text (st, 5, MTA_VERSION);
	mta_stmt_bind_text (st, 6, loaded_at);
	mta_stmt_bind_text_or_null (st, 7, d->host);
	int rc = mta_stmt_step (st);
	d->run_id = rc == MTA_STEP_ROW ? mta_stmt_int64 (st, 0) : -1;
	mta_stmt_finalize (st);
	if (d->run_id < 0)
		return db_fail (d, error, "insert run");
	if (d->pg && d->all_events) {
		/* the events name their stacks before the stacks are known:
		 * the block starts here and grows at the store, the lock held */
		if (!mta_conn_lock (d->c, TRUE))
			return db_fail (d, error, "advisory lock");
		d->locked = TRUE;
		d->stack_base = checked (d, mta_conn_reserve_stacks (d->c, 1), error);
		return d->stack_base > 0;
	}
	if (!d->pg) {
		d->stack_base = checked (d, mta_conn_reserve_stacks (d->c, 0), error);
		return d->stack_base > 0;
	}
	return TRUE;
}

gboolean
mta_db_begin (MtaDb *d, const MtaRun *run, gboolean all_events, GError **error)
{
	d->all_events = all_events;
	if (!d->pg) {
		/* One load at a time writes; the others wait here. */
		if (!exec (d, "PRAGMA cache_size = -65536; BEGIN IMMEDIATE", error))
			return FALSE;
		d->in_tx = TRUE;
	}
	if (!setup_schema (d, error))
		return FALSE;
	for (int i = 0; i < N_ST; i++)
		if ((d->st[i] = mta_stmt_prepare (d->c, sql_text[i])) == NULL)
			return db_fail (d, error, "prepare");
	/* PostgreSQL: the run's transaction starts once its sites are in
	 * (mta_db_store), unless its events come first */
	if (d->pg && !all_events)
		return TRUE;
	return start_run (d, run, error);
}

static gboolean
step (MtaDb *d, int which, GError **error)
{
	MtaStmt *st = d->st[which];
	int rc = mta_stmt_step (st);
	mta_stmt_reset (st);
	if (rc == MTA_STEP_ERROR)
		return db_fail (d, error, "insert");
	return TRUE;
}

static void
bind_tid (MtaStmt *st, int col, uint32_t tid)
{
	if (tid != 0)
		mta_stmt_bind_int64 (st, col, tid);
	else
		mta_stmt_bind_null (st, col);
}

gboolean
mta_db_event (MtaDb *d, const MtaRunEvent *ev, GError **error)
{
	MtaStmt *st = d->st[ST_EVENT];
	char op[2] = { ev->op, 0 };

	mta_stmt_bind_int64 (st, 1, d->run_id);
	mta_stmt_bind_int64 (st, 2, (int64_t) ev->line);
	mta_stmt_bind_text (st, 3, op);
	mta_stmt_bind_int64 (st, 4, (int64_t) ev->addr);
	if (ev->op == '+' || ev->op == '>' || ev->op == '!')
		mta_stmt_bind_int64 (st, 5, (int64_t) ev->size);
	else
		mta_stmt_bind_null (st, 5);
	mta_stmt_bind_int64 (st, 6, d->stack_base + ev->path);
	bind_tid (st, 7, ev->tid);
	return step (d, ST_EVENT, error);
}

static void
bind_text_or_null (MtaStmt *st, int col, const char *s)
{
	if (s != NULL)
		mta_stmt_bind_text (st, col, s);
	else
		mta_stmt_bind_null (st, col);
}

static gboolean
store_totals (MtaDb *d, const MtaRun *run, GError **error)
{
	const MtaRunInfo *i = mta_run_info (run);
	uint64_t lo, hi;
	const char *build_id = NULL;
	MtaStmt *st = d->st[ST_RUN_TOTALS];
	g_autofree char *start_iso = NULL;
	double epoch = 0;

	if (i->start != NULL) {
		char *e;
		gint64 sec = g_ascii_strtoll (i->start, &e, 10);
		long nsec = *e == '.' ? strtol (e + 1, NULL, 10) : 0;
		g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc (sec);
		if (t != NULL) {
			g_autofree char *s = g_date_time_format (t, "%Y-%m-%dT%H:%M:%S");
			start_iso = g_strdup_printf ("%s.%09ldZ", s, nsec);
			epoch = (double) sec + (double) nsec / 1e9;
		}
	}
	mta_stmt_bind_int64 (st, 1, d->run_id);
	if (i->pid >= 0)
		mta_stmt_bind_int64 (st, 2, i->pid);
	if (i->ppid >= 0)
		mta_stmt_bind_int64 (st, 3, i->ppid);
	bind_text_or_null (st, 4, i->exe);
	bind_text_or_null (st, 5, i->cmdline);
	bind_text_or_null (st, 6, start_iso);
	if (start_iso != NULL)
		mta_stmt_bind_double (st, 7, epoch);
	if (i->depth > 0)
		mta_stmt_bind_int64 (st, 8, i->depth);
	const uint64_t v[] = { i->lines, i->unreadable_lines, i->events, i->allocs, i->frees,
			       i->reallocs, i->failed_allocs, i->duplicates, i->bytes_allocated,
			       i->peak_live_bytes, i->leaked_blocks, i->leaked_bytes, i->bad_frees };
	for (guint k = 0; k < G_N_ELEMENTS (v); k++)
		mta_stmt_bind_int64 (st, 9 + (int) k, (int64_t) v[k]);
	/* the program's build-id: its '# object' line */
	if (i->exe == NULL || !mta_symbolizer_object_info (mta_run_symbolizer (run), i->exe, &lo, &hi, &build_id))
		build_id = NULL;
	mta_stmt_bind_text_or_null (st, 22, build_id);
	gboolean ok = step (d, ST_RUN_TOTALS, error);
	mta_stmt_clear (st);
	return ok;
}

/* Where the recorder stopped, what it lost, whether libc's caches were
 * released (v3; NULL: the trace does not say). */
static gboolean
store_incomplete (MtaDb *d, const MtaIncomplete *x, GError **error)
{
	MtaStmt *st = d->st[ST_RUN_V3];

	mta_stmt_bind_int64 (st, 1, d->run_id);
	if (x->stopped_line > 0) {
		mta_stmt_bind_int64 (st, 2, (int64_t) x->stopped_line);
		mta_stmt_bind_text (st, 3, x->stop_reason);
	}
	if (x->lost_lines > 0) {
		mta_stmt_bind_int64 (st, 4, (int64_t) MIN (x->lost_events, (uint64_t) INT64_MAX));
		mta_stmt_bind_text (st, 5, x->lost_reason);
	}
	bind_text_or_null (st, 6, x->freeres);
	gboolean ok = step (d, ST_RUN_V3, error);
	mta_stmt_clear (st);
	return ok;
}

static int
site_cmp (gconstpointer a, gconstpointer b, gpointer data)
{
	GPtrArray *sites = data;
	const MtaSite *x = sites->pdata[*(const guint *) a], *y = sites->pdata[*(const guint *) b];
	int c = strcmp (x->function, y->function);
	if (c == 0)
		c = strcmp (x->file, y->file);
	if (c == 0)
		c = (x->line > y->line) - (x->line < y->line);
	return c ? c : strcmp (x->object, y->object);
}

/* The database id of each site of the run, in *IDS.  In the same order
 * in every load (sorted): two PostgreSQL loads adding the same new sites
 * in one transaction (--all-events) wait for each other, never in a
 * circle. */
static gboolean
store_sites (MtaDb *d, GPtrArray *sites, int64_t *ids, GError **error)
{
	MtaStmt *add = d->st[ST_SITE_ADD], *get = d->st[ST_SITE_ID];
	g_autoptr (GArray) order = g_array_sized_new (FALSE, FALSE, sizeof (guint), sites->len);

	for (guint i = 0; i < sites->len; i++)
		g_array_append_val (order, i);
	g_array_sort_with_data (order, site_cmp, sites);
	for (guint k = 0; k < sites->len; k++) {
		guint i = g_array_index (order, guint, k);
		const MtaSite *s = sites->pdata[i];
		MtaStmt *sts[2] = { add, get };
		for (int j = 0; j < 2; j++) {
			mta_stmt_bind_text (sts[j], 1, s->function);
			mta_stmt_bind_text (sts[j], 2, s->file);
			mta_stmt_bind_int64 (sts[j], 3, s->line);
			mta_stmt_bind_text (sts[j], 4, s->object);
		}
		if (!step (d, ST_SITE_ADD, error))
			return FALSE;
		int rc = mta_stmt_step (get);
		ids[i] = rc == MTA_STEP_ROW ? mta_stmt_int64 (get, 0) : -1;
		mta_stmt_reset (get);
		if (ids[i] < 0)
			return db_fail (d, error, "site");
	}
	return TRUE;
}

/* A frame's build-id and offset in its object, from the trace's
 * '# object' lines: the same in every run of a build, wherever the
 * object was loaded.  NULL when the trace does not say. */
static void
bind_object_offset (MtaStmt *fr, MtaSymbolizer *sym, const MtaSite *s, uint64_t addr)
{
	uint64_t lo = 0, hi = 0;
	const char *build_id = NULL;

	if (s->object[0] != '\0' && mta_symbolizer_object_info (sym, s->object, &lo, &hi, &build_id) &&
	    addr >= lo && addr < hi) {
		mta_stmt_bind_text_or_null (fr, 6, build_id);
		mta_stmt_bind_int64 (fr, 7, (int64_t) (addr - lo));
	} else {
		mta_stmt_bind_null (fr, 6);
		mta_stmt_bind_null (fr, 7);
	}
}

static gboolean
store_paths (MtaDb *d, const MtaRun *run, const int64_t *site_ids, GError **error)
{
	MtaStmt *st = d->st[ST_STACK], *fr = d->st[ST_FRAME];
	GPtrArray *paths = mta_run_paths (run), *sites = mta_run_sites (run);
	MtaSymbolizer *sym = mta_run_symbolizer (run);

	for (guint i = 0; i < paths->len; i++) {
		const MtaPath *p = paths->pdata[i];
		int64_t id = d->stack_base + i;
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_int64 (st, 2, id);
		if (p->trace_id >= 0)
			mta_stmt_bind_int64 (st, 3, p->trace_id);
		else
			mta_stmt_bind_null (st, 3);
		mta_stmt_bind_text (st, 4, p->caller);
		mta_stmt_bind_int64 (st, 5, site_ids[p->site]);
		mta_stmt_bind_int64 (st, 6, p->site_frame);
		mta_stmt_bind_int64 (st, 7, p->nframes);
		const uint64_t v[] = { p->allocs, p->frees, p->bytes_allocated, p->leaked_blocks,
				       p->leaked_bytes, p->bad_frees };
		for (guint k = 0; k < G_N_ELEMENTS (v); k++)
			mta_stmt_bind_int64 (st, 8 + (int) k, (int64_t) v[k]);
		if (!step (d, ST_STACK, error))
			return FALSE;
		for (uint32_t f = 0; f < p->nframes; f++) {
			mta_stmt_bind_int64 (fr, 1, id);
			mta_stmt_bind_int64 (fr, 2, f);
			if (p->addrs != NULL) {
				mta_stmt_bind_int64 (fr, 3, (int64_t) p->addrs[f]);
				bind_object_offset (fr, sym, sites->pdata[p->frames[f]], p->addrs[f]);
			} else {
				mta_stmt_bind_null (fr, 3);
				mta_stmt_bind_null (fr, 6);
				mta_stmt_bind_null (fr, 7);
			}
			mta_stmt_bind_int64 (fr, 4, site_ids[p->frames[f]]);
			mta_stmt_bind_int64 (fr, 5, mta_path_inlined (p, f) ? 1 : 0);
			if (!step (d, ST_FRAME, error))
				return FALSE;
		}
	}
	return TRUE;
}

static gboolean
store_site_stats (MtaDb *d, GPtrArray *sites, const int64_t *site_ids, GError **error)
{
	MtaStmt *st = d->st[ST_SITE_STATS];

	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (s->t->allocs == 0 && s->t->bad_frees == 0)
			continue;
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_int64 (st, 2, site_ids[i]);
		const uint64_t v[] = { s->t->allocs, s->t->frees, s->t->bytes_allocated, s->peak_live_bytes,
				       s->t->leaked_blocks, s->t->leaked_bytes, s->t->bad_frees, s->t->first_line,
				       s->t->temporary, s->peak_share_bytes };
		for (guint k = 0; k < G_N_ELEMENTS (v); k++)
			mta_stmt_bind_int64 (st, 3 + (int) k, (int64_t) v[k]);
		if (s->growth != MTA_GROWTH_NONE)
			mta_stmt_bind_text (st, 13, mta_growth_name (s->growth));
		else
			mta_stmt_bind_null (st, 13);
		mta_stmt_bind_double (st, 14, s->growth_exponent);
		if (!step (d, ST_SITE_STATS, error))
			return FALSE;
	}
	return TRUE;
}

/* The run's reachability (v6; NULL where the trace has no verdicts). */
static gboolean
store_reach (MtaDb *d, const MtaRunInfo *i, GError **error)
{
	MtaStmt *st = d->st[ST_RUN_V6];
	g_autoptr (GString) notes = g_string_new (NULL);
	g_autofree char *kinds = mta_reach_mask_names (i->leak_kinds, ",");

	mta_stmt_bind_int64 (st, 1, d->run_id);
	if (i->reach) {
		for (guint k = 0; k < i->reach_notes->len; k++)
			g_string_append_printf (notes, "%s%s", k ? "\n" : "",
						(const char *) i->reach_notes->pdata[k]);
		mta_stmt_bind_int64 (st, 2, (int64_t) i->reach_line);
		mta_stmt_bind_int64 (st, 3, i->reach_finished);
		mta_stmt_bind_text (st, 4, notes->str);
	}
	if (i->leak_kinds)
		mta_stmt_bind_text (st, 5, kinds);
	mta_stmt_bind_int64 (st, 6, (int64_t) i->all_leaked_blocks);
	mta_stmt_bind_int64 (st, 7, (int64_t) i->all_leaked_bytes);
	gboolean ok = step (d, ST_RUN_V6, error);
	mta_stmt_clear (st);
	return ok;
}

static gboolean
store_records (MtaDb *d, GArray *recs, GPtrArray *paths, const int64_t *site_ids,
	       gboolean leaks, gboolean reach, GError **error)
{
	int which = leaks ? ST_LEAK : ST_BAD_FREE;
	MtaStmt *st = d->st[which];

	for (guint i = 0; i < recs->len; i++) {
		const MtaRecord *r = &g_array_index (recs, MtaRecord, i);
		const MtaPath *p = paths->pdata[r->path];
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_int64 (st, 2, (int64_t) r->addr);
		if (leaks)
			mta_stmt_bind_int64 (st, 3, (int64_t) r->size);
		else
			mta_stmt_bind_text (st, 3, r->op == '<' ? "realloc" : "free");
		mta_stmt_bind_int64 (st, 4, site_ids[p->site]);
		mta_stmt_bind_int64 (st, 5, d->stack_base + r->path);
		mta_stmt_bind_int64 (st, 6, (int64_t) r->line);
		bind_tid (st, 7, r->tid);
		if (leaks && reach)
			mta_stmt_bind_text (st, 8, mta_reach_name ((MtaReach) r->reach));
		else if (leaks)
			mta_stmt_bind_null (st, 8);
		if (!step (d, which, error))
			return FALSE;
	}
	return TRUE;
}

/* The peak, the temporary allocations and the moments of the timeline. */
static gboolean
store_timeline (MtaDb *d, const MtaRun *run, GError **error)
{
	const MtaRunInfo *i = mta_run_info (run);
	MtaStmt *st = d->st[ST_RUN_V2], *tl = d->st[ST_TIMELINE];

	mta_stmt_bind_int64 (st, 1, d->run_id);
	mta_stmt_bind_int64 (st, 2, (int64_t) i->peak_line);
	if (i->time_axis)
		mta_stmt_bind_int64 (st, 3, (int64_t) mta_run_position (run, i->peak_line));
	else
		mta_stmt_bind_null (st, 3);
	mta_stmt_bind_int64 (st, 4, (int64_t) i->temporary);
	mta_stmt_bind_text (st, 5, i->time_axis ? "time" : "line");
	if (!step (d, ST_RUN_V2, error))
		return FALSE;
	for (guint k = 0; k < i->tl_len; k++) {
		mta_stmt_bind_int64 (tl, 1, d->run_id);
		mta_stmt_bind_int64 (tl, 2, k);
		mta_stmt_bind_int64 (tl, 3, (int64_t) i->tl_lines[k]);
		if (i->time_axis)
			mta_stmt_bind_int64 (tl, 4, (int64_t) i->tl_times[k]);
		else
			mta_stmt_bind_null (tl, 4);
		if (!step (d, ST_TIMELINE, error))
			return FALSE;
	}
	return TRUE;
}

/* Live blocks and bytes over time, for the leaking sites only: a row for
 * each range of samples over which they stay the same (a site whose
 * leaks were made at one moment and never freed has two rows; with a row
 * a sample, 2 million such sites took 100 million rows and most of
 * --db's 136 s). */
static gboolean
store_site_timelines (MtaDb *d, const MtaRun *run, const int64_t *site_ids, GError **error)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	MtaStmt *st = d->st[ST_SITE_TIMELINE];
	/* freed on every way out (not g_autofree: clang's analyzer loses
	 * such arrays through the call that fills them) */
	uint64_t *bytes = g_new (uint64_t, i->tl_len + 1);
	uint32_t *blocks = g_new (uint32_t, i->tl_len + 1);
	gboolean ok = TRUE;

	for (guint k = 0; ok && k < sites->len; k++) {
		const MtaSite *s = sites->pdata[k];
		if (s->t->leaked_blocks == 0 || !mta_run_site_timeline (run, s, bytes, blocks))
			continue;
		for (guint j = 0, end; ok && j < i->tl_len; j = end) {
			for (end = j + 1; end < i->tl_len && blocks[end] == blocks[j] &&
			     bytes[end] == bytes[j]; end++)
				;
			mta_stmt_bind_int64 (st, 1, d->run_id);
			mta_stmt_bind_int64 (st, 2, site_ids[k]);
			mta_stmt_bind_int64 (st, 3, j);
			mta_stmt_bind_int64 (st, 4, end);
			mta_stmt_bind_int64 (st, 5, blocks[j]);
			mta_stmt_bind_int64 (st, 6, (int64_t) bytes[j]);
			ok = step (d, ST_SITE_TIMELINE, error);
		}
	}
	g_free (bytes);
	g_free (blocks);
	return ok;
}

static gboolean
store_threads (MtaDb *d, GHashTable *threads, GError **error)
{
	MtaStmt *st = d->st[ST_THREAD];
	GHashTableIter it;
	gpointer k, v;

	g_hash_table_iter_init (&it, threads);
	while (g_hash_table_iter_next (&it, &k, &v)) {
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_int64 (st, 2, GPOINTER_TO_UINT (k));
		mta_stmt_bind_text (st, 3, v);
		if (!step (d, ST_THREAD, error))
			return FALSE;
	}
	return TRUE;
}

/* ---- v5: the tracked kinds (kinds.h) */

/* Bind the values V from column FIRST on, and step WHICH. */
static gboolean
step_values (MtaDb *d, int which, int first, const int64_t *v, guint n, GError **error)
{
	for (guint k = 0; k < n; k++)
		mta_stmt_bind_int64 (d->st[which], first + (int) k, v[k]);
	return step (d, which, error);
}

static gboolean
store_kind_sites (MtaDb *d, const MtaKind *k, const GArray *list, gboolean leaks,
		  const int64_t *site_ids, GError **error)
{
	MtaStmt *st = d->st[ST_KIND_STATS];

	for (guint i = 0; i < list->len; i++) {
		const MtaKindSite *s = &g_array_index (list, MtaKindSite, i);
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_text (st, 2, k->name);
		const int64_t v[] = { site_ids[s->site], leaks ? (int64_t) s->blocks : 0,
				      leaks ? (int64_t) s->bytes : 0, leaks ? 0 : (int64_t) s->blocks,
				      (int64_t) s->first_line };
		if (!step_values (d, ST_KIND_STATS, 3, v, G_N_ELEMENTS (v), error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
store_kind_records (MtaDb *d, const MtaKind *k, const GArray *recs, gboolean leaks,
		    GPtrArray *paths, const int64_t *site_ids, GError **error)
{
	int which = leaks ? ST_KIND_LEAK : ST_KIND_BAD_FREE;
	MtaStmt *st = d->st[which];

	for (guint i = 0; i < recs->len; i++) {
		const MtaRecord *r = &g_array_index (recs, MtaRecord, i);
		const MtaPath *p = paths->pdata[r->path];
		mta_stmt_bind_int64 (st, 1, d->run_id);
		mta_stmt_bind_text (st, 2, k->name);
		if (leaks)
			mta_stmt_bind_int64 (st, 4, (int64_t) r->size);
		bind_tid (st, 8, r->tid);
		const int64_t v[] = { (int64_t) r->addr };
		const int64_t w[] = { site_ids[p->site], d->stack_base + r->path, (int64_t) r->line };
		mta_stmt_bind_int64 (st, 3, v[0]);
		if (!step_values (d, which, 5, w, G_N_ELEMENTS (w), error))
			return FALSE;
	}
	return TRUE;
}

static gboolean
store_ref_group (MtaDb *d, const MtaKind *k, guint entry, const MtaRefGroup *g,
		 GPtrArray *paths, const int64_t *site_ids, GError **error)
{
	MtaStmt *st = d->st[ST_REFCOUNT], *ps = d->st[ST_REFCOUNT_PATH];

	mta_stmt_bind_int64 (st, 1, d->run_id);
	mta_stmt_bind_text (st, 2, k->name);
	const int64_t v[] = { entry, (int64_t) g->objects, g->net, g->negative, g->lowest,
			      (int64_t) g->example, (int64_t) g->first_line };
	if (!step_values (d, ST_REFCOUNT, 3, v, G_N_ELEMENTS (v), error))
		return FALSE;
	for (guint i = 0; i < g->paths->len; i++) {
		const MtaRefPath *rp = &g_array_index (g->paths, MtaRefPath, i);
		const MtaPath *p = paths->pdata[rp->path];
		for (int pass = 0; pass < 2; pass++) {
			uint64_t n = pass == 0 ? rp->refs : rp->unrefs;
			if (n == 0)
				continue;
			mta_stmt_bind_int64 (ps, 1, d->run_id);
			mta_stmt_bind_text (ps, 2, k->name);
			mta_stmt_bind_int64 (ps, 3, entry);
			mta_stmt_bind_text (ps, 4, pass == 0 ? "r" : "u");
			const int64_t w[] = { d->stack_base + rp->path, site_ids[p->site], (int64_t) n };
			if (!step_values (d, ST_REFCOUNT_PATH, 5, w, G_N_ELEMENTS (w), error))
				return FALSE;
		}
	}
	return TRUE;
}

static gboolean
store_kind (MtaDb *d, const MtaKind *k, GPtrArray *paths, const int64_t *site_ids, GError **error)
{
	MtaStmt *st = d->st[ST_KIND];

	mta_stmt_bind_int64 (st, 1, d->run_id);
	mta_stmt_bind_text (st, 2, k->name);
	const int64_t v[] = { (int64_t) k->allocs, (int64_t) k->frees, (int64_t) k->bytes_allocated,
			      (int64_t) k->leaked_blocks, (int64_t) k->leaked_bytes,
			      (int64_t) k->bad_frees, (int64_t) k->refs, (int64_t) k->unrefs };
	if (!step_values (d, ST_KIND, 3, v, G_N_ELEMENTS (v), error) ||
	    !store_kind_sites (d, k, k->leak_sites, TRUE, site_ids, error) ||
	    !store_kind_sites (d, k, k->bad_free_sites, FALSE, site_ids, error) ||
	    !store_kind_records (d, k, k->leaks, TRUE, paths, site_ids, error) ||
	    !store_kind_records (d, k, k->bad_free_records, FALSE, paths, site_ids, error))
		return FALSE;
	for (guint i = 0; k->ref_groups != NULL && i < k->ref_groups->len; i++)
		if (!store_ref_group (d, k, i, k->ref_groups->pdata[i], paths, site_ids, error))
			return FALSE;
	return TRUE;
}

static gboolean
store_kinds (MtaDb *d, const MtaRun *run, const int64_t *site_ids, GError **error)
{
	const MtaKinds *ks = mta_run_kinds (run);

	for (guint i = 0; i < mta_kinds_count (ks); i++)
		if (!store_kind (d, mta_kinds_get (ks, i), mta_run_paths (run), site_ids, error))
			return FALSE;
	return TRUE;
}

/* PostgreSQL: the run's block of stack ids, N long (db-conn.h); with
 * --all-events its start was taken at the begin, the lock held since. */
static gboolean
reserve_stacks (MtaDb *d, guint n, GError **error)
{
	if (!d->locked) {
		if (!mta_conn_lock (d->c, TRUE))
			return db_fail (d, error, "advisory lock");
		d->locked = TRUE;
		d->stack_base = checked (d, mta_conn_reserve_stacks (d->c, n), error);
	} else if (n > 1) {
		g_autofree char *sql = g_strdup_printf ("SELECT setval (pg_get_serial_sequence ('stacks', 'id'), %"
							PRId64 ")", d->stack_base + n - 1);
		if (!exec (d, sql, error))
			return FALSE;
	}
	if (!mta_conn_lock (d->c, FALSE))
		return db_fail (d, error, "advisory unlock");
	d->locked = FALSE;
	return d->stack_base > 0;
}

gboolean
mta_db_store (MtaDb *d, const MtaRun *run, int64_t *run_id, GError **error)
{
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);
	g_autofree int64_t *site_ids = g_new0 (int64_t, sites->len + 1);

	/* PostgreSQL: the sites first, each added for good at once (no
	 * lock held for the load's length), then the run's transaction;
	 * SQLite, and --all-events, are in the transaction already */
	gboolean later = d->pg && !d->in_tx;
	if (!store_sites (d, sites, site_ids, error) || (later && !start_run (d, run, error)))
		return FALSE;   /* NOLINT(clang-analyzer-unix.Malloc): g_autofree */
	if (d->pg && !reserve_stacks (d, paths->len, error))
		return FALSE;   /* NOLINT(clang-analyzer-unix.Malloc): g_autofree */
	if (!store_totals (d, run, error) ||
	    !store_timeline (d, run, error) ||
	    !store_incomplete (d, &mta_run_info (run)->incomplete, error) ||
	    !store_reach (d, mta_run_info (run), error) ||
	    !store_paths (d, run, site_ids, error) ||
	    !store_site_stats (d, sites, site_ids, error) ||
	    !store_site_timelines (d, run, site_ids, error) ||
	    !store_records (d, mta_run_leaks (run), paths, site_ids, TRUE, mta_run_info (run)->reach, error) ||
	    !store_records (d, mta_run_bad_frees (run), paths, site_ids, FALSE, FALSE, error) ||
	    !store_threads (d, mta_run_threads (run), error) ||
	    !store_kinds (d, run, site_ids, error))
		return FALSE;   /* NOLINT(clang-analyzer-unix.Malloc): g_autofree */
	if (!exec (d, "COMMIT", error))
		return FALSE;   /* NOLINT(clang-analyzer-unix.Malloc): g_autofree */
	d->in_tx = FALSE;
	d->committed = TRUE;
	/* the run is in: nothing to undo if memory runs out later */
	mta_oom_remove (d->oom);
	d->oom = 0;
	*run_id = d->run_id;
	return TRUE;
}

void
mta_db_close (MtaDb *d)
{
	if (d == NULL)
		return;
	mta_oom_remove (d->oom);
	for (int i = 0; i < N_ST; i++)
		mta_stmt_finalize (d->st[i]);
	if (d->in_tx)
		mta_conn_exec (d->c, "ROLLBACK");
	mta_conn_close (d->c);
	/* A file this load created and left empty goes; one that another
	 * load wrote to meanwhile stays. */
	struct stat st;
	if (d->created && !d->committed && stat (d->path, &st) == 0 && st.st_size == 0)
		unlink (d->path);
	g_free (d->path);
	g_free (d->host);
	g_free (d);
}
