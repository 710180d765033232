/* site-report.h -- the report grouped by call site (--by-site). */
#ifndef MTA_SITE_REPORT_H
#define MTA_SITE_REPORT_H

#include <stdio.h>
#include "run.h"

/* Print the leaks and the frees of memory never allocated of RUN, by call
 * site, largest first, each with up to FRAMES frames of its stacks and its
 * growth class; only the leaks of the classes in GROWTH (1 << MtaGrowth,
 * 0: all).  Then the peak and the temporary allocations. */
void mta_site_report_growth (const MtaRun *run, guint frames, guint growth, FILE *out);
/* All leak sites. */

/* "linear, exponential" for a mask of growth classes. */
char *mta_growth_mask_text (guint mask);

/* The frames after the charged one of a path, up to MAX: what the reports
 * show under a site.  Site indices; free with g_array_unref. */
GArray *mta_path_tail (const MtaPath *path, guint max);

#endif
