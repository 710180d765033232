/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* json-out.c -- writing the run as one JSON document.
 *
 * Hand-written (no JSON library among the dependencies): strings are
 * escaped per RFC 8259 (bytes that are not valid UTF-8 become U+FFFD, so
 * the output is always valid JSON; DEL and the C1 controls are escaped
 * too, so that no control character reaches a terminal raw), numbers are unsigned integers, and
 * addresses are strings ("0x...") because 64-bit values do not survive a
 * JavaScript number.  The names are those of share/json-format.md; add,
 * never rename.
 */
#include "json-out.h"
#include "kind-json.h"
#include "growth.h"
#include "site-report.h"

#include <inttypes.h>
#include <string.h>

#define JSON_FORMAT_VERSION 1

static void
put_key (FILE *out, const char *key)
{
	fprintf (out, "\"%s\": ", key);
}

static void
put_u64 (FILE *out, const char *key, uint64_t v, gboolean comma)
{
	fprintf (out, "\"%s\": %" PRIu64 "%s", key, v, comma ? ", " : "");
}

static void
put_site_fields (FILE *out, const MtaSite *s)
{
	mta_json_put_location (out, s->function, s->file, s->line, s->object);
	fprintf (out, ", \"inlined\": %s", s->inlined ? "true" : "false");
}

/* Whether frame I of P is code inlined into frame I + 1. */
static const char *
frame_inlined (const MtaPath *p, uint32_t i)
{
	return mta_path_inlined (p, i) ? "true" : "false";
}

/* The frames of TAIL (mta_path_tail of P): each says whether it was
 * inlined into the next, in this stack. */
static void
put_frames (FILE *out, const MtaRun *run, const MtaPath *p, GArray *tail)
{
	GPtrArray *sites = mta_run_sites (run);
	fputs ("\"frames\": [", out);
	for (guint i = 0; i < tail->len; i++) {
		const MtaSite *s = sites->pdata[g_array_index (tail, uint32_t, i)];
		fputs (i ? ", {" : "{", out);
		put_key (out, "function");
		mta_json_put_string (out, s->function);
		fputs (", ", out);
		put_key (out, "file");
		mta_json_put_string (out, s->file);
		fprintf (out, ", \"line\": %u, ", s->line);
		put_key (out, "object");
		mta_json_put_string (out, s->object);
		fprintf (out, ", \"inlined\": %s}", frame_inlined (p, p->site_frame + 1 + i));
	}
	fputs ("]", out);
}

/* The stacks of SITE with leaks (LEAKS) or bad frees. */
static void
put_stacks (FILE *out, const MtaRun *run, uint32_t site, int frames, gboolean leaks)
{
	GPtrArray *paths = mta_run_paths (run);
	gboolean first = TRUE;
	guint np;
	const uint32_t *pi = mta_run_site_paths (run, site, &np);

	fputs ("\"stacks\": [", out);
	for (guint i = 0; i < np && frames > 0; i++) {
		const MtaPath *p = paths->pdata[pi[i]];
		uint64_t n = leaks ? p->leaked_blocks : p->bad_frees;
		if (n == 0 || p->addrs == NULL)
			continue;
		g_autoptr (GArray) tail = mta_path_tail (p, (guint) frames);
		fputs (first ? "\n        {" : ",\n        {", out);
		first = FALSE;
		fprintf (out, "\"stack\": %" PRId64 ", ", p->trace_id);
		if (leaks) {
			put_u64 (out, "blocks", p->leaked_blocks, TRUE);
			put_u64 (out, "bytes", p->leaked_bytes, TRUE);
		} else
			put_u64 (out, "count", p->bad_frees, TRUE);
		fprintf (out, "\"inlined\": %s, ", frame_inlined (p, p->site_frame));
		put_frames (out, run, p, tail);
		fputs ("}", out);
	}
	fputs (first ? "]" : "\n      ]", out);
}

static void
put_site_index (FILE *out, GHashTable *index, uint32_t site)
{
	gpointer v = g_hash_table_lookup (index, GUINT_TO_POINTER (site + 1));
	if (v != NULL)
		fprintf (out, "%u", GPOINTER_TO_UINT (v) - 1);
	else
		fputs ("null", out);
}

#define TOP_SITES 5

