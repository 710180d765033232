/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact.h -- `mtanalyze compact [--follow] [--delete] TRACE`: fold the
 * complete parts of a rotated trace into TRACE.compact while the program
 * runs (share/compact.md).
 */
#ifndef MTA_COMPACT_H
#define MTA_COMPACT_H

#include <glib.h>
#include "parts.h"

extern const GOptionEntry mta_compact_entries[];
extern const char mta_compact_params[];
extern const char mta_compact_description[];

/* Compact the trace ARGV[0]; WARN reports parts it could not delete. */
gboolean mta_compact (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
