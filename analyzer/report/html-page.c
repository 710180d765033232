/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-page.c -- the frame of the HTML reports and the pieces both use.
 *
 * A report is one file that works offline and is read years later, so
 * nothing is fetched: the style and the script are inline (html-assets.c),
 * charts are SVG written here, and the data the script needs (the flame
 * graph's tree) is a JSON block in the page.  The file is written to a
 * temporary next to it and renamed, so a report that could not be
 * written leaves no half page behind for a browser to show as complete.
 */
#include "html-page.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <unistd.h>

gboolean
mta_html_write_file (const char *path, MtaHtmlWriter writer, gconstpointer data, GError **error)
{
	g_autofree char *tmp = g_strdup_printf ("%s.XXXXXX", path);
	int fd = g_mkstemp_full (tmp, O_WRONLY | O_CLOEXEC, 0666);   /* the umask applies */
	int e = 0;

	if (fd < 0)
		e = errno;
	else {
		FILE *f = fdopen (fd, "w");
		if (f == NULL) {
			e = errno;
			close (fd);
		} else {
			writer (f, data);
			if (fflush (f) != 0 || ferror (f) || fsync (fileno (f)) != 0)
				e = errno ? errno : EIO;
			if (fclose (f) != 0 && e == 0)
				e = errno;
		}
		if (e == 0 && rename (tmp, path) != 0)
			e = errno;
		if (e != 0)
			unlink (tmp);
	}
	if (e == 0)
		return TRUE;
	g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "cannot write '%s': %s", path,
		     g_strerror (e));
	return FALSE;
}

void
mta_html_text (FILE *out, const char *s)
{
	g_autofree char *valid = g_utf8_make_valid (s ? s : "", -1);
	g_autofree char *escaped = g_markup_escape_text (valid, -1);
	fputs (escaped, out);
}

void
mta_html_begin (FILE *out, const char *title)
{
	fputs ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	       "<meta name=\"generator\" content=\"mtanalyze " MTA_VERSION "\">\n<title>", out);
	mta_html_text (out, title);
	fprintf (out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", mta_html_css);
}

void
mta_html_end (FILE *out)
{
	fprintf (out, "<footer>Written by mtanalyze %s. This page works offline: it loads nothing.</footer>\n"
		 "<script>\n%s</script>\n</body>\n</html>\n", MTA_VERSION, mta_html_js);
}

void
mta_html_json_block (FILE *out, const char *id, const char *json, size_t len)
{
	fprintf (out, "<script type=\"application/json\" id=\"%s\">", id);
	for (size_t i = 0; i < len; i++)
		if (json[i] == '<')
			fputs ("\\u003c", out);
		else
			fputc (json[i], out);
	fputs ("</script>\n", out);
}

