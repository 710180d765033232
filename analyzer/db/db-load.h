/* db-load.h -- loading a run into a database (--db): a SQLite file, or a
 * PostgreSQL server named by a postgresql:// URI (db-conn.h). */
#ifndef MTA_DB_LOAD_H
#define MTA_DB_LOAD_H

#include "run.h"

typedef struct MtaDb MtaDb;

/* Open PATH, creating it when missing, or connect to the server of a
 * postgresql:// URI.  Fails, without writing to it, when PATH is not a
 * SQLite database, is one of another program, was written by a newer
 * mtanalyze, or cannot be written.  Messages name a URI without its
 * password. */
MtaDb *mta_db_open (const char *path, GError **error);

/* The host the run is from (runs.host; default: this machine's name). */
void mta_db_set_host (MtaDb *db, const char *host);

/* Start the load of RUN: one transaction, the schema, the run's row.
 * ALL_EVENTS: mta_db_event() will be called for every event. */
gboolean mta_db_begin (MtaDb *db, const MtaRun *run, gboolean all_events, GError **error);

gboolean mta_db_event (MtaDb *db, const MtaRunEvent *ev, GError **error);

/* Store the finished RUN and commit; *RUN_ID is its id in the database. */
gboolean mta_db_store (MtaDb *db, const MtaRun *run, int64_t *run_id, GError **error);

/* Roll back what was not committed, close; remove the file when it was
 * created by this load and the load did not complete. */
void mta_db_close (MtaDb *db);

#endif
