/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-output.h -- write a trace compressed as its name says.
 *
 * The counterpart of trace-input.h for what mtanalyze writes (shrink's
 * output): "-o OUT.zst" gives zstd data, ".gz" gzip, ".xz" xz, as users
 * of those tools expect; any other name, plain text.
 */
#ifndef MTA_TRACE_OUTPUT_H
#define MTA_TRACE_OUTPUT_H

#include <glib.h>
#include <stdio.h>

/* A stream that compresses into RAW as NAME's suffix says, and that, when
 * fclose'd, ends the compressed data and closes RAW (fclose fails when
 * either fails).  RAW itself when NAME has no such suffix.  NULL with
 * ERROR set (and RAW closed) when the compressor cannot start. */
FILE *mta_output_compress (FILE *raw, const char *name, GError **error);

#endif
