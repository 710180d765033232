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
#include <math.h>
#include <string.h>

#define JSON_FORMAT_VERSION 1

/* "KEY": */
#define KEY(o, key) mta_json_lit ((o), "\"" key "\": ")

static void
put_u64_field (MtaJsonOut *o, const char *key, size_t klen, uint64_t v, gboolean comma)
{
	mta_json_raw (o, key, klen);
	mta_json_u64 (o, v);
	if (comma)
		mta_json_lit (o, ", ");
}

/* "KEY": V, the ", " after it when COMMA */
#define put_u64(o, key, v, comma) \
	put_u64_field ((o), "\"" key "\": ", sizeof ("\"" key "\": ") - 1, (v), (comma))

static void
put_site_fields (MtaJsonOut *o, const MtaSite *s)
{
	mta_json_location (o, s->function, s->file, s->line, s->object);
	mta_json_lit (o, ", \"inlined\": ");
	mta_json_bool (o, s->inlined);
}

/* The frames after the charged one of P, at most FRAMES: each says
 * whether it was inlined into the next, in this stack.  Read in place
 * (mta_path_tail's array, made and freed for each of millions of paths,
 * is not needed to walk them). */
static void
put_frames (MtaJsonOut *o, const MtaSite *const *sites, const MtaPath *p, int frames)
{
	mta_json_lit (o, "\"frames\": [");
	uint32_t first = p->site_frame + 1, end = p->nframes;
	if (end > first && end - first > (uint32_t) frames)
		end = first + (uint32_t) frames;
	for (uint32_t i = first; i < end; i++) {
		const MtaSite *s = sites[p->frames[i]];
		if (i > first)
			mta_json_lit (o, ", {");
		else
			mta_json_lit (o, "{");
		mta_json_location (o, s->function, s->file, s->line, s->object);
		mta_json_lit (o, ", \"inlined\": ");
		mta_json_bool (o, mta_path_inlined (p, i));
		mta_json_lit (o, "}");
	}
	mta_json_lit (o, "]");
}

/* The stacks of SITE with leaks (LEAKS) or bad frees. */
static void
put_stacks (MtaJsonOut *o, const MtaRun *run, uint32_t site, int frames, gboolean leaks)
{
	GPtrArray *paths = mta_run_paths (run);
	const MtaSite *const *sites = (const MtaSite *const *) mta_run_sites (run)->pdata;
	gboolean first = TRUE;
	guint np;
	const uint32_t *pi = mta_run_site_paths (run, site, &np);

	mta_json_lit (o, "\"stacks\": [");
	for (guint i = 0; i < np && frames > 0; i++) {
		const MtaPath *p = paths->pdata[pi[i]];
		uint64_t n = leaks ? p->leaked_blocks : p->bad_frees;
		if (n == 0 || p->addrs == NULL)
			continue;
		if (first)
			mta_json_lit (o, "\n        {");
		else
			mta_json_lit (o, ",\n        {");
		first = FALSE;
		KEY (o, "stack");
		mta_json_i64 (o, p->trace_id);
		mta_json_lit (o, ", ");
		if (leaks) {
			put_u64 (o, "blocks", p->leaked_blocks, TRUE);
			put_u64 (o, "bytes", p->leaked_bytes, TRUE);
		} else
			put_u64 (o, "count", p->bad_frees, TRUE);
		KEY (o, "inlined");
		mta_json_bool (o, mta_path_inlined (p, p->site_frame));
		mta_json_lit (o, ", ");
		put_frames (o, sites, p, frames);
		mta_json_lit (o, "}");
	}
	if (first)
		mta_json_lit (o, "]");
	else
		mta_json_lit (o, "\n      ]");
}

/* The places of the sites in their list: k + 1 by site, 0 when not
 * listed (4 bytes a site, where a hash table of the listed ones took 40). */
typedef struct {
	uint32_t *slot;
	guint n;
} SiteSlots;

