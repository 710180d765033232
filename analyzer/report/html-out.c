/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* html-out.c -- `--html FILE`: the run's report as one page.
 *
 * The page shows what the other reports print, from the same MtaRun: the
 * run's totals (the names of --json's "run" fields, as data-key), the
 * blocks not freed by reachability when the trace has the recorder's
 * verdicts (valgrind's LEAK SUMMARY), live bytes over the run for the
 * whole run and the largest leak sites (the run's timeline samples, in
 * seconds when the trace has the recorder's clock, else in trace lines),
 * the leak sites with their growth classes, reachability and stacks, the frees of memory never allocated, the peak, the temporary
 * allocations, and a flame graph of the leaked bytes by stack (the same
 * stacks and frame names as --folded).
 *
 * Tables and charts are written here, as HTML and SVG, so that they are
 * there without the script; the script (html-assets.c) sorts the tables
 * and draws the flame graph from a JSON block.  What a large run would
 * make too large to open quickly is capped, and the page says so: the
 * text report and --json have everything.
 */
#include "html-out.h"
#include "timeline.h"
#include "folded-out.h"
#include "growth.h"
#include "html-page.h"
#include "kind-html.h"
#include "json-out.h"
#include "reach.h"
#include "site-report.h"

#include <inttypes.h>

/* Caps (see above). */
#define MAX_TABLE_SITES 100        /* leak and bad free sites in the tables */
#define MAX_STACKS 5               /* stacks shown under one site */
#define MAX_CHART_SITES 6          /* leak sites drawn over the run */
#define MAX_FLAME_PATHS 1000u      /* stacks in the flame graph */
#define TOP_SITES 10               /* sites at the peak, temporary */

typedef struct {
	const MtaRun *run;
	int frames;
	guint growth;
	GArray *leak_sites;        /* site indices, largest first, of the growth classes */
} Report;

static const char *
plural (uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void
put_site_label (FILE *out, const MtaSite *s)
{
	g_autofree char *label = mta_site_label (s);
	mta_html_text (out, label);
}

/* ------------------------------------------------------------ summary */

static void
summary_row (FILE *out, const char *key, const char *name, uint64_t v)
{
	fprintf (out, "<tr data-key=\"%s\"><th scope=\"row\">%s</th><td class=\"num\">%" PRIu64 "</td></tr>\n",
		 key, name, v);
}

static void
put_header (FILE *out, const MtaRunInfo *i)
{
	fputs ("<header>\n<h1>Memory report</h1>\n<p class=\"run\">", out);
	if (i->cmdline || i->exe)
		mta_html_text (out, i->cmdline ? i->cmdline : i->exe);
	if (i->pid >= 0)
		fprintf (out, " (pid %" PRId64 ")", i->pid);
	fputs ("<br>trace: ", out);
	for (guint k = 0; k < i->traces->len; k++) {
		fputs (k ? ", " : "", out);
		mta_html_text (out, i->traces->pdata[k]);
	}
	if (i->start != NULL) {
		g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc ((gint64) g_ascii_strtod (i->start, NULL));
		g_autofree char *when = t ? g_date_time_format (t, "%Y-%m-%d %H:%M:%S UTC") : NULL;
		if (when != NULL)
			fprintf (out, "<br>recorded %s", when);
	}
	fputs ("</p>\n</header>\n", out);
}

/* What the recorder said it did not record (issue 18). */
static void
put_incomplete (FILE *out, const MtaIncomplete *x)
{
	if (!mta_incomplete_is (x))
		return;
	fputs ("<p class=\"warning\" id=\"incomplete\">Incomplete run: ", out);
	if (x->stopped_line > 0) {
		fprintf (out, "the recorder stopped at line %" PRIu64 " (", x->stopped_line);
		mta_html_text (out, x->stop_reason[0] ? x->stop_reason : "no reason given");
		fputs ("). Blocks not freed are those still live when it stopped, not proven leaks.", out);
	} else {
		fprintf (out, "%" PRIu64 " event%s not recorded (", x->lost_events, plural (x->lost_events));
		mta_html_text (out, x->lost_reason[0] ? x->lost_reason : "no reason given");
		fputs ("). Frees of memory never allocated, and small leaks, may be artefacts.", out);
	}
	fputs ("</p>\n", out);
}

static void
put_summary (FILE *out, const MtaRunInfo *i)
{
	fputs ("<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"summary\">\n<tbody>\n", out);
	summary_row (out, "leaked_blocks", "Blocks not freed", i->leaked_blocks);
	summary_row (out, "leaked_bytes", "Bytes not freed", i->leaked_bytes);
	summary_row (out, "bad_frees", "Frees of memory never allocated", i->bad_frees);
	summary_row (out, "peak_live_bytes", "Peak live bytes", i->peak_live_bytes);
	summary_row (out, "allocations", "Allocations", i->allocs);
	summary_row (out, "frees", "Frees", i->frees);
	summary_row (out, "reallocations", "Reallocations", i->reallocs);
	summary_row (out, "bytes_allocated", "Bytes allocated", i->bytes_allocated);
	summary_row (out, "temporary_allocations", "Temporary allocations", i->temporary);
	summary_row (out, "events", "Events", i->events);
	summary_row (out, "lines", "Trace lines", i->lines);
	if (i->time_axis)
		fprintf (out, "<tr data-key=\"seconds\"><th scope=\"row\">Seconds recorded</th>"
			 "<td class=\"num\">%.3f</td></tr>\n", (double) i->end_time_ns / 1e9);
	fputs ("</tbody>\n</table>\n</section>\n", out);
}

/* ------------------------------------------------------------ reachability */

/* "2 definitely lost (56 bytes), 1 indirectly lost (48 bytes)": a site's
 * blocks not freed by category, valgrind's order. */
static void
put_site_reach (FILE *out, const MtaSite *s)
{
	gboolean first = TRUE;

	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (mta_site_reach_blocks (s)[r] == 0)
			continue;
		fprintf (out, "%s<span class=\"reach %s\">%" PRIu64 " %s (%" PRIu64 " bytes)</span>",
			 first ? "" : ", ", mta_reach_name (r), mta_site_reach_blocks (s)[r], mta_reach_words (r),
			 mta_site_reach_bytes (s)[r]);
		first = FALSE;
	}
}

/* The blocks not freed by reachability (mtrec --reach), as valgrind's LEAK
 * SUMMARY, and the recorder's notes on its scan: what --by-site prints
 * above its sites.  Nothing for a trace without verdicts. */
static void
put_reach (FILE *out, const MtaRunInfo *i)
{
	for (guint k = 0; k < i->reach_refused->len; k++) {
		fputs ("<p class=\"warning\" id=\"reach-refused\">The recorder did not make a reachability "
		       "scan it was asked for: ", out);
		mta_html_text (out, i->reach_refused->pdata[k]);
		fputs (".</p>\n", out);
	}
	if (!i->reach)
		return;
	fputs ("<section id=\"reach\">\n<h2>Leak summary</h2>\n<p>The blocks not freed, by what the "
	       "recorder's scan found pointing to them, as valgrind's LEAK SUMMARY (share/reach.md).</p>\n"
	       "<table id=\"reach-kinds\">\n<thead><tr><th>Kind</th><th class=\"num\">Bytes</th>"
	       "<th class=\"num\">Blocks</th></tr></thead>\n<tbody>\n", out);
	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (r == MTA_REACH_UNKNOWN && i->reach_blocks[r] == 0)
			continue;
		fprintf (out, "<tr data-reach=\"%s\"><th scope=\"row\">%s</th><td class=\"num\">%" PRIu64
			 "</td><td class=\"num\">%" PRIu64 "</td></tr>\n", mta_reach_name (r),
			 mta_reach_words (r), i->reach_bytes[r], i->reach_blocks[r]);
	}
	fputs ("</tbody>\n</table>\n", out);
	if (i->reach_scans > 1 || (i->reach_finished && i->reach_unfinished > 0))
		fprintf (out, "<p class=\"note\">Verdicts of the recorder's scan at line %" PRIu64 ", the last "
			 "of %" PRIu64 " that finished; blocks allocated after it are not scanned.</p>\n",
			 i->reach_line, i->reach_scans);
	for (guint k = 0; k < i->reach_notes->len; k++) {
		fputs ("<p class=\"note\">The recorder could not scan ", out);
		mta_html_text (out, i->reach_notes->pdata[k]);
		fputs (".</p>\n", out);
	}
	if (i->reach_verdicts != i->reach_announced)
		fprintf (out, "<p class=\"warning\">The scan at line %" PRIu64 " announced %" PRIu64 " verdicts; "
			 "the trace holds %" PRIu64 ".</p>\n", i->reach_line, i->reach_announced, i->reach_verdicts);
	if (!i->reach_finished)
		fprintf (out, "<p class=\"warning\">The recorder's scan at line %" PRIu64 " did not finish "
			 "(the trace ends first): blocks without a verdict are not scanned.</p>\n", i->reach_line);
	if (i->reach_bad_lines > 0)
		fprintf (out, "<p class=\"warning\">%" PRIu64 " '# reach' line%s could not be read, the first "
			 "at line %" PRIu64 ".</p>\n", i->reach_bad_lines, plural (i->reach_bad_lines),
			 i->reach_first_bad_line);
	if (i->leak_kinds != 0) {
		g_autofree char *kinds = mta_reach_mask_text (i->leak_kinds);
		fprintf (out, "<p class=\"note\">Leaks here are only the blocks %s (--leaks): %" PRIu64 " of %"
			 PRIu64 ".</p>\n", kinds, i->leaked_blocks, i->all_leaked_blocks);
	}
	fputs ("</section>\n", out);
}

/* ------------------------------------------------------------ chart */

/* The run's live bytes at each sample: the sum of every site's. */
static uint64_t *
total_live (const MtaRun *run)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	uint64_t *total = g_new0 (uint64_t, i->tl_len);
	uint64_t *bytes = g_new (uint64_t, i->tl_len + 1);

	for (guint k = 0; k < sites->len; k++) {
		if (!mta_run_site_timeline (run, sites->pdata[k], bytes, NULL))
			continue;
		for (guint t = 0; t < i->tl_len; t++)
			total[t] += bytes[t];
	}
	g_free (bytes);
	return total;
}