char *
mta_html_bytes (uint64_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double) n;
	guint u = 0;

	while (v >= 1024 && u + 1 < G_N_ELEMENTS (units)) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		return g_strdup_printf ("%" PRIu64 " B", n);
	return g_strdup_printf (v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* ------------------------------------------------------------ chart */

#define CHART_W 800.0
#define CHART_H 260.0
#define CHART_LEFT 70.0
#define CHART_RIGHT 10.0
#define CHART_TOP 10.0
#define CHART_BOTTOM 30.0

typedef struct {
	double x0, x1;             /* the x range */
	uint64_t ymax;
} Scale;

static double
sx (const Scale *s, double x)
{
	double w = s->x1 > s->x0 ? s->x1 - s->x0 : 1;
	return CHART_LEFT + (x - s->x0) / w * (CHART_W - CHART_LEFT - CHART_RIGHT);
}

static double
sy (const Scale *s, uint64_t y)
{
	double h = CHART_H - CHART_TOP - CHART_BOTTOM;
	return CHART_TOP + h - (s->ymax ? (double) y / (double) s->ymax * h : 0);
}

static const double *
series_x (const MtaChart *c, const MtaChartSeries *s, guint *n)
{
	*n = s->x ? s->n : c->n;
	return s->x ? s->x : c->x;
}

static void
chart_scale (const MtaChart *c, const MtaChartSeries *series, guint nseries, Scale *s)
{
	s->x0 = INFINITY;
	s->x1 = -INFINITY;
	s->ymax = 0;
	for (guint k = 0; k < nseries; k++) {
		guint n;
		const double *x = series_x (c, &series[k], &n);
		for (guint i = 0; i < n; i++) {
			s->x0 = MIN (s->x0, x[i]);
			s->x1 = MAX (s->x1, x[i]);
			s->ymax = MAX (s->ymax, series[k].y[i]);
		}
	}
	if (s->x0 > s->x1)
		s->x0 = s->x1 = 0;
	if (c->fixed_x) {
		s->x0 = c->x_min;
		s->x1 = c->x_max;
	}
}

static void
chart_axes (FILE *out, const MtaChart *c, const Scale *s)
{
	double bottom = CHART_H - CHART_BOTTOM;

	fprintf (out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		 CHART_LEFT, CHART_TOP, CHART_LEFT, bottom);
	fprintf (out, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		 CHART_LEFT, bottom, CHART_W - CHART_RIGHT, bottom);
	for (int t = 0; t <= 2; t++) {
		uint64_t v = s->ymax / 2 * (uint64_t) t + (t == 2 ? s->ymax % 2 : 0);
		g_autofree char *label = mta_html_bytes (v);
		fprintf (out, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			 CHART_LEFT - 4, sy (s, v) + 4, label);
	}
	/* As many decimals as put each tick within a tenth of the step
	 * between two of its place (half a unit of the last digit at most):
	 * a run of 0.014 s is 0.000 0.007 0.014, not 0.00 0.01 0.01 */
	double step = (s->x1 - s->x0) / 2;
	int digits = step > 0 ? (int) ceil (-log10 (0.2 * step) - 1e-9) : 0;
	digits = CLAMP (digits, 0, 9);
	for (int t = 0; t <= 2; t++) {
		double v = s->x0 + step * t;
		fprintf (out, "<text class=\"tick x-tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.*f</text>\n",
			 sx (s, v), bottom + 16, t == 0 ? "start" : t == 1 ? "middle" : "end", digits, v);
	}
	fprintf (out, "<text class=\"tick x-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", sx (s, (s->x0 + s->x1) / 2),
		 CHART_H - 1);
	mta_html_text (out, c->x_label);
	fputs ("</text>\n", out);
}

void
mta_html_chart (FILE *out, const MtaChart *c, const MtaChartSeries *series, guint nseries)
{
	Scale s;

	chart_scale (c, series, nseries, &s);
	fprintf (out, "<figure class=\"chart\" id=\"%s\">\n<svg viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		 "aria-label=\"live bytes over the run\" data-ymax=\"%" PRIu64 "\">\n", c->id, CHART_W, CHART_H,
		 s.ymax);
	chart_axes (out, c, &s);
	if (c->marker >= 0) {
		fprintf (out, "<line class=\"marker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>",
			 sx (&s, c->marker), CHART_TOP, sx (&s, c->marker), CHART_H - CHART_BOTTOM);
		mta_html_text (out, c->marker_label);
		fputs ("</title></line>\n", out);
	}
	for (guint k = 0; k < nseries; k++) {
		guint n;
		const double *x = series_x (c, &series[k], &n);
		uint64_t max = 0;
		for (guint i = 0; i < n; i++)
			max = MAX (max, series[k].y[i]);
		fprintf (out, "<polyline class=\"series s%u\" data-max=\"%" PRIu64 "\" points=\"", k, max);
		for (guint i = 0; i < n; i++)
			fprintf (out, "%s%.1f,%.1f", i ? " " : "", sx (&s, x[i]), sy (&s, series[k].y[i]));
		fputs ("\"><title>", out);
		mta_html_text (out, series[k].label);
		fputs ("</title></polyline>\n", out);
	}
	fputs ("</svg>\n<figcaption><ul class=\"legend\">\n", out);
	for (guint k = 0; k < nseries; k++) {
		fprintf (out, "<li><svg class=\"swatch\" width=\"18\" height=\"6\" aria-hidden=\"true\">"
			 "<line class=\"series s%u\" x1=\"0\" y1=\"3\" x2=\"18\" y2=\"3\"/></svg>", k);
		mta_html_text (out, series[k].label);
		fputs ("</li>\n", out);
	}
	fputs ("</ul></figcaption>\n</figure>\n", out);
}