/* SITE's place + 1, 0 when it is not listed (or no site: -1) */
static uint32_t
site_slot (const SiteSlots *l, int32_t site)
{
	return site >= 0 && (guint) site < l->n ? l->slot[site] : 0;
}

static void
put_site_index (MtaJsonOut *o, const SiteSlots *l, int32_t site)
{
	uint32_t k = site_slot (l, site);
	if (k)
		mta_json_u64 (o, k - 1);
	else
		mta_json_lit (o, "null");
}

#define TOP_SITES 5

/* "KEY": [V, ...] -- a site's timelines are most of the numbers of a
 * large run's document. */
static void
put_number_array (MtaJsonOut *o, const uint64_t *v64, const uint32_t *v32, guint n)
{
	/* ", " and the digits of the last value: a timeline holds a value for
	 * long runs of its points, each copied whole (a copy of a fixed size
	 * is a few moves, not a call) */
	char last[24] = ", ";
	size_t len = 0;
	uint64_t prev = 0;

	mta_json_lit (o, "[");
	for (guint k = 0; k < n; k++) {
		uint64_t v = v64 != NULL ? v64[k] : v32 != NULL ? v32[k] : 0;
		if (k == 0 || v != prev) {
			len = 2 + mta_json_digits (last + 2, v);
			prev = v;
		}
		if (k == 0) {
			memcpy (mta_json_room (o, sizeof last - 2), last + 2, sizeof last - 2);
			o->len += len - 2;
		} else {
			memcpy (mta_json_room (o, sizeof last), last, sizeof last);
			o->len += len;
		}
	}
	mta_json_lit (o, "]");
}

#define put_u64_array(o, key, v, n) (KEY (o, key), put_number_array ((o), (v), NULL, (n)))
#define put_u32_array(o, key, v, n) (KEY (o, key), put_number_array ((o), NULL, (v), (n)))

static void
put_time_or_null (MtaJsonOut *o, const MtaRun *run, uint64_t line)
{
	if (mta_run_info (run)->time_axis)
		mta_json_fixed (o, mta_run_position (run, line), 0);
	else
		mta_json_lit (o, "null");
}

/* "peak" and "temporary": the run's peak, the sites that held most then,
 * and the allocations freed before any other in their thread. */
static void
put_peak_and_temporary (MtaJsonOut *o, const MtaRun *run)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GArray) peak = mta_run_peak_sites (run, TOP_SITES);
	g_autoptr (GArray) temp = mta_run_temporary_sites (run, TOP_SITES);

	mta_json_lit (o, "  \"peak\": {");
	put_u64 (o, "bytes", i->peak_live_bytes, TRUE);
	put_u64 (o, "line", i->peak_line, TRUE);
	KEY (o, "time_ns");
	put_time_or_null (o, run, i->peak_line);
	mta_json_lit (o, ", \"sites\": [");
	for (guint k = 0; k < peak->len; k++) {
		const MtaSite *s = sites->pdata[g_array_index (peak, uint32_t, k)];
		if (k)
			mta_json_lit (o, ",\n    {");
		else
			mta_json_lit (o, "\n    {");
		put_site_fields (o, s);
		mta_json_lit (o, ", ");
		put_u64 (o, "bytes", s->peak_share_bytes, FALSE);
		mta_json_lit (o, "}");
	}
	if (peak->len)
		mta_json_lit (o, "\n  ]},\n");
	else
		mta_json_lit (o, "]},\n");

	mta_json_lit (o, "  \"temporary\": {");
	put_u64 (o, "allocations", i->temporary, TRUE);
	mta_json_lit (o, "\"sites\": [");
	for (guint k = 0; k < temp->len; k++) {
		const MtaSite *s = sites->pdata[g_array_index (temp, uint32_t, k)];
		if (k)
			mta_json_lit (o, ",\n    {");
		else
			mta_json_lit (o, "\n    {");
		put_site_fields (o, s);
		mta_json_lit (o, ", ");
		put_u64 (o, "temporary_allocations", s->t->temporary, TRUE);
		put_u64 (o, "allocations", s->t->allocs, FALSE);
		mta_json_lit (o, "}");
	}
	if (temp->len)
		mta_json_lit (o, "\n  ]},\n");
	else
		mta_json_lit (o, "]},\n");
}

