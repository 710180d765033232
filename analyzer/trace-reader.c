/* trace-reader.c -- split a trace into lines and columns, classify them.
 *
 * Hot loop: memchr for the end of line, a table-driven tokenizer, no
 * allocation.  Input comes through read() into one buffer that only grows
 * for very long lines, so memory does not depend on the file's length
 * (mapping a multi-GB file would count its touched pages in RSS) and files
 * over 4 GiB need nothing special (off_t is 64-bit here).
 */
#include "trace-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_CHUNK (4u << 20)
/* A longer "line" is cut there; the rest up to its newline is dropped. */
#define MAX_LINE (64u << 20)

struct MtaReader {
	MtaLineFunc func;
	gpointer user_data;
	uint64_t lineno;
	uint64_t bad;
	gboolean progress;
	char *buf;
	size_t cap;
};

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
	g_free (reader->buf);
	g_free (reader);
}

void
mta_reader_set_progress (MtaReader *reader, gboolean progress)
{
	reader->progress = progress;
}

uint64_t
mta_reader_bad_lines (const MtaReader *reader)
{
	return reader->bad;
}

uint64_t
mta_reader_lines (const MtaReader *reader)
{
	return reader->lineno;
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

gboolean
mta_canonical_hex (MtaSpan s, uint64_t *value)
{
	uint64_t v = 0;

	if (s.len < 3 || s.len > 18 || s.p[0] != '0' || s.p[1] != 'x')
		return FALSE;
	if (s.p[2] == '0' && s.len != 3)
		return FALSE;
	for (size_t i = 2; i < s.len; i++) {
		unsigned char c = s.p[i];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return FALSE;
		v = (v << 4) | (uint64_t) d;
	}
	*value = v;
	return TRUE;
}

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

/* Decide what LINE is and fill its event fields. */
static void
classify (MtaLine *l)
{
	int n = 0;
	const MtaSpan *c = l->cols;

	if (l->ncols == 0) {
		l->addr_canonical = FALSE;
		l->op = 0;
		l->stack_id = -1;
		l->caller.p = "";
		l->caller.len = 0;
		l->kind = MTA_LINE_BLANK;
		return;
	}
	l->addr_canonical = FALSE;
	l->op = 0;
	l->addr = l->size = 0;
	l->stack_id = -1;
	l->caller.p = "";
	l->caller.len = 0;
	if (c[0].p[0] == '#') {
		l->kind = MTA_LINE_EXT;
		return;
	}
	/* A line made only of NUL bytes and blanks is padding. */
	if (l->has_nul) {
		gboolean only = TRUE;
		for (size_t i = 0; i < l->text.len && only; i++)
			only = l->text.p[i] == '\0' || is_ws[(unsigned char) l->text.p[i]];
		l->kind = only ? MTA_LINE_BLANK : MTA_LINE_BAD;
		return;
	}
	l->kind = MTA_LINE_BAD;
	if (mta_span_eq (c[0], "=")) {
		l->kind = MTA_LINE_MARKER;
		return;
	}
	l->caller.p = "";
	l->caller.len = 0;
	if (mta_span_eq (c[0], "@")) {
		if (l->ncols < 2)
			return;
		l->caller = c[1];
		n = 2;
	}
	if (l->ncols < n + 2 || c[n].len != 1)
		return;
	l->op = c[n].p[0];
	l->addr_canonical = FALSE;
	if (mta_span_eq (c[n + 1], "(nil)"))
		l->addr = 0;
	else if (!parse_hex_field (c[n + 1], &l->addr, &l->addr_canonical))
		return;
	int next = n + 2;
	l->size = 0;
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
	/* Trailing columns: KEY=VALUE; s=ID is the interned stack. */
	l->stack_id = -1;
	for (int i = next; i < l->ncols; i++) {
		const char *eq = memchr (c[i].p, '=', c[i].len);
		if (eq == NULL || eq == c[i].p)
			return;
		if (c[i].len > 2 && c[i].p[0] == 's' && c[i].p[1] == '=') {
			int64_t id = 0;
			for (size_t k = 2; k < c[i].len; k++) {
				if (c[i].p[k] < '0' || c[i].p[k] > '9' || id > (INT64_MAX - 9) / 10)
					return;
				id = id * 10 + (c[i].p[k] - '0');
			}
			l->stack_id = id;
		}
	}
	l->kind = MTA_LINE_EVENT;
}

/* Index of the first byte <= 0x20 in [P, END) (perl's blanks and NUL are
 * all there), eight bytes at a time; END when there is none. */
static inline const char *
scan_token_end (const char *p, const char *end)
{
	while (end - p >= 8) {
		uint64_t x;
		memcpy (&x, p, 8);
		/* bytes < 0x21: (x - 0x21..) & ~x & 0x80.. (exact for bytes < 0x80;
		 * bytes >= 0x80 never set their high bit in the result) */
		uint64_t m = (x - 0x2121212121212121ULL) & ~x & 0x8080808080808080ULL;
		if (m)
			return p + (__builtin_ctzll (m) >> 3);
		p += 8;
	}
	while (p < end && (unsigned char) *p > 0x20)
		p++;
	return p;
}


/* The common case: a line whose only bytes below 0x21 are spaces.  Eight
 * bytes at a time, find where runs of non-spaces start and end.  Returns
 * FALSE (having done nothing useful) when the line holds a tab, CR, NUL or
 * other control byte: the general loop handles those. */
static inline gboolean
fast_tokenize (MtaLine *l, const char *p, size_t len)
{
	uint64_t prev_space;   /* high bit: the byte before is blank */
	size_t start = 0;
	int n = 0;

	prev_space = 0x80;
	for (size_t off = 0; off < len; off += 8) {
		uint64_t x = 0x4141414141414141ULL;   /* pad with non-blanks */
		size_t k = len - off;
		if (k >= 8)
			memcpy (&x, p + off, 8);
		else
			memcpy (&x, p + off, k);
		uint64_t lt = ~(((x & ~HIGH) + 0x5f * ONES) | x) & HIGH;
		uint64_t y = x ^ (0x20 * ONES);
		uint64_t sp = ~(((y & ~HIGH) + 0x7f * ONES) | y) & HIGH;
		if (lt != sp)
			return FALSE;
		uint64_t nonsp = ~sp & HIGH;
		uint64_t sp_before = (sp << 8) | prev_space;         /* byte i-1 is a space */
		uint64_t starts = nonsp & sp_before;
		uint64_t ends = sp & ~sp_before & HIGH;               /* space after non-space */
		if (off == 0)
			ends &= ~(uint64_t) 0x80;                       /* nothing ended before byte 0 */
		prev_space = (sp >> 56) & 0x80;
		uint64_t ev = starts | ends;
		while (ev) {
			int bit = __builtin_ctzll (ev);
			size_t pos = off + (size_t) (bit >> 3);
			if (pos >= len)
				break;
			if (starts & (1ULL << bit)) {
				start = pos;
			} else {
				if (n == MTA_MAX_COLS) {
					l->more_cols = TRUE;
					goto done;
				}
				l->cols[n].p = p + start;
				l->cols[n].len = pos - start;
				n++;
			}
			ev &= ev - 1;
		}
	}
	/* A token still open at the end of the line. */
	if (len > 0 && p[len - 1] != ' ') {
		if (n == MTA_MAX_COLS)
			l->more_cols = TRUE;
		else {
			l->cols[n].p = p + start;
			l->cols[n].len = len - start;
			n++;
		}
	}
done:
	l->ncols = n;
	return TRUE;
}

static gboolean
emit_line (MtaReader *r, const char *source, uint64_t *source_lineno,
	   const char *p, size_t len, GError **error)
{
	MtaLine l;
	const char *end = p + len, *q = p;

	l.lineno = ++r->lineno;
	l.source = source;
	l.source_lineno = ++*source_lineno;
	l.text.p = p;
	l.text.len = len;
	l.ncols = 0;
	l.more_cols = FALSE;
	l.has_nul = FALSE;
	if (fast_tokenize (&l, p, len))
		goto classify;
	l.ncols = 0;
	l.more_cols = FALSE;
	for (;;) {
		while (q < end && is_ws[(unsigned char) *q])
			q++;
		if (q == end)
			break;
		if (l.ncols == MTA_MAX_COLS) {
			l.more_cols = TRUE;
			break;
		}
		const char *t = q;
		for (;;) {
			q = scan_token_end (q, end);
			if (q == end || is_ws[(unsigned char) *q])
				break;
			/* a control byte or NUL inside the token */
			if (*q == '\0')
				l.has_nul = TRUE;
			q++;
		}
		l.cols[l.ncols].p = t;
		l.cols[l.ncols].len = (size_t) (q - t);
		l.ncols++;
	}
classify:
	classify (&l);
	if (l.kind == MTA_LINE_EVENT && l.more_cols)
		l.kind = MTA_LINE_BAD;
	if (l.kind == MTA_LINE_BAD)
		r->bad++;
	return r->func (&l, r->user_data, error);
}

/* Emit every complete line of BUF[0..LEN); return how much was consumed. */
static gboolean
emit_lines (MtaReader *r, const char *source, uint64_t *source_lineno,
	    const char *buf, size_t len, size_t *consumed, GError **error)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr (p, '\n', (size_t) (end - p));
		if (nl == NULL)
			break;
		if (!emit_line (r, source, source_lineno, p, (size_t) (nl - p), error))
			return FALSE;
		p = nl + 1;
	}
	*consumed = (size_t) (p - buf);
	return TRUE;
}

