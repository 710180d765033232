/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lineage.h -- forks: a child's trace starts from the heap it inherited,
 * and a parent that ended while its child lived on handed its blocks to
 * the child (issues 12, 26; share/analyzer.md, "Forks and daemons").
 *
 * A filter between the reader and a report's consumer: it passes every
 * line on unchanged, and adds lines of its own.
 *
 *  - A forked child's trace names its parent's trace and the parent's
 *    "# fork MARK" line ("# parent PID MARK PATH").  Before the child's
 *    first event or "=" line, the filter hands the report one '+' line for
 *    each block the parent had live at that mark (read from the parent's
 *    trace, which itself starts from its own parent's, and so on), with
 *    the caller and stack the parent recorded: the child's frees of them
 *    are not of memory never allocated, and those it never frees are its
 *    leaks.
 *
 *  - A trace whose process forked and then ended while a process holding
 *    a copy of its heap lived on (the child of one of its forks, the last
 *    that has one, or that child's own child: a daemonizing parent), as
 *    the traces' ends say
 *    ("# start" plus the last "# time"; "= End"; "# exec"), handed that
 *    process the blocks it allocated before the fork and still had: at
 *    its end the filter hands the report a '-' line for each of them, so
 *    that they are not this process's leaks, and says so.  Never to a
 *    child that exec'd, never when this process outlived the child.
 *
 * The plain report does not use it: it is the script's (report.c).
 */
#ifndef MTA_LINEAGE_H
#define MTA_LINEAGE_H

#include <glib.h>
#include <stdint.h>

#include "trace-reader.h"

/* A message for stderr, whole ("note: ..." or "warning: ..."). */
typedef void (*MtaLineageSayFunc) (const char *message, gpointer data);

typedef struct {
	/* The child's side: its parent, and what it inherited. */
	int64_t parent_pid;        /* -1: not a forked child's trace */
	uint64_t parent_mark;
	char *parent_trace;        /* the trace read, NULL: none found or used */
	uint64_t inherited_blocks, inherited_bytes;
	/* The parent's side: the blocks handed to the child of the last fork. */
	uint64_t forks;            /* "# fork" lines */
	int64_t handed_to_pid;     /* -1: nothing handed over (or pid unknown: 0) */
	uint64_t handed_mark;
	uint64_t handed_blocks, handed_bytes;
	char *handed_trace;        /* the child's trace that says it inherited them */
	gboolean exec_at_end;      /* the trace ends at an exec ("# exec"): its heap went with it */
} MtaLineageInfo;

typedef struct MtaLineage MtaLineage;

/* Lines go on to FUNC (DATA); messages to SAY.  CHILD_TRACE is the run's
 * first trace: a parent's trace named in its header but not found there
 * is looked for beside it. */
MtaLineage *mta_lineage_new (MtaLineFunc func, gpointer data, const char *child_trace,
			     MtaLineageSayFunc say, gpointer say_data);
void mta_lineage_free (MtaLineage *lg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaLineage, mta_lineage_free)

/* The run's TRACES (N), in the order read: a run that forked is read
 * again at the end, to find the blocks it may have handed over. */
void mta_lineage_set_traces (MtaLineage *lg, char **traces, int n);

/* --parent FILE: the parent's trace, whatever the header says. */
void mta_lineage_set_parent (MtaLineage *lg, const char *path);

/* An MtaLineFunc. */
gboolean mta_lineage_line (const MtaLine *line, gpointer lineage, GError **error);
/* After the last line, before the report's own finish. */
gboolean mta_lineage_finish (MtaLineage *lg, GError **error);

const MtaLineageInfo *mta_lineage_info (const MtaLineage *lg);

#endif