/* "incomplete": where the recorder stopped or first lost events, and
 * why; null for a complete run (issue 18). */
static void
put_incomplete (MtaJsonOut *o, const MtaIncomplete *x)
{
	gboolean stopped = x->stopped_line > 0;

	mta_json_lit (o, "  \"incomplete\": ");
	if (!mta_incomplete_is (x)) {
		mta_json_lit (o, "null,\n");
		return;
	}
	mta_json_lit (o, "{\"stopped\": ");
	mta_json_bool (o, stopped);
	mta_json_lit (o, ", \"file\": ");
	mta_json_string (o, stopped ? x->stopped_part : x->lost_part);
	mta_json_lit (o, ", ");
	put_u64 (o, "line", stopped ? x->stopped_line : x->lost_line, TRUE);
	put_u64 (o, "file_line", stopped ? x->stopped_part_line : x->lost_part_line, TRUE);
	KEY (o, "reason");
	mta_json_string (o, stopped ? x->stop_reason : x->lost_reason);
	mta_json_lit (o, ",\n    ");
	put_u64 (o, "lost_events", x->lost_events, TRUE);
	KEY (o, "lost_reason");
	mta_json_string (o, x->lost_reason);
	mta_json_lit (o, "},\n");
}

/* "skip_suggestion": a wrapper the list does not know (site-report.h). */
static void
put_skip_hint (MtaJsonOut *o, const MtaRun *run)
{
	MtaSkipHint h;

	KEY (o, "skip_suggestion");
	if (!mta_skip_hint (run, &h)) {
		mta_json_lit (o, "null,\n    ");
		return;
	}
	mta_json_lit (o, "{\"skip\": ");
	mta_json_string (o, h.skip);
	mta_json_lit (o, ", \"function\": ");
	mta_json_string (o, h.site->function);
	mta_json_lit (o, ", \"object\": ");
	mta_json_string (o, h.site->object);
	mta_json_lit (o, ", \"leaked_blocks\": ");
	mta_json_u64 (o, h.blocks);
	mta_json_lit (o, ", \"callers\": ");
	mta_json_u64 (o, h.callers);
	mta_json_lit (o, "},\n    ");
	g_free (h.skip);
}

/* "auto_skipped": the wrappers found without symbols (run.h), each with
 * its --skip spelling; [] when none. */
static void
put_auto_skipped (MtaJsonOut *o, const MtaRun *run)
{
	GPtrArray *sites = mta_run_sites (run);
	gboolean first = TRUE;

	mta_json_lit (o, "\"auto_skipped\": [");
	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (!s->auto_wrapper)
			continue;
		g_autofree char *skip = mta_skip_argument (s);
		if (first)
			mta_json_lit (o, "{\"skip\": ");
		else
			mta_json_lit (o, ", {\"skip\": ");
		mta_json_string (o, skip);
		mta_json_lit (o, ", \"function\": ");
		mta_json_string (o, s->function);
		mta_json_lit (o, ", \"object\": ");
		mta_json_string (o, s->object);
		mta_json_lit (o, ", \"callers\": ");
		mta_json_u64 (o, s->auto_callers);
		mta_json_lit (o, ", \"callers_via\": ");
		mta_json_u64 (o, MAX (s->auto_callers, s->auto_callers_via));
		mta_json_lit (o, ", \"code_bytes\": ");
		mta_json_u64 (o, s->code_size);
		mta_json_lit (o, "}");
		first = FALSE;
	}
	mta_json_lit (o, "],\n    ");
}

