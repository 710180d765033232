/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-reader.c -- split a trace into lines and columns, classify them.
 *
 * Input comes through read() into one buffer that only grows for very long
 * lines, so memory does not depend on the file's length (mapping a
 * multi-GB file would count its touched pages in RSS) and files over 4 GiB
 * need nothing special (off_t is 64-bit here).  In-memory parts are copied
 * through the same buffer, so both take the same path.  A regular file's
 * lines are split on several threads, in blocks (trace-blocks.c); their
 * numbering and handing over stay here, in one place for both paths
 * (deliver_line).
 *
 * Hot loop: one pass per line.  Each 64-byte window gives two bit masks,
 * "byte <= 0x20" (perl's blanks, NUL and the other control bytes) and
 * "byte is a space", four SSE2 compares (SWAR elsewhere); columns are the
 * runs between blanks, read off the masks with ctz.  The first control
 * byte ends the scan: a '\n' ends the line, anything else (tab, CR, NUL,
 * ...) hands the line to the general byte-wise tokenizer.  Hex fields are
 * converted sixteen digits at a time.  Nothing is allocated per line.
 *
 * The buffer keeps PAD_FRONT bytes before and PAD_BACK after its data,
 * and a '\n' sentinel right after the data: window loads may run past the
 * end of a line and the last one, hex loads start up to 16 bytes before a
 * field, and every scan stops at the sentinel at the latest (a line that
 * ends there is incomplete and waits for more input).
 */
#include "trace-reader-private.h"
#include "compact-sum.h"
#include "foreign-format.h"
#include "trace-input.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#if defined(__SSE2__) && !defined(MTA_NO_SIMD)
#include <emmintrin.h>
#define USE_SSE2 1
#else
#define USE_SSE2 0
#endif

/* A longer "line" is cut there; the rest up to its newline is dropped. */
#define MAX_LINE (64u << 20)

#define ALWAYS_INLINE inline __attribute__ ((always_inline))
#define LIKELY(x) __builtin_expect (!!(x), 1)
#define UNLIKELY(x) __builtin_expect (!!(x), 0)



/* perl's \s for split(' ') on a byte string: space \t \n \v \f \r. */
static const unsigned char is_ws[256] = {
	[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\v'] = 1, ['\f'] = 1, ['\r'] = 1,
};

static const signed char hexval[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6,
	['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};
#define HEXV(c) (hexval[(unsigned char) (c)] - 1)   /* -1: not a digit */
#define ONES 0x0101010101010101ULL
#define HIGH 0x8080808080808080ULL

MtaReader *
mta_reader_new (MtaLineFunc func, gpointer user_data)
{
	MtaReader *r = g_new0 (MtaReader, 1);
	r->func = func;
	r->user_data = user_data;
	return r;
}

void
mta_reader_free (MtaReader *reader)
{
	if (reader == NULL)
		return;
	g_free (reader->bad_source);
	g_free (reader->mem);
	g_free (reader);
}

void
mta_reader_set_events (MtaReader *reader, MtaEventsFunc func, gpointer user_data)
{
	reader->events_func = func;
	reader->events_data = user_data;
}

void
mta_reader_set_progress (MtaReader *reader, gboolean quiet)
{
	reader->progress = !quiet && isatty (2);
}

uint64_t
mta_reader_bad_lines (const MtaReader *reader)
{
	return reader->bad;
}

gboolean
mta_reader_check_events (const MtaReader *reader, GError **error)
{
	const MtaReader *r = reader;

	if (r->content_lines > r->bad || r->bad == 0)
		return TRUE;
	g_autofree char *others = r->bad_parts < 2 ? g_strdup ("")
		: g_strdup_printf (" and %u other part%s", r->bad_parts - 1, r->bad_parts == 2 ? "" : "s");
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		     "%s%s: unusable: none of %s %" G_GUINT64_FORMAT " event line%s could be read "
		     "(the first at line %" G_GUINT64_FORMAT "), so nothing can be said of its leaks",
		     r->bad_source, others, r->bad_parts < 2 ? "its" : "their", r->bad,
		     r->bad == 1 ? "" : "s", r->bad_source_lineno);
	return FALSE;
}

uint64_t
mta_reader_lines (const MtaReader *reader)
{
	return reader->lineno;
}

uint64_t
mta_reader_bytes (const MtaReader *reader)
{
	return reader->bytes;
}

uint64_t
mta_perl_hex (MtaSpan s)
{
	const char *p = s.p, *end = s.p + s.len;
	uint64_t v = 0;
	gboolean overflow = FALSE;

	if (p < end && (*p == 'x' || *p == 'X'))
		p++;
	else if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	while (p < end) {
		int d = HEXV (*p);
		if (d < 0) {
			/* grok_hex skips one '_' when a digit follows it */
			if (*p == '_' && p + 1 < end && HEXV (p[1]) >= 0) {
				p++;
				continue;
			}
			break;
		}
		if (v >> 60)
			overflow = TRUE;
		v = (v << 4) | (uint64_t) d;
		p++;
	}
	return overflow ? UINT64_MAX : v;
}

/* ------------------------------------------------------------ hex fields */

#if USE_SSE2
/* "0x" and 1-16 hex digits (any case, leading zeros allowed); *CANON
 * tells the canonical %p spelling (see mta_canonical_hex).  Loads the 16
 * bytes that end with the field (PAD_FRONT makes that safe for any field
 * of the buffer) and replaces those before the digits by '0'. */
static ALWAYS_INLINE gboolean
parse_hex_field (MtaSpan s, uint64_t *value, gboolean *canon)
{
	static const unsigned char tail[32] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
	};

	if (s.len < 3 || s.len > 18 || s.p[0] != '0' || s.p[1] != 'x')
		return FALSE;
	size_t nd = s.len - 2;
	__m128i keep = _mm_loadu_si128 ((const __m128i *) (tail + nd));
	__m128i x = _mm_loadu_si128 ((const __m128i *) (s.p + s.len - 16));
	x = _mm_or_si128 (_mm_and_si128 (keep, x), _mm_andnot_si128 (keep, _mm_set1_epi8 ('0')));
	/* signed compares: bytes >= 0x80 are below '0' */
	__m128i digit = _mm_and_si128 (_mm_cmpgt_epi8 (x, _mm_set1_epi8 ('0' - 1)),
				       _mm_cmplt_epi8 (x, _mm_set1_epi8 ('9' + 1)));
	__m128i lx = _mm_or_si128 (x, _mm_set1_epi8 (0x20));   /* A-F -> a-f, nothing else lands there */
	__m128i letter = _mm_and_si128 (_mm_cmpgt_epi8 (lx, _mm_set1_epi8 ('a' - 1)),
					_mm_cmplt_epi8 (lx, _mm_set1_epi8 ('f' + 1)));
	if (_mm_movemask_epi8 (_mm_or_si128 (digit, letter)) != 0xffff)
		return FALSE;
	/* nibbles: low four bits, + 9 for letters */
	__m128i nib = _mm_add_epi8 (_mm_and_si128 (x, _mm_set1_epi8 (0x0f)),
				    _mm_and_si128 (letter, _mm_set1_epi8 (9)));
	/* two nibbles to a byte, first digit high; then eight bytes, first high */
	__m128i pair = _mm_or_si128 (_mm_and_si128 (_mm_slli_epi16 (nib, 4), _mm_set1_epi16 (0x00f0)),
				     _mm_srli_epi16 (nib, 8));
	uint64_t be = (uint64_t) _mm_cvtsi128_si64 (_mm_packus_epi16 (pair, pair));
	*value = __builtin_bswap64 (be);
	if (canon) {
		/* upper case: 0x41-0x46, the only valid bytes with (b & 0x60) == 0x40 */
		__m128i upper = _mm_cmpeq_epi8 (_mm_and_si128 (x, _mm_set1_epi8 (0x60)),
						_mm_set1_epi8 (0x40));
		*canon = _mm_movemask_epi8 (upper) == 0 && (s.p[2] != '0' || nd == 1);
	}
	return TRUE;
}
#else
/* Eight ASCII hex digits (first one in the lowest byte) to their value;
 * *OK and *LOWER get cleared when a byte is not a hex digit or is an
 * upper-case one.  Branch-free, eight digits per step. */
static inline uint32_t
hex8 (uint64_t x, gboolean *ok, gboolean *lower)
{
	const uint64_t low7 = x & ~HIGH;
#define GE(v, lo) ((v) + (0x80 - (lo)) * ONES)               /* high bit: byte >= lo */
#define LE(v, hi) (~((v) + (0x7f - (hi)) * ONES))            /* high bit: byte <= hi */
	uint64_t digit = GE (low7, 0x30) & LE (low7, 0x39);
	uint64_t lc = GE (low7, 0x61) & LE (low7, 0x66);
	uint64_t uc = GE (low7, 0x41) & LE (low7, 0x46);
#undef GE
#undef LE
	uint64_t valid = (digit | lc | uc) & ~x & HIGH;
	*ok &= valid == HIGH;
	*lower &= (uc & ~x & HIGH) == 0;
	/* nibble = low 4 bits + 9 for letters (bit 6 set) */
	uint64_t n = (x & 0x0f0f0f0f0f0f0f0fULL) + ((x >> 6) & ONES) * 9;
	n = ((n & 0x0f000f000f000f00ULL) >> 8) | ((n & 0x000f000f000f000fULL) << 4);
	n = ((n & 0x00ff000000ff0000ULL) >> 16) | ((n & 0x000000ff000000ffULL) << 8);
	n = ((n & 0x0000ffff00000000ULL) >> 32) | ((n & 0x000000000000ffffULL) << 16);
	return (uint32_t) n;
}

/* "0x" and 1-16 hex digits (any case, leading zeros allowed); *CANON
 * tells the canonical %p spelling (see mta_canonical_hex). */
static gboolean
parse_hex_field (MtaSpan s, uint64_t *value, gboolean *canon)
{
	gboolean ok = TRUE, lower = TRUE;
	char buf[16];

	if (s.len < 3 || s.len > 18 || s.p[0] != '0' || s.p[1] != 'x')
		return FALSE;
	size_t n = s.len - 2;
	memset (buf, '0', sizeof buf);
	memcpy (buf + 16 - n, s.p + 2, n);
	uint64_t hi, lo;
	memcpy (&hi, buf, 8);
	memcpy (&lo, buf + 8, 8);
	uint64_t v = ((uint64_t) hex8 (hi, &ok, &lower) << 32) | hex8 (lo, &ok, &lower);
	if (!ok)
		return FALSE;
	*value = v;
	if (canon)
		*canon = lower && (s.p[2] != '0' || s.len == 3);
	return TRUE;
}

#endif

/* ------------------------------------------------------------ lines */

/* Trailing columns from NEXT on: KEY=VALUE; s=ID is the interned stack.
 * FALSE when one is not of that form. */
static ALWAYS_INLINE gboolean
trailing_columns (MtaLine *l, int next)
{
	const MtaSpan *c = l->cols;

	for (int i = next; i < l->ncols; i++) {
		const char *eq = memchr (c[i].p, '=', c[i].len);
		if (eq == NULL || eq == c[i].p)
			return FALSE;
		if (c[i].len > 2 && c[i].p[0] == 's' && c[i].p[1] == '=') {
			int64_t id = 0;
			for (size_t k = 2; k < c[i].len; k++) {
				if (c[i].p[k] < '0' || c[i].p[k] > '9' || id > (INT64_MAX - 9) / 10)
					return FALSE;
				id = id * 10 + (c[i].p[k] - '0');
			}
			l->stack_id = id;
		}
	}
	return TRUE;
}

static void tokenize_slow (MtaLine *l, const char *p, size_t len);

/* KIND of a "# k" line: 1-63 bytes the recorder writes ([A-Za-z0-9_.:-]). */
static gboolean
family_name_ok (MtaSpan s)
{
	if (s.len == 0 || s.len > 63)
		return FALSE;
	for (size_t i = 0; i < s.len; i++) {
		unsigned char ch = (unsigned char) s.p[i];
		if (!g_ascii_isalnum (ch) && ch != '_' && ch != '.' && ch != ':' && ch != '-')
			return FALSE;
	}
	return TRUE;
}

/* "# k KIND [@ CALLER] OP ADDR [SIZE] [KEY=VALUE...]" (trace-format.md,
 * "Tracked events").  The event after KIND is split again on its own, so
 * that the line may have more columns than MTA_MAX_COLS holds; L keeps the
 * line's own columns, so that whoever reads columns (the script's view,
 * mtrace-compat.c) still sees a '#' line.  Anything else after "# k"
 * makes the line damaged.  Off the malloc path: only '#' lines come here. */
static __attribute__ ((noinline)) void
classify_tracked (MtaLine *l)
{
	MtaLine ev;

	l->kind = MTA_LINE_BAD;
	if (l->ncols < 3 || l->has_nul || !family_name_ok (l->cols[2]))
		return;
	if (!l->more_cols) {
		/* the usual line: its columns after KIND are the event's */
		ev.ncols = l->ncols - 3;
		ev.more_cols = FALSE;
		memcpy (ev.cols, l->cols + 3, (size_t) ev.ncols * sizeof ev.cols[0]);
	} else {
		const char *rest = l->cols[2].p + l->cols[2].len, *end = l->text.p + l->text.len;
		tokenize_slow (&ev, rest, (size_t) (end - rest));
		if (ev.more_cols || ev.has_nul)
			return;
	}
	const MtaSpan *c = ev.cols;
	int n = 0;
	ev.caller.p = "";
	ev.caller.len = 0;
	ev.size = 0;
	ev.stack_id = -1;
	if (ev.ncols >= 2 && mta_span_eq (c[0], "@")) {
		ev.caller = c[1];
		n = 2;
	}
	if (ev.ncols < n + 2 || c[n].len != 1 || !parse_hex_field (c[n + 1], &ev.addr, &ev.addr_canonical))
		return;
	int next = n + 2;
	switch (c[n].p[0]) {
	case '+':
		if (ev.ncols < n + 3)
			return;
		if (!mta_span_eq (c[n + 2], "0") && !parse_hex_field (c[n + 2], &ev.size, NULL))
			return;
		next = n + 3;
		break;
	case '-': case 'r': case 'u':
		break;
	default:
		return;
	}
	if (!trailing_columns (&ev, next))
		return;
	l->op = c[n].p[0];
	l->caller = ev.caller;
	l->addr = ev.addr;
	l->addr_canonical = ev.addr_canonical;
	l->size = ev.size;
	l->stack_id = ev.stack_id;
	l->family = l->cols[2];
	l->kind = MTA_LINE_TRACKED;
}

/* The word of a '#' line whose first column is C0: "# WORD ...". */
static void
set_word (MtaLine *l)
{
	if (l->cols[0].len != 1)
		l->word = MTA_WORD_NONE;    /* "#word": not an extension line's form */
	else if (l->ncols == 1)
		l->word = MTA_WORD_FILLER;
	else
		l->word = mta_trace_word (l->cols[1].p, l->cols[1].len);
}

/* Decide what L is and fill its event fields. */
static ALWAYS_INLINE void
classify (MtaLine *l)
{
	const MtaSpan *c = l->cols;
	int n = 0;

	l->word = MTA_WORD_NONE;
	l->op = 0;
	l->addr = l->size = 0;
	l->addr_canonical = FALSE;
	l->stack_id = -1;
	l->caller.p = "";
	l->caller.len = 0;
	if (l->ncols == 0) {
		l->kind = MTA_LINE_BLANK;
		return;
	}
	if (c[0].p[0] == '#') {
		l->kind = MTA_LINE_EXT;
		set_word (l);
		if (G_UNLIKELY (c[0].len == 1 && l->ncols >= 2 && c[1].len == 1 && c[1].p[0] == 'k'))
			classify_tracked (l);
		return;
	}
	if (UNLIKELY (l->has_nul)) {
		/* NUL bytes right before a '#' line ("\0\0# T 123"): space an
		 * older recorder reserved and left unwritten, then a thread's
		 * next line.  That line is what counts ("# T" says whose lines
		 * follow).  The script ignores the line either way, so the
		 * mtrace report does not change. */
		size_t k = 0;
		while (k < c[0].len && c[0].p[k] == '\0')
			k++;
		if (k > 0 && k < c[0].len && c[0].p[k] == '#') {
			const char *end = l->text.p + l->text.len;
			l->cols[0].p += k;
			l->cols[0].len -= k;
			l->text.p = l->cols[0].p;
			l->text.len = (size_t) (end - l->text.p);
			l->kind = MTA_LINE_EXT;
			set_word (l);
			return;
		}
	}
	/* A line made only of NUL bytes and blanks is padding. */
	if (UNLIKELY (l->has_nul)) {
		gboolean only = TRUE;
		for (size_t i = 0; i < l->text.len && only; i++)
			only = l->text.p[i] == '\0' || is_ws[(unsigned char) l->text.p[i]];
		l->kind = only ? MTA_LINE_BLANK : MTA_LINE_BAD;
		return;
	}
	l->kind = MTA_LINE_BAD;
	if (c[0].len == 1) {
		if (c[0].p[0] == '=') {
			l->kind = MTA_LINE_MARKER;
			return;
		}
		if (c[0].p[0] == '@') {
			if (l->ncols < 2)
				return;
			l->caller = c[1];
			n = 2;
		}
	}
	if (l->ncols < n + 2 || c[n].len != 1)
		return;
	l->op = c[n].p[0];
	if (mta_span_eq (c[n + 1], "(nil)"))
		l->addr = 0;
	else if (!parse_hex_field (c[n + 1], &l->addr, &l->addr_canonical))
		return;
	int next = n + 2;
	switch (l->op) {
	case '+': case '>': case '!':
		if (l->ncols < n + 3)
			return;
		if (mta_span_eq (c[n + 2], "0"))
			l->size = 0;
		else if (!parse_hex_field (c[n + 2], &l->size, NULL))
			return;
		next = n + 3;
		break;
	case '-': case '<':
		break;
	default:
		return;
	}
	if (trailing_columns (l, next))
		l->kind = MTA_LINE_EVENT;
}

/* Bit I of the result: P[I] <= 0x20; bit I of *SPACE: P[I] == ' '. */
static ALWAYS_INLINE uint64_t
blank_masks (const char *p, uint64_t *space)
{
#if USE_SSE2
	const __m128i sp = _mm_set1_epi8 (' ');
	__m128i x0 = _mm_loadu_si128 ((const __m128i *) p);
	__m128i x1 = _mm_loadu_si128 ((const __m128i *) (p + 16));
	__m128i x2 = _mm_loadu_si128 ((const __m128i *) (p + 32));
	__m128i x3 = _mm_loadu_si128 ((const __m128i *) (p + 48));
#define LE(x) ((uint64_t) (uint32_t) _mm_movemask_epi8 (_mm_cmpeq_epi8 (_mm_min_epu8 (x, sp), x)))
#define EQ(x) ((uint64_t) (uint32_t) _mm_movemask_epi8 (_mm_cmpeq_epi8 (x, sp)))
	*space = EQ (x0) | EQ (x1) << 16 | EQ (x2) << 32 | EQ (x3) << 48;
	return LE (x0) | LE (x1) << 16 | LE (x2) << 32 | LE (x3) << 48;
#undef LE
#undef EQ
#else
	uint64_t le = 0, eq = 0;
	for (int i = 0; i < 8; i++) {
		uint64_t x = 0;
		for (int k = 7; k >= 0; k--)   /* little-endian load on any host */
			x = (x << 8) | (unsigned char) p[8 * i + k];
		uint64_t lt = ~(((x & ~HIGH) + 0x5f * ONES) | x) & HIGH;
		uint64_t y = x ^ (0x20 * ONES);
		uint64_t e = ~(((y & ~HIGH) + 0x7f * ONES) | y) & HIGH;
		/* gather the high bits: byte K's to bit K */
		le |= (((lt >> 7) * 0x0102040810204080ULL) >> 56) << (8 * i);
		eq |= (((e >> 7) * 0x0102040810204080ULL) >> 56) << (8 * i);
	}
	*space = eq;
	return le;
#endif
}

static inline int
popcount64 (uint64_t x)
{
#ifdef __POPCNT__
	return __builtin_popcountll (x);
#else
	/* libgcc's out-of-line one costs a call */
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int) ((x * ONES) >> 56);
#endif
}

/* The fields of the plain event at P whose columns end at E[0..4] (E[4]
 * the '\n', LIM; a column past the last ends there too): its '\n', or
 * NULL when it is not the usual form (split_event). */
static ALWAYS_INLINE const char *
event_fields (const char *p, const unsigned *e, unsigned lim, MtaEvent *ev)
{
	unsigned ncols = 1 + (e[0] < lim) + (e[1] < lim) + (e[2] < lim) + (e[3] < lim);
	unsigned j = 0, at = 0;     /* the operator's column, and where it starts */
	ev->caller.p = "";
	ev->caller.len = 0;
	if (p[0] == '@' && e[0] == 1) {
		ev->caller.p = p + 2;
		ev->caller.len = e[1] - 2;
		j = 2;
		at = e[1] + 1;
	}
	if (UNLIKELY (ncols < j + 2 || e[j] != at + 1))
		return NULL;
	MtaSpan addr = { p + e[j] + 1, e[j + 1] - e[j] - 1 };
	gboolean canon = FALSE;
	if (UNLIKELY (!parse_hex_field (addr, &ev->addr, &canon) || !canon))
		return NULL;
	ev->op = p[at];
	ev->size = 0;
	ev->pair = 0;
	switch (ev->op) {
	case '+': case '>': case '!': {
		if (UNLIKELY (ncols != j + 3))
			return NULL;
		MtaSpan size = { p + e[j + 1] + 1, e[j + 2] - e[j + 1] - 1 };
		if (!mta_span_eq (size, "0") && UNLIKELY (!parse_hex_field (size, &ev->size, NULL)))
			return NULL;
		break;
	}
	case '-': case '<':
		if (UNLIKELY (ncols != j + 2))
			return NULL;
		break;
	default:
		return NULL;
	}
	return p + lim;
}

typedef unsigned __int128 Mask128;

static ALWAYS_INLINE unsigned
ctz128 (Mask128 x)
{
	uint64_t lo = (uint64_t) x;
	return lo != 0 ? (unsigned) __builtin_ctzll (lo) : 64 + (unsigned) __builtin_ctzll ((uint64_t) (x >> 64));
}

/* split_event of a line of 64 to 127 bytes, whose first window (SP0:
 * its spaces) holds no control byte: a caller of a shared object's
 * function, "@ /lib/libfoo.so.1:(foo_alloc+0x1e)[0x7f...]". */
static __attribute__ ((noinline)) const char *
split_event_long (const char *p, uint64_t sp0, MtaEvent *ev)
{
	uint64_t sp1, ws1 = blank_masks (p + 64, &sp1);
	uint64_t ctrl = ws1 & ~sp1;

	if (ctrl == 0)
		return NULL;
	unsigned lim = 64 + (unsigned) __builtin_ctzll (ctrl);
	if (p[lim] != '\n')
		return NULL;
	const Mask128 stop = (Mask128) 1 << lim;
	Mask128 m = ((Mask128) sp1 << 64 | sp0) & (stop - 1);
	if ((m & ((m >> 1) | 1 | (stop >> 1))) != 0)
		return NULL;
	unsigned e[5];
	for (int k = 0; k < 4; k++) {
		e[k] = ctz128 (m | stop);
		m &= m - 1;
	}
	e[4] = lim;
	if (m != 0)
		return NULL;
	return event_fields (p, e, lim, ev);
}

/* The plain event at P (mta_reader_set_events) when its line has the
 * one form glibc and mtrec write -- "[@ CALLER] OP ADDR [SIZE]", its
 * columns one space apart, under 128 bytes, ADDR as %p spells it -- read
 * in one pass into *EV: its '\n'.  NULL for any other line, which is then
 * split as lines are: this takes nothing they would not read as the same
 * plain event. */
static ALWAYS_INLINE const char *
split_event (const char *p, MtaEvent *ev)
{
	uint64_t sp, ws = blank_masks (p, &sp);
	uint64_t ctrl = ws & ~sp;

	if (UNLIKELY (ctrl == 0))
		return split_event_long (p, sp, ev);
	unsigned lim = (unsigned) __builtin_ctzll (ctrl);
	if (UNLIKELY (p[lim] != '\n' || lim < 4))
		return NULL;
	/* each column's end: the spaces, then the '\n' */
	const uint64_t stop = 1ULL << lim;
	uint64_t m = sp & (stop - 1);
	/* single spaces inside: none doubled, none first or last */
	if (UNLIKELY ((m & ((m >> 1) | 1 | (stop >> 1))) != 0))
		return NULL;
	unsigned e[5];
	e[0] = (unsigned) __builtin_ctzll (m | stop);
	m &= m - 1;
	e[1] = (unsigned) __builtin_ctzll (m | stop);
	m &= m - 1;
	e[2] = (unsigned) __builtin_ctzll (m | stop);
	m &= m - 1;
	e[3] = (unsigned) __builtin_ctzll (m | stop);
	m &= m - 1;
	e[4] = lim;
	if (UNLIKELY (m != 0))
		return NULL;    /* more than five columns */
	return event_fields (p, e, lim, ev);
}

const char *
mta_reader_split_event (const char *p, MtaEvent *ev)
{
	return split_event (p, ev);
}

/* tokenize_fast's general case: any number of 64-byte windows and
 * columns. */
static const char *
tokenize_windows (MtaLine *l, const char *p)
{
	int n = 0;
	gboolean more = FALSE;
	uint64_t carry = 1;    /* byte before the window is blank (line start counts) */
	size_t tstart = 0;     /* start of the column open across windows */

#define COLUMN(s, e) do {					\
		if (LIKELY (n < MTA_MAX_COLS)) {		\
			l->cols[n].p = p + (s);			\
			l->cols[n].len = (e) - (s);		\
			n++;					\
		} else						\
			more = TRUE;				\
	} while (0)

	for (size_t off = 0;; off += 64) {
		uint64_t sp, ws = blank_masks (p + off, &sp);
		uint64_t ctrl = ws & ~sp;
		uint64_t keep = ~(uint64_t) 0;
		int lim = 64;
		if (ctrl != 0) {
			lim = __builtin_ctzll (ctrl);
			if (p[off + (size_t) lim] != '\n')
				return NULL;
			keep = (2ULL << lim) - 1;      /* bits 0..lim; all when lim is 63 */
		}
		uint64_t prev = (ws << 1) | carry;
		uint64_t starts = ~ws & prev & keep;
		uint64_t ends = ws & ~prev & keep;
		if (!carry && ends) {                 /* column open from the last window */
			COLUMN (tstart, off + (size_t) __builtin_ctzll (ends));
			ends &= ends - 1;
		}
		carry = ws >> 63;
		while (starts) {
			size_t s = off + (size_t) __builtin_ctzll (starts);
			starts &= starts - 1;
			if (!ends) {
				tstart = s;
				break;
			}
			COLUMN (s, off + (size_t) __builtin_ctzll (ends));
			ends &= ends - 1;
		}
		if (lim < 64) {
			l->ncols = n;
			l->more_cols = more;
			l->has_nul = FALSE;
			return p + off + (size_t) lim;
		}
	}
#undef COLUMN
}

