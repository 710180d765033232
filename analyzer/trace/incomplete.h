/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* incomplete.h -- what the recorder says about the runs it did not record
 * whole (issue 18): "# stopped REST" (it stopped for good there), "# lost
 * N REST" (N events were not recorded) and "# freeres REST" (whether libc
 * released its caches at exit).  share/trace-format.md.
 *
 * Every report feeds its lines to one of these, so that each mode -- the
 * mtrace-compatible one included -- can say on stderr that the run is
 * incomplete, and the reports by call site can say what their leaks are
 * worth.
 */
#ifndef MTA_INCOMPLETE_H
#define MTA_INCOMPLETE_H

#include <glib.h>
#include <stdint.h>

#include "trace-reader.h"

typedef struct {
	/* The first "# stopped" line; stopped_line 0: the recorder never stopped */
	uint64_t stopped_line;     /* line of the run (all parts) */
	uint64_t stopped_part_line;/* line within its part */
	char *stopped_part;        /* the part's name */
	char *stop_reason;
	/* "# lost" lines, summed */
	uint64_t lost_lines;       /* how many there were; 0: none */
	uint64_t lost_events;
	uint64_t lost_line, lost_part_line;   /* the first one */
	char *lost_part;
	char *lost_reason;         /* the first one's REST */
	/* "# freeres": REST as written ("done", "skipped: WHY"), NULL: no line */
	char *freeres;
} MtaIncomplete;

void mta_incomplete_init (MtaIncomplete *x);
void mta_incomplete_release (MtaIncomplete *x);

/* Take note of L when it is one of the three lines; TRUE when it was. */
gboolean mta_incomplete_line (MtaIncomplete *x, const MtaLine *l);

/* The recorder stopped, or dropped events. */
static inline gboolean
mta_incomplete_is (const MtaIncomplete *x)
{
	return x->stopped_line > 0 || x->lost_lines > 0;
}

/* "# freeres skipped: ...": libc's caches were not released at exit. */
gboolean mta_incomplete_freeres_skipped (const MtaIncomplete *x);

/* The warning for stderr (without "mtanalyze: warning: "), or NULL when
 * the run is complete. */
char *mta_incomplete_warning (const MtaIncomplete *x);

/* "2,000,000" */
char *mta_group_digits (uint64_t n);

#endif
