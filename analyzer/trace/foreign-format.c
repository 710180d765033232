/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* foreign-format.c -- what a file that is no trace is, from its first
 * bytes: an executable, a database, data compressed in a way not read,
 * an archive, another memory tool's file (heaptrack, valgrind, pprof),
 * named for the user (trace-reader.c asks, for a part without a trace
 * line). */
#include "foreign-format.h"

#include <glib.h>
#include <stdint.h>
#include <string.h>

/* The digits (of BASE 10 or 16) at P[*I], at least one; *I moves past them. */
static gboolean
skip_digits (const unsigned char *p, size_t n, size_t *i, int base)
{
	size_t start = *i;
	while (*i < n && (base == 16 ? g_ascii_isxdigit (p[*i]) : g_ascii_isdigit (p[*i])))
		(*i)++;
	return *i > start;
}

/* heaptrack's data file, raw or interpreted, starts "v VERSION FORMAT\n"
 * (both hexadecimal; libheaptrack.cpp's writeVersion): a line no trace
 * has, but one of its later lines ("- 0", a free) would be an event. */
static gboolean
is_heaptrack (const unsigned char *p, size_t n)
{
	size_t i = 2;
	return n > 2 && p[0] == 'v' && p[1] == ' ' && skip_digits (p, n, &i, 16) &&
		i < n && p[i++] == ' ' && skip_digits (p, n, &i, 16) && i < n && p[i] == '\n';
}

/* valgrind's log: every line starts "==PID== " ("--PID-- " with -v,
 * "**PID** " for its own errors); its XML output names itself. */
static gboolean
is_valgrind (const unsigned char *p, size_t n)
{
	static const char xml[] = "<valgrindoutput>";
	size_t i = 2;

	if (n > 5 && memcmp (p, "<?xml", 5) == 0)
		return g_strstr_len ((const char *) p, (gssize) MIN (n, 4096), xml) != NULL;
	if (n < 6 || !(p[0] == p[1] && (p[0] == '=' || p[0] == '-' || p[0] == '*')) ||
	    !skip_digits (p, n, &i, 10))
		return FALSE;
	return i + 2 < n && p[i] == p[0] && p[i + 1] == p[0] && p[i + 2] == ' ';
}

/* A protocol buffers varint at P[*I]; FALSE when the data ends first. */
static gboolean
pb_varint (const unsigned char *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; *i < n && shift < 64; shift += 7) {
		unsigned char b = p[(*i)++];
		*v |= (uint64_t) (b & 0x7f) << shift;
		if (!(b & 0x80))
			return TRUE;
	}
	return FALSE;
}

/* pprof's profile.proto (a Profile message, gzip'd as pprof and Go
 * write it, or not): every field up to the end of what was read is one
 * of the message's with its wire type, the first a length-delimited one
 * (Go writes period_type first, pprof sample_type).  A trace fails at
 * its first byte: '=', '#' are wire types 5 and 3, '@' an integer. */
static gboolean
is_pprof (const unsigned char *p, size_t n)
{
	size_t i = 0;
	unsigned fields = 0;

	if (n < 4 || (p[0] & 7) != 2)
		return FALSE;
	while (i < n) {
		uint64_t key, v;
		if (!pb_varint (p, n, &i, &key))
			break;      /* cut by the end of the read */
		uint64_t field = key >> 3, wire = key & 7;
		/* 1-6, 11: messages and strings; 7-10, 12-14: integers
		 * (13, comment, may be packed) */
		gboolean is_len = field <= 6 || field == 11;
		if (field == 0 || field > 14 ||
		    !(wire == (is_len ? 2 : 0) || (field == 13 && wire == 2)))
			return FALSE;
		if (!pb_varint (p, n, &i, &v))
			break;
		if (wire == 2) {
			if (v > n - i)
				break;
			i += v;
		}
		fields++;
	}
	return fields >= 2;
}

/* Another memory tool's file, named for the user. */
static const char *
other_tool (const unsigned char *p, size_t n)
{
	if (is_heaptrack (p, n))
		return "a heaptrack data file, not a malloc trace: read it with heaptrack_print";
	if (is_valgrind (p, n))
		return "a valgrind log, not a malloc trace: record one with mtrec";
	if (is_pprof (p, n))
		return "a pprof profile, not a malloc trace: read it with pprof";
	return NULL;
}

/* What the first bytes of a part say it is, when that is not a trace. */
const char *
mta_foreign_magic (const char *p, size_t n)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} known[] = {
		{ "\177ELF", 4, "an ELF file, not a trace: did you forget the TRACE argument?" },
		{ "SQLite format 3", 16, "an SQLite database, not a trace "
		  "(mtanalyze diff reads its runs as DB:RUN)" },
		{ "BZh", 3, "bzip2 data: only gzip, zstd and xz data are read; "
		  "decompress it with bunzip2" },
		{ "\x04\x22\x4d\x18", 4, "lz4 data: only gzip, zstd and xz data are read; "
		  "decompress it with lz4 -d" },
		{ "\x1f\x9d", 2, "compress (.Z) data: only gzip, zstd and xz data are read; "
		  "decompress it with uncompress" },
		{ "\x5d\x00\x00", 3, "lzma (.lzma) data: only gzip, zstd and xz data are read; "
		  "decompress it with unlzma" },
		{ "PK\x03\x04", 4, "a zip archive, not a trace: extract the trace from it" },
		{ "7z\xbc\xaf\x27\x1c", 6, "a 7z archive, not a trace: extract the trace from it" },
	};
	for (size_t i = 0; i < G_N_ELEMENTS (known); i++)
		if (n >= known[i].len && memcmp (p, known[i].magic, known[i].len) == 0)
			return known[i].what;
	return other_tool ((const unsigned char *) p, n);
}
