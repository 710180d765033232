/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* leak-set.h -- the leaking call sites of one run, whatever it was read
 * from: a trace (read and charged like --by-site does) or a run of a
 * database loaded with --db.  What `mtanalyze diff` compares.
 */
#ifndef MTA_LEAK_SET_H
#define MTA_LEAK_SET_H

#include <glib.h>
#include <stdint.h>

#include "warn.h"
#include "wrappers.h"

typedef struct {
	char *kind;                /* "" malloc; a tracked kind ("pool"), or "KIND references"
				    * for the sites that took the references of unbalanced
				    * objects (kinds.h) */
	char *function;            /* "" unknown, "0xOFF" no symbol */
	char *file;                /* "" without debug information */
	unsigned line;             /* 0 unknown */
	char *object;              /* "" unknown */
	char *caller;              /* function of the frame that called it, "" unknown */
	uint64_t blocks, bytes;    /* leaked */
	uint64_t *curve;           /* live bytes at the set's curve_x; NULL: unknown (a database) */
} MtaLeakSite;

typedef struct {
	char *name;                /* the run, as the user named it */
	double start;              /* when recording began (seconds since 1970), 0 unknown */
	uint64_t leaked_blocks, leaked_bytes;
	GPtrArray *sites;          /* MtaLeakSite *, leaking only */
	double *curve_x;           /* the timeline samples, in % of the run; NULL: none */
	guint ncurve;
} MtaLeakSet;

MtaLeakSet *mta_leak_set_new (const char *name);
void mta_leak_set_free (MtaLeakSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaLeakSet, mta_leak_set_free)

/* Add a site (the strings are copied). */
void mta_leak_set_add (MtaLeakSet *set, const char *function, const char *file, unsigned line,
		       const char *object, const char *caller, uint64_t blocks, uint64_t bytes);

/* The site added last is of KIND (a tracked kind: see MtaLeakSite.kind). */
void mta_leak_set_set_kind (MtaLeakSet *set, const char *kind);

typedef struct {
	const char *binary;        /* NULL: found from the trace */
	const char *sysroot;
	const MtaWrappers *wrappers;  /* NULL: nothing skipped */
	gboolean quiet;            /* -q: no warnings about unreadable lines, no progress */
	guint leak_kinds;          /* --leaks: only blocks of these kinds (1 << MtaReach); 0 all */
	MtaWarnFunc warn;          /* where warnings go */
} MtaLeakSetOptions;

/* Read the traces (parts of one run, in order). */
MtaLeakSet *mta_leak_set_from_traces (const char *name, char **traces, guint ntraces,
				      const MtaLeakSetOptions *opts, GError **error);

/* Run RUN of the database DB: a run id, or -1, -2 ... for the last run,
 * the one before it, ...; with LEAK_KINDS only the blocks of those kinds,
 * from leaks.reach (db-read.c, the only SQL of diff). */
MtaLeakSet *mta_leak_set_from_db (const char *name, const char *db, int64_t run, guint leak_kinds,
				  GError **error);

/* The error of --leaks on a run without verdicts of reachability. */
void mta_leak_set_no_verdicts (const char *name, GError **error);

/* TRUE when PATH starts with SQLite's magic string. */
gboolean mta_is_sqlite_file (const char *path);

#endif
