/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-db.c -- libFuzzer target: a trace analyzed by call site and loaded
 * into a database, as `mtanalyze --db FILE --all-events` does, on
 * arbitrary bytes.  Built by `make fuzz` with clang
 * -fsanitize=fuzzer,address,undefined.
 *
 * The database is SQLite's ":memory:" (the schema is share/schema.sql, as
 * for a file), so that an iteration writes nothing to disk.  The low bit
 * of the first byte chooses between storing every event (--all-events) and
 * the leaks alone.  Object paths in the trace are looked up under a
 * sysroot that does not exist, then as named (tests/t6000 covers what may
 * be named); one symbolizer keeps its opened files from one input to the
 * next, and forgets all the rest, so that an input reads the same alone.
 */
#include <stdio.h>
#include <string.h>

#include "db-load.h"
#include "run.h"
#include "trace-reader.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static gboolean
event_to_db (const MtaRunEvent *ev, gpointer db, GError **error)
{
	return mta_db_event (db, ev, error);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
	static MtaWrappers *wrappers;
	static MtaSymbolizer *sym;
	GError *error = NULL;
	int64_t run_id = 0;

	if (wrappers == NULL) {
		wrappers = mta_wrappers_new ();
		if (!mta_wrappers_load_default (wrappers, &error)) {
			fprintf (stderr, "fuzz-db: %s\n", error->message);
			abort ();
		}
	}
	gboolean all_events = size > 0 && (data[0] & 1);
	if (sym == NULL)
		sym = mta_symbolizer_new ("/nonexistent-fuzz-sysroot", NULL, NULL);
	MtaRun *run = mta_run_new (sym, wrappers, NULL);
	mta_run_add_trace (run, "fuzz");
	MtaDb *db = mta_db_open (":memory:", &error);
	if (db == NULL) {
		fprintf (stderr, "fuzz-db: %s\n", error->message);
		abort ();
	}
	gboolean ok = !all_events || mta_db_begin (db, run, TRUE, &error);
	if (ok && all_events)
		mta_run_set_event_func (run, event_to_db, db);
	MtaReader *reader = mta_reader_new (mta_run_line, run);
	if (ok)
		ok = mta_reader_read_buffer (reader, "fuzz", (const char *) data, size, &error);
	if (ok) {
		mta_run_finish (run, mta_reader_lines (reader), mta_reader_bad_lines (reader));
		if (all_events || mta_db_begin (db, run, FALSE, &error))
			(void) mta_db_store (db, run, &run_id, &error);
	}
	g_clear_error (&error);
	mta_reader_free (reader);
	mta_db_close (db);
	mta_run_free (run);
	mta_symbolizer_forget_trace (sym);
	return 0;
}
