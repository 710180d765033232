/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-watch.h -- which parts of a rotated trace are complete: written
 * to their end, never to be written again, so that they can be compacted
 * (and deleted) while the program runs (share/compact.md).
 *
 * Part N of TRACE is TRACE itself for N = 1, TRACE.partN after.  Part N is
 * complete when part N+1 exists and no mapping of part N's file is listed
 * in /proc/PID/maps (the recorder unmaps a part it left), or when process
 * PID has exited (then every part that exists is).
 */
#ifndef MTA_COMPACT_WATCH_H
#define MTA_COMPACT_WATCH_H

#include <glib.h>
#include <stdint.h>

/* The file of part N of TRACE (to free). */
char *mta_compact_part_path (const char *trace, uint64_t n);

/* TRUE when process PID is gone (or a zombie: it writes nothing more),
 * or when the process now holding PID started after the trace was opened
 * at START (its "# start" value, SEC.NSEC; NULL: not known): the pid was
 * reused, by a later process on this host or on the one the trace was
 * copied to, and that process is not the writer. */
gboolean mta_compact_process_exited (int64_t pid, const char *start);

/* The last part, counting from FIRST, such that FIRST..LAST are all
 * complete; FIRST - 1 when part FIRST is not.  EXITED: the writer has
 * exited (every existing part is complete). */
uint64_t mta_compact_complete_upto (const char *trace, uint64_t first, int64_t pid,
				    gboolean exited);

#endif
