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

/* "0x" and 1-16 hex digits (any case, leading zeros allowed). */
static gboolean
parse_hex_field (MtaSpan s, uint64_t *value)
{
	uint64_t v = 0;

	if (s.len < 3 || s.len > 18 || s.p[0] != '0' || s.p[1] != 'x')
		return FALSE;
	for (size_t i = 2; i < s.len; i++) {
		int d = HEXV (s.p[i]);
		if (d < 0)
			return FALSE;
		v = (v << 4) | (uint64_t) d;
	}
	*value = v;
	return TRUE;
}

/* Decide what LINE is and fill its event fields. */
static void
classify (MtaLine *l)
{
	int n = 0;
	const MtaSpan *c = l->cols;

	if (l->ncols == 0) {
		l->kind = MTA_LINE_BLANK;
		return;
	}
	if (c[0].p[0] == '#') {
		l->kind = MTA_LINE_EXT;
		return;
	}
	/* A line made only of NUL bytes and blanks is padding. */
	if (memchr (l->text.p, '\0', l->text.len) != NULL) {
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
	if (mta_span_eq (c[n + 1], "(nil)"))
		l->addr = 0;
	else if (!parse_hex_field (c[n + 1], &l->addr))
		return;
	int next = n + 2;
	l->size = 0;
	switch (l->op) {
	case '+': case '>': case '!':
		if (l->ncols < n + 3)
			return;
		if (mta_span_eq (c[n + 2], "0"))
			l->size = 0;
		else if (!parse_hex_field (c[n + 2], &l->size))
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
	l.op = 0;
	l.addr = l.size = 0;
	l.stack_id = -1;
	l.caller.p = "";
	l.caller.len = 0;
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
		while (q < end && !is_ws[(unsigned char) *q])
			q++;
		l.cols[l.ncols].p = t;
		l.cols[l.ncols].len = (size_t) (q - t);
		l.ncols++;
	}
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