static void
put_timeline (FILE *out, const Report *r)
{
	const MtaRunInfo *i = mta_run_info (r->run);
	GPtrArray *sites = mta_run_sites (r->run);
	double *x;
	uint64_t *total;
	g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
	MtaChartSeries series[MAX_CHART_SITES + 1];
	guint n = 1;

	fputs ("<section id=\"timeline\">\n<h2>Live bytes over the run</h2>\n", out);
	if (i->tl_len == 0) {
		fputs ("<p>The run allocated nothing.</p>\n</section>\n", out);
		return;
	}
	/* freed by hand below: clang-analyzer does not follow g_autofree */
	x = g_new (double, i->tl_len);
	total = total_live (r->run);
	series[0] = (MtaChartSeries) { "all sites", total, NULL, 0 };
	for (guint t = 0; t < i->tl_len; t++)
		x[t] = i->time_axis ? (double) i->tl_times[t] / 1e9 : (double) i->tl_lines[t];
	for (guint k = 0; k < r->leak_sites->len && n <= MAX_CHART_SITES; k++) {
		const MtaSite *s = sites->pdata[g_array_index (r->leak_sites, uint32_t, k)];
		uint64_t *bytes = g_new (uint64_t, i->tl_len);
		if (!mta_run_site_timeline (r->run, s, bytes, NULL)) {
			g_free (bytes);
			continue;
		}
		char *label = mta_site_label (s);
		g_ptr_array_add (labels, label);
		g_ptr_array_add (labels, bytes);
		series[n++] = (MtaChartSeries) { label, bytes, NULL, 0 };
	}
	double peak = mta_run_position (r->run, i->peak_line);
	/* The run's curve passes through its peak: a sample is what was live
	 * when its line was reached, before that line's event, so the peak
	 * is between two samples, and the curve would pass below the marker
	 * at its line (a short run: the last allocation, the peak, drawn as
	 * a slope up to the end of the run). */
	double peak_x = i->time_axis ? peak / 1e9 : peak;
	double *run_x = g_new (double, i->tl_len + 1);
	uint64_t *run_y = g_new (uint64_t, i->tl_len + 1);
	guint run_n = 0;
	gboolean placed = i->peak_line == 0;
	for (guint t = 0; t <= i->tl_len; t++) {
		if (!placed && (t == i->tl_len || x[t] > peak_x)) {
			run_x[run_n] = peak_x;
			run_y[run_n++] = i->peak_live_bytes;
			placed = TRUE;
		}
		if (t < i->tl_len) {
			run_x[run_n] = x[t];
			run_y[run_n++] = total[t];
		}
	}
	if (i->peak_line != 0)
		series[0] = (MtaChartSeries) { "all sites", run_y, run_x, run_n };
	g_autofree char *peak_label = i->time_axis
		? g_strdup_printf ("peak: %" PRIu64 " bytes at %.3f s", i->peak_live_bytes, peak / 1e9)
		: g_strdup_printf ("peak: %" PRIu64 " bytes at line %" PRIu64, i->peak_live_bytes, i->peak_line);
	MtaChart c = {
		.id = "live-chart", .x_label = i->time_axis ? "seconds" : "trace line",
		.x = x, .n = i->tl_len, .marker = i->peak_line ? (i->time_axis ? peak / 1e9 : peak) : -1,
		.marker_label = peak_label,
	};
	mta_html_chart (out, &c, series, n);
	g_free (run_x);
	g_free (run_y);
	g_free (x);
	g_free (total);
	fprintf (out, "<p class=\"note\" id=\"axis\" data-axis=\"%s\">Sampled at %u points of the run, ",
		 i->time_axis ? "time" : "lines", i->tl_len);
	if (i->time_axis)
		fprintf (out, "in seconds by the recorder's clock (%" PRIu64 " '# time' lines)", i->time_lines);
	else
		fprintf (out, "in trace lines: the trace has fewer than %d of the recorder's '# time' "
			 "lines (a glibc trace)", MTA_TIME_AXIS_MIN_LINES);
	fprintf (out, "; the dashed line is the peak. The largest %u leak site%s are drawn.</p>\n</section>\n",
		 n - 1, plural (n - 1));
}

