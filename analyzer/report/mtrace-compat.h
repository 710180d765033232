/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrace-compat.h -- the report of glibc's /usr/bin/mtrace, reproduced.
 *
 * Feed every line of the run (mta_compat_line is an MtaLineFunc), then
 * call mta_compat_finish for the "Memory not freed" table.  The output is
 * byte for byte the script's (glibc 2.36), including its treatment of odd
 * lines, its address-keyed location cache and its string sort of
 * addresses, except where it cannot resolve a caller that the symbolizer
 * can: there the resolved "file:line" replaces the bare address.
 */
#ifndef MTA_MTRACE_COMPAT_H
#define MTA_MTRACE_COMPAT_H

#include <stdio.h>
#include "symbolize.h"
#include "trace-reader.h"

typedef struct MtaCompat MtaCompat;

/* BINARY as given on the command line, or NULL.  SYM may be NULL (then
 * nothing is resolved beyond what the script would print without any
 * object file at hand). */
MtaCompat *mta_compat_new (MtaSymbolizer *sym, const char *binary, FILE *out);
void mta_compat_free (MtaCompat *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaCompat, mta_compat_free)

/* Do not replace the script's unresolved addresses (pure emulation). */
void mta_compat_set_improve (MtaCompat *c, gboolean improve);

gboolean mta_compat_line (const MtaLine *line, gpointer compat, GError **error);
/* The plain events of the run in bulk (an MtaEventsFunc): feed the lines
 * through mta_reader_set_events too, or every line to mta_compat_line. */
size_t mta_compat_events (MtaEvent *events, size_t n, uint64_t lineno, gpointer compat);

/* Print the table (or "No memory leaks."); returns the script's exit
 * status: 1 when something was not freed, else 0. */
int mta_compat_finish (MtaCompat *c);

#endif
