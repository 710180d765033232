/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* diff.h -- `mtanalyze diff BASE FEATURE`: the leaks a feature brought.
 *
 * Each side is a trace (with its BINARY when needed, or the parts of a
 * rotated trace) or a run of a database loaded with --db; the leaking
 * sites of the two runs are paired by source location, not by address,
 * so that two builds of a program compare (diff.c says how).
 */
#ifndef MTA_DIFF_H
#define MTA_DIFF_H

#include <glib.h>
#include "options.h"

#include "warn.h"

/* The subcommand's options, arguments and help, for main's parser. */
extern const GOptionEntry mta_diff_entries[];
extern const MtaSharedSpec mta_diff_shared;
extern const char mta_diff_params[];
extern const char mta_diff_description[];

/* Compare ARGV[0] (BASE) and ARGV[1] (FEATURE), print the report on
 * stdout; *STATUS is 1 when FEATURE has new or grown leaks, else 0. */
gboolean mta_diff (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
