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
/* A file read serially, in reads that leave most of a core's L2 cache
 * to the tables of the analysis: the plain report of the bench trace
 * took 220 ms of CPU in reads of 4 MiB, 203 in reads of 256 KiB
 * (medians of 7, interleaved). */
#define SERIAL_CHUNK (256u << 10)
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
	/* plain events read serially, not yet numbered nor handed over
	 * (mta_reader_set_events), with where their lines start in buf */
	MtaEventsFunc events_func;
	gpointer events_data;
	size_t nbatch;
	MtaEvent batch[MTA_BATCH];
	uint32_t batch_off[MTA_BATCH];
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
/* A plain event's line of the usual form at P read into *EV: its '\n'.
 * NULL for any other line, which mta_reader_split_line splits
 * (trace-reader.c). */
const char *mta_reader_split_event (const char *p, MtaEvent *ev);
/* Whether L, split by mta_reader_split_line, is a plain event; then its
 * fields go to *EV. */
gboolean mta_reader_plain_event (const MtaLine *l, MtaEvent *ev);
/* Number a line split by mta_reader_split_line and hand it over. */
gboolean mta_reader_deliver (MtaReader *r, Part *pt, MtaLine *l, GError **error);
/* Number and hand over the N plain events EV, the lines of BUF at OFF:
 * before any other line, and before those lines' text moves or goes. */
gboolean mta_reader_hand_events (MtaReader *r, Part *pt, MtaEvent *ev, size_t n,
				 const char *buf, const uint32_t *off, GError **error);

/* Hand over the events read serially. */
static inline gboolean
mta_reader_flush (MtaReader *r, Part *pt, GError **error)
{
	size_t n = r->nbatch;

	r->nbatch = 0;
	return mta_reader_hand_events (r, pt, r->batch, n, r->buf, r->batch_off, error);
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

/* trace-usable.c: a line of a part that has shown no trace line yet;
 * what such a part holds, for a message after its name (to free). */
void mta_part_watch_untraced (Part *pt, const MtaLine *l);
char *mta_part_describe_untraced (const Part *pt, MtaInput *in);
/* After a part was read: refuse what is not a trace. */
gboolean mta_reader_check_part (MtaReader *r, const Part *pt, MtaInput *in, gboolean probed,
				GError **error);

#endif