/* V in decimal, backwards from END; the first digit. */
static char *
u64_digits (char *end, uint64_t v)
{
	do {
		*--end = (char) ('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return end;
}

/* "KEY": [V, ...] -- a site's timelines are most of the numbers of a
 * large run's document: formatted here, not by fprintf one by one. */
static void
put_number_array (FILE *out, const char *key, const uint64_t *v64, const uint32_t *v32, guint n)
{
	char buf[4096];
	size_t len = 0;

	fprintf (out, "\"%s\": [", key);
	/* a line's numbers into one buffer: one locked stdio call, not two
	 * a number */
	for (guint k = 0; k < n; k++) {
		char digits[24];
		uint64_t v = v64 != NULL ? v64[k] : v32 != NULL ? v32[k] : 0;
		char *d = u64_digits (digits + sizeof digits, v);
		size_t dl = (size_t) (digits + sizeof digits - d);
		if (len + dl + 3 > sizeof buf) {	/* ", ", the number, "]" */
			fwrite (buf, 1, len, out);
			len = 0;
		}
		if (k) {
			buf[len++] = ',';
			buf[len++] = ' ';
		}
		memcpy (buf + len, d, dl);
		len += dl;
	}
	buf[len++] = ']';
	fwrite (buf, 1, len, out);
}

static void
put_u64_array (FILE *out, const char *key, const uint64_t *v, guint n)
{
	put_number_array (out, key, v, NULL, n);
}

static void
put_u32_array (FILE *out, const char *key, const uint32_t *v, guint n)
{
	put_number_array (out, key, NULL, v, n);
}

static void
put_time_or_null (FILE *out, const MtaRun *run, uint64_t line)
{
	if (mta_run_info (run)->time_axis)
		fprintf (out, "%.0f", mta_run_position (run, line));
	else
		fputs ("null", out);
}

/* "peak" and "temporary": the run's peak, the sites that held most then,
 * and the allocations freed before any other in their thread. */
static void
put_peak_and_temporary (FILE *out, const MtaRun *run)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GArray) peak = mta_run_peak_sites (run, TOP_SITES);
	g_autoptr (GArray) temp = mta_run_temporary_sites (run, TOP_SITES);

	fputs ("  \"peak\": {", out);
	put_u64 (out, "bytes", i->peak_live_bytes, TRUE);
	put_u64 (out, "line", i->peak_line, TRUE);
	fputs ("\"time_ns\": ", out);
	put_time_or_null (out, run, i->peak_line);
	fputs (", \"sites\": [", out);
	for (guint k = 0; k < peak->len; k++) {
		const MtaSite *s = sites->pdata[g_array_index (peak, uint32_t, k)];
		fputs (k ? ",\n    {" : "\n    {", out);
		put_site_fields (out, s);
		fputs (", ", out);
		put_u64 (out, "bytes", s->peak_share_bytes, FALSE);
		fputs ("}", out);
	}
	fputs (peak->len ? "\n  ]},\n" : "]},\n", out);

	fputs ("  \"temporary\": {", out);
	put_u64 (out, "allocations", i->temporary, TRUE);
	fputs ("\"sites\": [", out);
	for (guint k = 0; k < temp->len; k++) {
		const MtaSite *s = sites->pdata[g_array_index (temp, uint32_t, k)];
		fputs (k ? ",\n    {" : "\n    {", out);
		put_site_fields (out, s);
		fputs (", ", out);
		put_u64 (out, "temporary_allocations", s->t->temporary, TRUE);
		put_u64 (out, "allocations", s->t->allocs, FALSE);
		fputs ("}", out);
	}
	fputs (temp->len ? "\n  ]},\n" : "]},\n", out);
}

/* "incomplete": where the recorder stopped or first lost events, and
 * why; null for a complete run (issue 18). */
static void
put_incomplete (FILE *out, const MtaIncomplete *x)
{
	gboolean stopped = x->stopped_line > 0;

	fputs ("  \"incomplete\": ", out);
	if (!mta_incomplete_is (x)) {
		fputs ("null,\n", out);
		return;
	}
	fprintf (out, "{\"stopped\": %s, \"file\": ", stopped ? "true" : "false");
	mta_json_put_string (out, stopped ? x->stopped_part : x->lost_part);
	fputs (", ", out);
	put_u64 (out, "line", stopped ? x->stopped_line : x->lost_line, TRUE);
	put_u64 (out, "file_line", stopped ? x->stopped_part_line : x->lost_part_line, TRUE);
	fputs ("\"reason\": ", out);
	mta_json_put_string (out, stopped ? x->stop_reason : x->lost_reason);
	fputs (",\n    ", out);
	put_u64 (out, "lost_events", x->lost_events, TRUE);
	fputs ("\"lost_reason\": ", out);
	mta_json_put_string (out, x->lost_reason);
	fputs ("},\n", out);
}

