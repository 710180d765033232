/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.h -- the default command (report.c): mtanalyze [OPTIONS]
 * [BINARY] TRACE... */
#ifndef MTA_REPORT_H
#define MTA_REPORT_H

#include <glib.h>

#include "options.h"
#include "warn.h"

extern const GOptionEntry mta_report_entries[];
extern const MtaSharedSpec mta_report_shared;
extern const char mta_report_params[];
/* The help's text: the default command's, and the others' in a line each. */
extern const char mta_report_description[];

/* Before the options are parsed: a bare --folded means --folded=leaked
 * (GOption's optional arguments would take the trace for its value). */
void mta_report_prepare_args (int argc, char **argv);

/* Report on the traces ARGV[0..ARGC) ([BINARY] TRACE...); *STATUS is 1
 * when there are leaks (of the growth classes asked), else 0. */
gboolean mta_report (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
