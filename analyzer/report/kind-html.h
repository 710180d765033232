/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-html.h -- the tracked kinds in the --html report: per kind, its
 * blocks not released by call site, the objects left above zero grouped
 * by their reference paths, and the drops below zero by path. */
#ifndef MTA_KIND_HTML_H
#define MTA_KIND_HTML_H

#include <stdio.h>
#include "run.h"

/* One <section id="kinds"> (nothing when the run has no tracked kind).
 * FRAMES: the callers shown under each site and path. */
void mta_kind_html (const MtaRun *run, int frames, FILE *out);

#endif