/* Split the line at P into L's columns when its only bytes below 0x21
 * are spaces and the '\n' that ends it; return that '\n', or NULL when
 * another control byte comes first (the general tokenizer's job).
 *
 * The usual line fits one window and has at most six columns: those are
 * read off the masks without a branch per column (the i-th column runs
 * from the i-th start to the i-th end; past the last one the entries get
 * harmless values that ncols excludes). */
static ALWAYS_INLINE const char *
tokenize_fast (MtaLine *l, const char *p)
{
	const uint64_t top = 1ULL << 63;   /* keeps ctz defined on empty masks */
	uint64_t sp, ws = blank_masks (p, &sp);
	uint64_t ctrl = ws & ~sp;

	if (LIKELY (ctrl != 0)) {
		int lim = __builtin_ctzll (ctrl);
		if (UNLIKELY (p[lim] != '\n'))
			return NULL;
		uint64_t keep = (2ULL << lim) - 1;
		uint64_t prev = (ws << 1) | 1;
		uint64_t starts = ~ws & prev & keep;
		uint64_t ends = ws & ~prev & keep;   /* as many as starts: bit lim is blank */
		MtaSpan *c = l->cols;
#define COL(i) do {							\
		uint32_t s_ = (uint32_t) __builtin_ctzll (starts | top);	\
		uint32_t e_ = (uint32_t) __builtin_ctzll (ends | top);	\
		c[i].p = p + s_;					\
		c[i].len = e_ - s_;					\
		starts &= starts - 1;					\
		ends &= ends - 1;					\
	} while (0)
		int n = popcount64 (ends);
		COL (0); COL (1); COL (2); COL (3); COL (4); COL (5);
#undef COL
		if (LIKELY (ends == 0)) {
			l->ncols = n;
			l->more_cols = FALSE;
			l->has_nul = FALSE;
			return p + lim;
		}
	}
	return tokenize_windows (l, p);
}