/* ------------------------------------------------------------ stacks */

static void
put_stacks (FILE *out, const Report *r, uint32_t si)
{
	GPtrArray *sites = mta_run_sites (r->run);
	g_autoptr (GPtrArray) stacks = mta_site_groups (r->run, si, (guint) r->frames, TRUE);
	guint shown = 0;

	for (guint k = 0; k < stacks->len && shown < MAX_STACKS; k++) {
		const MtaStackGroup *s = stacks->pdata[k];
		if (s->tail->len == 0)
			continue;
		fprintf (out, "<p>%" PRIu64 " block%s, %" PRIu64 " bytes from:</p>\n<ol class=\"stack\">\n",
			 s->blocks, plural (s->blocks), s->bytes);
		for (guint i = 0; i < s->tail->len; i++) {
			fputs ("<li>", out);
			put_site_label (out, sites->pdata[g_array_index (s->tail, uint32_t, i)]);
			fputs ("</li>\n", out);
		}
		fputs ("</ol>\n", out);
		shown++;
	}
	if (stacks->len > shown && shown == MAX_STACKS)
		fprintf (out, "<p class=\"note\">and %u more stacks (--json lists them all)</p>\n",
			 stacks->len - shown);
}

/* ------------------------------------------------------------ tables */

static void
put_cut_note (FILE *out, guint shown, guint all, const char *what)
{
	if (all > shown)
		fprintf (out, "<p class=\"note cut\">The first %u of %u %s are shown: the text report "
			 "and --json list them all.</p>\n", shown, all, what);
}