/* "lineage": the fork that started this process (the blocks it inherited)
 * and the blocks it handed to a child (lineage.h); null when neither. */
static void
put_lineage (MtaJsonOut *o, const MtaLineageInfo *l)
{
	mta_json_lit (o, "  \"lineage\": ");
	if (l == NULL || (l->parent_pid < 0 && l->handed_to_pid < 0)) {
		mta_json_lit (o, "null,\n");
		return;
	}
	mta_json_lit (o, "{\"parent\": ");
	if (l->parent_pid >= 0) {
		mta_json_lit (o, "{\"pid\": ");
		mta_json_i64 (o, l->parent_pid);
		mta_json_lit (o, ", ");
		put_u64 (o, "mark", l->parent_mark, TRUE);
		KEY (o, "trace");
		mta_json_string (o, l->parent_trace);
		mta_json_lit (o, ", ");
		put_u64 (o, "inherited_blocks", l->inherited_blocks, TRUE);
		put_u64 (o, "inherited_bytes", l->inherited_bytes, FALSE);
		mta_json_lit (o, "}");
	} else {
		mta_json_lit (o, "null");
	}
	mta_json_lit (o, ",\n    \"handed_to_child\": ");
	if (l->handed_to_pid >= 0) {
		mta_json_lit (o, "{\"pid\": ");
		if (l->handed_to_pid > 0) {
			mta_json_i64 (o, l->handed_to_pid);
			mta_json_lit (o, ", ");
		} else
			mta_json_lit (o, "null, ");
		put_u64 (o, "mark", l->handed_mark, TRUE);
		put_u64 (o, "blocks", l->handed_blocks, TRUE);
		put_u64 (o, "bytes", l->handed_bytes, TRUE);
		KEY (o, "trace");
		mta_json_string (o, l->handed_trace);
		mta_json_lit (o, "}");
	} else {
		mta_json_lit (o, "null");
	}
	mta_json_lit (o, "},\n");
}

/* "reach": {"definite": {"blocks": N, "bytes": N}, ...}: the blocks of
 * each category (reach.h), null for a trace without verdicts. */
static void
put_reach_counts (MtaJsonOut *o, const MtaRun *run, const uint64_t *blocks, const uint64_t *bytes)
{
	KEY (o, "reach");
	if (!mta_run_info (run)->reach) {
		mta_json_lit (o, "null");
		return;
	}
	mta_json_lit (o, "{");
	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (k)
			mta_json_lit (o, ", ");
		/* the names are the words of reach.c: nothing to escape */
		mta_json_lit (o, "\"");
		mta_json_cstr (o, mta_reach_name (r));
		mta_json_lit (o, "\": {\"blocks\": ");
		mta_json_u64 (o, blocks[r]);
		mta_json_lit (o, ", \"bytes\": ");
		mta_json_u64 (o, bytes[r]);
		mta_json_lit (o, "}");
	}
	mta_json_lit (o, "}");
}

/* ["S", ...] of strings escaped */
static void
put_string_array (MtaJsonOut *o, GPtrArray *a)
{
	mta_json_lit (o, "[");
	for (guint k = 0; k < a->len; k++) {
		if (k)
			mta_json_lit (o, ", ");
		mta_json_string (o, a->pdata[k]);
	}
	mta_json_lit (o, "]");
}

/* The run's "reach": its counts, the --leaks filter, the recorder's notes
 * and whether its scan finished. */
