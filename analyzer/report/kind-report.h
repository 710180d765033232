/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-report.h -- the --by-site report of the tracked kinds: per kind,
 * its blocks not released and its releases of blocks it never allocated
 * by call site, and its objects whose reference count is unbalanced. */
#ifndef MTA_KIND_REPORT_H
#define MTA_KIND_REPORT_H

#include <stdio.h>
#include "kinds.h"
#include "run.h"

/* Nothing when the run has no tracked kinds.  FRAMES: the callers shown
 * under each reference path. */
void mta_kind_report (const MtaRun *run, guint frames, FILE *out);

/* "+1", "-2": a net count as the reports write it. */
char *mta_net_count_text (int64_t net);

#endif
