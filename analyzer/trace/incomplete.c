/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* incomplete.c -- the recorder's "# stopped", "# lost" and "# freeres"
 * lines, and the words the reports use for them (issue 18 point 4: the
 * recorder never stops in silence, and the analyzer says so).
 */
#include "incomplete.h"

#include <inttypes.h>
#include <string.h>

void
mta_incomplete_init (MtaIncomplete *x)
{
	memset (x, 0, sizeof *x);
}

void
mta_incomplete_release (MtaIncomplete *x)
{
	g_free (x->stopped_part);
	g_free (x->stop_reason);
	g_free (x->lost_part);
	g_free (x->lost_reason);
	g_free (x->freeres);
	mta_incomplete_init (x);
}

/* The REST of line T after the keyword's SKIP bytes, without blanks
 * around it. */
static char *
rest (const char *t, size_t len, size_t skip)
{
	g_autofree char *s = g_strndup (t + skip, len - skip);
	return g_strdup (g_strstrip (s));
}

static gboolean
starts (const char *t, size_t len, const char *word)
{
	size_t n = strlen (word);
	return len > n && memcmp (t, word, n) == 0;
}

gboolean
mta_incomplete_line (MtaIncomplete *x, const MtaLine *l)
{
	const char *t = l->text.p;
	size_t len = l->text.len;

	if (l->kind != MTA_LINE_EXT || len < 8 || t[1] != ' ')
		return FALSE;
	if (starts (t, len, "# stopped ")) {
		if (x->stopped_line == 0) {
			x->stopped_line = l->lineno;
			x->stopped_part_line = l->source_lineno;
			x->stopped_part = g_strdup (l->source);
			x->stop_reason = rest (t, len, 10);
		}
		return TRUE;
	}
	if (starts (t, len, "# lost ")) {
		g_autofree char *r = rest (t, len, 7);
		char *e;
		uint64_t n = g_ascii_strtoull (r, &e, 10);
		if (e == r)
			return TRUE;
		x->lost_events = n > UINT64_MAX - x->lost_events ? UINT64_MAX : x->lost_events + n;
		if (x->lost_lines++ == 0) {
			x->lost_line = l->lineno;
			x->lost_part_line = l->source_lineno;
			x->lost_part = g_strdup (l->source);
			x->lost_reason = g_strdup (g_strchug (e));
		}
		return TRUE;
	}
	if (starts (t, len, "# freeres ")) {
		g_free (x->freeres);
		x->freeres = rest (t, len, 10);
		return TRUE;
	}
	return FALSE;
}

gboolean
mta_incomplete_freeres_skipped (const MtaIncomplete *x)
{
	return x->freeres != NULL && g_str_has_prefix (x->freeres, "skipped");
}

char *
mta_group_digits (uint64_t n)
{
	char digits[32];
	GString *g = g_string_new (NULL);
	int len = g_snprintf (digits, sizeof digits, "%" PRIu64, n);

	for (int i = 0; i < len; i++) {
		if (i > 0 && (len - i) % 3 == 0)
			g_string_append_c (g, ',');
		g_string_append_c (g, digits[i]);
	}
	return g_string_free (g, FALSE);
}

/* "2,000,000 events were not recorded" */
static char *
events_not_recorded (uint64_t n)
{
	g_autofree char *d = mta_group_digits (n);
	return g_strdup_printf ("%s event%s not recorded", d, n == 1 ? " was" : "s were");
}

char *
mta_incomplete_warning (const MtaIncomplete *x)
{
	if (x->stopped_line > 0) {
		g_autofree char *lost = x->lost_lines > 0 ? events_not_recorded (x->lost_events)
			: g_strdup ("what the program did after it is not in the trace");
		return g_strdup_printf ("'%s' is incomplete from line %" PRIu64 " on: the recorder "
					"stopped (%s); %s", x->stopped_part, x->stopped_part_line,
					x->stop_reason[0] ? x->stop_reason : "no reason given", lost);
	}
	if (x->lost_lines > 0) {
		g_autofree char *lost = events_not_recorded (x->lost_events);
		return g_strdup_printf ("'%s' is incomplete: %s (%s, line %" PRIu64 "); frees of "
					"memory never allocated and leaks may be artefacts",
					x->lost_part, lost,
					x->lost_reason[0] ? x->lost_reason : "no reason given",
					x->lost_part_line);
	}
	return NULL;
}