/* How many of the sites shown grew each way (share/growth.md): whether
 * the leaks are one-offs or grow with the run, at a glance. */
static void
put_growth_classes (FILE *out, const Report *r)
{
	GPtrArray *sites = mta_run_sites (r->run);
	guint count[MTA_GROWTH_N] = { 0 };
	static const MtaGrowth order[] = { MTA_GROWTH_EXPONENTIAL, MTA_GROWTH_LINEAR, MTA_GROWTH_LOGARITHMIC,
					   MTA_GROWTH_CONSTANT, MTA_GROWTH_UNKNOWN };
	gboolean first = TRUE;

	for (guint k = 0; k < r->leak_sites->len; k++) {
		const MtaSite *s = sites->pdata[g_array_index (r->leak_sites, uint32_t, k)];
		if (s->growth > MTA_GROWTH_NONE && s->growth < MTA_GROWTH_N)
			count[s->growth]++;
	}
	fputs ("<p id=\"growth-classes\">Growth over the run (share/growth.md): ", out);
	for (guint k = 0; k < G_N_ELEMENTS (order); k++) {
		if (count[order[k]] == 0)
			continue;
		fprintf (out, "%s<span class=\"growth %s\" data-growth=\"%s\">%u %s</span>", first ? "" : ", ",
			 mta_growth_name (order[k]), mta_growth_name (order[k]), count[order[k]],
			 mta_growth_name (order[k]));
		first = FALSE;
	}
	fprintf (out, "%s.</p>\n", first ? "none classified" : "");
}