gboolean
mta_reader_read_buffer (MtaReader *reader, const char *name,
			const char *data, size_t len, GError **error)
{
	uint64_t source_lineno = 0;
	size_t used;

	if (!emit_lines (reader, name, &source_lineno, data, len, &used, error))
		return FALSE;
	if (used < len)
		return emit_line (reader, name, &source_lineno, data + used, len - used, error);
	return TRUE;
}

static double
now_seconds (void)
{
	struct timespec ts;
	clock_gettime (CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

gboolean
mta_reader_read_file (MtaReader *reader, const char *path, GError **error)
{
	gboolean is_stdin = strcmp (path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	int fd;
	struct stat st;
	uint64_t source_lineno = 0;
	size_t fill = 0;
	gboolean skipping = FALSE;   /* inside an over-long line */
	gboolean ok = TRUE;
	uint64_t total = 0;
	double next_report = 0;
	gboolean progress;

	if (is_stdin)
		fd = 0;
	else
		fd = open (path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat (fd, &st) < 0) {
		int e = errno;
		if (fd > 0)
			close (fd);
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
			     "cannot read '%s': %s", name, g_strerror (e));
		return FALSE;
	}
	if (S_ISDIR (st.st_mode)) {
		if (fd > 0)
			close (fd);
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_ISDIR,
			     "cannot read '%s': %s", name, g_strerror (EISDIR));
		return FALSE;
	}
	progress = reader->progress && S_ISREG (st.st_mode) && st.st_size > (64 << 20);
	if (progress)
		next_report = now_seconds () + 0.5;
	if (reader->buf == NULL) {
		reader->cap = READ_CHUNK;
		reader->buf = g_malloc (reader->cap);
	}
	for (;;) {
		if (fill == reader->cap) {
			if (reader->cap < MAX_LINE) {
				reader->cap *= 2;
				reader->buf = g_realloc (reader->buf, reader->cap);
			} else {
				/* Cut an endless line: use its head, drop the rest. */
				if (!skipping && !emit_line (reader, name, &source_lineno,
							     reader->buf, fill, error)) {
					ok = FALSE;
					break;
				}
				skipping = TRUE;
				fill = 0;
			}
		}
		ssize_t n = read (fd, reader->buf + fill, reader->cap - fill);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
				     "cannot read '%s': %s", name, g_strerror (e));
			ok = FALSE;
			break;
		}
		if (n == 0) {
			if (fill > 0 && !skipping)
				ok = emit_line (reader, name, &source_lineno, reader->buf, fill, error);
			break;
		}
		total += (uint64_t) n;
		size_t start = fill, used;
		fill += (size_t) n;
		if (skipping) {
			char *nl = memchr (reader->buf + start, '\n', fill - start);
			if (nl == NULL) {
				fill = 0;
				continue;
			}
			skipping = FALSE;
			size_t rest = fill - (size_t) (nl + 1 - reader->buf);
			memmove (reader->buf, nl + 1, rest);
			fill = rest;
		}
		if (!emit_lines (reader, name, &source_lineno, reader->buf, fill, &used, error)) {
			ok = FALSE;
			break;
		}
		if (used > 0) {
			memmove (reader->buf, reader->buf + used, fill - used);
			fill -= used;
		}
		if (progress && now_seconds () >= next_report) {
			fprintf (stderr, "\rmtanalyze: reading '%s': %3d%%", name,
				 (int) (100.0 * (double) total / (double) st.st_size));
			next_report = now_seconds () + 0.5;
		}
	}
	if (progress)
		fprintf (stderr, "\r%*s\r", (int) strlen (name) + 30, "");
	if (fd > 0)
		close (fd);
	return ok;
}
