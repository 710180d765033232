/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* folded-out.h -- the run's stacks in the folded format (--folded) that
 * flamegraph.pl, inferno and speedscope read.  share/pictures.md. */
#ifndef MTA_FOLDED_OUT_H
#define MTA_FOLDED_OUT_H

#include <stdio.h>
#include "run.h"

/* What a folded line counts. */
typedef enum {
	MTA_FOLDED_NONE,
	MTA_FOLDED_LEAKED,         /* blocks not freed */
	MTA_FOLDED_ALLOCATED,      /* every allocation */
	MTA_FOLDED_PEAK,           /* what each site held at the run's peak */
	MTA_FOLDED_TEMPORARY,      /* temporary allocations (blocks only) */
} MtaFolded;

/* "leaked", "allocated", "peak", "temporary" (NULL: leaked); FALSE with a
 * usage error for anything else. */
gboolean mta_folded_parse (const char *what, MtaFolded *kind, GError **error);
/* "bytes" or "blocks" -> *BLOCKS; usage error for anything else, or for a
 * count the kind does not have (temporary bytes, peak blocks). */
gboolean mta_folded_parse_count (const char *count, MtaFolded kind, gboolean *blocks,
				 GError **error);

/* The frame's name in a folded line (and in the HTML flame graph):
 * "function (file:line)", never containing ';' or a line break. */
char *mta_folded_frame_name (const MtaSite *s);

/* One line per distinct stack, outermost frame first, largest first; the
 * leaks of the sites whose growth class is in GROWTH (0: all). */
void mta_folded_write (const MtaRun *run, MtaFolded kind, gboolean blocks, guint growth, FILE *out);

#endif
