/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-json.c -- "kinds" and "refcounts" in the --json document.
 *
 * malloc's members (leak_sites, leaks, bad_frees) stay malloc's alone, as
 * consumers written before tracked kinds expect: their totals are the
 * run's.  Each other kind has its own entry in "kinds", whose sites and
 * leaks carry a "kind" member too, so that they can be merged with
 * malloc's ("kind" absent meaning "malloc").
 */
#include "kind-json.h"
#include "json-out.h"
#include "kinds.h"

#include <inttypes.h>

static void
put_site (FILE *out, const MtaSite *s)
{
	mta_json_put_location (out, s->function, s->file, s->line, s->object);
}

/* The callers of PATH's site, up to FRAMES: "frames": [...]. */
static void
put_frames (FILE *out, const MtaRun *run, uint32_t path, int frames)
{
	const MtaPath *p = mta_run_paths (run)->pdata[path];
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GArray) tail = mta_path_tail (p, (guint) MAX (frames, 0));

	fputs ("\"frames\": [", out);
	for (guint i = 0; i < tail->len; i++) {
		fputs (i ? ", {" : "{", out);
		put_site (out, sites->pdata[g_array_index (tail, uint32_t, i)]);
		fputs ("}", out);
	}
	fputs ("]", out);
}

static void
put_kind_sites (FILE *out, const MtaRun *run, const MtaKind *k, const GArray *list, gboolean leaks,
		int frames)
{
	GPtrArray *sites = mta_run_sites (run);

	for (guint i = 0; i < list->len; i++) {
		const MtaKindSite *ks = &g_array_index (list, MtaKindSite, i);
		fputs (i ? ",\n        {\"kind\": " : "\n        {\"kind\": ", out);
		mta_json_put_string (out, k->name);
		fputs (", ", out);
		put_site (out, sites->pdata[ks->site]);
		if (leaks)
			fprintf (out, ", \"leaked_blocks\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64, ks->blocks,
				 ks->bytes);
		else
			fprintf (out, ", \"bad_frees\": %" PRIu64, ks->blocks);
		fprintf (out, ", \"first_line\": %" PRIu64 ", ", ks->first_line);
		put_frames (out, run, ks->path, frames);
		fputs ("}", out);
	}
	fputs (list->len ? "\n      ]" : "]", out);
}

/* Site -> its index in LIST (MtaKindSite) + 1. */
static GHashTable *
site_index (const GArray *list)
{
	GHashTable *index = g_hash_table_new (g_direct_hash, g_direct_equal);
	for (guint i = 0; i < list->len; i++)
		g_hash_table_insert (index, GUINT_TO_POINTER (g_array_index (list, MtaKindSite, i).site + 1),
				     GUINT_TO_POINTER (i + 1));
	return index;
}

static void
put_records (FILE *out, const MtaRun *run, const MtaKind *k, const GArray *records, const GArray *list)
{
	GPtrArray *paths = mta_run_paths (run);
	g_autoptr (GHashTable) index = site_index (list);

	for (guint i = 0; i < records->len; i++) {
		const MtaRecord *r = &g_array_index (records, MtaRecord, i);
		const MtaPath *p = paths->pdata[r->path];
		guint site = GPOINTER_TO_UINT (g_hash_table_lookup (index, GUINT_TO_POINTER (MAX (p->site, 0) + 1)));
		fputs (i ? ",\n        {\"kind\": " : "\n        {\"kind\": ", out);
		mta_json_put_string (out, k->name);
		fprintf (out, ", \"address\": \"0x%" PRIx64 "\", ", r->addr);
		if (r->op == '+')
			fprintf (out, "\"size\": %" PRIu64 ", ", r->size);
		fprintf (out, "\"line\": %" PRIu64 ", \"thread\": ", r->line);
		if (r->tid)
			fprintf (out, "%u", r->tid);
		else
			fputs ("null", out);
		fprintf (out, ", \"site\": %u}", site - 1);
	}
	fputs (records->len ? "\n      ]" : "]", out);
}

