/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-diff.c -- the page of `mtanalyze diff --html FILE`: both runs'
 * totals, the sites new or grown in FEATURE and those smaller or gone
 * (diff.c pairs them), and for the largest new or grown sites their live
 * bytes over each run, on a scale both runs share (% of the run's lines,
 * since the runs differ in length).  A run read from a database has no
 * curves: the page says so.
 */
#include "html-diff.h"
#include "html-page.h"
#include "run.h"

#include <inttypes.h>

#define MAX_ROWS 100               /* changes in each table */
#define MAX_CURVES 6               /* sites drawn over both runs */

typedef struct {
	const MtaLeakSet *base, *feature;
	const GArray *grown, *shrunk;
} DiffPage;

static const char *
change_name (const MtaDiffChange *c)
{
	return !c->base ? "new" : !c->feature ? "gone" : c->dblocks > 0 || c->dbytes > 0 ? "grew" : "less";
}

static const MtaLeakSite *
either (const MtaDiffChange *c)
{
	return c->feature ? c->feature : c->base;
}

static void
put_label (FILE *out, const MtaLeakSite *s)
{
	g_autofree char *label = mta_location_label (s->function, s->file, s->line, s->object);
	mta_html_text (out, label);
}

static void
put_runs (FILE *out, const DiffPage *p)
{
	const MtaLeakSet *sets[2] = { p->base, p->feature };
	static const char *const names[2] = { "BASE", "FEATURE" };

	fputs ("<section id=\"summary\">\n<h2>Runs</h2>\n<table class=\"summary\">\n<thead><tr><th>Run</th>"
	       "<th class=\"num\">Blocks not freed</th><th class=\"num\">Bytes not freed</th></tr></thead>\n"
	       "<tbody>\n", out);
	for (int k = 0; k < 2; k++) {
		fprintf (out, "<tr data-run=\"%s\"><th scope=\"row\">%s: ", names[k], names[k]);
		mta_html_text (out, sets[k]->name);
		fprintf (out, "</th><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64 "</td></tr>\n",
			 sets[k]->leaked_blocks, sets[k]->leaked_bytes);
	}
	fputs ("</tbody>\n</table>\n</section>\n", out);
}

static void
put_changes (FILE *out, const char *id, const char *title, const GArray *a)
{
	guint n = MIN (a->len, MAX_ROWS);

	fprintf (out, "<section id=\"%s-section\">\n<h2>%s: %u site%s</h2>\n", id, title, a->len,
		 a->len == 1 ? "" : "s");
	if (a->len > n)
		fprintf (out, "<p class=\"note cut\">The first %u of %u are shown: the text report and --json "
			 "list them all.</p>\n", n, a->len);
	if (n == 0) {
		fputs ("<p>None.</p>\n</section>\n", out);
		return;
	}
	fprintf (out, "<table class=\"sortable\" id=\"%s\">\n<thead><tr><th class=\"text\">Change</th>"
		 "<th class=\"num\">Blocks</th><th class=\"num\">Bytes</th><th class=\"num\">BASE bytes</th>"
		 "<th class=\"num\">FEATURE bytes</th><th class=\"text\">Site</th></tr></thead>\n<tbody>\n", id);
	for (guint i = 0; i < n; i++) {
		const MtaDiffChange *c = &g_array_index (a, MtaDiffChange, i);
		fprintf (out, "<tr><td class=\"change-%s\">%s</td><td class=\"num\">%+" PRId64 "</td>"
			 "<td class=\"num\">%+" PRId64 "</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%"
			 PRIu64 "</td><td>", change_name (c), change_name (c), c->dblocks, c->dbytes,
			 c->base ? c->base->bytes : 0, c->feature ? c->feature->bytes : 0);
		put_label (out, either (c));
		fputs ("</td></tr>\n", out);
	}
	fputs ("</tbody>\n</table>\n</section>\n", out);
}

/* Live bytes of one changed site over both runs. */
static void
put_curves (FILE *out, const DiffPage *p)
{
	guint drawn = 0;

	fputs ("<section id=\"curves\">\n<h2>New and grown sites over both runs</h2>\n", out);
	for (guint i = 0; i < p->grown->len && drawn < MAX_CURVES; i++) {
		const MtaDiffChange *c = &g_array_index (p->grown, MtaDiffChange, i);
		MtaChartSeries s[2];
		guint n = 0;
		if (c->base && c->base->curve)
			s[n++] = (MtaChartSeries) { "BASE", c->base->curve, p->base->curve_x, p->base->ncurve };
		if (c->feature && c->feature->curve)
			s[n++] = (MtaChartSeries) { "FEATURE", c->feature->curve, p->feature->curve_x,
						    p->feature->ncurve };
		if (n == 0)
			continue;
		g_autofree char *id = g_strdup_printf ("curve-%u", drawn + 1);
		MtaChart chart = { .id = id, .x_label = "% of the run", .marker = -1,
				   .fixed_x = TRUE, .x_min = 0, .x_max = 100 };
		fprintf (out, "<h3>%s: ", change_name (c));
		put_label (out, either (c));
		fputs ("</h3>\n", out);
		mta_html_chart (out, &chart, s, n);
		drawn++;
	}
	if (drawn == 0)
		fputs ("<p>No curves: no site is new or grown, or the runs come from a database, which keeps "
		       "no curves for diff.</p>\n", out);
	fputs ("</section>\n", out);
}

static void
write_diff (FILE *out, gconstpointer data)
{
	const DiffPage *p = data;

	mta_html_begin (out, "mtanalyze diff");
	fputs ("<header>\n<h1>Leaks a feature brought</h1>\n<p class=\"run\">BASE: ", out);
	mta_html_text (out, p->base->name);
	fputs ("<br>FEATURE: ", out);
	mta_html_text (out, p->feature->name);
	fputs ("</p>\n</header>\n<main>\n", out);
	put_runs (out, p);
	put_changes (out, "diff-grown", "New or grown in FEATURE", p->grown);
	put_curves (out, p);
	put_changes (out, "diff-shrunk", "Smaller or gone in FEATURE", p->shrunk);
	fputs ("</main>\n", out);
	mta_html_end (out);
}

gboolean
mta_html_write_diff (const char *path, const MtaLeakSet *base, const MtaLeakSet *feature,
		     const GArray *grown, const GArray *shrunk, GError **error)
{
	DiffPage p = { base, feature, grown, shrunk };
	return mta_html_write_file (path, write_diff, &p, error);
}