static void
put_reach (MtaJsonOut *o, const MtaRun *run)
{
	const MtaRunInfo *i = mta_run_info (run);

	mta_json_lit (o, "  ");
	put_reach_counts (o, run, i->reach_blocks, i->reach_bytes);
	mta_json_lit (o, ",\n  \"leak_kinds\": ");
	if (i->leak_kinds) {
		g_autofree char *names = mta_reach_mask_names (i->leak_kinds, "\", \"");
		mta_json_lit (o, "[\"");
		mta_json_cstr (o, names);
		mta_json_lit (o, "\"]");
	} else
		mta_json_lit (o, "null");
	mta_json_lit (o, ", ");
	put_u64 (o, "all_leaked_blocks", i->all_leaked_blocks, TRUE);
	put_u64 (o, "all_leaked_bytes", i->all_leaked_bytes, TRUE);
	KEY (o, "reach_finished");
	mta_json_bool (o, i->reach_finished);
	mta_json_lit (o, ", ");
	put_u64 (o, "reach_line", i->reach_line, TRUE);
	put_u64 (o, "reach_scans", i->reach_scans, TRUE);
	put_u64 (o, "reach_ms", i->reach_ms, TRUE);
	put_u64 (o, "reach_bad_lines", i->reach_bad_lines, TRUE);
	KEY (o, "reach_notes");
	put_string_array (o, i->reach_notes);
	mta_json_lit (o, ", \"reach_refused\": ");
	put_string_array (o, i->reach_refused);
	mta_json_lit (o, ",\n");
}

/* "run": what was read, its totals and the run's timeline. */
static void
put_run (MtaJsonOut *o, const MtaRun *run, guint growth, int64_t run_id)
{
	const MtaRunInfo *i = mta_run_info (run);

	mta_json_lit (o, "  \"run\": {\n    \"traces\": ");
	put_string_array (o, i->traces);
	mta_json_lit (o, ",\n    \"binary\": ");
	mta_json_string (o, i->binary);
	if (run_id > 0) {
		mta_json_lit (o, ", \"db_run_id\": ");
		mta_json_i64 (o, run_id);
	}
	mta_json_lit (o, ",\n    \"pid\": ");
	if (i->pid >= 0)
		mta_json_i64 (o, i->pid);
	else
		mta_json_lit (o, "null");
	mta_json_lit (o, ", \"exe\": ");
	mta_json_string (o, i->exe);
	mta_json_lit (o, ", \"cmdline\": ");
	mta_json_string (o, i->cmdline);
	mta_json_lit (o, ", \"start\": ");
	mta_json_string (o, i->start);
	mta_json_lit (o, ", \"stack_depth\": ");
	mta_json_i64 (o, i->depth);
	mta_json_lit (o, ", \"wrappers_skipped\": ");
	mta_json_bool (o, i->skip_wrappers);
	mta_json_lit (o, ",\n    ");
	put_skip_hint (o, run);
	put_auto_skipped (o, run);
	g_autofree char *depth_names = NULL;
	uint64_t depth_blocks = mta_depth_hint (run, &depth_names);
	KEY (o, "depth_suggestion");
	if (depth_blocks == 0)
		mta_json_lit (o, "null,\n    ");
	else {
		mta_json_lit (o, "{\"depth\": 16, \"wrappers\": ");
		mta_json_string (o, depth_names);
		mta_json_lit (o, ", ");
		put_u64 (o, "leaked_blocks", depth_blocks, FALSE);
		mta_json_lit (o, "},\n    ");
	}
	put_u64 (o, "lines", i->lines, TRUE);
	put_u64 (o, "unreadable_lines", i->unreadable_lines, TRUE);
	put_u64 (o, "events", i->events, TRUE);
	mta_json_lit (o, "\n    ");
	put_u64 (o, "allocations", i->allocs, TRUE);
	put_u64 (o, "frees", i->frees, TRUE);
	put_u64 (o, "reallocations", i->reallocs, TRUE);
	put_u64 (o, "failed_allocations", i->failed_allocs, TRUE);
	put_u64 (o, "duplicate_allocations", i->duplicates, TRUE);
	mta_json_lit (o, "\n    ");
	put_u64 (o, "bytes_allocated", i->bytes_allocated, TRUE);
	put_u64 (o, "peak_live_bytes", i->peak_live_bytes, TRUE);
	put_u64 (o, "leaked_blocks", i->leaked_blocks, TRUE);
	put_u64 (o, "leaked_bytes", i->leaked_bytes, TRUE);
	put_u64 (o, "bad_frees", i->bad_frees, TRUE);
	put_u64 (o, "attaches", i->attaches, TRUE);
	put_u64 (o, "frees_before_attach", i->frees_before_attach, TRUE);
	mta_json_lit (o, "\n    ");
	put_u64 (o, "temporary_allocations", i->temporary, TRUE);
	put_u64 (o, "peak_line", i->peak_line, TRUE);
	KEY (o, "growth_filter");
	if (growth) {
		mta_json_lit (o, "[");
		for (int k = 1, n = 0; k < MTA_GROWTH_N; k++)
			if (growth & (1u << k)) {
				if (n++)
					mta_json_lit (o, ", ");
				mta_json_lit (o, "\"");
				mta_json_cstr (o, mta_growth_name (k));
				mta_json_lit (o, "\"");
			}
		mta_json_lit (o, "]");
	} else
		mta_json_lit (o, "null");
	mta_json_lit (o, ",\n    \"leaks_proven\": ");
	mta_json_bool (o, !mta_incomplete_is (&i->incomplete));
	mta_json_lit (o, ", \"freeres\": ");
	mta_json_string (o, i->incomplete.freeres);
	if (i->time_axis)
		mta_json_lit (o, ",\n    \"timeline\": {\"axis\": \"time\", ");
	else
		mta_json_lit (o, ",\n    \"timeline\": {\"axis\": \"line\", ");
	put_u64_array (o, "lines", i->tl_lines, i->tl_len);
	mta_json_lit (o, ", ");
	if (i->time_axis)
		put_u64_array (o, "times_ns", i->tl_times, i->tl_len);
	else
		mta_json_lit (o, "\"times_ns\": null");
	mta_json_lit (o, "}\n  },\n");
}

