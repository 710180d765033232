/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-sum.h -- the lines a compacted trace carries in place of the
 * events it dropped (share/compact.md, share/trace-format.md):
 *
 *   # compacted FIRST LAST       header: the parts FIRST..LAST folded here
 *   # at N                       the next line is line N of the run
 *   # runsum K=V ...             the run's counters of the dropped events
 *   # pathsum K=V ... CALLER     one call path's counters of them
 *   # tstate TID ADDR|-          a thread's latest allocation, not yet freed
 *
 * Written by compact.c, read by the trace reader ("# at") and the run
 * (the sums), so that a compacted trace plus the parts after it give
 * the full trace's totals, peak, growth evidence and line numbers.
 */
#ifndef MTA_COMPACT_SUM_H
#define MTA_COMPACT_SUM_H

#include <glib.h>
#include <stdint.h>

#include "trace-reader.h"

/* The run's additive counters, and its peak. */
typedef struct {
	uint64_t events, allocs, frees, reallocs, failed_allocs, duplicates;
	uint64_t bytes_allocated, temporary, bad_frees;
	uint64_t peak_live_bytes, peak_line;
} MtaCompactRun;

/* A call path's counters: additive ones, its first line (a minimum) and
 * the growth rule's evidence (maxima). */
typedef struct {
	int64_t stack_id;          /* -1: keyed by its caller field */
	MtaSpan caller;
	uint64_t first_line, allocs, frees, bytes_allocated, temporary, bad_frees;
	uint64_t last_free_line, last_freed_born;
	uint64_t peak_share;       /* its live bytes at the run's peak */
} MtaCompactPath;

typedef struct {
	uint32_t tid;
	gboolean valid;            /* LAST_ADDR is its latest allocation, still live */
	uint64_t last_addr;
} MtaCompactThread;

typedef enum {
	MTA_COMPACT_NOT,           /* not one of these lines */
	MTA_COMPACT_AT,
	MTA_COMPACT_HEADER,
	MTA_COMPACT_RUN,
	MTA_COMPACT_PATH,
	MTA_COMPACT_THREAD,
} MtaCompactKind;

typedef struct {
	MtaCompactKind kind;
	uint64_t at;               /* MTA_COMPACT_AT */
	uint64_t first, last;      /* MTA_COMPACT_HEADER */
	MtaCompactRun run;
	MtaCompactPath path;
	MtaCompactThread thread;
} MtaCompactSum;

/* Read extension line L: *SUM's kind is NOT for any other line; FALSE
 * (with ERROR naming the file and line) for one of these lines that is
 * damaged. */
gboolean mta_compact_sum_parse (const MtaLine *l, MtaCompactSum *sum, GError **error);

/* The reader's hook: after "# at N" line L, *LINENO (L's number) becomes
 * N - 1; any other line leaves it.  A damaged "# at", or one that would
 * number a line at or before FLOOR (the last line read that is not a '#'
 * line), fails with ERROR naming the file and line. */
gboolean mta_compact_line_at (const MtaLine *l, uint64_t *lineno, uint64_t floor, GError **error);

void mta_compact_format_run (GString *out, const MtaCompactRun *r);
void mta_compact_format_path (GString *out, const MtaCompactPath *p);
void mta_compact_format_thread (GString *out, const MtaCompactThread *t);

#endif
