/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* db-conn.c -- SQLite and PostgreSQL behind one interface (db-conn.h).
 *
 * PostgreSQL: statements are prepared on the server once a load and run
 * with their parameters as text (the server gives them the types of the
 * columns they meet); a SELECT's rows come back whole and are stepped
 * through here.  Its notices ("relation already exists, skipping", from
 * the schema's IF NOT EXISTS) are not printed.
 *
 * A load's rows are sent in libpq's pipeline mode: an INSERT or UPDATE
 * goes without waiting for its answer, and the answers are read every
 * PIPELINE_MAX statements and before anything that needs one (a SELECT,
 * COMMIT): a load pays the round trip to a distant server once per
 * PIPELINE_MAX rows, not once a row.  An error of a row sent is reported
 * at the next of those reads.
 */
#include "db-conn.h"

#include <inttypes.h>
#include <sqlite3.h>
#include <string.h>
#ifdef MTA_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

#define MTA_CONN_ERROR (mta_conn_error_quark ())
G_DEFINE_QUARK (mta-conn-error-quark, mta_conn_error)

/* pg_advisory_lock's key: "mtrc", as SQLite's application_id */
#define LOCK_KEY "1836348003"
/* Statements sent before their answers are read: their answers are a few
 * dozen bytes each, far below what the sockets hold, so neither side
 * waits for the other to read. */
#define PIPELINE_MAX 256

struct MtaConn {
	char *name;                /* redacted */
	sqlite3 *lite;
#ifdef MTA_HAVE_LIBPQ
	PGconn *pg;
#endif
	gboolean is_pg;
	char *err;                 /* PostgreSQL's last error, one line */
	guint stmts;               /* names of prepared statements */
	guint piped;               /* statements sent in pipeline mode, answers not read */
};

struct MtaStmt {
	MtaConn *c;
	sqlite3_stmt *lite;
#ifdef MTA_HAVE_LIBPQ
	char *name;
	int nparams;
	gboolean pipe;             /* an INSERT or UPDATE without RETURNING */
	char **vals;
	PGresult *res;
	int row, rows;
#endif
};

/* ------------------------------------------------------------ names */

gboolean
mta_conn_is_uri (const char *name)
{
	return g_str_has_prefix (name, "postgresql://") || g_str_has_prefix (name, "postgres://");
}

/* The user information of URI: it starts at *AUTH, after "://", and ends
 * at the '@' returned (NULL: none), *COLON before its password (NULL:
 * none).  It ends at the last '@' before the parameters, not only before
 * the first '/': a password with a '/' of its own, not percent-encoded,
 * is a URI libpq misreads (a port "pa" and a database "ss@host/db"), and
 * its message must not show it either. */
static const char *
uri_userinfo (const char *uri, const char **auth, const char **colon)
{
	const char *at;

	*auth = strstr (uri, "://") + 3;
	at = g_strrstr_len (*auth, (gssize) strcspn (*auth, "?#"), "@");
	*colon = at ? memchr (*auth, ':', (size_t) (at - *auth)) : NULL;
	return at;
}

char *
mta_conn_redact (const char *name)
{
	if (!mta_conn_is_uri (name))
		return g_strdup (name);
	GString *out = g_string_new (NULL);
	const char *auth, *colon, *at = uri_userinfo (name, &auth, &colon);

	g_string_append_len (out, name, auth - name);
	if (at != NULL) {
		if (colon != NULL) {
			g_string_append_len (out, auth, colon - auth);
			g_string_append (out, ":***");
		} else {
			g_string_append_len (out, auth, at - auth);
		}
		auth = at;
	}
	/* the rest, with the value of any password= parameter hidden */
	for (const char *p = auth; *p != '\0';) {
		if ((p[-1] == '?' || p[-1] == '&') && g_str_has_prefix (p, "password=")) {
			g_string_append (out, "password=***");
			p += strcspn (p, "&#");
			continue;
		}
		g_string_append_c (out, *p++);
	}
	return g_string_free (out, FALSE);
}

char *
mta_conn_redact_in (const char *text)
{
	GString *out = g_string_new (NULL);
	const char *p = text;

	for (;;) {
		const char *a = strstr (p, "postgres");
		if (a == NULL || (!g_str_has_prefix (a, "postgresql://") && !g_str_has_prefix (a, "postgres://"))) {
			if (a == NULL) {
				g_string_append (out, p);
				break;
			}
			g_string_append_len (out, p, a + 8 - p);
			p = a + 8;
			continue;
		}
		g_string_append_len (out, p, a - p);
		size_t n = strcspn (a, " \t\n'\"`,;()");
		g_autofree char *uri = g_strndup (a, n), *shown = mta_conn_redact (uri);
		g_string_append (out, shown);
		p = a + n;
	}
	return g_string_free (out, FALSE);
}

/* The secrets of URI, as written and percent-decoded: the text between
 * the user's ':' and the '@' (mta_conn_redact's), each password=
 * parameter's value. */
static GPtrArray *
uri_secrets (const char *uri)
{
	GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
	const char *auth, *colon, *at = uri_userinfo (uri, &auth, &colon);

	if (colon != NULL && at > colon + 1)
		g_ptr_array_add (out, g_strndup (colon + 1, (gsize) (at - colon - 1)));
	for (const char *p = strpbrk (auth, "?&"); p != NULL; p = strpbrk (p + 1, "&")) {
		if (g_str_has_prefix (p + 1, "password=") && p[10] != '\0' && p[10] != '&')
			g_ptr_array_add (out, g_strndup (p + 10, strcspn (p + 10, "&#")));
	}
	for (guint i = 0, n = out->len; i < n; i++) {
		char *plain = g_uri_unescape_string (out->pdata[i], NULL);
		if (plain != NULL && *plain != '\0' && strcmp (plain, out->pdata[i]) != 0)
			g_ptr_array_add (out, plain);
		else
			g_free (plain);
	}
	return out;
}

/* TEXT (libpq's words on URI) with its URIs redacted and any secret of
 * URI in it hidden: libpq quotes a URI it cannot parse whole, and a
 * token it cannot decode ("invalid percent-encoded token: "s3%zz"") as
 * it is, the password's too. */
static char *
scrub (const char *uri, const char *text)
{
	g_autoptr (GPtrArray) secrets = uri_secrets (uri);
	char *out = mta_conn_redact_in (text);

	for (guint i = 0; i < secrets->len; i++) {
		if (strstr (out, secrets->pdata[i]) == NULL)
			continue;
		g_auto (GStrv) parts = g_strsplit (out, secrets->pdata[i], -1);
		g_free (out);
		out = g_strjoinv ("***", parts);
	}
	return out;
}

gboolean
mta_conn_split_run (const char *arg, char **uri, const char **run)
{
	const char *c = strrchr (arg, ':');

	if (c == NULL || c[1] == '\0')
		return FALSE;
	const char *r = c + 1;
	if (strcmp (r, "last") != 0) {
		const char *d = r + (*r == '-');
		if (*d == '\0' || strspn (d, "0123456789") != strlen (d))
			return FALSE;
	}
	*uri = g_strndup (arg, (gsize) (c - arg));
	*run = r;
	return TRUE;
}

/* ------------------------------------------------------------ open */

#ifdef MTA_HAVE_LIBPQ
static void
quiet_notice (void *arg, const char *message)
{
	(void) arg;
	(void) message;
}
#endif

MtaConn *
mta_conn_open_pg (const char *uri, GError **error)
{
	g_autofree char *name = mta_conn_redact (uri);
#ifdef MTA_HAVE_LIBPQ
	PGconn *pg = PQconnectdb (uri);

	if (pg == NULL || PQstatus (pg) != CONNECTION_OK) {
		g_autofree char *msg = scrub (uri, pg ? PQerrorMessage (pg) : "out of memory");
		g_strstrip (msg);
		/* libpq's words may hold several lines (one per address
		 * tried): the last says why */
		char *last = strrchr (msg, '\n');
		g_set_error (error, MTA_CONN_ERROR, 0, "cannot connect to '%s': %s", name,
			     g_strstrip (last ? last + 1 : msg));
		PQfinish (pg);
		return NULL;
	}
	PQsetNoticeProcessor (pg, quiet_notice, NULL);
	MtaConn *c = g_new0 (MtaConn, 1);
	c->name = g_steal_pointer (&name);
	c->pg = pg;
	c->is_pg = TRUE;
	if (!mta_conn_exec (c, "SET client_min_messages = warning")) {
		g_set_error (error, MTA_CONN_ERROR, 0, "cannot use '%s': %s", c->name, mta_conn_errmsg (c));
		mta_conn_close (c);
		return NULL;
	}
	return c;
#else
	g_set_error (error, MTA_CONN_ERROR, 0, "cannot use '%s': this mtanalyze was built without "
		     "PostgreSQL (libpq-dev was missing at ./configure)", name);
	return NULL;
#endif
}

MtaConn *
mta_conn_wrap_sqlite (void *sqlite_db, const char *name)
{
	MtaConn *c = g_new0 (MtaConn, 1);
	c->name = g_strdup (name);
	c->lite = sqlite_db;
	return c;
}

void
mta_conn_close (MtaConn *c)
{
	if (c == NULL)
		return;
#ifdef MTA_HAVE_LIBPQ
	PQfinish (c->pg);
#endif
	sqlite3_close (c->lite);
	g_free (c->err);
	g_free (c->name);
	g_free (c);
}

gboolean
mta_conn_is_pg (const MtaConn *c)
{
	return c->is_pg;
}

const char *
mta_conn_name (const MtaConn *c)
{
	return c->name;
}

const char *
mta_conn_errmsg (MtaConn *c)
{
	if (!c->is_pg)
		return sqlite3_errmsg (c->lite);
	return c->err ? c->err : "unknown error";
}

int
mta_conn_errcode (MtaConn *c)
{
	return c->is_pg ? 0 : sqlite3_errcode (c->lite);
}

#ifdef MTA_HAVE_LIBPQ
/* Keep the first line of MSG, without libpq's "ERROR:  ". */
static void
set_err (MtaConn *c, const char *msg)
{
	g_free (c->err);
	if (g_str_has_prefix (msg, "ERROR:"))
		msg += 6;
	c->err = g_strndup (msg, strcspn (msg, "\n"));
	g_strstrip (c->err);
}

/* FALSE, with the error kept, unless RES is OK. */
static gboolean
res_ok (MtaConn *c, PGresult *res)
{
	ExecStatusType s = res ? PQresultStatus (res) : PGRES_FATAL_ERROR;

	if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)
		return TRUE;
	set_err (c, res ? PQresultErrorMessage (res) : PQerrorMessage (c->pg));
	return FALSE;
}