/* One of "leak_sites": site SI, the K-th, its totals, timelines and
 * stacks (TL_BYTES, TL_BLOCKS: room for the run's timeline). */
static void
put_leak_site (MtaJsonOut *o, const MtaRun *run, uint32_t si, guint k, int frames,
	       uint64_t *tl_bytes, uint32_t *tl_blocks)
{
	const MtaRunInfo *i = mta_run_info (run);
	const MtaSite *s = mta_run_sites (run)->pdata[si];

	if (k)
		mta_json_lit (o, ",\n    {");
	else
		mta_json_lit (o, "\n    {");
	put_site_fields (o, s);
	mta_json_lit (o, ",\n      ");
	put_u64 (o, "leaked_blocks", s->t->leaked_blocks, TRUE);
	put_u64 (o, "leaked_bytes", s->t->leaked_bytes, TRUE);
	put_u64 (o, "allocations", s->t->allocs, TRUE);
	put_u64 (o, "frees", s->t->frees, TRUE);
	put_u64 (o, "bytes_allocated", s->t->bytes_allocated, TRUE);
	put_u64 (o, "peak_live_bytes", s->peak_live_bytes, TRUE);
	put_u64 (o, "first_line", s->t->first_line, TRUE);
	mta_json_lit (o, "\n      \"growth\": \"");
	mta_json_cstr (o, mta_growth_name (s->growth));
	mta_json_lit (o, "\", \"growth_exponent\": ");
	/* most sites are not fitted: printf's "0.000" without printf */
	if (s->growth_exponent == 0 && !signbit (s->growth_exponent))
		mta_json_lit (o, "0.000");
	else
		mta_json_fixed (o, s->growth_exponent, 3);
	mta_json_lit (o, ", ");
	put_u64 (o, "temporary_allocations", s->t->temporary, TRUE);
	put_u64 (o, "peak_share_bytes", s->peak_share_bytes, TRUE);
	KEY (o, "proven");
	mta_json_bool (o, mta_run_site_proven (run, s));
	mta_json_lit (o, ",\n      ");
	put_reach_counts (o, run, mta_site_reach_blocks (s), mta_site_reach_bytes (s));
	mta_json_lit (o, ",\n      ");
	if (mta_run_site_timeline (run, s, tl_bytes, tl_blocks)) {
		put_u32_array (o, "live_blocks_over_time", tl_blocks, i->tl_len);
		mta_json_lit (o, ",\n      ");
		put_u64_array (o, "live_bytes_over_time", tl_bytes, i->tl_len);
		mta_json_lit (o, ",\n      ");
	}
	put_stacks (o, run, si, frames, TRUE);
	mta_json_lit (o, "}");
}

