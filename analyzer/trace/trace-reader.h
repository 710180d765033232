/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-reader.h -- streaming reader of malloc traces (glibc MALLOC_TRACE
 * logs and mtrec's extended ones).
 *
 * The reader splits its input into lines and each line into columns the
 * way perl's split(' ') does (so /usr/bin/mtrace's view of a line can be
 * reproduced exactly), classifies the line, and hands it to a callback.
 * It never allocates per line: spans point into the reader's buffer and
 * are valid only during the callback.  Several inputs fed to one reader
 * form one run: line numbers continue from one part to the next.
 */
#ifndef MTA_TRACE_READER_H
#define MTA_TRACE_READER_H

#include <glib.h>
#include <stdint.h>
#include <string.h>

#include "trace-words.h"

typedef struct {
	const char *p;
	size_t len;
} MtaSpan;

/* Enough columns for "@ CALLER OP ADDR SIZE" and a few trailing ones,
 * and for "# k KIND @ CALLER + ADDR SIZE s=ID" and one more (a longer
 * "# k" line is split again after KIND: trace-reader.c). */
#define MTA_MAX_COLS 10

typedef enum {
	MTA_LINE_BLANK,   /* empty, only whitespace or NUL bytes */
	MTA_LINE_EXT,     /* '#' extension line (text starts at the '#', after any NULs) */
	MTA_LINE_MARKER,  /* "= Start", "= End" */
	MTA_LINE_EVENT,   /* a well-formed + - < > ! line */
	/* A well-formed "# k KIND ..." line: an event of another allocator or
	 * a reference count (trace-format.md, "Tracked events"); its event
	 * fields as for MTA_LINE_EVENT (op '+' '-' 'r' 'u'), KIND in family.
	 * A damaged one is MTA_LINE_BAD. */
	MTA_LINE_TRACKED,
	MTA_LINE_BAD,     /* anything else: counted and reported */
} MtaLineKind;

typedef struct {
	uint64_t lineno;          /* 1-based, across all parts of the run */
	const char *source;       /* name of the part, for messages */
	uint64_t source_lineno;   /* 1-based, within the part */
	MtaSpan text;             /* the line without its '\n' */
	int ncols;                /* columns stored in cols (at most MTA_MAX_COLS) */
	gboolean more_cols;       /* the line has more than MTA_MAX_COLS columns */
	gboolean has_nul;         /* a NUL byte in one of the columns */
	MtaSpan cols[MTA_MAX_COLS];
	MtaLineKind kind;
	/* For MTA_LINE_EXT and MTA_LINE_TRACKED: the extension line's word
	 * (trace-words.h), MTA_WORD_NONE when no reader knows it; NONE for
	 * every other kind. */
	MtaWord word;
	/* For MTA_LINE_EVENT only: */
	char op;                  /* '+', '-', '<', '>' or '!' */
	MtaSpan caller;           /* empty when the line has no "@ CALLER" */
	uint64_t addr;            /* 0 for "(nil)" */
	gboolean addr_canonical;  /* ADDR column spelled as %p writes it */
	uint64_t size;            /* 0 when the operator takes none */
	int64_t stack_id;         /* trailing "s=ID", or -1 */
	/* For MTA_LINE_TRACKED only: */
	MtaSpan family;           /* KIND: 1-63 bytes of [A-Za-z0-9_.:-] */
} MtaLine;

/* Return FALSE (with ERROR set) to stop reading. */
typedef gboolean (*MtaLineFunc) (const MtaLine *line, gpointer user_data, GError **error);

typedef struct MtaReader MtaReader;

MtaReader *mta_reader_new (MtaLineFunc func, gpointer user_data);
void mta_reader_free (MtaReader *reader);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaReader, mta_reader_free)

/* What a consumer of events in bulk sees of a plain event line: an
 * MTA_LINE_EVENT whose address is spelled as %p spells it
 * (addr_canonical), of at most MTA_MAX_COLS columns.  Its trailing
 * "s=ID" is not kept. */
typedef struct {
	uint64_t addr;
	uint64_t size;
	MtaSpan caller;
	char op;
	/* 0, or for a "+" or ">" read on threads: how many events further on
	 * in the same run is a "-" or "<" of the same address, with no other
	 * event on it in between (trace-blocks.c) */
	uint32_t pair;
} MtaEvent;

