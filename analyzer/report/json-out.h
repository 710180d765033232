/* json-out.h -- the facts of the reports as JSON (--json), for CI gates.
 * The field names are documented in share/json-format.md and stable. */
#ifndef MTA_JSON_OUT_H
#define MTA_JSON_OUT_H

#include <stdio.h>
#include "lineage.h"
#include "run.h"

/* RUN_ID: the run's id in the database (--db), 0 when not loaded.
 * GROWTH: the growth classes of the leak sites written (1 << MtaGrowth),
 * 0: all. */
/* S as an RFC 8259 string ("null" for NULL); bytes that are not UTF-8
 * become U+FFFD. */
void mta_json_put_string (FILE *out, const char *s);
/* "function": ..., "file": ..., "line": N, "object": ... -- a call site as
 * every JSON output names one. */
void mta_json_put_location (FILE *out, const char *function, const char *file, unsigned line,
			    const char *object);

/* LINEAGE: what the run inherited from a parent and handed to a child
 * (lineage.h), NULL: not looked at. */
void mta_json_write_growth (const MtaRun *run, int frames, guint growth, int64_t run_id,
			    const MtaLineageInfo *lineage, FILE *out);

#endif
