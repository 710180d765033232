/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* analysis.h -- the analyses beyond mtrace's report (--by-site, --json,
 * --db, --growth), run on one reading of the trace.
 */
#ifndef MTA_ANALYSIS_H
#define MTA_ANALYSIS_H

#include <stdio.h>
#include "lineage.h"
#include "outputs.h"
#include "symbolize.h"
#include "trace-reader.h"
#include "wrappers.h"

typedef struct {
	MtaOutputs outputs;        /* what is printed and written (outputs.c) */
	const char *db;            /* load the run into this database: a SQLite file, a postgresql:// URI */
	const char *host;          /* --host: the run's host in the database (NULL: this one's) */
	gboolean all_events;       /* ... with every event */
	MtaWrappers *wrappers;     /* the wrappers skipped (taken); NULL: none (--no-skip) */
	gboolean no_auto_skip;     /* nor those found without symbols */
	int frames;                /* frames shown per stack */
	guint growth;              /* leak sites reported and failing: 1 << MtaGrowth; 0 all */
	guint leak_kinds;          /* blocks that are leaks: 1 << MtaReach (--leaks); 0 all */
} MtaAnalysisOptions;

typedef struct MtaAnalysis MtaAnalysis;

/* Everything that can fail before the trace is read (the wrapper list,
 * the database) fails here. */
MtaAnalysis *mta_analysis_new (const MtaAnalysisOptions *opts, MtaSymbolizer *sym,
			       const char *binary, char **traces, int ntraces, GError **error);
void mta_analysis_free (MtaAnalysis *a);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaAnalysis, mta_analysis_free)

/* What the run inherited and handed over at forks (lineage.h), for the
 * reports; kept, not copied. */
void mta_analysis_set_lineage (MtaAnalysis *a, const MtaLineageInfo *lineage);

gboolean mta_analysis_line (const MtaLine *line, gpointer analysis, GError **error);

/* Store, write the files and print on OUT what opts->outputs says; the exit status (0 no leaks, 1 leaks -- of the growth
 * classes selected) or -1. */
int mta_analysis_finish (MtaAnalysis *a, uint64_t lines, uint64_t unreadable_lines, FILE *out,
			 GError **error);

#endif
