/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-put.c -- the pieces of JSON every writer puts (json-put.h): a
 * string escaped per RFC 8259, a call site's location.  Below json-out.c
 * and kind-json.c, which both use them.
 */
#include "json-put.h"

#include <glib.h>
#include <string.h>

void
mta_json_put_string (FILE *out, const char *s)
{
	if (s == NULL) {
		fputs ("null", out);
		return;
	}
	fputc ('"', out);
	const char *end = s + strlen (s);
	while (s < end) {
		unsigned char c = (unsigned char) *s;
		if (c == '"' || c == '\\') {
			fputc ('\\', out);
			fputc (c, out);
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			/* DEL too, and C1 below: JSON read on a terminal */
			fprintf (out, "\\u%04x", c);
			s++;
		} else if (c < 0x80) {
			fputc (c, out);
			s++;
		} else {
			gunichar u = g_utf8_get_char_validated (s, end - s);
			if (u == (gunichar) -1 || u == (gunichar) -2) {
				fputs ("\\ufffd", out);
				s++;
			} else if (u >= 0x80 && u <= 0x9f) {
				fprintf (out, "\\u%04x", u);
				s = g_utf8_next_char (s);
			} else {
				const char *n = g_utf8_next_char (s);
				fwrite (s, 1, (size_t) (n - s), out);
				s = n;
			}
		}
	}
	fputc ('"', out);
}

void
mta_json_put_location (FILE *out, const char *function, const char *file, unsigned line,
		       const char *object)
{
	fputs ("\"function\": ", out);
	mta_json_put_string (out, function);
	fputs (", \"file\": ", out);
	mta_json_put_string (out, file);
	fprintf (out, ", \"line\": %u, \"object\": ", line);
	mta_json_put_string (out, object);
}