/* Take the first of the N EVENTS that the consumer can: return how many.
 * They are consecutive lines, the first numbered LINENO.  The event
 * after them is handed to the line function as a line, and the rest to
 * this function again, as the consumer left them: it may change those
 * ahead (mta_compat_events sets op 0 in the second half of a pair whose
 * first it dropped, to drop that one too). */
typedef size_t (*MtaEventsFunc) (MtaEvent *events, size_t n, uint64_t lineno,
				 gpointer user_data);

/* Hand plain event lines to FUNC in runs (of a few hundred read
 * serially, up to a block's on threads), every other line to the line
 * function, in order; lines are numbered and counted as before.  It saves a call, a line's unpacking and its
 * checks per event for a consumer whose work on most events is one
 * table update (the plain report: mtrace-compat.c). */
void mta_reader_set_events (MtaReader *reader, MtaEventsFunc func, gpointer user_data);

/* Show a progress indicator on stderr for inputs larger than 64 MB, when
 * stderr is a terminal and the user did not ask for QUIET (-q). */
void mta_reader_set_progress (MtaReader *reader, gboolean quiet);

/* Read one part of the run; PATH "-" is standard input.  gzip, zstd and
 * xz data are decompressed as they are read (trace-input.h).  Fails when
 * the file cannot be read at all, when its compressed data is corrupt or
 * cut short, when its first bytes say it is something else (an ELF file,
 * a database, bzip2 data...), when it is a pipe in which no line is a
 * trace line and neither was any of the parts before (files are probed
 * beforehand: mta_reader_probe), or when the callback fails. */
gboolean mta_reader_read_file (MtaReader *reader, const char *path, GError **error);

/* Read one part held in memory, compressed or not (the fuzzer's entry
 * point). */
gboolean mta_reader_read_buffer (MtaReader *reader, const char *name,
				 const char *data, size_t len, GError **error);

/* Whether PATH is a trace, reading it up to its first trace line (all of
 * it when it has none).  TRUE with *WHAT NULL: it is; TRUE with *WHAT set
 * (to free): no line of it is a trace line, and *WHAT says what it holds
 * ("empty file", "only NUL bytes", ...).  FALSE with ERROR set, naming
 * PATH: it cannot be read, or its first bytes say it is something else
 * (an ELF file, a database, bzip2 data...), or its compressed data is
 * broken before its first trace line. */
gboolean mta_reader_probe (const char *path, char **what, GError **error);

/* A trace line: an event, an '=' line or a "# word" extension line, in
 * printable text.  A file with none is not a trace (SPEC, "Exit codes
 * and inputs"); blank, damaged and binary lines are not trace lines. */
gboolean mta_line_is_trace (const MtaLine *line);

/* Split and classify TEXT (LEN bytes, no newline) into LINE as the reader
 * would, leaving its numbers and source alone: for lines an analysis makes
 * up (lineage.c). */
void mta_line_parse (MtaLine *line, const char *text, size_t len);

/* Lines of kind MTA_LINE_BAD seen so far. */
uint64_t mta_reader_bad_lines (const MtaReader *reader);
uint64_t mta_reader_lines (const MtaReader *reader);

/* After the run is read: FALSE, with ERROR naming the first part, when
 * it had unreadable lines and not one readable event (SPEC, "Exit codes
 * and inputs": such a run is unusable in every mode, never "No memory
 * leaks."). */
gboolean mta_reader_check_events (const MtaReader *reader, GError **error);
/* The bytes of text read so far, after decompression. */
uint64_t mta_reader_bytes (const MtaReader *reader);

/* Helpers shared with the report modules. */

/* perl's hex(): optional "0x"/"x" prefix, '_' between digits, stops at
 * the first other byte, saturates at UINT64_MAX like perl's %x of an NV. */
uint64_t mta_perl_hex (MtaSpan s);

/* TRUE when S is "0x" followed by 1-16 lowercase hex digits without a
 * leading zero (or exactly "0x0"): the form glibc's %p writes.  Such a
 * string and its value are in one-to-one correspondence
 * (canonical-hex.c). */
gboolean mta_canonical_hex (MtaSpan s, uint64_t *value);

static inline gboolean
mta_span_eq (MtaSpan s, const char *lit)
{
	size_t n = strlen (lit);
	return s.len == n && memcmp (s.p, lit, n) == 0;
}

#endif
