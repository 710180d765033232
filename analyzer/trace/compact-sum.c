/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-sum.c -- the summary lines of a compacted trace: their one
 * writer and their one parser (compact-sum.h).  Fields are KEY=VALUE in a
 * fixed order, so that a damaged line is told from a good one, and named
 * in the error with its file and line.
 */
#include "compact-sum.h"

#include <inttypes.h>
#include <string.h>

static const char *const run_keys[] = {
	"events", "allocs", "frees", "reallocs", "failed", "duplicates",
	"bytes", "temporary", "badfrees", "peak", "peakline",
};

static const char *const path_keys[] = {
	"first", "allocs", "frees", "bytes", "temporary", "badfrees", "lastfree", "lastborn",
	"peakshare",
};

static gboolean
starts (const MtaLine *l, const char *prefix)
{
	size_t n = strlen (prefix);
	return l->text.len >= n && memcmp (l->text.p, prefix, n) == 0;
}

static gboolean
damaged (const MtaLine *l, const char *what, GError **error)
{
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
		     "%s:%" PRIu64 ": damaged compacted trace: %s", l->source, l->source_lineno, what);
	return FALSE;
}

/* A decimal number at *P (before END), then a space or the end. */
static gboolean
number (const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t n = 0;
	if (s >= end || *s < '0' || *s > '9')
		return FALSE;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (n > (UINT64_MAX - 9) / 10)
			return FALSE;
		n = n * 10 + (uint64_t) (*s - '0');
	}
	if (s < end && *s != ' ')
		return FALSE;
	*v = n;
	*p = s < end ? s + 1 : s;
	return TRUE;
}

/* N fields "KEY=DECIMAL" in the order of KEYS, from *P. */
static gboolean
fields (const char **p, const char *end, const char *const *keys, size_t n, uint64_t *v)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen (keys[i]);
		if ((size_t) (end - *p) <= k || memcmp (*p, keys[i], k) != 0 || (*p)[k] != '=')
			return FALSE;
		*p += k + 1;
		if (!number (p, end, &v[i]))
			return FALSE;
	}
	return TRUE;
}

static gboolean
parse_run (const char *p, const char *end, MtaCompactRun *r)
{
	uint64_t v[G_N_ELEMENTS (run_keys)];
	if (!fields (&p, end, run_keys, G_N_ELEMENTS (run_keys), v) || p != end)
		return FALSE;
	*r = (MtaCompactRun) { v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10] };
	return TRUE;
}

static gboolean
parse_path (const char *p, const char *end, MtaCompactPath *r)
{
	uint64_t v[G_N_ELEMENTS (path_keys)], id;
	if (!fields (&p, end, path_keys, G_N_ELEMENTS (path_keys), v))
		return FALSE;
	r->first_line = v[0];
	r->allocs = v[1];
	r->frees = v[2];
	r->bytes_allocated = v[3];
	r->temporary = v[4];
	r->bad_frees = v[5];
	r->last_free_line = v[6];
	r->last_freed_born = v[7];
	r->peak_share = v[8];
	if (end - p >= 3 && memcmp (p, "s=-", 3) == 0 && (end - p == 3 || p[3] == ' ')) {
		r->stack_id = -1;
		p += end - p == 3 ? 3 : 4;
	} else if (end - p >= 2 && memcmp (p, "s=", 2) == 0) {
		p += 2;
		if (!number (&p, end, &id) || id > INT64_MAX)
			return FALSE;
		r->stack_id = (int64_t) id;
	} else
		return FALSE;
	r->caller.p = p;           /* the rest: the caller field, maybe empty */
	r->caller.len = (size_t) (end - p);
	return r->first_line > 0;
}

static gboolean
parse_thread (const char *p, const char *end, MtaCompactThread *t)
{
	uint64_t tid;
	if (!number (&p, end, &tid) || tid > UINT32_MAX)
		return FALSE;
	t->tid = (uint32_t) tid;
	if (end - p == 1 && *p == '-') {
		t->valid = FALSE;
		t->last_addr = 0;
		return TRUE;
	}
	MtaSpan s = { p, (size_t) (end - p) };
	t->valid = TRUE;
	return mta_canonical_hex (s, &t->last_addr);
}

