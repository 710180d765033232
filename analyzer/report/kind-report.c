/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-report.c -- the tracked kinds in the --by-site report, after
 * malloc's leaks and bad frees, one heading per kind (share/analyzer.md,
 * "Other allocators and reference counts").
 *
 * Rows start with the kind's name, never a digit, so that scripts that
 * read malloc's table rows ("^ *[0-9]") read the same rows as before.
 */
#include "kind-report.h"
#include "incomplete.h"

#include <inttypes.h>

char *
mta_net_count_text (int64_t net)
{
	return g_strdup_printf ("%s%" G_GINT64_FORMAT, net > 0 ? "+" : "", net);
}

static void
print_sites (const MtaRun *run, const MtaKind *k, const GArray *list, gboolean leaks, guint frames,
	     FILE *out)
{
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);

	if (leaks)
		fprintf (out, "\n  %-16s %9s %12s  %s\n", "Kind", "Blocks", "Bytes", "Site");
	else
		fprintf (out, "\n  %-16s %9s  %s\n", "Kind", "Frees", "Site");
	for (guint i = 0; i < list->len; i++) {
		const MtaKindSite *ks = &g_array_index (list, MtaKindSite, i);
		g_autofree char *label = mta_site_label (sites->pdata[ks->site]);
		if (leaks)
			fprintf (out, "  %-16s %9" PRIu64 " %12" PRIu64 "  %s\n", k->name, ks->blocks, ks->bytes,
				 label);
		else
			fprintf (out, "  %-16s %9" PRIu64 "  %s\n", k->name, ks->blocks, label);
		/* the callers of its first one: a pool object's site is often
		 * the library's constructor (dict_new), its user further up */
		g_autoptr (GArray) tail = mta_path_tail (paths->pdata[ks->path], frames);
		for (guint j = 0; j < tail->len; j++) {
			g_autofree char *caller = mta_site_label (sites->pdata[g_array_index (tail, uint32_t, j)]);
			fprintf (out, "%*scalled from %s\n", leaks ? 43 : 30, "", caller);
		}
	}
}

/* One call path: its site, then up to FRAMES callers. */
static void
print_path (const MtaRun *run, uint32_t path, guint frames, const char *head, FILE *out)
{
	const MtaPath *p = mta_run_paths (run)->pdata[path];
	GPtrArray *sites = mta_run_sites (run);
	g_autofree char *label = mta_site_label (sites->pdata[MAX (p->site, 0)]);
	g_autoptr (GArray) tail = mta_path_tail (p, frames);

	fprintf (out, "%s %s\n", head, label);
	for (guint i = 0; i < tail->len; i++) {
		g_autofree char *caller = mta_site_label (sites->pdata[g_array_index (tail, uint32_t, i)]);
		fprintf (out, "%*scalled from %s\n", 16, "", caller);
	}
}

static void
print_ref_group (const MtaRun *run, const MtaKind *k, const MtaRefGroup *g, guint frames, FILE *out)
{
	g_autofree char *n = mta_group_digits (g->objects);
	g_autofree char *net = mta_net_count_text (g->net);
	char head[64];

	fprintf (out, "  %s: %s object%s with net count %s, e.g. %#" PRIx64 "\n", k->name, n,
		 g->objects == 1 ? "" : "s", net, g->example);
	for (int pass = 0; pass < 2; pass++) {
		gboolean any = FALSE;
		for (guint i = 0; i < g->paths->len; i++) {
			const MtaRefPath *p = &g_array_index (g->paths, MtaRefPath, i);
			uint64_t c = pass == 0 ? p->refs : p->unrefs;
			if (c == 0)
				continue;
			if (!any)
				fprintf (out, "    %s:\n", pass == 0 ? "references taken at" : "dropped at");
			any = TRUE;
			g_snprintf (head, sizeof head, "      x%-8" PRIu64, c);
			print_path (run, p->path, frames, head, out);
		}
		if (!any)
			fprintf (out, "    %s: none\n", pass == 0 ? "references taken at" : "dropped at");
	}
}

/* The unreferences that found no reference to drop: one line per path
 * (and its callers), however many objects. */
