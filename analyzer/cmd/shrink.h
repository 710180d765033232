/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shrink.h -- `mtanalyze shrink TRACE... -o OUT`: the trace without the
 * blocks that were freed, for the same leaks and bad frees in far fewer
 * bytes (share/shrink.md).
 */
#ifndef MTA_SHRINK_H
#define MTA_SHRINK_H

#include <glib.h>
#include "parts.h"

/* The subcommand's options, arguments and help, for main's parser. */
extern const GOptionEntry mta_shrink_entries[];
extern const char mta_shrink_params[];
extern const char mta_shrink_description[];

/* Shrink the traces ARGV (parts of one run) into --output; WARN reports
 * missing parts; *STATUS is 0. */
gboolean mta_shrink (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