/* perl's split(' ') of [P, P + LEN), any bytes. */
static void
tokenize_slow (MtaLine *l, const char *p, size_t len)
{
	const char *end = p + len, *q = p;

	l->ncols = 0;
	l->more_cols = FALSE;
	l->has_nul = FALSE;
	for (;;) {
		while (q < end && is_ws[(unsigned char) *q])
			q++;
		if (q == end)
			break;
		if (l->ncols == MTA_MAX_COLS) {
			l->more_cols = TRUE;
			break;
		}
		const char *t = q;
		while (q < end && !is_ws[(unsigned char) *q]) {
			if (*q == '\0')
				l->has_nul = TRUE;
			q++;
		}
		l->cols[l->ncols].p = t;
		l->cols[l->ncols].len = (size_t) (q - t);
		l->ncols++;
	}
}

/* Count an unreadable line; keep where the first one is. */
static void
note_bad (MtaReader *r, Part *pt, const MtaLine *l)
{
	if (r->bad++ == 0) {
		r->bad_source = g_strdup (l->source);
		r->bad_source_lineno = l->source_lineno;
	}
	if (pt->bad++ == 0)
		r->bad_parts++;
}

/* Number and hand over a classified line: the reader's serial part, in
 * the order of the lines (trace-blocks.c classifies lines ahead on other
 * threads). */
