/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-put.h -- the pieces of JSON every writer puts (json-put.c). */
#ifndef MTA_JSON_PUT_H
#define MTA_JSON_PUT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A buffer in front of a FILE.  The document of a large run is hundreds
 * of millions of small pieces (2 million callers: 2.4 GB); a stdio call
 * for each, locked and with printf's parsing of its format, was most of
 * --json's time.  The pieces go here, and out in one fwrite when it is
 * full; errors stay the FILE's (ferror), as before. */
typedef struct {
	FILE *out;
	char *buf;
	size_t len, cap;
} MtaJsonOut;

/* BUF of CAP bytes (at least 64) in front of OUT. */
void mta_json_out_init (MtaJsonOut *o, FILE *out, char *buf, size_t cap);
/* Everything put so far to the FILE (before writing to it directly). */
void mta_json_out_flush (MtaJsonOut *o);

/* Room for N more bytes (N at most 64): where they go. */
static inline char *
mta_json_room (MtaJsonOut *o, size_t n)
{
	if (o->len + n > o->cap)
		mta_json_out_flush (o);
	return o->buf + o->len;
}

void mta_json_raw_long (MtaJsonOut *o, const char *s, size_t n);

/* N bytes of S as they are. */
static inline void
mta_json_raw (MtaJsonOut *o, const char *s, size_t n)
{
	if (n > 64) {
		mta_json_raw_long (o, s, n);
		return;
	}
	memcpy (mta_json_room (o, n), s, n);
	o->len += n;
}

/* A string literal as it is (its length known at compile time). */
#define mta_json_lit(o, s) mta_json_raw ((o), "" s, sizeof (s) - 1)

static inline void
mta_json_cstr (MtaJsonOut *o, const char *s)
{
	mta_json_raw (o, s, strlen (s));
}

/* V in decimal, as printf's PRIu64, PRId64 and "%u" write it. */
size_t mta_json_digits (char *to, uint64_t v);	/* to TO (20 bytes): how many */
void mta_json_u64 (MtaJsonOut *o, uint64_t v);
void mta_json_i64 (MtaJsonOut *o, int64_t v);
/* "0x" and V in lower-case hex, as printf's "0x%" PRIx64. */
void mta_json_hex (MtaJsonOut *o, uint64_t v);
/* V as printf's "%.*f" with PREC digits. */
void mta_json_fixed (MtaJsonOut *o, double v, int prec);
/* "true" or "false" */
static inline void
mta_json_bool (MtaJsonOut *o, int v)
{
	if (v)
		mta_json_lit (o, "true");
	else
		mta_json_lit (o, "false");
}

/* S as an RFC 8259 string ("null" for NULL); bytes that are not UTF-8
 * become U+FFFD. */
void mta_json_string (MtaJsonOut *o, const char *s);
/* "function": ..., "file": ..., "line": N, "object": ... -- a call site as
 * every JSON output names one. */
void mta_json_location (MtaJsonOut *o, const char *function, const char *file, unsigned line,
			const char *object);

/* The same two straight to a FILE, for the writers of small documents. */
void mta_json_put_string (FILE *out, const char *s);
void mta_json_put_location (FILE *out, const char *function, const char *file, unsigned line,
			    const char *object);

#endif