/* "skip_suggestion": a wrapper the list does not know (site-report.h). */
static void
put_skip_hint (FILE *out, const MtaRun *run)
{
	MtaSkipHint h;

	fputs ("\"skip_suggestion\": ", out);
	if (!mta_skip_hint (run, &h)) {
		fputs ("null,\n    ", out);
		return;
	}
	fputs ("{\"skip\": ", out);
	mta_json_put_string (out, h.skip);
	fputs (", \"function\": ", out);
	mta_json_put_string (out, h.site->function);
	fputs (", \"object\": ", out);
	mta_json_put_string (out, h.site->object);
	fprintf (out, ", \"leaked_blocks\": %" PRIu64 ", \"callers\": %u},\n    ", h.blocks, h.callers);
	g_free (h.skip);
}

/* "auto_skipped": the wrappers found without symbols (run.h), each with
 * its --skip spelling; [] when none. */
static void
put_auto_skipped (FILE *out, const MtaRun *run)
{
	GPtrArray *sites = mta_run_sites (run);
	gboolean first = TRUE;

	fputs ("\"auto_skipped\": [", out);
	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (!s->auto_wrapper)
			continue;
		g_autofree char *skip = mta_skip_argument (s);
		fputs (first ? "{\"skip\": " : ", {\"skip\": ", out);
		mta_json_put_string (out, skip);
		fputs (", \"function\": ", out);
		mta_json_put_string (out, s->function);
		fputs (", \"object\": ", out);
		mta_json_put_string (out, s->object);
		fprintf (out, ", \"callers\": %u, \"code_bytes\": %" PRIu64 "}", s->auto_callers, (uint64_t) s->code_size);
		first = FALSE;
	}
	fputs ("],\n    ", out);
}

/* "lineage": the fork that started this process (the blocks it inherited)
 * and the blocks it handed to a child (lineage.h); null when neither. */
static void
put_lineage (FILE *out, const MtaLineageInfo *l)
{
	fputs ("  \"lineage\": ", out);
	if (l == NULL || (l->parent_pid < 0 && l->handed_to_pid < 0)) {
		fputs ("null,\n", out);
		return;
	}
	fputs ("{\"parent\": ", out);
	if (l->parent_pid >= 0) {
		fprintf (out, "{\"pid\": %" PRId64 ", ", l->parent_pid);
		put_u64 (out, "mark", l->parent_mark, TRUE);
		fputs ("\"trace\": ", out);
		mta_json_put_string (out, l->parent_trace);
		fputs (", ", out);
		put_u64 (out, "inherited_blocks", l->inherited_blocks, TRUE);
		put_u64 (out, "inherited_bytes", l->inherited_bytes, FALSE);
		fputs ("}", out);
	} else {
		fputs ("null", out);
	}
	fputs (",\n    \"handed_to_child\": ", out);
	if (l->handed_to_pid >= 0) {
		fputs ("{\"pid\": ", out);
		if (l->handed_to_pid > 0)
			fprintf (out, "%" PRId64 ", ", l->handed_to_pid);
		else
			fputs ("null, ", out);
		put_u64 (out, "mark", l->handed_mark, TRUE);
		put_u64 (out, "blocks", l->handed_blocks, TRUE);
		put_u64 (out, "bytes", l->handed_bytes, TRUE);
		fputs ("\"trace\": ", out);
		mta_json_put_string (out, l->handed_trace);
		fputs ("}", out);
	} else {
		fputs ("null", out);
	}
	fputs ("},\n", out);
}

/* "reach": {"definite": {"blocks": N, "bytes": N}, ...}: the blocks of
 * each category (reach.h), null for a trace without verdicts. */
static void
put_reach_counts (FILE *out, const MtaRun *run, const uint64_t *blocks, const uint64_t *bytes)
{
	fputs ("\"reach\": ", out);
	if (!mta_run_info (run)->reach) {
		fputs ("null", out);
		return;
	}
	fputs ("{", out);
	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		fprintf (out, "%s\"%s\": {\"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 "}", k ? ", " : "",
			 mta_reach_name (r), blocks[r], bytes[r]);
	}
	fputs ("}", out);
}

