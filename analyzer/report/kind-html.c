/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-html.c -- the tracked kinds in the --html report (kind-html.h).
 *
 * The same facts as the --by-site text (kind-report.c), in the order the
 * GlusterFS SystemTap script users know prints them: per entry the net
 * count, then the reference traces and the unreference traces.  Tables are
 * capped as the page's others are; the text report and --json have all.
 */
#include "kind-html.h"
#include "html-page.h"
#include "kinds.h"
#include "incomplete.h"

#include <inttypes.h>

#define MAX_ROWS 100               /* sites or entries per kind */

static const char *
plural (uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void
put_label (FILE *out, const MtaRun *run, uint32_t site)
{
	g_autofree char *label = mta_site_label (mta_run_sites (run)->pdata[site]);
	mta_html_text (out, label);
}

/* PATH's site, then its callers as a list. */
static void
put_path (FILE *out, const MtaRun *run, uint32_t path, int frames)
{
	const MtaPath *p = mta_run_paths (run)->pdata[path];
	g_autoptr (GArray) tail = mta_path_tail (p, (guint) MAX (frames, 0));

	put_label (out, run, (uint32_t) MAX (p->site, 0));
	if (tail->len == 0)
		return;
	fputs ("\n<ol class=\"stack\">\n", out);
	for (guint i = 0; i < tail->len; i++) {
		fputs ("<li>", out);
		put_label (out, run, g_array_index (tail, uint32_t, i));
		fputs ("</li>\n", out);
	}
	fputs ("</ol>", out);
}

static void
put_cut (FILE *out, guint shown, guint all, const char *what)
{
	if (all > shown)
		fprintf (out, "<p class=\"note cut\">The first %u of %u %s are shown: the text report "
			 "and --json list them all.</p>\n", shown, all, what);
}

static void
put_leak_sites (FILE *out, const MtaRun *run, const MtaKind *k, int frames)
{
	guint n = MIN (k->leak_sites->len, MAX_ROWS);

	if (k->leak_sites->len == 0)
		return;
	fprintf (out, "<h3>Not released</h3>\n<p>%" PRIu64 " block%s, %" PRIu64 " bytes, %u site%s.</p>\n",
		 k->leaked_blocks, plural (k->leaked_blocks), k->leaked_bytes, k->leak_sites->len,
		 plural (k->leak_sites->len));
	put_cut (out, n, k->leak_sites->len, "sites");
	fputs ("<table class=\"sortable\">\n<thead><tr><th class=\"num\">Blocks</th><th class=\"num\">Bytes</th>"
	       "<th class=\"text\">Site</th></tr></thead>\n<tbody>\n", out);
	for (guint i = 0; i < n; i++) {
		const MtaKindSite *s = &g_array_index (k->leak_sites, MtaKindSite, i);
		fprintf (out, "<tr><td class=\"num\">%" PRIu64 "</td><td class=\"num\">%" PRIu64 "</td><td>",
			 s->blocks, s->bytes);
		put_path (out, run, s->path, frames);
		fputs ("</td></tr>\n", out);
	}
	fputs ("</tbody>\n</table>\n", out);
}

/* The paths of G that took (PASS 0) or dropped (1) references. */
static void
put_ref_paths (FILE *out, const MtaRun *run, const MtaRefGroup *g, int pass, int frames)
{
	guint n = 0;

	fprintf (out, "<p>%s:</p>\n<ul>\n", pass == 0 ? "References taken at" : "Dropped at");
	for (guint i = 0; i < g->paths->len; i++) {
		const MtaRefPath *p = &g_array_index (g->paths, MtaRefPath, i);
		uint64_t c = pass == 0 ? p->refs : p->unrefs;
		if (c == 0)
			continue;
		fprintf (out, "<li>x%" PRIu64 " ", c);
		put_path (out, run, p->path, frames);
		fputs ("</li>\n", out);
		n++;
	}
	if (n == 0)
		fputs ("<li>none</li>\n", out);
	fputs ("</ul>\n", out);
}

static void
put_refs (FILE *out, const MtaRun *run, const MtaKind *k, int frames)
{
	guint above = 0, shown;
	uint64_t objects = 0, below = 0;

	for (; above < k->ref_groups->len && !((const MtaRefGroup *) k->ref_groups->pdata[above])->negative; above++)
		objects += ((const MtaRefGroup *) k->ref_groups->pdata[above])->objects;
	for (guint i = above; i < k->ref_groups->len; i++)
		below += ((const MtaRefGroup *) k->ref_groups->pdata[i])->objects;
	fprintf (out, "<h3>Unbalanced references</h3>\n<p>%" PRIu64 " reference%s taken, %" PRIu64
		 " dropped, of %" PRIu64 " object%s; %" PRIu64 " object%s left above zero, %u entr%s.</p>\n",
		 k->refs, plural (k->refs), k->unrefs, k->ref_objects, plural (k->ref_objects), objects,
		 plural (objects), above, above == 1 ? "y" : "ies");
	shown = MIN (above, MAX_ROWS);
	put_cut (out, shown, above, "entries");
	for (guint i = 0; i < shown; i++) {
		const MtaRefGroup *g = k->ref_groups->pdata[i];
		g_autofree char *n = mta_group_digits (g->objects);
		fprintf (out, "<details class=\"refgroup\"><summary>%s object%s with net count %s%" G_GINT64_FORMAT
			 ", e.g. %#" PRIx64 "</summary>\n", n, plural (g->objects), g->net > 0 ? "+" : "", g->net,
			 g->example);
		put_ref_paths (out, run, g, 0, frames);
		put_ref_paths (out, run, g, 1, frames);
		fputs ("</details>\n", out);
	}
	if (above == k->ref_groups->len)
		return;
	fprintf (out, "<h3>Below zero</h3>\n<p>%" PRIu64 " reference%s dropped that no tracked call took "
		 "(taken before the recording began, or by a path not tracked), %u path%s, %" PRIu64
		 " address%s.</p>\n", below, plural (below), k->ref_groups->len - above,
		 plural (k->ref_groups->len - above), k->ref_below_addresses,
		 k->ref_below_addresses == 1 ? "" : "es");
	shown = MIN (k->ref_groups->len - above, MAX_ROWS);
	put_cut (out, shown, k->ref_groups->len - above, "paths");
	fputs ("<table class=\"sortable\">\n<thead><tr><th class=\"num\">Drops</th><th class=\"text\">Path"
	       "</th></tr></thead>\n<tbody>\n", out);
	for (guint i = above; i < above + shown; i++) {
		const MtaRefGroup *g = k->ref_groups->pdata[i];
		fprintf (out, "<tr><td class=\"num\">%" PRIu64 "</td><td>", g->objects);
		put_path (out, run, g_array_index (g->paths, MtaRefPath, 0).path, frames);
		fputs ("</td></tr>\n", out);
	}
	fputs ("</tbody>\n</table>\n", out);
}

void
mta_kind_html (const MtaRun *run, int frames, FILE *out)
{
	const MtaKinds *ks = mta_run_kinds (run);

	if (mta_kinds_count (ks) == 0)
		return;
	fputs ("<section id=\"kinds\">\n<h2>Other allocators and reference counts</h2>\n", out);
	for (guint i = 0; i < mta_kinds_count (ks); i++) {
		const MtaKind *k = mta_kinds_get (ks, i);
		fputs ("<h3 class=\"kind\">Kind ", out);
		mta_html_text (out, k->name);
		fprintf (out, "</h3>\n<p>%" PRIu64 " allocation%s, %" PRIu64 " release%s, %" PRIu64
			 " bad release%s.</p>\n", k->allocs, plural (k->allocs), k->frees, plural (k->frees),
			 k->bad_frees, plural (k->bad_frees));
		put_leak_sites (out, run, k, frames);
		if (k->ref_groups != NULL)
			put_refs (out, run, k, frames);
	}
	fputs ("</section>\n", out);
}
