/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* suppress.h -- suppression files for `mtanalyze diff` (share/suppressions.md):
 * leak sites to leave out of a comparison, matched by function, source
 * file (and line), object or calling function, with shell wildcards.
 */
#ifndef MTA_SUPPRESS_H
#define MTA_SUPPRESS_H

#include <glib.h>
#include "leak-set.h"

typedef struct MtaSuppressions MtaSuppressions;

MtaSuppressions *mta_suppressions_new (void);
void mta_suppressions_free (MtaSuppressions *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaSuppressions, mta_suppressions_free)

/* Add the rules of the file PATH; fails on a rule it cannot parse, naming
 * the line. */
gboolean mta_suppressions_load (MtaSuppressions *s, const char *path, GError **error);

/* Number of rules. */
guint mta_suppressions_count (const MtaSuppressions *s);

/* TRUE when a rule matches SITE. */
gboolean mta_suppressions_match (const MtaSuppressions *s, const MtaLeakSite *site);

#endif
