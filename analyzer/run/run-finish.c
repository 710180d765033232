/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run-finish.c -- the end of a run (mta_run_finish): the blocks still live
 * become its leak records, each leaking site gets its growth class and its
 * reachability, the sites' totals are summed from their paths, and the
 * tables only the reading needed are freed.  Then the readers' questions
 * about a finished run (its paths by site, a path's tail).  The reading
 * itself, line by line, is run.c's.
 */
#include "run-private.h"
#include "compact-sum.h"
#include "growth.h"
#include "kinds.h"
#include "live-table.h"
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

double
mta_run_position (const MtaRun *r, uint64_t line)
{
	return mta_timeline_position (&r->timeline, line);
}

typedef struct {
	uint32_t site;
	MtaGrowthPoint pt;
} SitePoint;

static int
site_point_cmp (const void *a, const void *b)
{
	const SitePoint *x = a, *y = b;
	return x->site < y->site ? -1 : x->site > y->site;
}

/* Each leaking site's class, from the moments its leaked blocks were
 * allocated (growth.c). */
static void
classify_growth (MtaRun *r)
{
	guint n = r->leaks->len;
	SitePoint *sp = g_new (SitePoint, n ? n : 1);
	MtaGrowthPoint *pts = g_new (MtaGrowthPoint, n ? n : 1);
	double end = r->info.time_axis ? (double) r->info.end_time_ns : (double) r->info.lines;
	double *at = g_new (double, r->info.tl_len ? r->info.tl_len : 1);
	uint32_t *blocks = g_new (uint32_t, r->info.tl_len ? r->info.tl_len : 1);

	/* the timeline's samples on the run's axis, for the sites' live blocks */
	for (guint k = 0; k < r->info.tl_len; k++)
		at[k] = r->info.tl_times ? (double) r->info.tl_times[k] : (double) r->info.tl_lines[k];

	for (guint k = 0; k < n; k++) {
		const MtaRecord *rec = &g_array_index (r->leaks, MtaRecord, k);
		const MtaPath *p = r->paths->pdata[rec->path];
		sp[k].site = (uint32_t) p->site;
		sp[k].pt.pos = mta_run_position (r, rec->line);
		sp[k].pt.bytes = rec->size;
		sp[k].pt.line = rec->line;
	}
	qsort (sp, n, sizeof *sp, site_point_cmp);
	for (guint k = 0; k < n;) {
		guint j = k;
		while (j < n && sp[j].site == sp[k].site) {
			pts[j - k] = sp[j].pt;
			j++;
		}
		MtaSite *s = site_at (r, sp[k].site);
		gboolean have_live = mta_run_site_timeline (r, s, NULL, blocks);
		MtaGrowthLive live = { r->info.tl_len, at, r->info.tl_lines, blocks };
		MtaGrowthFrees frees = {
			.any = s->t->frees > 0,
			.last_born = mta_run_position (r, s->t->last_freed_born),
			.last_free = mta_run_position (r, s->t->last_free_line),
			.live = have_live ? &live : NULL,
		};
		s->growth = mta_growth_classify (pts, j - k, 0, end, &frees, &s->growth_exponent);
		k = j;
	}
	g_free (at);
	g_free (blocks);
	g_free (sp);
	g_free (pts);
}

static int
record_by_addr (const void *a, const void *b)
{
	const MtaRecord *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The earlier of two line numbers, 0 meaning none. */
static uint64_t
earliest (uint64_t a, uint64_t b)
{
	return a == 0 || (b != 0 && b < a) ? b : a;
}

/* A leaked block of CAT charged to S: its arrays are made on the first. */
static void
site_reach (MtaRun *r, MtaSite *s, MtaReach cat, uint64_t size)
{
	if (s->reach == mta_run_no_reach)
		s->reach = mta_run_arena_alloc0 (&r->arena, (size_t) 2 * MTA_REACH_N * sizeof (uint64_t));
	/* the run's own array, const for the reports */
	((uint64_t *) s->reach)[cat]++;
	((uint64_t *) s->reach)[MTA_REACH_N + cat] += size;
}

/* The paths of each site, found once (a counting sort): the reports go
 * site by site, and a scan of every path for each site is quadratic. */
static void
index_paths_by_site (MtaRun *r)
{
	guint ns = r->sites->len, np = r->paths->len;
	uint32_t *start = g_new0 (uint32_t, (gsize) ns + 1);
	uint32_t *list = g_new (uint32_t, np ? np : 1);

	for (guint i = 0; i < np; i++)
		start[((MtaPath *) r->paths->pdata[i])->site + 1]++;
	for (guint i = 0; i < ns; i++)
		start[i + 1] += start[i];
	/* start[s] is the first of site s; fill each site from its end
	 * backwards, so that its paths stay in path order ... */
	for (guint i = np; i-- > 0;) {
		const MtaPath *p = r->paths->pdata[i];
		list[--start[p->site + 1]] = i;
	}
	/* ... which leaves the first of site s in start[s + 1] */
	memmove (start, start + 1, ns * sizeof *start);
	start[ns] = np;
	r->site_path_start = start;
	r->site_paths = list;
}

/* Each site's totals, from its paths (index_paths_by_site): a site of
 * one path points to that path's own, the others to their sums. */
static void
sum_sites (MtaRun *r)
{
	for (guint i = 0; i < r->sites->len; i++) {
		MtaSite *s = site_at (r, i);
		uint32_t from = r->site_path_start[i], to = r->site_path_start[i + 1];
		if (to - from == 1) {
			s->t = &((const MtaPath *) r->paths->pdata[r->site_paths[from]])->totals;
			continue;
		}
		if (from == to)
			continue;	/* no_totals */
		MtaTotals *t = mta_run_arena_alloc0 (&r->arena, sizeof *t);
		for (uint32_t k = from; k < to; k++) {
			/* by the path's own names, as they were written */
			const MtaPath *p = r->paths->pdata[r->site_paths[k]];
			t->allocs += p->allocs;
			t->frees += p->frees;
			t->bytes_allocated += p->bytes_allocated;
			t->leaked_blocks += p->leaked_blocks;
			t->leaked_bytes += p->leaked_bytes;
			t->bad_frees += p->bad_frees;
			t->temporary += p->temporary;
			t->first_line = earliest (t->first_line, p->first_line);
			t->first_leak_line = earliest (t->first_leak_line, p->first_leak_line);
			t->first_bad_line = earliest (t->first_bad_line, p->first_bad_line);
			t->last_free_line = MAX (t->last_free_line, p->last_free_line);
			t->last_freed_born = MAX (t->last_freed_born, p->last_freed_born);
		}
		s->t = t;
	}
}

void
mta_run_finish (MtaRun *r, uint64_t lines, uint64_t unreadable_lines)
{
	g_return_if_fail (r->site_by_field != NULL);	/* once */
	r->info.lines = lines;
	r->info.unreadable_lines = unreadable_lines;
	r->info.bad_frees_kept = r->bad_frees->len;
	mta_run_reach_finish (r);

	/* Paths whose stack never came are charged by their caller field
	 * (which may find a wrapper, and move paths to their next frame):
	 * first, so that the leaks below go to the sites that stay. */
	for (guint i = 0; i < r->paths->len; i++)
		mta_run_resolve_path (r, r->paths->pdata[i], TRUE);
	mta_run_drop_path_tables (r);

	/* every block live at the end may be a leak: one allocation, not a
	 * doubling that holds 1.5 times the records at its last step */
	g_array_set_size (r->leaks, (guint) r->blocks.count);
	g_array_set_size (r->leaks, 0);
	/* beside the live blocks packed: the records' 40 bytes a block, not
	 * the table's 80 (2M leaks: 80 MB of the run's peak) */
	const MtaLiveEntry *live = mta_live_pack (&r->blocks);
	for (size_t i = 0; i < r->blocks.count; i++) {
		const MtaLiveEntry *b = &live[i];
		MtaRecord rec = { b->addr, b->size, b->seq, b->path, (uint32_t) b->tid, '+', 0 };
		const MtaLiveEntry *v = r->info.reach ? mta_live_lookup (&r->verdicts, b->addr) : NULL;
		MtaReach cat = v != NULL ? (MtaReach) v->flags : MTA_REACH_UNKNOWN;
		rec.reach = (uint8_t) cat;
		r->info.reach_blocks[cat]++;
		r->info.reach_bytes[cat] += b->size;
		r->info.all_leaked_blocks++;
		r->info.all_leaked_bytes += b->size;
		/* --leaks: the others are not leaks for this report */
		if (r->info.leak_kinds != 0 && !(r->info.leak_kinds & (1u << cat)))
			continue;
		g_array_append_val (r->leaks, rec);
		MtaPath *p = r->paths->pdata[rec.path];
		if (p->leaked_blocks++ == 0 || b->seq < p->first_leak_line)
			p->first_leak_line = b->seq;
		p->leaked_bytes += b->size;
		/* the reports show a site's categories only from a scan's
		 * verdicts: without them, 80 bytes a leaking site for nothing */
		if (r->info.reach)
			site_reach (r, site_at (r, (uint32_t) p->site), cat, b->size);
		r->info.leaked_blocks++;
		r->info.leaked_bytes += b->size;
	}
	/* and the live blocks, once they are leak records */
	mta_live_release (&r->blocks);
	mta_live_init (&r->blocks);
	mta_live_release (&r->verdicts);
	mta_live_init (&r->verdicts);
	g_array_sort (r->leaks, record_by_addr);
	mta_run_count_auto_callers (r);
	index_paths_by_site (r);
	sum_sites (r);
	mta_kinds_finish (r->kinds, r->paths);
	mta_timeline_finish (&r->timeline, r->info.lines, &r->info.tl_lines, &r->info.tl_times,
			     &r->info.end_time_ns);
	r->info.tl_len = r->timeline.len;
	r->info.time_lines = r->timeline.time_lines;
	r->info.time_axis = r->timeline.time_axis;
	for (guint i = 0; i < r->sites->len; i++) {
		MtaSite *s = r->sites->pdata[i];
		if (s->peak_mark != r->peak_epoch)
			s->peak_share_bytes = s->live_bytes;
		s->growth_exponent = 0;    /* classify_growth's, in peak_mark's place */
		/* found a wrapper after the peak: what it held then was its
		 * callers' (who held what is not known) */
		if (s->auto_wrapper)
			s->peak_share_bytes = 0;
	}
	/* the peak lies in a compacted trace: the shares it carried */
	if (r->compact_peak_epoch != 0 && r->peak_epoch == r->compact_peak_epoch) {
		for (guint i = 0; i < r->sites->len; i++)
			((MtaSite *) r->sites->pdata[i])->peak_share_bytes = 0;
		for (guint i = 0; r->compact_shares != NULL && i < r->compact_shares->len; i++) {
			const MtaPath *p = r->paths->pdata[i];
			site_at (r, (uint32_t) p->site)->peak_share_bytes +=
				g_array_index (r->compact_shares, uint64_t, i);
		}
	}
	classify_growth (r);
}

const uint32_t *
mta_run_site_paths (const MtaRun *r, uint32_t site, guint *n)
{
	if (r->site_path_start == NULL || site >= r->sites->len) {
		*n = 0;
		return NULL;
	}
	*n = r->site_path_start[site + 1] - r->site_path_start[site];
	return r->site_paths + r->site_path_start[site];
}

GArray *
mta_path_tail (const MtaPath *p, guint max)
{
	GArray *a = g_array_new (FALSE, FALSE, sizeof (uint32_t));
	for (uint32_t i = p->site_frame + 1; i < p->nframes && a->len < max; i++)
		g_array_append_val (a, p->frames[i]);
	return a;
}