static ALWAYS_INLINE gboolean
deliver_line (MtaReader *r, Part *pt, MtaLine *l, GError **error)
{
	l->lineno = ++r->lineno;
	l->source_lineno = ++pt->lineno;
	/* a compacted trace's "# at N": its next line is line N of the run */
	if (UNLIKELY (l->word == MTA_WORD_AT) &&
	    !mta_compact_line_at (l, &r->lineno, r->content_lineno, error))
		return FALSE;
	/* events (and lines that may be damaged events) are what reports
	 * number; "=" and blank lines may share a number with a '#' line */
	if (l->kind != MTA_LINE_EXT && l->kind != MTA_LINE_MARKER && l->kind != MTA_LINE_BLANK) {
		r->content_lineno = l->lineno;
		r->content_lines++;
	}
	if (UNLIKELY (l->kind == MTA_LINE_EVENT && l->more_cols))
		l->kind = MTA_LINE_BAD;
	if (UNLIKELY (l->kind == MTA_LINE_BAD))
		note_bad (r, pt, l);
	if (UNLIKELY (!pt->traced))
		mta_part_watch_untraced (pt, l);
	return r->func (l, r->user_data, error);
}

gboolean
mta_reader_deliver (MtaReader *r, Part *pt, MtaLine *l, GError **error)
{
	return deliver_line (r, pt, l, error);
}

