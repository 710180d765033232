/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* session.h -- `mtanalyze session`: the processes and programs of a
 * recording session, as a tree, with the leaks of each (session.c).
 */
#ifndef MTA_SESSION_H
#define MTA_SESSION_H

#include <glib.h>

#include "options.h"
#include "parts.h"

extern const MtaSharedSpec mta_session_shared;
extern const char mta_session_params[];
extern const char mta_session_description[];

/* ARGV: the trace files; warnings go to WARN.  *STATUS: 0 no leaks, 1
 * leaks. */
gboolean mta_session (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

#endif
