/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec-compact.h -- the launcher's --compact (mtrec-compact.c): the
 * compactor ("mtanalyze compact --follow --delete") run beside the
 * program, so that a rotated trace takes bounded disk. */
#ifndef MTREC_COMPACT_H
#define MTREC_COMPACT_H

#include <sys/types.h>

/* The mtanalyze beside this program (installed: same bin/; build tree:
 * ../analyzer/), into out; 0, or -1 when there is none. */
int mtrec_compact_find(char *out, size_t cap);

/* Start ANALYZER compacting the trace of process PID named by PATTERN
 * ('%p' is PID: the name goes in TRACE, PATH_MAX bytes), detached from
 * the program: its own session, no inherited stdio, no recorder.  Its
 * messages go to a hidden file beside the trace, named in LOG (LOGCAP
 * bytes).  The compactor's pid, or -1. */
pid_t mtrec_compact_start(const char *analyzer, const char *pattern, pid_t pid, char *trace,
			  char *log, size_t logcap);

#endif