/* The run's "reach": its counts, the --leaks filter, the recorder's notes
 * and whether its scan finished. */
static void
put_reach (FILE *out, const MtaRun *run)
{
	const MtaRunInfo *i = mta_run_info (run);

	fputs ("  ", out);
	put_reach_counts (out, run, i->reach_blocks, i->reach_bytes);
	fputs (",\n  \"leak_kinds\": ", out);
	if (i->leak_kinds) {
		g_autofree char *names = mta_reach_mask_names (i->leak_kinds, "\", \"");
		fprintf (out, "[\"%s\"]", names);
	} else
		fputs ("null", out);
	fprintf (out, ", \"all_leaked_blocks\": %" PRIu64 ", \"all_leaked_bytes\": %" PRIu64
		 ", \"reach_finished\": %s, \"reach_line\": %" PRIu64 ", \"reach_scans\": %" PRIu64
		 ", \"reach_ms\": %" PRIu64 ", \"reach_bad_lines\": %" PRIu64 ", \"reach_notes\": [",
		 i->all_leaked_blocks, i->all_leaked_bytes, i->reach_finished ? "true" : "false",
		 i->reach_line, i->reach_scans, i->reach_ms, i->reach_bad_lines);
	for (guint k = 0; k < i->reach_notes->len; k++) {
		fputs (k ? ", " : "", out);
		mta_json_put_string (out, i->reach_notes->pdata[k]);
	}
	fputs ("], \"reach_refused\": [", out);
	for (guint k = 0; k < i->reach_refused->len; k++) {
		fputs (k ? ", " : "", out);
		mta_json_put_string (out, i->reach_refused->pdata[k]);
	}
	fputs ("],\n", out);
}

