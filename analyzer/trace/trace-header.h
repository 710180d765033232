/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-header.h -- the extension lines that describe a process and its
 * objects (share/trace-format.md, "Extension lines"), parsed in one place
 * for every reader: the run, the symbolizer, the ordering of parts and the
 * fork lineage.  No allocation: the strings are spans of the line. */
#ifndef MTA_TRACE_HEADER_H
#define MTA_TRACE_HEADER_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	MTA_HEADER_MTREC,      /* # mtrec VERSION             n */
	MTA_HEADER_PART,       /* # part N                    n */
	MTA_HEADER_PID,        /* # pid PID [PPID]            pid, ppid (-1: none), rest (the value) */
	MTA_HEADER_EXE,        /* # exe REST                  rest */
	MTA_HEADER_CMDLINE,    /* # cmdline REST              rest */
	MTA_HEADER_START,      /* # start SEC.NSEC            rest */
	MTA_HEADER_DEPTH,      /* # depth N                   n */
	MTA_HEADER_OBJECT,     /* # object BIAS LOW-HIGH BUILDID REST: bias, lo, hi, build_id, rest */
	MTA_HEADER_UNLOAD,     /* # unload BIAS LOW-HIGH REST: bias, lo, hi, rest */
	MTA_HEADER_THREAD,     /* # thread TID REST           n, rest */
	MTA_HEADER_PARENT,     /* # parent PID MARK REST      pid, n (>= 1), rest */
	MTA_HEADER_COMPACTED,  /* # compacted FIRST LAST      n, last (compact.c) */
} MtaHeaderKind;

typedef struct {
	const char *p;
	size_t len;
} MtaHeaderSpan;

typedef struct {
	MtaHeaderKind kind;
	uint64_t n, last;
	int64_t pid, ppid;
	uint64_t bias, lo, hi;
	MtaHeaderSpan build_id;    /* p NULL for '-' */
	MtaHeaderSpan rest;        /* to the end of the line, trailing blanks cut */
} MtaHeader;

/* TRUE, with *H filled, when TEXT (LEN bytes, a newline at the end or
 * not) is one of the lines above, well formed; FALSE for any other line,
 * and for one of those keywords with fields that do not parse (a damaged
 * line, which readers skip). */
gboolean mta_header_parse (const char *text, size_t len, MtaHeader *h);

/* A copy of a span, NUL-terminated. */
static inline char *
mta_header_dup (MtaHeaderSpan s)
{
	return s.p != NULL ? g_strndup (s.p, s.len) : NULL;
}

#endif