gboolean
mta_reader_hand_events (MtaReader *r, Part *pt, MtaEvent *ev, size_t n,
			const char *buf, const uint32_t *off, GError **error)
{
	uint64_t first = r->lineno + 1, shift = pt->lineno - r->lineno;
	size_t i = 0;

	if (n == 0)
		return TRUE;
	g_return_val_if_fail (r->events_func != NULL, FALSE);	/* set by whoever hands events */
	/* what deliver_line does with each of them */
	r->lineno += n;
	pt->lineno += n;
	r->content_lineno = r->lineno;
	r->content_lines += n;
	pt->traced = TRUE;
	for (;;) {
		i += r->events_func (ev + i, n - i, first + i, r->events_data);
		if (i == n)
			return TRUE;
		/* one the consumer leaves: its line, split again */
		const char *p = buf + off[i], *nl = rawmemchr (p, '\n');
		MtaLine l;
		mta_line_parse (&l, p, (size_t) (nl - p));
		l.source = pt->name;
		l.lineno = first + i;
		l.source_lineno = l.lineno + shift;
		if (!r->func (&l, r->user_data, error))
			return FALSE;
		i++;
	}
}

gboolean
mta_reader_plain_event (const MtaLine *l, MtaEvent *ev)
{
	if (l->kind != MTA_LINE_EVENT || !l->addr_canonical || l->more_cols)
		return FALSE;
	ev->addr = l->addr;
	ev->size = l->size;
	ev->caller = l->caller;
	ev->op = l->op;
	ev->pair = 0;
	return TRUE;
}