/* "thread": N, or null when not recorded */
static void
put_thread (MtaJsonOut *o, uint32_t tid)
{
	mta_json_lit (o, ", \"thread\": ");
	if (tid)
		mta_json_u64 (o, tid);
	else
		mta_json_lit (o, "null");
}

/* "leaks": the leaked blocks of the sites listed (LEAK_SLOT). */
static void
put_leaks (MtaJsonOut *o, const MtaRun *run, const SiteSlots *leak_slot)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *paths = mta_run_paths (run);
	GArray *leaks = mta_run_leaks (run);
	guint nleaks = 0;

	mta_json_lit (o, "  \"leaks\": [");
	for (guint k = 0; k < leaks->len; k++) {
		const MtaRecord *r = &g_array_index (leaks, MtaRecord, k);
		const MtaPath *p = paths->pdata[r->path];
		if (!site_slot (leak_slot, p->site))
			continue;
		if (nleaks++)
			mta_json_lit (o, ",\n    {\"address\": \"");
		else
			mta_json_lit (o, "\n    {\"address\": \"");
		mta_json_hex (o, r->addr);
		mta_json_lit (o, "\", \"size\": ");
		mta_json_u64 (o, r->size);
		mta_json_lit (o, ", \"line\": ");
		mta_json_u64 (o, r->line);
		put_thread (o, r->tid);
		mta_json_lit (o, ", \"site\": ");
		put_site_index (o, leak_slot, p->site);
		mta_json_lit (o, ", \"reach\": ");
		if (i->reach) {
			mta_json_lit (o, "\"");
			mta_json_cstr (o, mta_reach_name ((MtaReach) r->reach));
			mta_json_lit (o, "\"");
		} else
			mta_json_lit (o, "null");
		mta_json_lit (o, "}");
	}
	if (nleaks)
		mta_json_lit (o, "\n  ],\n");
	else
		mta_json_lit (o, "],\n");
}

/* "bad_frees": the frees of memory never allocated (BAD_SLOT: their
 * sites' places). */
static void
put_bad_frees (MtaJsonOut *o, const MtaRun *run, const SiteSlots *bad_slot)
{
	GPtrArray *paths = mta_run_paths (run);
	GArray *bad = mta_run_bad_frees (run);

	mta_json_lit (o, "  \"bad_frees\": [");
	for (guint k = 0; k < bad->len; k++) {
		const MtaRecord *r = &g_array_index (bad, MtaRecord, k);
		const MtaPath *p = paths->pdata[r->path];
		if (k)
			mta_json_lit (o, ",\n    {\"address\": \"");
		else
			mta_json_lit (o, "\n    {\"address\": \"");
		mta_json_hex (o, r->addr);
		if (r->op == '<')
			mta_json_lit (o, "\", \"kind\": \"realloc\", \"line\": ");
		else
			mta_json_lit (o, "\", \"kind\": \"free\", \"line\": ");
		mta_json_u64 (o, r->line);
		put_thread (o, r->tid);
		mta_json_lit (o, ", \"site\": ");
		put_site_index (o, bad_slot, p->site);
		mta_json_lit (o, "}");
	}
	if (bad->len)
		mta_json_lit (o, "\n  ],\n");
	else
		mta_json_lit (o, "],\n");
}