/* Read the answers of the statements sent in pipeline mode and leave it;
 * FALSE with the first error kept. */
static gboolean
pg_flush (MtaConn *c)
{
	gboolean ok = TRUE;
	guint nulls = 0;

	if (c->piped == 0)
		return TRUE;
	c->piped = 0;
	if (PQpipelineSync (c->pg) != 1) {
		set_err (c, PQerrorMessage (c->pg));
		ok = FALSE;
	} else {
		for (;;) {
			PGresult *r = PQgetResult (c->pg);
			if (r == NULL) {
				/* one between the answers of two statements; more: the
				 * connection is gone */
				if (++nulls > 1) {
					if (ok)
						set_err (c, PQerrorMessage (c->pg));
					ok = FALSE;
					break;
				}
				continue;
			}
			nulls = 0;
			ExecStatusType st = PQresultStatus (r);
			if (st == PGRES_PIPELINE_SYNC) {
				PQclear (r);
				break;
			}
			if (ok && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
				set_err (c, st == PGRES_PIPELINE_ABORTED ? "aborted" : PQresultErrorMessage (r));
				ok = FALSE;
			}
			PQclear (r);
		}
	}
	PQexitPipelineMode (c->pg);
	return ok;
}
#endif

gboolean
mta_conn_exec (MtaConn *c, const char *sql)
{
#ifdef MTA_HAVE_LIBPQ
	if (c->is_pg) {
		if (!pg_flush (c))
			return FALSE;
		PGresult *res = PQexec (c->pg, sql);
		gboolean ok = res_ok (c, res);
		PQclear (res);
		return ok;
	}
#endif
	return sqlite3_exec (c->lite, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* ------------------------------------------------------------ schema */

/* What PostgreSQL takes differently from schema.sql, each a regular
 * expression and its replacement, in this order. */
static const char *const pg_schema[][2] = {
	/* SQLite's rowid alias: an id the engine gives */
	{ "\\bINTEGER PRIMARY KEY\\b", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" },
	/* SQLite's INTEGER is 64-bit, PostgreSQL's 32 */
	{ "\\bINTEGER\\b", "BIGINT" },
	{ "\\bREAL\\b", "DOUBLE PRECISION" },
	{ "\\) WITHOUT ROWID;", ");" },
	{ "CREATE VIEW IF NOT EXISTS", "CREATE OR REPLACE VIEW" },
	/* checked at the commit: --all-events stores the events before the
	 * stacks they name (SQLite does not check foreign keys at all) */
	{ "(REFERENCES \\w+ \\(id\\))", "\\1 DEFERRABLE INITIALLY DEFERRED" },
	/* the views' addresses in hex */
	{ "printf \\('0x%x', ", "'0x' || to_hex (" },
	/* PRAGMA application_id, user_version: rows of a table */
	{ "^PRAGMA (\\w+) = (\\d+);",
	  "INSERT INTO mta_pragma (name, value) VALUES ('\\1', \\2)"
	  " ON CONFLICT (name) DO UPDATE SET value = excluded.value;" },
};

char *
mta_conn_schema (const MtaConn *c, const char *sql)
{
	char *s = g_strdup (sql);

	if (!c->is_pg)
		return s;
	for (guint i = 0; i < G_N_ELEMENTS (pg_schema); i++) {
		GRegex *re = g_regex_new (pg_schema[i][0], G_REGEX_MULTILINE, 0, NULL);
		char *t = g_regex_replace (re, s, -1, 0, pg_schema[i][1], 0, NULL);
		g_regex_unref (re);
		g_free (s);
		s = t;
	}
	char *t = g_strconcat ("CREATE TABLE IF NOT EXISTS mta_pragma (name TEXT PRIMARY KEY, value BIGINT);\n",
			       s, NULL);
	g_free (s);
	return t;
}

/* The integer of SQL's first row (?1, ?2: A, B when not NULL), 0 without
 * a row, -1 on an error. */
static int64_t
query_int (MtaConn *c, const char *sql, const char *a, const char *b)
{
	MtaStmt *st = mta_stmt_prepare (c, sql);
	int64_t v = -1;

	if (st == NULL)
		return -1;
	if (a != NULL)
		mta_stmt_bind_text (st, 1, a);
	if (b != NULL)
		mta_stmt_bind_text (st, 2, b);
	int rc = mta_stmt_step (st);
	if (rc == MTA_STEP_ROW)
		v = mta_stmt_int64 (st, 0);
	else if (rc == MTA_STEP_DONE)
		v = 0;
	mta_stmt_finalize (st);
	return v;
}

int
mta_conn_has (MtaConn *c, const char *table, const char *column)
{
	int64_t n;

	if (c->is_pg)
		n = column == NULL
			? query_int (c, "SELECT count(*) FROM information_schema.tables WHERE"
				     " table_schema = current_schema () AND table_name = ?1", table, NULL)
			: query_int (c, "SELECT count(*) FROM information_schema.columns WHERE"
				     " table_schema = current_schema () AND table_name = ?1"
				     " AND column_name = ?2", table, column);
	else
		n = column == NULL
			? query_int (c, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
				     table, NULL)
			: query_int (c, "SELECT count(*) FROM pragma_table_info (?1) WHERE name = ?2", table,
				     column);
	return n < 0 ? -1 : n > 0;
}

int64_t
mta_conn_pragma (MtaConn *c, const char *name)
{
	if (!c->is_pg) {
		g_autofree char *sql = g_strdup_printf ("PRAGMA %s", name);
		return query_int (c, sql, NULL, NULL);
	}
	int has = mta_conn_has (c, "mta_pragma", NULL);
	if (has <= 0)
		return has;
	return query_int (c, "SELECT value FROM mta_pragma WHERE name = ?1", name, NULL);
}

gboolean
mta_conn_lock (MtaConn *c, gboolean on)
{
	if (!c->is_pg)
		return TRUE;
	return mta_conn_exec (c, on ? "SELECT pg_advisory_lock (" LOCK_KEY ")"
			      : "SELECT pg_advisory_unlock (" LOCK_KEY ")");
}

int64_t
mta_conn_reserve_stacks (MtaConn *c, int64_t n)
{
	if (!c->is_pg)
		return query_int (c, "SELECT coalesce (max (id), 0) + 1 FROM stacks", NULL, NULL);
	/* The sequence of stacks.id moved past the block at once: sequences
	 * are outside transactions, so two loads never get the same ids
	 * whatever becomes of either; the lock makes nextval and setval one
	 * step. */
	g_autofree char *count = g_strdup_printf ("%" PRId64, MAX (n, 1));
	int64_t last = query_int (c, "SELECT setval (pg_get_serial_sequence ('stacks', 'id'),"
				  " nextval (pg_get_serial_sequence ('stacks', 'id')) + CAST (?1 AS BIGINT) - 1)",
				  count, NULL);
	return last < 0 ? -1 : last - MAX (n, 1) + 1;
}

/* ------------------------------------------------------------ statements */

MtaStmt *
mta_stmt_prepare (MtaConn *c, const char *sql)
{
	MtaStmt *st = g_new0 (MtaStmt, 1);
	st->c = c;
#ifdef MTA_HAVE_LIBPQ
	if (c->is_pg) {
		GString *q = g_string_new (NULL);
		guint64 used = 0;
		for (const char *p = sql; *p != '\0'; p++) {
			if (*p == '?' && g_ascii_isdigit (p[1])) {
				int n = (int) strtol (p + 1, NULL, 10);
				st->nparams = MAX (st->nparams, n);
				if (n < 64)
					used |= (guint64) 1 << n;
				g_string_append_c (q, '$');
			} else {
				g_string_append_c (q, *p);
			}
		}
		st->name = g_strdup_printf ("mta%u", ++c->stmts);
		st->pipe = (g_str_has_prefix (sql, "INSERT") || g_str_has_prefix (sql, "UPDATE")) &&
			strstr (sql, "RETURNING") == NULL;
		if (!pg_flush (c)) {
			g_string_free (q, TRUE);
			mta_stmt_finalize (st);
			return NULL;
		}
		st->vals = g_new0 (char *, st->nparams + 1);
		st->row = -1;
		/* a parameter the statement skips (bound by the caller for a
		 * sibling statement) is text: the server could not tell its type */
		Oid *types = g_new0 (Oid, st->nparams + 1);
		for (int i = 1; i <= st->nparams && i < 64; i++)
			if (!(used & ((guint64) 1 << i)))
				types[i - 1] = 25;   /* TEXTOID */
		PGresult *res = PQprepare (c->pg, st->name, q->str, st->nparams, types);
		g_free (types);
		g_string_free (q, TRUE);
		gboolean ok = res_ok (c, res);
		PQclear (res);
		if (!ok) {
			mta_stmt_finalize (st);
			return NULL;
		}
		return st;
	}
#endif
	if (sqlite3_prepare_v3 (c->lite, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->lite, NULL) != SQLITE_OK) {
		g_free (st);
		return NULL;
	}
	return st;
}

void
mta_stmt_finalize (MtaStmt *st)
{
	if (st == NULL)
		return;
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		PQclear (st->res);
		if (st->vals != NULL && st->c->piped == 0) {
			g_autofree char *sql = g_strdup_printf ("DEALLOCATE %s", st->name);
			PQclear (PQexec (st->c->pg, sql));
			for (int i = 0; i < st->nparams; i++)
				g_free (st->vals[i]);
		}
		g_free (st->vals);
		g_free (st->name);
	}
#endif
	sqlite3_finalize (st->lite);
	g_free (st);
}

#ifdef MTA_HAVE_LIBPQ
static void
pg_bind (MtaStmt *st, int i, char *v)
{
	if (i < 1 || i > st->nparams) {
		g_free (v);
		return;
	}
	g_free (st->vals[i - 1]);
	st->vals[i - 1] = v;
}
#endif

void
mta_stmt_bind_int64 (MtaStmt *st, int i, int64_t v)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		pg_bind (st, i, g_strdup_printf ("%" PRId64, v));
		return;
	}
#endif
	sqlite3_bind_int64 (st->lite, i, v);
}