/* Queue the plain event just written to r->batch, its line at P. */
static ALWAYS_INLINE gboolean
queue_event (MtaReader *r, Part *pt, const char *p, GError **error)
{
	r->batch_off[r->nbatch++] = (uint32_t) (p - r->buf);
	return r->nbatch < MTA_BATCH || mta_reader_flush (r, pt, error);
}

const char *
mta_reader_split_line (MtaLine *l, const char *p, const char *end)
{
	const char *nl = tokenize_fast (l, p);

	if (UNLIKELY (nl == NULL)) {
		nl = memchr (p, '\n', (size_t) (end - p));
		tokenize_slow (l, p, (size_t) (nl - p));
	}
	l->text.p = p;
	l->text.len = (size_t) (nl - p);
	classify (l);
	return nl;
}

/* Classify, number and hand over a tokenized line. */
static ALWAYS_INLINE gboolean
finish_line (MtaReader *r, Part *pt, MtaLine *l, GError **error)
{
	classify (l);
	return deliver_line (r, pt, l, error);
}

/* A line without its '\n' (cut, or the last one of a part). */
static gboolean
emit_one (MtaReader *r, Part *pt, const char *p, size_t len, GError **error)
{
	MtaLine l;

	l.source = pt->name;
	l.text.p = p;
	l.text.len = len;
	tokenize_slow (&l, p, len);
	return finish_line (r, pt, &l, error);
}