void
mta_json_write_growth (const MtaRun *run, int frames, guint growth, int64_t run_id,
		       const MtaLineageInfo *lineage, FILE *out)
{
	const MtaRunInfo *i = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GArray) leak_sites = mta_run_leak_sites_filtered (run, growth);
	g_autoptr (GArray) bad_sites = mta_run_bad_free_sites (run);
	/* freed by hand, as the timelines below: clang's analyzer loses
	 * them through the structs that hand them on */
	uint32_t *leak_slots = g_new0 (uint32_t, sites->len + 1);
	uint32_t *bad_slots = g_new0 (uint32_t, sites->len + 1);
	SiteSlots leak_slot = { leak_slots, sites->len }, bad_slot = { bad_slots, sites->len };
	GHashTable *threads = mta_run_threads (run);
	/* freed after the leak sites (not g_autofree: clang's analyzer
	 * loses such arrays through the call that fills them) */
	uint64_t *tl_bytes = g_new (uint64_t, i->tl_len + 1);
	uint32_t *tl_blocks = g_new (uint32_t, i->tl_len + 1);
	g_autofree char *buf = g_malloc (1 << 16);
	MtaJsonOut jo, *o = &jo;

	mta_json_out_init (o, out, buf, 1 << 16);
	mta_json_lit (o, "{\n  \"format\": \"mtanalyze\", \"version\": ");
	mta_json_u64 (o, JSON_FORMAT_VERSION);
	mta_json_lit (o, ",\n");
	put_run (o, run, growth, run_id);
	put_incomplete (o, &i->incomplete);
	put_reach (o, run);
	put_lineage (o, lineage);
	put_peak_and_temporary (o, run);

	mta_json_lit (o, "  \"leak_sites\": [");
	for (guint k = 0; k < leak_sites->len; k++) {
		uint32_t si = g_array_index (leak_sites, uint32_t, k);
		leak_slots[si] = k + 1;
		put_leak_site (o, run, si, k, frames, tl_bytes, tl_blocks);
	}
	g_free (tl_bytes);
	g_free (tl_blocks);
	if (leak_sites->len)
		mta_json_lit (o, "\n  ],\n");
	else
		mta_json_lit (o, "],\n");

	mta_json_lit (o, "  \"bad_free_sites\": [");
	for (guint k = 0; k < bad_sites->len; k++) {
		uint32_t si = g_array_index (bad_sites, uint32_t, k);
		const MtaSite *s = sites->pdata[si];
		bad_slots[si] = k + 1;
		if (k)
			mta_json_lit (o, ",\n    {");
		else
			mta_json_lit (o, "\n    {");
		put_site_fields (o, s);
		mta_json_lit (o, ", ");
		put_u64 (o, "bad_frees", s->t->bad_frees, TRUE);
		put_u64 (o, "first_line", s->t->first_line, TRUE);
		mta_json_lit (o, "\n      ");
		put_stacks (o, run, si, frames, FALSE);
		mta_json_lit (o, "}");
	}
	if (bad_sites->len)
		mta_json_lit (o, "\n  ],\n");
	else
		mta_json_lit (o, "],\n");

	put_leaks (o, run, &leak_slot);
	put_bad_frees (o, run, &bad_slot);
	g_free (leak_slots);
	g_free (bad_slots);
	mta_json_out_flush (o);
	mta_kind_json (run, frames, out);

	mta_json_lit (o, "  \"threads\": {");
	GHashTableIter it;
	gpointer hk, hv;
	gboolean first = TRUE;
	g_hash_table_iter_init (&it, threads);
	while (g_hash_table_iter_next (&it, &hk, &hv)) {
		if (first)
			mta_json_lit (o, "\"");
		else
			mta_json_lit (o, ", \"");
		mta_json_u64 (o, GPOINTER_TO_UINT (hk));
		mta_json_lit (o, "\": ");
		mta_json_string (o, hv);
		first = FALSE;
	}
	mta_json_lit (o, "}\n}\n");
	mta_json_out_flush (o);
}
