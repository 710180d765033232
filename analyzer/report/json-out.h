/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-out.h -- the facts of the reports as JSON (--json), for CI gates.
 * The field names are documented in share/json-format.md and stable. */
#ifndef MTA_JSON_OUT_H
#define MTA_JSON_OUT_H

#include <stdio.h>
#include "json-put.h"
#include "lineage.h"
#include "run.h"

/* RUN_ID: the run's id in the database (--db), 0 when not loaded.
 * GROWTH: the growth classes of the leak sites written (1 << MtaGrowth),
 * 0: all.
 * LINEAGE: what the run inherited from a parent and handed to a child
 * (lineage.h), NULL: not looked at. */
void mta_json_write_growth (const MtaRun *run, int frames, guint growth, int64_t run_id,
			    const MtaLineageInfo *lineage, FILE *out);

#endif