/* Emit every complete line of BUF[0..LEN), where BUF[LEN] is a '\n'
 * sentinel; set *CONSUMED to how much was used. */
static gboolean
emit_lines (MtaReader *r, Part *pt, const char *buf, size_t len,
	    size_t *consumed, GError **error)
{
	const char *p = buf, *end = buf + len;
	MtaLine l;
	gboolean ok = TRUE;

	l.source = pt->name;
	while (p < end) {
		if (LIKELY (r->events_func != NULL)) {
			const char *nl = split_event (p, &r->batch[r->nbatch]);
			if (LIKELY (nl != NULL && nl != end)) {
				if (!queue_event (r, pt, p, error)) {
					ok = FALSE;
					break;
				}
				p = nl + 1;
				continue;
			}
		}
		const char *nl = tokenize_fast (&l, p);
		if (UNLIKELY (nl == NULL)) {
			nl = memchr (p, '\n', (size_t) (end - p) + 1);
			if (nl == end)
				break;
			tokenize_slow (&l, p, (size_t) (nl - p));
		} else if (UNLIKELY (nl == end))
			break;
		l.text.p = p;
		l.text.len = (size_t) (nl - p);
		classify (&l);
		if (r->events_func != NULL && mta_reader_plain_event (&l, &r->batch[r->nbatch]))
			ok = queue_event (r, pt, p, error);
		else
			ok = (r->nbatch == 0 || mta_reader_flush (r, pt, error)) &&
				deliver_line (r, pt, &l, error);
		if (!ok)
			break;
		p = nl + 1;
	}
	/* the buffer's lines move once this returns */
	if (ok && r->nbatch > 0)
		ok = mta_reader_flush (r, pt, error);
	*consumed = (size_t) (p - buf);
	return ok;
}

/* ------------------------------------------------------------ input */

/* Make the buffer hold at least WANT bytes (a power of two). */
void
mta_reader_reserve (MtaReader *r, size_t want)
{
	if (r->cap >= want)
		return;
	size_t old = r->cap;
	r->mem = g_realloc (r->mem, PAD_FRONT + want + PAD_BACK);
	r->buf = r->mem + PAD_FRONT;
	r->cap = want;
	/* defined bytes wherever a window or hex load may reach */
	if (old == 0)
		memset (r->mem, 0, PAD_FRONT + want + PAD_BACK);
	else
		memset (r->buf + old, 0, want - old + PAD_BACK);
}

/* Room for more input at buf + fill: grow the buffer, or cut an endless
 * line (use its head, drop the rest).  FALSE when the callback failed. */
static gboolean
part_room (MtaReader *r, Part *pt, GError **error)
{
	if (pt->fill < r->cap)
		return TRUE;
	if (r->cap < MAX_LINE) {
		mta_reader_reserve (r, r->cap * 2);
		return TRUE;
	}
	if (!pt->skipping && !emit_one (r, pt, r->buf, pt->fill, error))
		return FALSE;
	pt->skipping = TRUE;
	pt->fill = 0;
	return TRUE;
}

