/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* outputs.h -- which writers the options select, decided in one place.
 *
 * A command prints one thing on standard output and may also write
 * files (--html, --pprof).  mta_outputs_resolve() checks the options that
 * go together, and says which: the commands then call the writer of
 * their table for that format (analysis.c for a run, diff.c for a
 * comparison).  To add an output format: a value here, its line in the
 * precedence of outputs.c, and a writer in the tables of the commands
 * that print it.
 */
#ifndef MTA_OUTPUTS_H
#define MTA_OUTPUTS_H

#include <glib.h>
#include "folded-out.h"

/* What standard output gets. */
typedef enum {
	MTA_OUT_SCRIPT,    /* glibc mtrace's report (the default command alone) */
	MTA_OUT_TEXT,      /* the text report: by call site, or the comparison */
	MTA_OUT_JSON,      /* the same facts as JSON */
	MTA_OUT_FOLDED,    /* folded stacks */
	MTA_OUT_LOADED,    /* one line: the run loaded into the database */
	MTA_OUT_WRITTEN,   /* one line per file written */
	MTA_OUT_N
} MtaOut;

/* The files written besides, in the order they are written. */
typedef enum {
	MTA_FILE_HTML,
	MTA_FILE_PPROF,
	MTA_FILE_N
} MtaFile;

/* What the options asked for (NULL or FALSE: not asked). */
typedef struct {
	MtaOut fallback;           /* when nothing else is asked */
	gboolean by_site, json;
	const char *folded, *folded_count;
	const char *db, *host;
	gboolean all_events;
	const char *files[MTA_FILE_N];
	gboolean gate;             /* --growth or --leaks: a report by call site */
} MtaOutputRequest;

typedef struct {
	MtaOut out;
	const char *files[MTA_FILE_N];
	MtaFolded folded;          /* with MTA_OUT_FOLDED */
	gboolean folded_blocks;
} MtaOutputs;

/* Checks REQ (usage errors: G_OPTION_ERROR_BAD_VALUE) and fills *OUT. */
gboolean mta_outputs_resolve (const MtaOutputRequest *req, MtaOutputs *out, GError **error);

/* TRUE when anything but the script's report was asked for. */
gboolean mta_outputs_by_site (const MtaOutputs *o);

/* Standard output as OUT's writer needs it: JSON raw, text escaped
 * (escape.h); mta_text_out_close() when done. */
FILE *mta_outputs_stream (MtaOut out);

#endif
