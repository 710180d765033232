/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* escape.h -- names taken from a trace (binary paths, symbols, thread
 * names, marks, the recorder's reasons) shown on a terminal without their
 * control characters acting: a trace is data anyone may have written, and
 * "\033]0;...\007" or "\033[2J" in a symbol name would retitle or clear
 * the terminal of whoever reads the report.
 *
 * Control bytes become \xNN: C0 (but the newline a report's lines end
 * with), DEL, and the C1 controls as UTF-8 writes them (c2 80-9f: some
 * terminals obey U+009B as CSI).  The report in the script's format is
 * left alone: /usr/bin/mtrace prints the bytes raw, and that output is
 * kept byte for byte.  JSON escapes its strings itself; the HTML report
 * is not read on a terminal.
 */
#ifndef MTA_ESCAPE_H
#define MTA_ESCAPE_H

#include <glib.h>
#include <stdio.h>

/* S with its control characters (newlines included) escaped; to free. */
char *mta_escape_controls (const char *s);

/* A stream writing to TO what is written to it, escaped as above but for
 * '\n'; unbuffered, so that what it prints stays in order with what goes
 * to TO (or stderr) directly.  fclose() it when done: TO stays open. */
FILE *mta_escaping_stream (FILE *to);

/* Standard output for a text report: escaping (standard output itself
 * when no stream can be made); mta_text_out_close() at the end. */
FILE *mta_text_out (void);
void mta_text_out_close (FILE *f);

#endif
