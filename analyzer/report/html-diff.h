/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-diff.h -- `mtanalyze diff --html FILE`: the comparison of two runs
 * as one self-contained page (share/pictures.md). */
#ifndef MTA_HTML_DIFF_H
#define MTA_HTML_DIFF_H

#include "leak-set.h"

/* A site whose leaks changed between BASE and FEATURE (diff.c). */
typedef struct {
	const MtaLeakSite *base, *feature;   /* NULL: none on that side */
	int64_t dblocks, dbytes;
} MtaDiffChange;

/* GROWN and SHRUNK: MtaDiffChange, largest first.  Written whole or not
 * at all; the error names PATH. */
gboolean mta_html_write_diff (const char *path, const MtaLeakSet *base, const MtaLeakSet *feature,
			      const GArray *grown, const GArray *shrunk, GError **error);

#endif