void
mta_stmt_bind_double (MtaStmt *st, int i, double v)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		char buf[G_ASCII_DTOSTR_BUF_SIZE];
		pg_bind (st, i, g_strdup (g_ascii_dtostr (buf, sizeof buf, v)));
		return;
	}
#endif
	sqlite3_bind_double (st->lite, i, v);
}

void
mta_stmt_bind_text (MtaStmt *st, int i, const char *s)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		pg_bind (st, i, g_strdup (s));
		return;
	}
#endif
	sqlite3_bind_text (st->lite, i, s, -1, SQLITE_TRANSIENT);
}

void
mta_stmt_bind_null (MtaStmt *st, int i)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		pg_bind (st, i, NULL);
		return;
	}
#endif
	sqlite3_bind_null (st->lite, i);
}

void
mta_stmt_bind_text_or_null (MtaStmt *st, int i, const char *s)
{
	if (s != NULL)
		mta_stmt_bind_text (st, i, s);
	else
		mta_stmt_bind_null (st, i);
}

int
mta_stmt_step (MtaStmt *st)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		MtaConn *c = st->c;
		if (st->pipe) {
			if ((c->piped == 0 && PQenterPipelineMode (c->pg) != 1) ||
			    PQsendQueryPrepared (c->pg, st->name, st->nparams, (const char *const *) st->vals,
						 NULL, NULL, 0) != 1) {
				set_err (c, PQerrorMessage (c->pg));
				if (c->piped == 0)
					PQexitPipelineMode (c->pg);
				return MTA_STEP_ERROR;
			}
			if (++c->piped >= PIPELINE_MAX && !pg_flush (c))
				return MTA_STEP_ERROR;
			return MTA_STEP_DONE;
		}
		if (st->res == NULL) {
			if (!pg_flush (c))
				return MTA_STEP_ERROR;
			st->res = PQexecPrepared (st->c->pg, st->name, st->nparams,
						  (const char *const *) st->vals, NULL, NULL, 0);
			if (!res_ok (st->c, st->res)) {
				PQclear (st->res);
				st->res = NULL;
				return MTA_STEP_ERROR;
			}
			st->rows = PQresultStatus (st->res) == PGRES_TUPLES_OK ? PQntuples (st->res) : 0;
			st->row = 0;
		} else if (st->row < st->rows) {
			st->row++;
		}
		return st->row < st->rows ? MTA_STEP_ROW : MTA_STEP_DONE;
	}
