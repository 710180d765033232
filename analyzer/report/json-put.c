/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-put.c -- the pieces of JSON every writer puts (json-put.h): a
 * buffer in front of the FILE, numbers, a string escaped per RFC 8259, a
 * call site's location.  Below json-out.c and kind-json.c, which both
 * use them.
 */
#include "json-put.h"

#include <glib.h>
#include <inttypes.h>

void
mta_json_out_init (MtaJsonOut *o, FILE *out, char *buf, size_t cap)
{
	g_assert (cap >= 64);
	o->out = out;
	o->buf = buf;
	o->cap = cap;
	o->len = 0;
}

void
mta_json_out_flush (MtaJsonOut *o)
{
	if (o->len)
		fwrite (o->buf, 1, o->len, o->out);
	o->len = 0;
}

void
mta_json_raw_long (MtaJsonOut *o, const char *s, size_t n)
{
	while (n > 0) {
		if (o->len == o->cap)
			mta_json_out_flush (o);
		size_t k = MIN (n, o->cap - o->len);
		memcpy (o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

/* "00" to "99": two digits a division */
static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

size_t
mta_json_digits (char *to, uint64_t v)
{
	/* the digits in place, from the last: a timeline of 2 million sites
	 * is 250 million numbers, and a copy of each through memcpy cost as
	 * much as its digits */
	size_t n = 1;
	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	char *end = to + n;
	while (v >= 100) {
		end -= 2;
		memcpy (end, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy (end, digit_pairs + 2 * v, 2);
	} else
		*--end = (char) ('0' + v);
	return n;
}

void
mta_json_u64 (MtaJsonOut *o, uint64_t v)
{
	o->len += mta_json_digits (mta_json_room (o, 20), v);
}

void
mta_json_i64 (MtaJsonOut *o, int64_t v)
{
	if (v < 0) {
		mta_json_lit (o, "-");
		/* INT64_MIN has no positive twin: negate unsigned */
		mta_json_u64 (o, -(uint64_t) v);
	} else
		mta_json_u64 (o, (uint64_t) v);
}

void
mta_json_hex (MtaJsonOut *o, uint64_t v)
{
	char digits[18];
	char *end = digits + sizeof digits, *d = end;
	do {
		*--d = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v != 0);
	*--d = 'x';
	*--d = '0';
	mta_json_raw (o, d, (size_t) (end - d));
}

void
mta_json_fixed (MtaJsonOut *o, double v, int prec)
{
	/* "%.3f" of a value too large for 64 bytes is rare enough for a
	 * string of its own */
	char *s = mta_json_room (o, 64);
	int n = snprintf (s, 64, "%.*f", prec, v);
	if (n >= 64) {
		g_autofree char *big = g_strdup_printf ("%.*f", prec, v);
		mta_json_cstr (o, big);
	} else if (n > 0)
		o->len += (size_t) n;
}

/* Bytes of a string that go out as they are: printable ASCII but the
 * quote and the backslash. */
static inline gboolean
plain_byte (unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

static void
put_u4 (MtaJsonOut *o, unsigned u)
{
	char *d = mta_json_room (o, 6);
	d[0] = '\\';
	d[1] = 'u';
	for (int k = 0; k < 4; k++)
		d[2 + k] = "0123456789abcdef"[(u >> (12 - 4 * k)) & 15];
	o->len += 6;
}

void
mta_json_string (MtaJsonOut *o, const char *s)
{
	if (s == NULL) {
		mta_json_lit (o, "null");
		return;
	}
	mta_json_lit (o, "\"");
	const char *end = s + strlen (s);
	while (s < end) {
		/* most strings have nothing to escape: one copy of each run */
		const char *run = s;
		while (s < end && plain_byte ((unsigned char) *s))
			s++;
		mta_json_raw (o, run, (size_t) (s - run));
		if (s == end)
			break;
		unsigned char c = (unsigned char) *s;
		if (c == '"' || c == '\\') {
			char *d = mta_json_room (o, 2);
			d[0] = '\\';
			d[1] = (char) c;
			o->len += 2;
			s++;
		} else if (c < 0x80) {
			/* the controls, DEL too, and C1 below: JSON read on a terminal */
			put_u4 (o, c);
			s++;
		} else {
			gunichar u = g_utf8_get_char_validated (s, end - s);
			if (u == (gunichar) -1 || u == (gunichar) -2) {
				mta_json_lit (o, "\\ufffd");
				s++;
			} else if (u >= 0x80 && u <= 0x9f) {
				put_u4 (o, u);
				s = g_utf8_next_char (s);
			} else {
				const char *n = g_utf8_next_char (s);
				mta_json_raw (o, s, (size_t) (n - s));
				s = n;
			}
		}
	}
	mta_json_lit (o, "\"");
}

void
mta_json_location (MtaJsonOut *o, const char *function, const char *file, unsigned line,
		   const char *object)
{
	mta_json_lit (o, "\"function\": ");
	mta_json_string (o, function);
	mta_json_lit (o, ", \"file\": ");
	mta_json_string (o, file);
	mta_json_lit (o, ", \"line\": ");
	mta_json_u64 (o, line);
	mta_json_lit (o, ", \"object\": ");
	mta_json_string (o, object);
}

void
mta_json_put_string (FILE *out, const char *s)
{
	char buf[256];
	MtaJsonOut o;
	mta_json_out_init (&o, out, buf, sizeof buf);
	mta_json_string (&o, s);
	mta_json_out_flush (&o);
}

void
mta_json_put_location (FILE *out, const char *function, const char *file, unsigned line,
		       const char *object)
{
	char buf[256];
	MtaJsonOut o;
	mta_json_out_init (&o, out, buf, sizeof buf);
	mta_json_location (&o, function, file, line, object);
	mta_json_out_flush (&o);
}
