/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* addr2line.h -- `mtanalyze addr2line FILE ADDR...` (addr2line.c). */
#ifndef MTA_ADDR2LINE_H
#define MTA_ADDR2LINE_H

#include <glib.h>
#include "warn.h"

/* The subcommand's options, arguments and help, for main's parser. */
extern const GOptionEntry mta_addr2line_entries[];
extern const char mta_addr2line_params[];
extern const char mta_addr2line_description[];

/* Print the FILE:LINE of each address ARGV[1..] in the object ARGV[0];
 * *STATUS is 0. */
gboolean mta_addr2line (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