static void
print_outside (const MtaRun *run, const MtaKind *k, guint first, guint frames, FILE *out)
{
	uint64_t unrefs = 0;
	char head[96];

	for (guint i = first; i < k->ref_groups->len; i++)
		unrefs += ((const MtaRefGroup *) k->ref_groups->pdata[i])->objects;
	fprintf (out, "\nBelow zero, kind '%s': %" PRIu64 " reference%s dropped that no tracked call took "
		 "(taken before the recording began, or by a path not tracked), %u path%s, "
		 "%" PRIu64 " address%s\n\n", k->name,
		 unrefs, unrefs == 1 ? "" : "s", k->ref_groups->len - first,
		 k->ref_groups->len - first == 1 ? "" : "s", k->ref_below_addresses,
		 k->ref_below_addresses == 1 ? "" : "es");
	for (guint i = first; i < k->ref_groups->len; i++) {
		const MtaRefGroup *g = k->ref_groups->pdata[i];
		g_snprintf (head, sizeof head, "  %-16s x%-8" PRIu64, k->name, g->objects);
		print_path (run, g_array_index (g->paths, MtaRefPath, 0).path, frames, head, out);
	}
}

static void
print_kind (const MtaRun *run, const MtaKind *k, guint frames, gboolean stopped, FILE *out)
{
	fprintf (out, "\nKind '%s': %" PRIu64 " allocation%s, %" PRIu64 " release%s, %" PRIu64
		 " reference%s taken, %" PRIu64 " dropped", k->name, k->allocs, k->allocs == 1 ? "" : "s",
		 k->frees, k->frees == 1 ? "" : "s", k->refs, k->refs == 1 ? "" : "s", k->unrefs);
	if (k->ref_groups != NULL)
		fprintf (out, ", of %" PRIu64 " object%s", k->ref_objects, k->ref_objects == 1 ? "" : "s");
	fputc ('\n', out);
	if (k->leak_sites->len > 0) {
		fprintf (out, "Not released%s, kind '%s', by call site: %" PRIu64 " block%s, %" PRIu64
			 " bytes, %u site%s\n", stopped ? " before the recording stopped" : "", k->name,
			 k->leaked_blocks, k->leaked_blocks == 1 ? "" : "s", k->leaked_bytes,
			 k->leak_sites->len, k->leak_sites->len == 1 ? "" : "s");
		print_sites (run, k, k->leak_sites, TRUE, frames, out);
	} else if (k->allocs > 0)
		fprintf (out, "Every block of kind '%s' was released.\n", k->name);
	if (k->bad_free_sites->len > 0) {
		fprintf (out, "\nReleases of kind '%s' of blocks it never allocated, by call site: %" PRIu64
			 " release%s, %u site%s\n", k->name, k->bad_frees, k->bad_frees == 1 ? "" : "s",
			 k->bad_free_sites->len, k->bad_free_sites->len == 1 ? "" : "s");
		print_sites (run, k, k->bad_free_sites, FALSE, frames, out);
	}
	if (k->ref_groups == NULL)
		return;
	guint above = 0;
	uint64_t objects = 0;
	for (; above < k->ref_groups->len; above++) {
		const MtaRefGroup *g = k->ref_groups->pdata[above];
		if (g->negative)
			break;	/* the groups below zero come last */
		objects += g->objects;
	}
	if (above == 0)
		fprintf (out, "Every reference of kind '%s' was dropped.\n", k->name);
	else {
		fprintf (out, "Unbalanced references%s, kind '%s': %" PRIu64 " object%s above zero, %u entr%s\n\n",
			 stopped ? " when the recording stopped" : "", k->name, objects, objects == 1 ? "" : "s",
			 above, above == 1 ? "y" : "ies");
		for (guint i = 0; i < above; i++)
			print_ref_group (run, k, k->ref_groups->pdata[i], frames, out);
	}
	if (above < k->ref_groups->len)
		print_outside (run, k, above, frames, out);
}

void
mta_kind_report (const MtaRun *run, guint frames, FILE *out)
{
	const MtaKinds *ks = mta_run_kinds (run);
	gboolean stopped = mta_run_info (run)->incomplete.stopped_line > 0;

	for (guint i = 0; i < mta_kinds_count (ks); i++)
		print_kind (run, mta_kinds_get (ks, i), frames, stopped, out);
}
