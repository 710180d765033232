/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-header.c -- the process and object lines of a trace, parsed once
 * (trace-header.h).  Fields are checked to the end of the line: lines are
 * not NUL-terminated (they are spans of the reader's buffer), and a damaged
 * line must not pass for a header line with a made-up value. */
#include "trace-header.h"

#include <string.h>

typedef struct {
	const char *p, *end;
} Cursor;

static gboolean
at_end (const Cursor *c)
{
	return c->p == c->end;
}

/* One space, then at least one more byte. */
static gboolean
skip_space (Cursor *c)
{
	if (c->p == c->end || *c->p != ' ' || c->p + 1 == c->end)
		return FALSE;
	c->p++;
	return TRUE;
}

static int
digit_value (char ch, unsigned base)
{
	int v = ch >= '0' && ch <= '9' ? ch - '0'
		: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
		: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : 99;
	return v < (int) base ? v : -1;
}

/* An unsigned number in BASE (16: an optional 0x), no overflow. */
static gboolean
number (Cursor *c, unsigned base, uint64_t *v)
{
	const char *start;

	if (base == 16 && c->end - c->p > 2 && c->p[0] == '0' && (c->p[1] == 'x' || c->p[1] == 'X'))
		c->p += 2;
	start = c->p;
	*v = 0;
	for (int d; c->p < c->end && (d = digit_value (*c->p, base)) >= 0; c->p++) {
		if (*v > (UINT64_MAX - (uint64_t) d) / base)
			return FALSE;
		*v = *v * base + (uint64_t) d;
	}
	return c->p > start;
}

static gboolean
word (Cursor *c, MtaHeaderSpan *s)
{
	const char *sp = memchr (c->p, ' ', (size_t) (c->end - c->p));

	s->p = c->p;
	c->p = sp ? sp : c->end;
	s->len = (size_t) (c->p - s->p);
	return s->len > 0;
}

static void
rest (Cursor *c, MtaHeaderSpan *s)
{
	s->p = c->p;
	s->len = (size_t) (c->end - c->p);
	c->p = c->end;
}

/* BIAS LOW-HIGH */
static gboolean
range (Cursor *c, MtaHeader *h)
{
	return number (c, 16, &h->bias) && skip_space (c) && number (c, 16, &h->lo) &&
	       c->p < c->end && *c->p++ == '-' && number (c, 16, &h->hi);
}

static gboolean
fields (Cursor *c, MtaHeader *h)
{
	uint64_t v;

	switch (h->kind) {
	case MTA_HEADER_MTREC:
	case MTA_HEADER_PART:
	case MTA_HEADER_DEPTH:
		return number (c, 10, &h->n) && at_end (c);
	case MTA_HEADER_PID:
		h->rest = (MtaHeaderSpan) { c->p, (size_t) (c->end - c->p) };
		if (!number (c, 10, &v) || v > INT64_MAX)
			return FALSE;
		h->pid = (int64_t) v;
		if (at_end (c))
			return TRUE;
		if (!skip_space (c) || !number (c, 10, &v) || v > INT64_MAX)
			return FALSE;
		h->ppid = (int64_t) v;
		return at_end (c);
	case MTA_HEADER_EXE:
	case MTA_HEADER_CMDLINE:
	case MTA_HEADER_START:
		rest (c, &h->rest);
		return TRUE;
	case MTA_HEADER_OBJECT:
		if (!range (c, h) || !skip_space (c) || !word (c, &h->build_id) || !skip_space (c))
			return FALSE;
		if (h->build_id.len == 1 && h->build_id.p[0] == '-')
			h->build_id.p = NULL, h->build_id.len = 0;
		rest (c, &h->rest);
		return TRUE;
	case MTA_HEADER_UNLOAD:
		if (!range (c, h) || !skip_space (c))
			return FALSE;
		rest (c, &h->rest);
		return TRUE;
	case MTA_HEADER_THREAD:
		if (!number (c, 10, &h->n) || !skip_space (c))
			return FALSE;
		rest (c, &h->rest);
		return TRUE;
	case MTA_HEADER_COMPACTED:
		return number (c, 10, &h->n) && skip_space (c) && number (c, 10, &h->last) && at_end (c);
	case MTA_HEADER_PARENT:
		if (!number (c, 10, &v) || v > INT64_MAX || !skip_space (c) || !number (c, 10, &h->n) ||
		    h->n == 0 || !skip_space (c))
			return FALSE;
		h->pid = (int64_t) v;
		rest (c, &h->rest);
		return TRUE;
	}
	return FALSE;
}

static const struct {
	const char *word;
	MtaHeaderKind kind;
} keywords[] = {
	{ "mtrec", MTA_HEADER_MTREC }, { "part", MTA_HEADER_PART }, { "pid", MTA_HEADER_PID },
	{ "exe", MTA_HEADER_EXE }, { "cmdline", MTA_HEADER_CMDLINE }, { "start", MTA_HEADER_START },
	{ "depth", MTA_HEADER_DEPTH }, { "object", MTA_HEADER_OBJECT }, { "unload", MTA_HEADER_UNLOAD },
	{ "thread", MTA_HEADER_THREAD }, { "parent", MTA_HEADER_PARENT },
	{ "compacted", MTA_HEADER_COMPACTED },
};

gboolean
mta_header_parse (const char *text, size_t len, MtaHeader *h)
{
	Cursor c = { text, text + len };
	MtaHeaderSpan kw;

	memset (h, 0, sizeof *h);
	h->pid = h->ppid = -1;
	while (c.end > c.p && (c.end[-1] == '\n' || c.end[-1] == '\r' || c.end[-1] == ' '))
		c.end--;
	if (c.end - c.p < 3 || c.p[0] != '#' || c.p[1] != ' ')
		return FALSE;
	c.p += 2;
	if (!word (&c, &kw) || !skip_space (&c))
		return FALSE;
	for (size_t i = 0; i < G_N_ELEMENTS (keywords); i++)
		if (strlen (keywords[i].word) == kw.len && memcmp (keywords[i].word, kw.p, kw.len) == 0) {
			h->kind = keywords[i].kind;
			return fields (&c, h);
		}
	return FALSE;
}
