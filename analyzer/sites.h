/* sites.h -- the analyses beyond mtrace's report: --by-site, --json and
 * --db, run on one reading of the trace.
 */
#ifndef MTA_SITES_H
#define MTA_SITES_H

#include <stdio.h>
#include "symbolize.h"
#include "trace-reader.h"

typedef struct {
	gboolean by_site;          /* the text report by call site */
	gboolean json;             /* the same facts as JSON */
	const char *db;            /* load the run into this SQLite database */
	gboolean all_events;       /* ... with every event */
	gboolean no_skip;          /* do not skip allocation wrappers */
	char **skip;               /* more wrapper patterns */
	int frames;                /* frames shown per stack */
} MtaSitesOptions;

typedef struct MtaSites MtaSites;

/* Everything that can fail before the trace is read (the wrapper list,
 * the database) fails here. */
MtaSites *mta_sites_new (const MtaSitesOptions *opts, MtaSymbolizer *sym, const char *binary,
			 char **traces, int ntraces, GError **error);
void mta_sites_free (MtaSites *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaSites, mta_sites_free)

gboolean mta_sites_line (const MtaLine *line, gpointer sites, GError **error);

/* Store and print; the exit status (0 no leaks, 1 leaks) or -1. */
int mta_sites_finish (MtaSites *s, uint64_t lines, uint64_t unreadable_lines, FILE *out,
		      GError **error);

#endif
