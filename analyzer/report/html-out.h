/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-out.h -- the report of one run as one self-contained HTML page
 * (--html FILE): share/pictures.md. */
#ifndef MTA_HTML_OUT_H
#define MTA_HTML_OUT_H

#include <stdio.h>
#include "run.h"

/* Write the page of RUN to PATH (whole or not at all); FRAMES callers in
 * each site's stacks, the leak sites of the GROWTH classes (0: all). */
gboolean mta_html_write_report (const char *path, const MtaRun *run, int frames, guint growth,
				GError **error);

/* The line printed when --html is the only output: the file and what the
 * run leaked. */
void mta_html_print_written (const char *path, const MtaRunInfo *info, FILE *out);

#endif
