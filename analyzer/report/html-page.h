/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-page.h -- what the HTML reports (html-out.c, html-diff.c) share:
 * writing the file whole or not at all, escaping, the page's frame with
 * its inline style and script, and the SVG line chart.
 */
#ifndef MTA_HTML_PAGE_H
#define MTA_HTML_PAGE_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

/* The page's style and script (html-assets.c). */
extern const char mta_html_css[];
extern const char mta_html_js[];

typedef void (*MtaHtmlWriter) (FILE *out, gconstpointer data);

/* Write PATH through WRITER into a temporary file next to it, renamed
 * over PATH when everything was written: PATH is never left half
 * written.  The error names PATH. */
gboolean mta_html_write_file (const char *path, MtaHtmlWriter writer, gconstpointer data,
			      GError **error);

/* S as HTML text (also fit for an attribute value); bytes that are not
 * UTF-8 become U+FFFD. */
void mta_html_text (FILE *out, const char *s);

/* From "<!DOCTYPE html>" to "<body>", and from the script to the end. */
void mta_html_begin (FILE *out, const char *title);
void mta_html_end (FILE *out);

/* Copy the JSON text JSON into a <script type="application/json"> block
 * with id ID: '<' is written as \u003c so that nothing in a string can
 * close the script (JSON strings are the only place '<' can be). */
void mta_html_json_block (FILE *out, const char *id, const char *json, size_t len);

/* "1.5 MiB", for axes and captions (tables show exact numbers). */
char *mta_html_bytes (uint64_t n);

typedef struct {
	const char *label;         /* legend; HTML-escaped when written */
	const uint64_t *y;         /* N values */
	const double *x;           /* N positions; NULL: the chart's */
	guint n;                   /* with X: its samples */
} MtaChartSeries;

typedef struct {
	const char *id;            /* the <figure>'s id */
	const char *x_label;       /* "seconds", "trace line", "% of the run" */
	const double *x;           /* positions of the samples */
	guint n;                   /* samples */
	double marker;             /* a vertical line here (the peak); < 0 none */
	const char *marker_label;
	gboolean fixed_x;          /* x from x_min to x_max, not from the data */
	double x_min, x_max;
} MtaChart;

/* An SVG line chart of SERIES (the first drawn thickest: the whole run),
 * with its legend; each polyline carries data-max, its largest value. */
void mta_html_chart (FILE *out, const MtaChart *chart, const MtaChartSeries *series, guint nseries);

#endif
