/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach.c -- the reachability verdicts of the recorder (reach.h): their
 * names, the --leaks list, and the lines that carry them. */
#include "reach.h"

#include <string.h>

static const char *const names[MTA_REACH_N] = {
	"unknown", "definite", "indirect", "possible", "reachable",
};

static const char *const words[MTA_REACH_N] = {
	"not scanned", "definitely lost", "indirectly lost", "possibly lost", "still reachable",
};

const char *
mta_reach_name (MtaReach r)
{
	return (unsigned) r < MTA_REACH_N ? names[r] : names[0];
}

const char *
mta_reach_words (MtaReach r)
{
	return (unsigned) r < MTA_REACH_N ? words[r] : words[0];
}

gboolean
mta_reach_parse_kinds (const char *list, guint *mask, GError **error)
{
	g_auto (GStrv) items = g_strsplit (list, ",", -1);

	*mask = 0;
	for (char **it = items; *it != NULL; it++) {
		const char *w = g_strstrip (*it);
		guint bit = 0;
		if (strcmp (w, "all") == 0)
			bit = (1u << MTA_REACH_N) - 1;
		for (int k = 0; k < MTA_REACH_N && bit == 0; k++)
			if (strcmp (w, names[k]) == 0)
				bit = 1u << k;
		if (bit == 0) {
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "--leaks: unknown kind '%s' (definite, indirect, possible, reachable, "
				     "unknown, all)", w);
			return FALSE;
		}
		*mask |= bit;
	}
	if (*mask == 0) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "--leaks: no kind given (definite, indirect, possible, reachable, unknown, all)");
		return FALSE;
	}
	return TRUE;
}

char *
mta_reach_mask_text (guint mask)
{
	GString *g = g_string_new (NULL);
	int n = 0, left = __builtin_popcount (mask & ((1u << MTA_REACH_N) - 1));

	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (!(mask & (1u << r)))
			continue;
		n++;
		g_string_append_printf (g, "%s%s", n == 1 ? "" : n == left ? " or " : ", ", words[r]);
	}
	return g_string_free (g, FALSE);
}

char *
mta_reach_mask_names (guint mask, const char *sep)
{
	GString *g = g_string_new (NULL);

	for (int k = 0; k < MTA_REACH_N; k++)
		if (mask & (1u << mta_reach_nth (k)))
			g_string_append_printf (g, "%s%s", g->len ? sep : "", names[mta_reach_nth (k)]);
	return g_string_free (g, FALSE);
}

static gboolean
starts (const char *t, size_t len, const char *word)
{
	size_t n = strlen (word);
	return len >= n && memcmp (t, word, n) == 0;
}

/* A decimal number ending at a blank or END; NULL: none. */
static const char *
number (const char *p, const char *end, uint64_t *v)
{
	const char *s = p;

	*v = 0;
	for (; p < end && g_ascii_isdigit (*p); p++) {
		if (*v > (UINT64_MAX - 9) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t) (*p - '0');
	}
	return p > s && (p == end || *p == ' ') ? p : NULL;
}

MtaReachLine
mta_reach_line (const char *t, size_t len, MtaReachValue *v)
{
	const char *end = t + len, *p;

	while (end > t && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	len = (size_t) (end - t);
	if (!starts (t, len, "# reach "))
		return MTA_REACH_LINE_NOT;
	p = t + 8;
	len = (size_t) (end - p);
	if (starts (p, len, "begin ")) {
		p = number (p + 6, end, &v->n);
		return p == end ? MTA_REACH_LINE_BEGIN : MTA_REACH_LINE_BAD;
	}
	if (starts (p, len, "end ")) {
		p = number (p + 4, end, &v->n);
		p = p != NULL && p < end ? number (p + 1, end, &v->ms) : NULL;
		return p == end ? MTA_REACH_LINE_END : MTA_REACH_LINE_BAD;
	}
	if (starts (p, len, "refused ")) {
		v->rest = p + 8;
		v->rest_len = (size_t) (end - v->rest);
		return MTA_REACH_LINE_REFUSED;
	}
	if (starts (p, len, "unscanned ")) {
		v->rest = p + 10;
		v->rest_len = (size_t) (end - v->rest);
		return MTA_REACH_LINE_UNSCANNED;
	}
	if (len < 3 || p[0] != '0' || p[1] != 'x')
		return MTA_REACH_LINE_BAD;
	uint64_t a = 0;
	int digits = 0;
	for (p += 2; p < end && g_ascii_isxdigit (*p); p++, digits++)
		a = a * 16 + (uint64_t) g_ascii_xdigit_value (*p);
	if (digits == 0 || digits > 16 || p == end || *p != ' ')
		return MTA_REACH_LINE_BAD;
	p++;
	for (int k = 1; k < MTA_REACH_N; k++) {
		size_t n = strlen (names[k]);
		if ((size_t) (end - p) == n && memcmp (p, names[k], n) == 0) {
			v->addr = a;
			v->kind = (MtaReach) k;
			return MTA_REACH_LINE_VERDICT;
		}
	}
	return MTA_REACH_LINE_BAD;
}
