/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parts.h -- the TRACE arguments of one run, put in the order of their
 * parts.
 *
 * A rotated mtrec trace is FILE, FILE.part2, FILE.part3, ... and each part
 * says which it is in its header ("# mtrec 1", then "# part N" for N >= 2:
 * share/trace-format.md).  The shell orders "t.log*" by name (part10
 * before part2), so the analyses read the parts by that header, never by
 * their names.
 */
#ifndef MTA_PARTS_H
#define MTA_PARTS_H

#include <glib.h>

#include "warn.h"


/* Reorder TRACES (*N paths) in place by part number when all of them are
 * parts of one mtrec run; leave them as given otherwise (glibc traces,
 * standard input, traces of several processes).  A compacted trace
 * ("# compacted FIRST LAST") takes the place of its parts: those given
 * too are left out, and *N becomes the count kept.  Warns through WARN
 * about a missing part, and about a next part on disk not given; fails
 * on two files claiming the same part. */
gboolean mta_parts_order (char **traces, int *n, MtaWarnFunc warn, gpointer data,
			  GError **error);
/* The same for the first parts of a run that goes on (the compactor's
 * passes): a next part on disk is expected, not worth a warning. */
gboolean mta_parts_order_prefix (char **traces, int *n, MtaWarnFunc warn, gpointer data,
				 GError **error);

/* The process whose trace PATH is, from its header: the "# pid" value
 * ("PID PPID") and the "# start" value, which together name one program
 * run (a process that execs starts another).  Both NULL for a trace
 * without them (glibc's, or not a trace). */
gboolean mta_parts_process (const char *path, char **pid, char **start, GError **error);

#endif
