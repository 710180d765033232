/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach.h -- valgrind's categories of the blocks not freed, as the
 * recorder's scans found them (MTREC_REACH=1, `mtrec --reach`, `mtrec ctl
 * PID reach`): "# reach begin N", one "# reach ADDR KIND" per block live
 * at the scan, "# reach unscanned WHAT: WHY" for what it could not scan,
 * "# reach end BYTES MS" when it finished (share/trace-format.md,
 * share/reach.md).
 */
#ifndef MTA_REACH_H
#define MTA_REACH_H

#include <glib.h>
#include <stdint.h>

typedef enum {
	MTA_REACH_UNKNOWN,         /* no verdict: the trace has none for the block */
	MTA_REACH_DEFINITE,        /* definitely lost: no pointer to it anywhere */
	MTA_REACH_INDIRECT,        /* indirectly lost: only lost blocks point to it */
	MTA_REACH_POSSIBLE,        /* possibly lost: only pointers into its middle */
	MTA_REACH_REACHABLE,       /* still reachable from a root */
	MTA_REACH_N
} MtaReach;

/* The I-th kind (0 <= I < MTA_REACH_N) in the order the reports give
 * them, valgrind's: definite, indirect, possible, reachable, unknown. */
static inline MtaReach
mta_reach_nth (int i)
{
	return (MtaReach) ((i + 1) % MTA_REACH_N);
}

/* "definite", "indirect", "possible", "reachable", "unknown": the words
 * of the trace, --leaks and JSON. */
const char *mta_reach_name (MtaReach r);
/* "definitely lost", ..., "still reachable", "not scanned": valgrind's. */
const char *mta_reach_words (MtaReach r);

/* --leaks LIST: comma-separated names (the words above, "all"), into a
 * mask of 1 << MtaReach. */
gboolean mta_reach_parse_kinds (const char *list, guint *mask, GError **error);
/* "definitely lost or indirectly lost" for a mask. */
char *mta_reach_mask_text (guint mask);
/* The names of a mask's kinds joined by SEP ("definite,indirect"), in
 * the order of the report, unknown last. */
char *mta_reach_mask_names (guint mask, const char *sep);

/* Which of the recorder's lines T (LEN bytes, from its '#') is. */
typedef enum {
	MTA_REACH_LINE_NOT,
	MTA_REACH_LINE_BEGIN,      /* v->n: the verdicts announced */
	MTA_REACH_LINE_VERDICT,    /* v->addr, v->kind */
	MTA_REACH_LINE_UNSCANNED,  /* v->rest, v->rest_len: "WHAT: WHY" */
	MTA_REACH_LINE_END,        /* v->n: bytes read, v->ms */
	MTA_REACH_LINE_REFUSED,    /* v->rest, v->rest_len: why a scan asked for was not made */
	MTA_REACH_LINE_BAD,        /* a "# reach" line that cannot be read */
} MtaReachLine;
typedef struct {
	uint64_t addr, n, ms;
	MtaReach kind;
	const char *rest;
	size_t rest_len;
} MtaReachValue;
MtaReachLine mta_reach_line (const char *t, size_t len, MtaReachValue *v);

#endif
