/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-put.h -- the pieces of JSON every writer puts (json-put.c). */
#ifndef MTA_JSON_PUT_H
#define MTA_JSON_PUT_H

#include <stdio.h>

/* S as an RFC 8259 string ("null" for NULL); bytes that are not UTF-8
 * become U+FFFD. */
void mta_json_put_string (FILE *out, const char *s);
/* "function": ..., "file": ..., "line": N, "object": ... -- a call site as
 * every JSON output names one. */
void mta_json_put_location (FILE *out, const char *function, const char *file, unsigned line,
			    const char *object);

#endif
