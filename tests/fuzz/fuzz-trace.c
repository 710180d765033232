/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-trace.c -- libFuzzer target: the trace reader and the mtrace report
 * on arbitrary bytes.  Built by `make fuzz` with clang
 * -fsanitize=fuzzer,address; the input is split at its first 0xff byte
 * into two parts read as one run, to exercise line numbering across parts.
 * gzip, zstd and xz input is decompressed (seeds mtrec.gz, mtrec.zst,
 * glibc.xz), so the decoders see broken streams too.
 * The symbolizer is left out (no files are opened); the location regexes,
 * the cache and both hash tables are exercised.  An input of odd length
 * goes as mtanalyze's plain report reads it, its plain events in bulk
 * (mta_reader_set_events); one of even length line by line.
 */
#include <stdio.h>
#include <string.h>

#include "mtrace-compat.h"
#include "trace-reader.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (devnull == NULL)
		devnull = fopen ("/dev/null", "w");
	MtaCompat *c = mta_compat_new (NULL, NULL, devnull);
	MtaReader *r = mta_reader_new (mta_compat_line, c);
	if (size % 2 == 1)
		mta_reader_set_events (r, mta_compat_events, c);
	const uint8_t *cut = memchr (data, 0xff, size);
	size_t first = cut ? (size_t) (cut - data) : size;

	mta_reader_read_buffer (r, "part1", (const char *) data, first, NULL);
	if (cut)
		mta_reader_read_buffer (r, "part2", (const char *) cut + 1, size - first - 1, NULL);
	mta_compat_finish (c);
	mta_reader_free (r);
	mta_compat_free (c);
	return 0;
}
