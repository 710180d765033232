/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-usable.c -- is an input a trace at all?  Each part is watched
 * until its first trace line (its bytes: NULs, blanks, control bytes),
 * and a part without one is refused with what it holds instead ("empty
 * file", "binary data, not a trace", a known format's name), unless the
 * run had a trace line before it (share/analyzer.md, "Unusable input").
 */
#include "trace-reader-private.h"

/* The bytes of S are text: no control byte but tab and CR, no DEL. */
static gboolean
is_text (const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char) p[i];
		if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
			return FALSE;
	}
	return TRUE;
}

gboolean
mta_line_is_trace (const MtaLine *l)
{
	switch (l->kind) {
	case MTA_LINE_EVENT:
	case MTA_LINE_TRACKED:
		return TRUE;
	case MTA_LINE_MARKER:
		return is_text (l->text.p, l->text.len);
	case MTA_LINE_EXT: {
		/* "# word ...": a '#' line of random bytes or "#!/bin/sh" is not */
		const char *p = l->cols[0].p, *end = l->text.p + l->text.len;
		return end - p >= 3 && p[1] == ' ' && g_ascii_isalpha (p[2]) &&
			is_text (p, (size_t) (end - p));
	}
	default:
		return FALSE;
	}
}

/* A line of a part that has shown no trace line yet. */
void
mta_part_watch_untraced (Part *pt, const MtaLine *l)
{
	if (mta_line_is_trace (l)) {
		pt->traced = TRUE;
		return;
	}
	for (size_t i = 0; i < l->text.len; i++) {
		unsigned char c = (unsigned char) l->text.p[i];
		if (c == 0)
			pt->nul = TRUE;
		else if (c == ' ' || (c >= '\t' && c <= '\r'))	/* perl's \s */
			pt->blank = TRUE;
		else {
			pt->other = TRUE;
			if (c < 0x20 || c == 0x7f)
				pt->binary = TRUE;
		}
	}
	pt->blank = pt->blank || pt->lineno > 1;   /* a '\n' between lines */
	if (pt->nul && pt->other)
		pt->binary = TRUE;
}

/* What a part without a trace line holds, for a message after its name. */
char *
mta_part_describe_untraced (const Part *pt, MtaInput *in)
{
	const char *what;
	const char *format = mta_input_format_name (in);

	if (pt->foreign != NULL)
		what = pt->foreign;
	else if (pt->bytes == 0)
		what = mta_input_is_regular (in) ? "empty file" : "empty input";
	else if (!pt->other)
		what = !pt->nul ? "only blank lines" : pt->blank ? "only NUL bytes and blank lines"
							      : "only NUL bytes";
	else if (pt->binary)
		what = "binary data, not a trace: no line of it is a trace line";
	else
		what = "text, but not a trace: no line of it is a trace line";
	if (format == NULL)
		return g_strdup (what);
	return g_strdup_printf ("%s (%s data)", what, format);
}

/* After a part was read: refuse what is not a trace.  Content known by
 * its magic as something else always; a part without a trace line when it
 * was not PROBED (standard input, a pipe: see parts.c for files) and
 * nothing of the run before it was a trace either. */
gboolean
mta_reader_check_part (MtaReader *r, const Part *pt, MtaInput *in, gboolean probed, GError **error)
{
	r->traced = r->traced || pt->traced;
	if (pt->foreign == NULL && (pt->traced || r->traced || probed))
		return TRUE;
	g_autofree char *what = mta_part_describe_untraced (pt, in);
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: %s", pt->name, what);
	return FALSE;
}
