/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-reader-private.h -- what trace-reader.c (lines, the serial
 * reading) and trace-blocks.c (reading on several threads) share of a
 * reader: struct MtaReader itself and a part being read, which no other
 * file sees (trace-reader.h is the interface).  trace-blocks.c is above
 * trace-reader.c: it reads files (mta_reader_read_file) with the
 * reader's functions below. */
#ifndef MTA_TRACE_READER_PRIVATE_H
#define MTA_TRACE_READER_PRIVATE_H

#include "trace-reader.h"
#include "trace-input.h"

#define READ_CHUNK (4u << 20)
/* Bytes kept defined before and after a buffer's data: window loads may
 * run past the end of a line, hex loads start up to 16 bytes before a
 * field (trace-reader.c). */
#define PAD_FRONT 64
#define PAD_BACK 128
/* Plain events handed over at once: 12 KB of them, in the L1 cache. */
#define MTA_BATCH 256

struct MtaReader {
	MtaLineFunc func;
	gpointer user_data;
	uint64_t lineno;
	uint64_t content_lineno; /* of the last event line: where "# at" may go back to */
	uint64_t bad;
	/* events, tracked events and unreadable lines: the events read are
	 * content_lines - bad (counted where the line is numbered anyway) */
	uint64_t content_lines;
	/* the first unreadable line, for the message on a run without events */
	char *bad_source;
	uint64_t bad_source_lineno;
	unsigned bad_parts;  /* parts with an unreadable line */
	uint64_t bytes;      /* of text read, decompressed */
	gboolean progress;
	gboolean traced;     /* a part of the run had a trace line */
	gboolean probing;    /* stop at the first trace line */
	char *mem;      /* PAD_FRONT + cap + PAD_BACK bytes */
	char *buf;      /* mem + PAD_FRONT */
	size_t cap;
	/* plain events numbered but not yet handed over (mta_reader_set_events),
	 * each with its line's text, valid until the next flush */
	MtaEventsFunc events_func;
	gpointer events_data;
	size_t nbatch;
	MtaEvent batch[MTA_BATCH];
	MtaSpan batch_text[MTA_BATCH];
};

/* One part of the run being read. */
typedef struct {
	const char *name;
	uint64_t lineno;       /* lines emitted from this part */
	uint64_t bad;          /* its unreadable lines */
	size_t fill;           /* bytes in buf */
	gboolean skipping;     /* inside an over-long line */
	/* What the part looks like, watched until its first trace line (to
	 * say what an unusable input is): */
	gboolean traced;       /* a trace line was seen */
	uint64_t bytes;        /* bytes of content read */
	gboolean nul, blank;   /* NUL bytes, whitespace seen */
	gboolean other;        /* any other byte */
	gboolean binary;       /* control bytes other than whitespace, or NULs among text */
	const char *foreign;   /* what its first bytes say it is, NULL: nothing known */
} Part;

/* trace-reader.c */
void mta_reader_reserve (MtaReader *r, size_t want);
gboolean mta_reader_read_serial (MtaReader *r, MtaInput *in, Part *pt, size_t chunk, GError **error);
/* BUF[START..fill) just arrived: hand over the whole lines of BUF. */
gboolean mta_reader_part_input (MtaReader *r, Part *pt, size_t start, GError **error);
gboolean mta_reader_part_end (MtaReader *r, Part *pt, GError **error);
void mta_reader_input_error (const Part *pt, GError *local, GError **error);
/* Tokenize and classify the line at P, whose '\n' comes before END;
 * return that '\n'.  Touches nothing but *L: any thread may call it. */
const char *mta_reader_split_line (MtaLine *l, const char *p, const char *end);
/* Where the columns of a line are: start and length of each. */
typedef struct {
	uint8_t col[5][2];
	uint8_t ncols;
} MtaEventCols;
/* A plain event's line of the usual form at P read into *EV (but for
 * its number) and *COLS: its '\n'.  NULL for any other line, which
 * mta_reader_split_line splits (trace-reader.c). */
const char *mta_reader_split_event (const char *p, MtaEvent *ev, MtaEventCols *cols);
/* Number a line split by mta_reader_split_line and hand it over. */
gboolean mta_reader_deliver (MtaReader *r, Part *pt, MtaLine *l, GError **error);
/* Hand over the events queued: before any other line, and before the
 * text of those lines moves or goes. */
gboolean mta_reader_flush (MtaReader *r, Part *pt, GError **error);

/* Number the plain event line TEXT (mta_reader_set_events) and queue it. */
static inline gboolean
mta_reader_queue (MtaReader *r, Part *pt, char op, uint64_t addr, uint64_t size,
		  MtaSpan caller, MtaSpan text, GError **error)
{
	MtaEvent *e = &r->batch[r->nbatch];

	e->addr = addr;
	e->size = size;
	e->lineno = ++r->lineno;
	e->caller = caller;
	e->op = op;
	r->batch_text[r->nbatch++] = text;
	pt->lineno++;
	/* what deliver_line does with an event (trace-reader.c) */
	r->content_lineno = r->lineno;
	r->content_lines++;
	pt->traced = TRUE;
	return r->nbatch < MTA_BATCH || mta_reader_flush (r, pt, error);
}

/* The line "reading 'NAME': NN%" on stderr while a file over 64 MB is
 * read (when the reader shows progress), twice a second at most, erased
 * at the end. */
typedef struct {
	gboolean on;
	double next;
	const char *name;
	uint64_t size;
} MtaProgress;
void mta_progress_start (MtaProgress *p, const MtaReader *r, const char *name, uint64_t size);
void mta_progress_at (MtaProgress *p, uint64_t offset);
void mta_progress_end (const MtaProgress *p);

/* After a part was read: refuse what is not a trace. */
gboolean mta_reader_check_part (MtaReader *r, const Part *pt, MtaInput *in, gboolean probed,
				GError **error);

#endif
