/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* db-conn.h -- the two engines --db loads into and diff reads from,
 * SQLite (a file) and PostgreSQL (a postgresql:// URI, libpq), behind
 * one small interface shaped after SQLite's: prepare a statement once,
 * bind its ?N parameters, step through its rows, reset, bind again.
 *
 * Everything that differs between the engines is here and nowhere else:
 * the schema's few substitutions for PostgreSQL (mta_conn_schema), where
 * the schema's version is kept (SQLite's PRAGMAs, a table in
 * PostgreSQL), how a block of stack ids is reserved by a load that runs
 * beside others, and the words of an error.  A URI's password is never
 * in a message: every message names the database by mta_conn_name().
 */
#ifndef MTA_DB_CONN_H
#define MTA_DB_CONN_H

#include <glib.h>
#include <stdint.h>

typedef struct MtaConn MtaConn;
typedef struct MtaStmt MtaStmt;

/* Whether NAME is a PostgreSQL URI (postgresql:// or postgres://). */
gboolean mta_conn_is_uri (const char *name);

/* NAME with the password of a URI replaced by "***" (user:***@host, all
 * up to the last '@' before the parameters, and password=*** among them);
 * a file name as it is.  Free it. */
char *mta_conn_redact (const char *name);

/* TEXT (a message) with every URI in it redacted.  Free it. */
char *mta_conn_redact_in (const char *text);

/* "URI:ID" -> the URI and the ID's text: the last ':' followed by digits
 * only (or "-N", "last") ends the URI, since a URI has ':' of its own
 * (postgresql://host:5432/db:3).  FALSE when ARG has no such ending. */
gboolean mta_conn_split_run (const char *arg, char **uri, const char **run);

/* Connect to the PostgreSQL of URI.  FALSE with an error naming the URI
 * without its password, also when mtanalyze was built without libpq. */
MtaConn *mta_conn_open_pg (const char *uri, GError **error);
/* Take an open SQLite handle (sqlite3 *), NAME its file. */
MtaConn *mta_conn_wrap_sqlite (void *sqlite_db, const char *name);
void mta_conn_close (MtaConn *c);

gboolean mta_conn_is_pg (const MtaConn *c);
/* The database as messages name it (the URI without its password). */
const char *mta_conn_name (const MtaConn *c);
/* The engine's last error message, one line. */
const char *mta_conn_errmsg (MtaConn *c);
/* SQLITE_NOMEM, for the out-of-memory path of SQLite; 0 for PostgreSQL. */
int mta_conn_errcode (MtaConn *c);

/* Run SQL (several statements, no parameters); FALSE: mta_conn_errmsg. */
gboolean mta_conn_exec (MtaConn *c, const char *sql);

/* The schema text SQL (share/schema.sql) as this engine takes it. */
char *mta_conn_schema (const MtaConn *c, const char *sql);

/* PRAGMA NAME (application_id, user_version) of SQLite, or its row in
 * PostgreSQL's mta_pragma table: 0 when not set; -1 on an error. */
int64_t mta_conn_pragma (MtaConn *c, const char *name);
/* Whether TABLE exists and, when COLUMN is not NULL, has it; -1 error. */
int mta_conn_has (MtaConn *c, const char *table, const char *column);

/* Hold the lock that makes the schema's creation and the reservation of
 * stack ids one load's at a time (PostgreSQL; SQLite's write lock does it
 * already). */
gboolean mta_conn_lock (MtaConn *c, gboolean on);
/* The first of N stack ids no other load takes (with the lock held); -1
 * on an error. */
int64_t mta_conn_reserve_stacks (MtaConn *c, int64_t n);

enum { MTA_STEP_ERROR = -1, MTA_STEP_DONE = 0, MTA_STEP_ROW = 1 };

/* SQL with ?1, ?2 ... parameters; NULL: mta_conn_errmsg. */
MtaStmt *mta_stmt_prepare (MtaConn *c, const char *sql);
void mta_stmt_finalize (MtaStmt *st);
void mta_stmt_bind_int64 (MtaStmt *st, int i, int64_t v);
void mta_stmt_bind_double (MtaStmt *st, int i, double v);
/* The text is copied. */
void mta_stmt_bind_text (MtaStmt *st, int i, const char *s);
void mta_stmt_bind_null (MtaStmt *st, int i);
/* NULL for NULL. */
void mta_stmt_bind_text_or_null (MtaStmt *st, int i, const char *s);
int mta_stmt_step (MtaStmt *st);
/* Back to before the first step; the bindings stay. */
void mta_stmt_reset (MtaStmt *st);
/* Every parameter NULL. */
void mta_stmt_clear (MtaStmt *st);
int64_t mta_stmt_int64 (MtaStmt *st, int col);
double mta_stmt_double (MtaStmt *st, int col);
/* "" for NULL. */
const char *mta_stmt_text (MtaStmt *st, int col);
gboolean mta_stmt_is_null (MtaStmt *st, int col);

#endif