void
mta_json_write_growth (const MtaRun *run, int frames, guint growth, int64_t run_id,
		       const MtaLineageInfo *lineage, FILE *out)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);
	g_autoptr (GArray) leak_sites = mta_run_leak_sites_filtered (run, growth);
	g_autoptr (GArray) bad_sites = mta_run_bad_free_sites (run);
	g_autoptr (GHashTable) leak_index = g_hash_table_new (g_direct_hash, g_direct_equal);
	g_autoptr (GHashTable) bad_index = g_hash_table_new (g_direct_hash, g_direct_equal);
	GHashTable *threads = mta_run_threads (run);
	/* freed after the leak sites (not g_autofree: clang's analyzer
	 * loses such arrays through the call that fills them) */
	uint64_t *tl_bytes = g_new (uint64_t, i->tl_len + 1);
	uint32_t *tl_blocks = g_new (uint32_t, i->tl_len + 1);

	fprintf (out, "{\n  \"format\": \"mtanalyze\", \"version\": %d,\n", JSON_FORMAT_VERSION);
	fputs ("  \"run\": {\n    \"traces\": [", out);
	for (guint k = 0; k < i->traces->len; k++) {
		if (k)
			fputs (", ", out);
		mta_json_put_string (out, i->traces->pdata[k]);
	}
	fputs ("],\n    \"binary\": ", out);
	mta_json_put_string (out, i->binary);
	if (run_id > 0)
		fprintf (out, ", \"db_run_id\": %" PRId64, run_id);
	fputs (",\n    \"pid\": ", out);
	if (i->pid >= 0)
		fprintf (out, "%" PRId64, i->pid);
	else
		fputs ("null", out);
	fputs (", \"exe\": ", out);
	mta_json_put_string (out, i->exe);
	fputs (", \"cmdline\": ", out);
	mta_json_put_string (out, i->cmdline);
	fputs (", \"start\": ", out);
	mta_json_put_string (out, i->start);
	fprintf (out, ", \"stack_depth\": %d, \"wrappers_skipped\": %s,\n    ", i->depth,
		 i->skip_wrappers ? "true" : "false");
	put_skip_hint (out, run);
	put_auto_skipped (out, run);
	g_autofree char *depth_names = NULL;
	uint64_t depth_blocks = mta_depth_hint (run, &depth_names);
	fputs ("\"depth_suggestion\": ", out);
	if (depth_blocks == 0)
		fputs ("null,\n    ", out);
	else {
		fputs ("{\"depth\": 16, \"wrappers\": ", out);
		mta_json_put_string (out, depth_names);
		fprintf (out, ", \"leaked_blocks\": %" PRIu64 "},\n    ", depth_blocks);
	}
	put_u64 (out, "lines", i->lines, TRUE);
	put_u64 (out, "unreadable_lines", i->unreadable_lines, TRUE);
	put_u64 (out, "events", i->events, TRUE);
	fputs ("\n    ", out);
	put_u64 (out, "allocations", i->allocs, TRUE);
	put_u64 (out, "frees", i->frees, TRUE);
	put_u64 (out, "reallocations", i->reallocs, TRUE);
	put_u64 (out, "failed_allocations", i->failed_allocs, TRUE);
	put_u64 (out, "duplicate_allocations", i->duplicates, TRUE);
	fputs ("\n    ", out);
	put_u64 (out, "bytes_allocated", i->bytes_allocated, TRUE);
	put_u64 (out, "peak_live_bytes", i->peak_live_bytes, TRUE);
	put_u64 (out, "leaked_blocks", i->leaked_blocks, TRUE);
	put_u64 (out, "leaked_bytes", i->leaked_bytes, TRUE);
	put_u64 (out, "bad_frees", i->bad_frees, TRUE);
	put_u64 (out, "attaches", i->attaches, TRUE);
	put_u64 (out, "frees_before_attach", i->frees_before_attach, TRUE);
	fputs ("\n    ", out);
	put_u64 (out, "temporary_allocations", i->temporary, TRUE);
	put_u64 (out, "peak_line", i->peak_line, TRUE);
	fputs ("\"growth_filter\": ", out);
	if (growth) {
		fputs ("[", out);
		for (int k = 1, n = 0; k < MTA_GROWTH_N; k++)
			if (growth & (1u << k))
				fprintf (out, "%s\"%s\"", n++ ? ", " : "", mta_growth_name (k));
		fputs ("]", out);
	} else
		fputs ("null", out);
	fprintf (out, ",\n    \"leaks_proven\": %s, \"freeres\": ",
		 mta_incomplete_is (&i->incomplete) ? "false" : "true");
	mta_json_put_string (out, i->incomplete.freeres);
	fprintf (out, ",\n    \"timeline\": {\"axis\": \"%s\", ", i->time_axis ? "time" : "line");
	put_u64_array (out, "lines", i->tl_lines, i->tl_len);
	fputs (", ", out);
	if (i->time_axis)
		put_u64_array (out, "times_ns", i->tl_times, i->tl_len);
	else
		fputs ("\"times_ns\": null", out);
	fputs ("}\n  },\n", out);
	put_incomplete (out, &i->incomplete);
	put_reach (out, run);
	put_lineage (out, lineage);
	put_peak_and_temporary (out, run);

	fputs ("  \"leak_sites\": [", out);
	for (guint k = 0; k < leak_sites->len; k++) {
		uint32_t si = g_array_index (leak_sites, uint32_t, k);
		const MtaSite *s = sites->pdata[si];
		g_hash_table_insert (leak_index, GUINT_TO_POINTER (si + 1), GUINT_TO_POINTER (k + 1));
		fputs (k ? ",\n    {" : "\n    {", out);
		put_site_fields (out, s);
		fputs (",\n      ", out);
		put_u64 (out, "leaked_blocks", s->t->leaked_blocks, TRUE);
		put_u64 (out, "leaked_bytes", s->t->leaked_bytes, TRUE);
		put_u64 (out, "allocations", s->t->allocs, TRUE);
		put_u64 (out, "frees", s->t->frees, TRUE);
		put_u64 (out, "bytes_allocated", s->t->bytes_allocated, TRUE);
		put_u64 (out, "peak_live_bytes", s->peak_live_bytes, TRUE);
		put_u64 (out, "first_line", s->t->first_line, TRUE);
		fprintf (out, "\n      \"growth\": \"%s\", \"growth_exponent\": %.3f, ",
			 mta_growth_name (s->growth), s->growth_exponent);
		put_u64 (out, "temporary_allocations", s->t->temporary, TRUE);
		put_u64 (out, "peak_share_bytes", s->peak_share_bytes, TRUE);
		fprintf (out, "\"proven\": %s", mta_run_site_proven (run, s) ? "true" : "false");
		fputs (",\n      ", out);
		put_reach_counts (out, run, mta_site_reach_blocks (s), mta_site_reach_bytes (s));
		fputs (",\n      ", out);
		if (mta_run_site_timeline (run, s, tl_bytes, tl_blocks)) {
			put_u32_array (out, "live_blocks_over_time", tl_blocks, i->tl_len);
			fputs (",\n      ", out);
			put_u64_array (out, "live_bytes_over_time", tl_bytes, i->tl_len);
			fputs (",\n      ", out);
		}
		put_stacks (out, run, si, frames, TRUE);
		fputs ("}", out);
	}
	g_free (tl_bytes);
	g_free (tl_blocks);
	fputs (leak_sites->len ? "\n  ],\n" : "],\n", out);

	fputs ("  \"bad_free_sites\": [", out);
	for (guint k = 0; k < bad_sites->len; k++) {
		uint32_t si = g_array_index (bad_sites, uint32_t, k);
		const MtaSite *s = sites->pdata[si];
		g_hash_table_insert (bad_index, GUINT_TO_POINTER (si + 1), GUINT_TO_POINTER (k + 1));
		fputs (k ? ",\n    {" : "\n    {", out);
		put_site_fields (out, s);
		fputs (", ", out);
		put_u64 (out, "bad_frees", s->t->bad_frees, TRUE);
		put_u64 (out, "first_line", s->t->first_line, TRUE);
		fputs ("\n      ", out);
		put_stacks (out, run, si, frames, FALSE);
		fputs ("}", out);
	}
	fputs (bad_sites->len ? "\n  ],\n" : "],\n", out);

	GArray *leaks = mta_run_leaks (run);
	guint nleaks = 0;
	fputs ("  \"leaks\": [", out);
	for (guint k = 0; k < leaks->len; k++) {
		const MtaRecord *r = &g_array_index (leaks, MtaRecord, k);
		const MtaPath *p = paths->pdata[r->path];
		if (!g_hash_table_contains (leak_index, GUINT_TO_POINTER ((uint32_t) p->site + 1)))
			continue;
		fprintf (out, "%s{\"address\": \"0x%" PRIx64 "\", \"size\": %" PRIu64
			 ", \"line\": %" PRIu64 ", \"thread\": ", nleaks++ ? ",\n    " : "\n    ",
			 r->addr, r->size, r->line);
		if (r->tid)
			fprintf (out, "%u", r->tid);
		else
			fputs ("null", out);
		fputs (", \"site\": ", out);
		put_site_index (out, leak_index, (uint32_t) p->site);
		fputs (", \"reach\": ", out);
		if (i->reach)
			fprintf (out, "\"%s\"", mta_reach_name ((MtaReach) r->reach));
		else
			fputs ("null", out);
		fputs ("}", out);
	}
	fputs (nleaks ? "\n  ],\n" : "],\n", out);

	GArray *bad = mta_run_bad_frees (run);
	fputs ("  \"bad_frees\": [", out);
	for (guint k = 0; k < bad->len; k++) {
		const MtaRecord *r = &g_array_index (bad, MtaRecord, k);
		const MtaPath *p = paths->pdata[r->path];
		fprintf (out, "%s{\"address\": \"0x%" PRIx64 "\", \"kind\": \"%s\", \"line\": %" PRIu64
			 ", \"thread\": ", k ? ",\n    " : "\n    ", r->addr,
			 r->op == '<' ? "realloc" : "free", r->line);
		if (r->tid)
			fprintf (out, "%u", r->tid);
		else
			fputs ("null", out);
		fputs (", \"site\": ", out);
		put_site_index (out, bad_index, (uint32_t) p->site);
		fputs ("}", out);
	}
	fputs (bad->len ? "\n  ],\n" : "],\n", out);
	mta_kind_json (run, frames, out);

	fputs ("  \"threads\": {", out);
	GHashTableIter it;
	gpointer hk, hv;
	gboolean first = TRUE;
	g_hash_table_iter_init (&it, threads);
	while (g_hash_table_iter_next (&it, &hk, &hv)) {
		fprintf (out, "%s\"%u\": ", first ? "" : ", ", GPOINTER_TO_UINT (hk));
		mta_json_put_string (out, hv);
		first = FALSE;
	}
	fputs ("}\n}\n", out);
}