static void
put_kind (FILE *out, const MtaRun *run, const MtaKind *k, int frames)
{
	fputs ("{\"kind\": ", out);
	mta_json_put_string (out, k->name);
	fprintf (out, ", \"allocations\": %" PRIu64 ", \"releases\": %" PRIu64 ", \"bytes_allocated\": %"
		 PRIu64 ",\n      \"leaked_blocks\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64
		 ", \"bad_frees\": %" PRIu64 ", \"references\": %" PRIu64 ", \"unreferences\": %" PRIu64,
		 k->allocs, k->frees, k->bytes_allocated, k->leaked_blocks, k->leaked_bytes, k->bad_frees,
		 k->refs, k->unrefs);
	if (k->ref_groups != NULL)
		fprintf (out, ", \"objects\": %" PRIu64 ", \"below_zero_addresses\": %" PRIu64,
			 k->ref_objects, k->ref_below_addresses);
	fputs (",\n      \"leak_sites\": [", out);
	put_kind_sites (out, run, k, k->leak_sites, TRUE, frames);
	fputs (",\n      \"bad_free_sites\": [", out);
	put_kind_sites (out, run, k, k->bad_free_sites, FALSE, frames);
	fputs (",\n      \"leaks\": [", out);
	put_records (out, run, k, k->leaks, k->leak_sites);
	fputs (",\n      \"bad_free_records\": [", out);
	put_records (out, run, k, k->bad_free_records, k->bad_free_sites);
	fputs ("}", out);
}

/* One reference path: its site, then up to FRAMES callers. */
static void
put_ref_path (FILE *out, const MtaRun *run, const MtaRefPath *rp, uint64_t count, int frames)
{
	const MtaPath *p = mta_run_paths (run)->pdata[rp->path];
	GPtrArray *sites = mta_run_sites (run);

	fprintf (out, "{\"count\": %" PRIu64 ", \"stack\": %" PRId64 ", ", count, p->trace_id);
	put_site (out, sites->pdata[MAX (p->site, 0)]);
	fputs (", ", out);
	put_frames (out, run, rp->path, frames);
	fputs ("}", out);
}

static void
put_ref_group (FILE *out, const MtaRun *run, const MtaKind *k, const MtaRefGroup *g, int frames)
{
	fputs ("{\"kind\": ", out);
	mta_json_put_string (out, k->name);
	fprintf (out, ", \"objects\": %" PRIu64 ", \"net_count\": %" G_GINT64_FORMAT
		 ", \"below_zero\": %s, \"lowest_count\": %" G_GINT64_FORMAT ", \"example\": \"0x%"
		 PRIx64 "\", \"first_line\": %" PRIu64, g->objects, g->net, g->negative ? "true" : "false",
		 g->lowest, g->example, g->first_line);
	for (int pass = 0; pass < 2; pass++) {
		guint n = 0;
		fprintf (out, ",\n      \"%s\": [", pass == 0 ? "references" : "unreferences");
		for (guint i = 0; i < g->paths->len; i++) {
			const MtaRefPath *rp = &g_array_index (g->paths, MtaRefPath, i);
			uint64_t c = pass == 0 ? rp->refs : rp->unrefs;
			if (c == 0)
				continue;
			fputs (n++ ? ",\n        " : "\n        ", out);
			put_ref_path (out, run, rp, c, frames);
		}
		fputs (n ? "\n      ]" : "]", out);
	}
	fputs ("}", out);
}

void
mta_kind_json (const MtaRun *run, int frames, FILE *out)
{
	const MtaKinds *ks = mta_run_kinds (run);
	guint n = 0;

	fputs ("  \"kinds\": [", out);
	for (guint i = 0; i < mta_kinds_count (ks); i++) {
		fputs (i ? ",\n    " : "\n    ", out);
		put_kind (out, run, mta_kinds_get (ks, i), frames);
	}
	fputs (mta_kinds_count (ks) ? "\n  ],\n" : "],\n", out);
	fputs ("  \"refcounts\": [", out);
	for (guint i = 0; i < mta_kinds_count (ks); i++) {
		const MtaKind *k = mta_kinds_get (ks, i);
		for (guint j = 0; k->ref_groups != NULL && j < k->ref_groups->len; j++) {
			fputs (n++ ? ",\n    " : "\n    ", out);
			put_ref_group (out, run, k, k->ref_groups->pdata[j], frames);
		}
	}
	fputs (n ? "\n  ],\n" : "],\n", out);
}