gboolean
mta_compact_sum_parse (const MtaLine *l, MtaCompactSum *sum, GError **error)
{
	const char *end = l->text.p + l->text.len;

	while (end > l->text.p && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	sum->kind = MTA_COMPACT_NOT;
	if (starts (l, "# at ")) {
		const char *p = l->text.p + 5;
		sum->kind = MTA_COMPACT_AT;
		if (!number (&p, end, &sum->at) || p != end || sum->at == 0)
			return damaged (l, "'# at' needs a line number", error);
	} else if (starts (l, "# compacted ")) {
		const char *p = l->text.p + 12;
		sum->kind = MTA_COMPACT_HEADER;
		if (!number (&p, end, &sum->first) || !number (&p, end, &sum->last) || p != end ||
		    sum->first == 0 || sum->last < sum->first)
			return damaged (l, "'# compacted' needs FIRST LAST part numbers", error);
	} else if (starts (l, "# runsum ")) {
		sum->kind = MTA_COMPACT_RUN;
		if (!parse_run (l->text.p + 9, end, &sum->run))
			return damaged (l, "unreadable '# runsum' line", error);
	} else if (starts (l, "# pathsum ")) {
		sum->kind = MTA_COMPACT_PATH;
		if (!parse_path (l->text.p + 10, end, &sum->path))
			return damaged (l, "unreadable '# pathsum' line", error);
	} else if (starts (l, "# tstate ")) {
		sum->kind = MTA_COMPACT_THREAD;
		if (!parse_thread (l->text.p + 9, end, &sum->thread))
			return damaged (l, "unreadable '# tstate' line", error);
	}
	return TRUE;
}

gboolean
mta_compact_line_at (const MtaLine *l, uint64_t *lineno, uint64_t floor, GError **error)
{
	MtaCompactSum sum = { .kind = MTA_COMPACT_NOT };

	if (l->text.len < 5 || memcmp (l->text.p, "# at ", 5) != 0)
		return TRUE;
	if (!mta_compact_sum_parse (l, &sum, error))
		return FALSE;
	if (sum.kind != MTA_COMPACT_AT)
		return TRUE;
	/* it may go back over '#' lines (the compacted file's own header and
	 * sums take the numbers of the lines they replace), never before a
	 * line already counted as an event, or past what a run can hold */
	if (sum.at <= floor || sum.at > (UINT64_C (1) << 60)) {
		g_autofree char *m = g_strdup_printf ("'# at %" PRIu64 "' would number lines out of "
						      "order (line %" PRIu64 " was read)", sum.at, floor);
		return damaged (l, m, error);
	}
	*lineno = sum.at - 1;
	return TRUE;
}

void
mta_compact_format_run (GString *out, const MtaCompactRun *r)
{
	const uint64_t v[] = {
		r->events, r->allocs, r->frees, r->reallocs, r->failed_allocs, r->duplicates,
		r->bytes_allocated, r->temporary, r->bad_frees, r->peak_live_bytes, r->peak_line,
	};
	g_string_append (out, "# runsum");
	for (size_t i = 0; i < G_N_ELEMENTS (v); i++)
		g_string_append_printf (out, " %s=%" PRIu64, run_keys[i], v[i]);
	g_string_append_c (out, '\n');
}

void
mta_compact_format_path (GString *out, const MtaCompactPath *p)
{
	const uint64_t v[] = {
		p->first_line, p->allocs, p->frees, p->bytes_allocated, p->temporary, p->bad_frees,
		p->last_free_line, p->last_freed_born, p->peak_share,
	};
	g_string_append (out, "# pathsum");
	for (size_t i = 0; i < G_N_ELEMENTS (v); i++)
		g_string_append_printf (out, " %s=%" PRIu64, path_keys[i], v[i]);
	if (p->stack_id < 0)
		g_string_append (out, " s=-");
	else
		g_string_append_printf (out, " s=%" PRId64, p->stack_id);
	if (p->caller.len > 0) {
		g_string_append_c (out, ' ');
		g_string_append_len (out, p->caller.p, (gssize) p->caller.len);
	}
	g_string_append_c (out, '\n');
}

void
mta_compact_format_thread (GString *out, const MtaCompactThread *t)
{
	if (t->valid)
		g_string_append_printf (out, "# tstate %u 0x%" PRIx64 "\n", t->tid, t->last_addr);
	else
		g_string_append_printf (out, "# tstate %u -\n", t->tid);
}
