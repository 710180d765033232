/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* escape.c -- control characters from a trace, escaped for a terminal
 * (escape.h). */
#include "escape.h"

#include <string.h>

/* Whether byte C, after PREV, must be escaped; C1 is "\xc2" then 80-9f. */
static inline gboolean
is_control (unsigned char c, gboolean newline_ok)
{
	return (c < 0x20 && !(newline_ok && c == '\n')) || c == 0x7f;
}

static inline gboolean
is_c1 (unsigned char c)
{
	return c >= 0x80 && c <= 0x9f;
}

char *
mta_escape_controls (const char *s)
{
	GString *g = g_string_sized_new (strlen (s));

	for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++) {
		if (p[0] == 0xc2 && is_c1 (p[1])) {
			g_string_append_printf (g, "\\xc2\\x%02x", p[1]);
			p++;
		} else if (is_control (*p, FALSE))
			g_string_append_printf (g, "\\x%02x", *p);
		else
			g_string_append_c (g, (char) *p);
	}
	return g_string_free (g, FALSE);
}

typedef struct {
	FILE *to;
	gboolean held_c2;     /* the last byte written was 0xc2, not passed on yet */
} Escaper;

static ssize_t
escaper_write (void *cookie, const char *buf, size_t size)
{
	Escaper *e = cookie;
	const unsigned char *p = (const unsigned char *) buf, *end = p + size, *run = p;

	for (; p < end; p++) {
		if (e->held_c2) {
			e->held_c2 = FALSE;
			if (is_c1 (*p)) {
				fprintf (e->to, "\\xc2\\x%02x", *p);
				run = p + 1;
				continue;
			}
			fputc (0xc2, e->to);
		}
		if (*p != 0xc2 && !is_control (*p, TRUE))
			continue;
		fwrite (run, 1, (size_t) (p - run), e->to);
		if (*p == 0xc2)
			e->held_c2 = TRUE;
		else
			fprintf (e->to, "\\x%02x", *p);
		run = p + 1;
	}
	fwrite (run, 1, (size_t) (end - run), e->to);
	return ferror (e->to) ? -1 : (ssize_t) size;
}

static int
escaper_close (void *cookie)
{
	Escaper *e = cookie;
	int r;

	if (e->held_c2)
		fputc (0xc2, e->to);
	r = ferror (e->to) ? EOF : 0;
	g_free (e);
	return r;
}

FILE *
mta_escaping_stream (FILE *to)
{
	Escaper *e = g_new0 (Escaper, 1);
	cookie_io_functions_t io = { .write = escaper_write, .close = escaper_close };
	FILE *f;

	e->to = to;
	f = fopencookie (e, "w", io);
	if (f == NULL) {
		g_free (e);
		return NULL;
	}
	setvbuf (f, NULL, _IONBF, 0);
	return f;
}

FILE *
mta_text_out (void)
{
	FILE *f = mta_escaping_stream (stdout);
	return f != NULL ? f : stdout;
}

void
mta_text_out_close (FILE *f)
{
	if (f != stdout)
		fclose (f);
}
