/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-shrink.h -- what `mtanalyze shrink` keeps of the "# k" lines: the
 * tracked kinds' blocks not released, their releases of blocks they never
 * allocated, and every reference event, with the allocation and release
 * of any block that had one while it was allocated (its count starts at
 * its allocation: refcount.h).  The pairs of the other blocks go, as
 * malloc's do, so the kept file reports the same per kind. */
#ifndef MTA_KIND_SHRINK_H
#define MTA_KIND_SHRINK_H

#include <glib.h>
#include "trace-reader.h"

typedef struct MtaKindShrink MtaKindShrink;

/* STACKS: shrink's set of the stack ids needed (int64 keys, g_free'd),
 * to which pass 1 adds those of the lines it keeps. */
MtaKindShrink *mta_kind_shrink_new (GHashTable *stacks);
void mta_kind_shrink_free (MtaKindShrink *ks);

/* Pass 1: every MTA_LINE_TRACKED line, in order; then pass1_end. */
void mta_kind_shrink_pass1 (MtaKindShrink *ks, const MtaLine *l);
void mta_kind_shrink_pass1_end (MtaKindShrink *ks);
/* Pass 2: whether the MTA_LINE_TRACKED line L stays. */
gboolean mta_kind_shrink_keep (MtaKindShrink *ks, const MtaLine *l);

#endif