static void
put_leak_table (FILE *out, const Report *r)
{
	const MtaRunInfo *i = mta_run_info (r->run);
	GPtrArray *sites = mta_run_sites (r->run);
	guint n = MIN (r->leak_sites->len, MAX_TABLE_SITES);

	fputs ("<section id=\"leaks\">\n<h2>Memory not freed, by call site</h2>\n", out);
	if (r->leak_sites->len == 0) {
		fputs (i->leaked_blocks ? "<p>No leaks of the growth classes asked for (--growth).</p>\n</section>\n"
		       : "<p>No memory leaks.</p>\n</section>\n", out);
		return;
	}
	fprintf (out, "<p>%" PRIu64 " block%s, %" PRIu64 " bytes, %u site%s%s. Click a column to sort, "
		 "a site for its stacks.</p>\n", i->leaked_blocks, plural (i->leaked_blocks), i->leaked_bytes,
		 r->leak_sites->len, plural (r->leak_sites->len), r->growth ? " of the growth classes asked for" : "");
	put_growth_classes (out, r);
	put_cut_note (out, n, r->leak_sites->len, "sites");
	fprintf (out, "<table class=\"sortable\" id=\"leak-sites\">\n<thead><tr><th class=\"num\">#</th>"
		 "<th class=\"num\">Blocks</th><th class=\"num\">Bytes</th><th>Growth</th>"
		 "<th class=\"num\">Allocations</th>%s<th class=\"text\">Site</th></tr></thead>\n<tbody>\n",
		 i->reach ? "<th class=\"text\">Reachability</th>" : "");
	for (guint k = 0; k < n; k++) {
		uint32_t si = g_array_index (r->leak_sites, uint32_t, k);
		const MtaSite *s = sites->pdata[si];
		fprintf (out, "<tr><td class=\"num\">%u</td><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%"
			 PRIu64 "</td><td class=\"growth %s\">%s</td><td class=\"num\">%" PRIu64 "</td><td>",
			 k + 1, s->t->leaked_blocks, s->t->leaked_bytes, mta_growth_name (s->growth),
			 mta_growth_name (s->growth), s->t->allocs);
		if (i->reach) {
			put_site_reach (out, s);
			fputs ("</td><td>", out);
		}
		if (r->frames > 0 && mta_site_has_stacks (r->run, si)) {
			fputs ("<details><summary>", out);
			put_site_label (out, s);
			fputs ("</summary>\n", out);
			put_stacks (out, r, si);
			fputs ("</details>", out);
		} else
			put_site_label (out, s);
		fputs ("</td></tr>\n", out);
	}
	fputs ("</tbody>\n</table>\n</section>\n", out);
}

/* The cells before the site in a row of a site table. */
typedef void (*SiteCells) (FILE *out, const MtaSite *s, const MtaRunInfo *i);

/* A sortable table of the first N of SITES (indices), under HEADS (the
 * headers of the cells), ending with the site. */
static void
put_site_table (FILE *out, const Report *r, const char *id, const char *heads, const GArray *which,
		guint n, SiteCells cells)
{
	GPtrArray *sites = mta_run_sites (r->run);

	fprintf (out, "<table class=\"sortable\" id=\"%s\">\n<thead><tr>%s<th class=\"text\">Site</th>"
		 "</tr></thead>\n<tbody>\n", id, heads);
	for (guint k = 0; k < n; k++) {
		const MtaSite *s = sites->pdata[g_array_index (which, uint32_t, k)];
		fputs ("<tr>", out);
		cells (out, s, mta_run_info (r->run));
		fputs ("<td>", out);
		put_site_label (out, s);
		fputs ("</td></tr>\n", out);
	}
	fputs ("</tbody>\n</table>\n", out);
}