/* BUF[START..fill) just arrived: emit the complete lines. */
gboolean
mta_reader_part_input (MtaReader *r, Part *pt, size_t start, GError **error)
{
	size_t used;

	if (pt->skipping) {
		char *nl = memchr (r->buf + start, '\n', pt->fill - start);
		if (nl == NULL) {
			pt->fill = 0;
			return TRUE;
		}
		pt->skipping = FALSE;
		size_t rest = pt->fill - (size_t) (nl + 1 - r->buf);
		memmove (r->buf, nl + 1, rest);
		pt->fill = rest;
		start = 0;
	}
	/* Nothing new to emit without a '\n' in the new bytes (the old ones
	 * hold none): do not rescan a long line at every read. */
	if (memrchr (r->buf + start, '\n', pt->fill - start) == NULL)
		return TRUE;
	r->buf[pt->fill] = '\n';
	if (!emit_lines (r, pt, r->buf, pt->fill, &used, error))
		return FALSE;
	if (used > 0) {
		memmove (r->buf, r->buf + used, pt->fill - used);
		pt->fill -= used;
	}
	return TRUE;
}

/* The part ended: its last line may lack a '\n'. */
gboolean
mta_reader_part_end (MtaReader *r, Part *pt, GError **error)
{
	if (pt->fill > 0 && !pt->skipping)
		return emit_one (r, pt, r->buf, pt->fill, error);
	return TRUE;
}

static double
now_seconds (void)
{
	return (double) g_get_monotonic_time () / 1e6;
}

void
mta_progress_start (MtaProgress *p, const MtaReader *r, const char *name, uint64_t size)
{
	*p = (MtaProgress) { .on = r->progress && size > (64 << 20), .name = name, .size = size };
	if (p->on)
		p->next = now_seconds ();	/* at once: 64 MB is a wait somewhere */
}

void
mta_progress_at (MtaProgress *p, uint64_t offset)
{
	if (!p->on || now_seconds () < p->next)
		return;
	fprintf (stderr, "\rmtanalyze: reading '%s': %3d%%", p->name,
		 (int) (100.0 * (double) offset / (double) p->size));
	p->next = now_seconds () + 0.5;
}

void
mta_progress_end (const MtaProgress *p)
{
	if (p->on)
		fprintf (stderr, "\r%*s\r", (int) strlen (p->name) + 30, "");
}

/* A read error of IN: its message, and the line reached when the
 * compressed data broke off or went wrong after some lines. */
void
mta_reader_input_error (const Part *pt, GError *local, GError **error)
{
	if (local->domain != MTA_INPUT_ERROR || pt->lineno == 0) {
		g_propagate_error (error, local);
		return;
	}
	g_set_error (error, local->domain, local->code, "%s; line %" G_GUINT64_FORMAT
		     " was the last one read (zcat, zstdcat or xzcat writes out what it holds)",
		     local->message, pt->lineno);
	g_error_free (local);
}

/* Read the rest of IN as one part of the run, in reads of at most CHUNK
 * bytes, after the PT->fill bytes already in the buffer (the head of a
 * line); when probing, only up to its first trace line.  The part's look
 * is left in *PT. */
gboolean
mta_reader_read_serial (MtaReader *r, MtaInput *in, Part *pt, size_t chunk, GError **error)
{
	gboolean ok = TRUE;
	MtaProgress progress;

	mta_reader_reserve (r, chunk);
	mta_progress_start (&progress, r, pt->name, mta_input_file_size (in));
	for (;;) {
		if (!part_room (r, pt, error)) {
			ok = FALSE;
			break;
		}
		GError *local = NULL;
		gssize n = mta_input_read (in, r->buf + pt->fill, MIN (r->cap - pt->fill, chunk), &local);
		if (n < 0) {
			mta_reader_input_error (pt, local, error);
			ok = FALSE;
			break;
		}
		if (n == 0) {
			ok = mta_reader_part_end (r, pt, error);
			break;
		}
		if (pt->bytes == 0 && (pt->foreign = mta_foreign_magic (r->buf, (size_t) n)) != NULL)
			break;     /* not to be read as lines */
		pt->bytes += (uint64_t) n;
		r->bytes += (uint64_t) n;
		size_t start = pt->fill;
		pt->fill += (size_t) n;
		if (!mta_reader_part_input (r, pt, start, error)) {
			ok = FALSE;
			break;
		}
		if (r->probing && pt->traced)
			break;
		mta_progress_at (&progress, mta_input_file_offset (in));
	}
	mta_progress_end (&progress);
	return ok;
}

gboolean
mta_reader_read_buffer (MtaReader *reader, const char *name,
			const char *data, size_t len, GError **error)
{
	g_autoptr (MtaInput) in = mta_input_open_buffer (name, data, len);
	Part pt = { .name = name };
	size_t want = 4096;

	/* small inputs (the fuzzer's) need no 4 MB buffer */
	while (want < len && want < READ_CHUNK)
		want *= 2;
	return mta_reader_read_serial (reader, in, &pt, want, error) &&
		mta_reader_check_part (reader, &pt, in, FALSE, error);
}

void
mta_line_parse (MtaLine *line, const char *text, size_t len)
{
	line->text.p = text;
	line->text.len = len;
	tokenize_slow (line, text, len);
	classify (line);
	if (line->kind == MTA_LINE_EVENT && line->more_cols)
		line->kind = MTA_LINE_BAD;
}
