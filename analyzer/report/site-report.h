/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

/* "linear, exponential" for a mask of growth classes. */
char *mta_growth_mask_text (guint mask);


/* A function that is probably an allocation wrapper the list does not
 * know (issue 11): it receives most leaked blocks (more than half) from
 * many distinct callers (MTA_SKIP_HINT_CALLERS call sites one frame up),
 * and is not skipped.  SKIP is what to pass to --skip: the function's
 * name, or OBJECT+0xOFF for code without symbols. */
#define MTA_SKIP_HINT_CALLERS 3
typedef struct {
	const MtaSite *site;
	char *skip;
	uint64_t blocks;           /* leaked blocks charged to it */
	guint callers;             /* distinct sites one frame up */
} MtaSkipHint;

/* A trace without stacks (depth 1) whose leaks lie in known wrappers:
 * how many leaked blocks, and (*NAMES, free it) which wrappers; 0 when
 * none (or wrappers are not skipped).  --depth 16 would show callers. */
uint64_t mta_depth_hint (const MtaRun *run, char **names);

/* What names site S for --skip: its function, or OBJECT+0xOFF (by file
 * name) when it has no symbol.  Free it. */
char *mta_skip_argument (const MtaSite *s);

/* The allocation wrappers found without symbols (MtaSite.auto_wrapper),
 * each as every output that names them says it: "0x16d4c5 in OBJECT: 26
 * bytes of code, called from 137 functions".  Free it. */
GPtrArray *mta_auto_wrappers (const MtaRun *run);

/* TRUE, with *HINT filled (free HINT->skip), when RUN has such a function. */
gboolean mta_skip_hint (const MtaRun *run, MtaSkipHint *hint);

/* Whether a path charged to SITE has a recorded stack. */
gboolean mta_site_has_stacks (const MtaRun *run, uint32_t site);

/* The callers of SITE's paths, up to FRAMES frames: paths that
 * differ only deeper down, or in the wrappers skipped, are one group;
 * largest first.  LEAKS: by leaked blocks and bytes, else by bad frees
 * (in blocks).  MtaStackGroup *, freed with the array. */
typedef struct {
	GArray *tail;              /* site indices */
	uint64_t blocks, bytes;
	uint64_t first_line;
} MtaStackGroup;
GPtrArray *mta_site_groups (const MtaRun *run, uint32_t site, guint frames, gboolean leaks);

#endif