static void
bad_free_cells (FILE *out, const MtaSite *s, const MtaRunInfo *i)
{
	(void) i;
	fprintf (out, "<td class=\"num\">%" PRIu64 "</td>", s->t->bad_frees);
}

static void
peak_cells (FILE *out, const MtaSite *s, const MtaRunInfo *i)
{
	fprintf (out, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%.1f%%</td>", s->peak_share_bytes,
		 100.0 * (double) s->peak_share_bytes / (double) i->peak_live_bytes);
}

static void
temporary_cells (FILE *out, const MtaSite *s, const MtaRunInfo *i)
{
	(void) i;
	fprintf (out, "<td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64 "</td>", s->t->temporary,
		 s->t->allocs);
}

static void
put_bad_frees (FILE *out, const Report *r)
{
	const MtaRunInfo *i = mta_run_info (r->run);
	g_autoptr (GArray) bad = mta_run_bad_free_sites (r->run);
	guint n = MIN (bad->len, MAX_TABLE_SITES);

	if (bad->len == 0)
		return;
	fprintf (out, "<section id=\"bad-frees\">\n<h2>Frees of memory never allocated</h2>\n<p>%" PRIu64
		 " free%s, %u site%s.</p>\n", i->bad_frees, plural (i->bad_frees), bad->len, plural (bad->len));
	put_cut_note (out, n, bad->len, "sites");
	put_site_table (out, r, "bad-free-sites", "<th class=\"num\">Frees</th>", bad, n, bad_free_cells);
	fputs ("</section>\n", out);
}

static void
put_peak (FILE *out, const Report *r)
{
	const MtaRunInfo *i = mta_run_info (r->run);
	g_autoptr (GArray) top = mta_run_peak_sites (r->run, TOP_SITES);
	g_autofree char *human = mta_html_bytes (i->peak_live_bytes);

	if (i->peak_live_bytes == 0)
		return;
	fprintf (out, "<section id=\"peak\">\n<h2>Peak</h2>\n<p><strong>%" PRIu64 " bytes</strong> (%s) live "
		 "at line %" PRIu64, i->peak_live_bytes, human, i->peak_line);
	if (i->time_axis)
		fprintf (out, ", %.3f s into the run", mta_run_position (r->run, i->peak_line) / 1e9);
	fputs (", held most by:</p>\n", out);
	put_site_table (out, r, "peak-sites", "<th class=\"num\">Bytes</th><th class=\"num\">Share</th>", top,
			top->len, peak_cells);
	fputs ("</section>\n", out);
}

static void
put_temporary (FILE *out, const Report *r)
{
	const MtaRunInfo *i = mta_run_info (r->run);
	g_autoptr (GArray) top = mta_run_temporary_sites (r->run, TOP_SITES);

	if (i->allocs == 0)
		return;
	fprintf (out, "<section id=\"temporary\">\n<h2>Temporary allocations</h2>\n<p><strong>%" PRIu64
		 "</strong> of %" PRIu64 " allocations (%.1f%%) were freed before any other allocation in "
		 "their thread.</p>\n", i->temporary, i->allocs, 100.0 * (double) i->temporary / (double) i->allocs);
	if (top->len > 0)
		put_site_table (out, r, "temporary-sites", "<th class=\"num\">Temporary</th>"
				"<th class=\"num\">Allocations</th>", top, top->len, temporary_cells);
	fputs ("</section>\n", out);
}

/* ------------------------------------------------------------ flame graph */

/* A node of the tree of leaking stacks, outermost frame at the root. */
typedef struct FlameNode {
	int32_t name;              /* index in the page's names */
	uint64_t value;
	GHashTable *kids;          /* name + 1 -> FlameNode */
	GPtrArray *order;          /* FlameNode, as first seen */
} FlameNode;

static FlameNode *
flame_node_new (int32_t name)
{
	FlameNode *n = g_new0 (FlameNode, 1);
	n->name = name;
	n->kids = g_hash_table_new (g_direct_hash, g_direct_equal);
	n->order = g_ptr_array_new ();
	return n;
}