#endif
	int rc = sqlite3_step (st->lite);
	return rc == SQLITE_ROW ? MTA_STEP_ROW : rc == SQLITE_DONE ? MTA_STEP_DONE : MTA_STEP_ERROR;
}

void
mta_stmt_reset (MtaStmt *st)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		PQclear (st->res);
		st->res = NULL;
		st->row = -1;
		return;
	}
#endif
	sqlite3_reset (st->lite);
}

void
mta_stmt_clear (MtaStmt *st)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		for (int i = 0; i < st->nparams; i++)
			g_clear_pointer (&st->vals[i], g_free);
		return;
	}
#endif
	sqlite3_clear_bindings (st->lite);
}

gboolean
mta_stmt_is_null (MtaStmt *st, int col)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg)
		return st->res == NULL || st->row >= st->rows || PQgetisnull (st->res, st->row, col);
#endif
	return sqlite3_column_type (st->lite, col) == SQLITE_NULL;
}

const char *
mta_stmt_text (MtaStmt *st, int col)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg)
		return mta_stmt_is_null (st, col) ? "" : PQgetvalue (st->res, st->row, col);
#endif
	const unsigned char *t = sqlite3_column_text (st->lite, col);
	return t ? (const char *) t : "";
}

int64_t
mta_stmt_int64 (MtaStmt *st, int col)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg) {
		/* sum() of BIGINT is NUMERIC: "123" all the same; a boolean "t" */
		const char *t = mta_stmt_text (st, col);
		return t[0] == 't' ? 1 : g_ascii_strtoll (t, NULL, 10);
	}
#endif
	return sqlite3_column_int64 (st->lite, col);
}

double
mta_stmt_double (MtaStmt *st, int col)
{
#ifdef MTA_HAVE_LIBPQ
	if (st->c->is_pg)
		return g_ascii_strtod (mta_stmt_text (st, col), NULL);
#endif
	return sqlite3_column_double (st->lite, col);
}
