/* analysis.h -- the analyses beyond mtrace's report (--by-site, --json,
 * --db, --growth), run on one reading of the trace.
 */
#ifndef MTA_ANALYSIS_H
#define MTA_ANALYSIS_H

#include <stdio.h>
#include "folded-out.h"
#include "lineage.h"
#include "symbolize.h"
#include "trace-reader.h"

typedef struct {
	gboolean by_site;          /* the text report by call site */
	gboolean json;             /* the same facts as JSON */
	const char *db;            /* load the run into this database: a SQLite file, a postgresql:// URI */
	const char *host;          /* --host: the run's host in the database (NULL: this one's) */
	gboolean all_events;       /* ... with every event */
	gboolean no_skip;          /* do not skip allocation wrappers */
	gboolean no_auto_skip;     /* nor those found without symbols */
	char **skip;               /* more wrapper patterns */
	int frames;                /* frames shown per stack */
	guint growth;              /* leak sites reported and failing: 1 << MtaGrowth; 0 all */
	guint leak_kinds;          /* blocks that are leaks: 1 << MtaReach (--leaks); 0 all */
	MtaFolded folded;          /* --folded: print folded stacks of this count */
	gboolean folded_blocks;    /* ... in blocks, not bytes */
	const char *html;          /* --html: also write this report (html-out.c) */
	const char *pprof;         /* --pprof: also write the run as a pprof profile */
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

/* Store and print; the exit status (0 no leaks, 1 leaks -- of the growth
 * classes selected) or -1. */
int mta_analysis_finish (MtaAnalysis *a, uint64_t lines, uint64_t unreadable_lines, FILE *out,
			 GError **error);

#endif