static void
flame_node_free (FlameNode *n)
{
	for (guint i = 0; i < n->order->len; i++)
		flame_node_free (n->order->pdata[i]);
	g_hash_table_destroy (n->kids);
	g_ptr_array_unref (n->order);
	g_free (n);
}

static FlameNode *
flame_child (FlameNode *n, int32_t name)
{
	FlameNode *k = g_hash_table_lookup (n->kids, GINT_TO_POINTER (name + 1));
	if (k == NULL) {
		k = flame_node_new (name);
		g_hash_table_insert (n->kids, GINT_TO_POINTER (name + 1), k);
		g_ptr_array_add (n->order, k);
	}
	return k;
}

static int
flame_cmp (gconstpointer a, gconstpointer b)
{
	const FlameNode *x = *(FlameNode *const *) a, *y = *(FlameNode *const *) b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

/* [name, value, [children]] */
static void
flame_put (FILE *out, FlameNode *n)
{
	fprintf (out, "[%d,%" PRIu64, n->name, n->value);
	if (n->order->len) {
		g_ptr_array_sort (n->order, flame_cmp);
		fputs (",[", out);
		for (guint i = 0; i < n->order->len; i++) {
			fputs (i ? "," : "", out);
			flame_put (out, n->order->pdata[i]);
		}
		fputc (']', out);
	}
	fputc (']', out);
}

static int
path_bytes_cmp (gconstpointer a, gconstpointer b)
{
	const MtaPath *x = *(MtaPath *const *) a, *y = *(MtaPath *const *) b;
	if (x->leaked_bytes != y->leaked_bytes)
		return x->leaked_bytes > y->leaked_bytes ? -1 : 1;
	return (x->first_line > y->first_line) - (x->first_line < y->first_line);
}

/* The leaking paths of the sites shown, largest first. */
static GPtrArray *
flame_paths (const Report *r)
{
	GPtrArray *paths = mta_run_paths (r->run), *leaking = g_ptr_array_new ();
	gboolean *keep = g_new0 (gboolean, mta_run_sites (r->run)->len + 1);

	for (guint k = 0; k < r->leak_sites->len; k++)
		keep[g_array_index (r->leak_sites, uint32_t, k)] = TRUE;
	for (guint i = 0; i < paths->len; i++) {
		MtaPath *p = paths->pdata[i];
		if (p->leaked_bytes > 0 && p->site >= 0 && keep[p->site])
			g_ptr_array_add (leaking, p);
	}
	g_free (keep);
	g_ptr_array_sort (leaking, path_bytes_cmp);
	return leaking;
}

/* The flame graph's data as JSON: {"total", "unit", "cut", "names",
 * "tree"}; names[0] is the root's. */
static void
flame_json (FILE *out, const Report *r)
{
	GPtrArray *sites = mta_run_sites (r->run);
	g_autoptr (GPtrArray) paths = flame_paths (r);
	int32_t *name_of = g_new (int32_t, sites->len + 1);   /* freed by hand, for clang-analyzer */
	g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
	FlameNode *root = flame_node_new (0);
	uint64_t rest = 0;

	g_ptr_array_add (names, g_strdup ("all leaked bytes"));
	for (guint i = 0; i < sites->len; i++)
		name_of[i] = -1;
	for (guint k = 0; k < paths->len; k++) {
		const MtaPath *p = paths->pdata[k];
		FlameNode *n = root;
		root->value += p->leaked_bytes;
		if (k >= MAX_FLAME_PATHS) {
			rest += p->leaked_bytes;
			continue;
		}
		for (uint32_t i = p->nframes; i-- > p->site_frame;) {
			uint32_t si = p->frames[i];
			if (name_of[si] < 0) {
				name_of[si] = (int32_t) names->len;
				g_ptr_array_add (names, mta_folded_frame_name (sites->pdata[si]));
			}
			n = flame_child (n, name_of[si]);
			n->value += p->leaked_bytes;
		}
	}
	if (rest > 0) {
		g_ptr_array_add (names, g_strdup_printf ("(%u smaller stacks)", paths->len - MAX_FLAME_PATHS));
		flame_child (root, (int32_t) names->len - 1)->value = rest;
	}
	fprintf (out, "{\"total\": %" PRIu64 ", \"unit\": \"bytes\", \"stacks\": %u, \"cut\": %u,\n\"names\": [",
		 root->value, paths->len, paths->len > MAX_FLAME_PATHS ? paths->len - MAX_FLAME_PATHS : 0);
	for (guint i = 0; i < names->len; i++) {
		fputs (i ? ",\n" : "", out);
		mta_json_put_string (out, names->pdata[i]);
	}
	fputs ("],\n\"tree\": ", out);
	flame_put (out, root);
	fputs ("}", out);
	flame_node_free (root);
	g_free (name_of);
}

static void
put_flame (FILE *out, const Report *r)
{
	char *json = NULL;
	size_t len = 0;
	FILE *mem = open_memstream (&json, &len);

	flame_json (mem, r);
	fclose (mem);
	fputs ("<section id=\"flame\">\n<h2>Leaked bytes by stack</h2>\n<p class=\"note\">A flame graph drawn "
	       "top down: each box is a function and line, as wide as the bytes leaked under it; the "
	       "callers are above their callees, the leaking lines at the bottom. Click a box to zoom in, "
	       "the top row to zoom out; search names (also as #search=TEXT in the address).</p>\n", out);
	fprintf (out, "<p class=\"note cut\" id=\"flame-cut\" hidden>Only the %u largest stacks are drawn; "
		 "the others are one box.</p>\n", MAX_FLAME_PATHS);
	fputs ("<div class=\"flame-tools\"><input type=\"search\" id=\"flame-search\" placeholder=\"search\" "
	       "aria-label=\"search the flame graph\"> <button type=\"button\" id=\"flame-reset\">Reset zoom"
	       "</button> <span id=\"flame-status\"></span></div>\n<div id=\"flame-graph\"><noscript>The "
	       "flame graph needs JavaScript; the tables above do not.</noscript></div>\n", out);
	mta_html_json_block (out, "flame-data", json, len);
	fputs ("</section>\n", out);
	free (json);
}

/* The wrappers found in code without symbols, skipped: --by-site's list,
 * so that the page says why their callers are the sites. */
static void
put_auto_skipped (FILE *out, const Report *r)
{
	g_autoptr (GPtrArray) wrappers = mta_auto_wrappers (r->run);

	if (wrappers->len == 0)
		return;
	fputs ("<section id=\"auto-skipped\">\n<h2>Allocation wrappers found</h2>\n<p>In code "
	       "without symbols, skipped: their blocks are charged to their callers "
	       "(--no-auto-skip keeps them).</p>\n<ul>\n", out);
	for (guint k = 0; k < wrappers->len; k++) {
		fputs ("<li>", out);
		mta_html_text (out, wrappers->pdata[k]);
		fputs ("</li>\n", out);
	}
	fputs ("</ul>\n</section>\n", out);
}

/* ------------------------------------------------------------ page */

static void
write_report (FILE *out, gconstpointer data)
{
	const Report *r = data;
	const MtaRunInfo *i = mta_run_info (r->run);
	g_autofree char *title = g_strdup_printf ("mtanalyze: %s", i->exe ? i->exe :
						  (const char *) i->traces->pdata[0]);

	mta_html_begin (out, title);
	put_header (out, i);
	fputs ("<main>\n", out);
	put_incomplete (out, &i->incomplete);
	put_summary (out, i);
	put_reach (out, i);
	put_timeline (out, r);
	put_leak_table (out, r);
	put_auto_skipped (out, r);
	put_flame (out, r);
	put_bad_frees (out, r);
	put_peak (out, r);
	put_temporary (out, r);
	mta_kind_html (r->run, r->frames, out);
	fputs ("</main>\n", out);
	mta_html_end (out);
}

gboolean
mta_html_write_report (const char *path, const MtaRun *run, int frames, guint growth, GError **error)
{
	g_autoptr (GArray) leak_sites = mta_run_leak_sites_filtered (run, growth);
	Report r = { run, frames, growth, leak_sites };

	return mta_html_write_file (path, write_report, &r, error);
}

void
mta_html_print_written (const char *path, const MtaRunInfo *info, FILE *out)
{
	fprintf (out, "report written to '%s': %" PRIu64 " leaked block%s, %" PRIu64 " bytes, %" PRIu64
		 " bad free%s\n", path, info->leaked_blocks, plural (info->leaked_blocks), info->leaked_bytes,
		 info->bad_frees, plural (info->bad_frees));
}
