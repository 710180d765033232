/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timeline.c -- a run over time (timeline.h).  Memory stays MTA_TL_MAX
 * values a site and MAX_ANCHORS anchors however long the trace: both are
 * thinned by dropping every other one and doubling their spacing. */
#include "timeline.h"

#define MAX_ANCHORS 1024

void
mta_timeline_init (MtaTimeline *t)
{
	*t = (MtaTimeline) { .step = 1, .next = 1, .anchor_every = 1 };
	t->anchors = g_array_new (FALSE, FALSE, sizeof (MtaAnchor));
}

void
mta_timeline_release (MtaTimeline *t)
{
	if (t->anchors != NULL)
		g_array_free (t->anchors, TRUE);
	t->anchors = NULL;
}

void
mta_timeline_clock (MtaTimeline *t, uint64_t line, uint64_t ns)
{
	/* Threads write their lines in chunks of their own: keep the clock
	 * monotonic along the file. */
	if (ns < t->last.ns)
		ns = t->last.ns;
	t->time_lines++;
	t->last.line = line;
	t->last.ns = ns;
	if (t->anchor_seen++ % t->anchor_every != 0)
		return;
	if (t->anchors->len == MAX_ANCHORS) {
		for (guint i = 0; i < MAX_ANCHORS / 2; i++)
			g_array_index (t->anchors, MtaAnchor, i) = g_array_index (t->anchors, MtaAnchor, (gsize) 2 * i);
		g_array_set_size (t->anchors, MAX_ANCHORS / 2);
		t->anchor_every *= 2;
	}
	g_array_append_val (t->anchors, t->last);
}

void
mta_timeline_sample (MtaTimeline *t, uint64_t line)
{
	guint n = t->len;
	if (n == MTA_TL_MAX) {
		for (guint i = 0; i < MTA_TL_MAX / 2; i++)
			t->lines[i] = t->lines[2 * i + 1];
		n = MTA_TL_MAX / 2;
		t->step *= 2;
	}
	t->lines[n] = line;
	t->len = n + 1;
	t->next = line + t->step;
}

/* Drop the points no sample needs any more (thinning dropped theirs): a
 * point is needed by the samples after the previous point, up to its own
 * line.  At most one a sample is left. */
static void
compact_points (const MtaTimeline *t, MtaTlPoints *pts)
{
	guint w = 0, k = 0;
	uint64_t prev = 0;

	for (guint j = 0; j < pts->n; j++) {
		while (k < t->len && t->lines[k] <= prev)
			k++;
		if (k < t->len && t->lines[k] <= pts->p[j].until)
			pts->p[w++] = pts->p[j];
		prev = pts->p[j].until;
	}
	pts->n = w;
}

void
mta_timeline_keep (const MtaTimeline *t, MtaTlPoints *pts, uint64_t line, uint64_t bytes,
		   uint64_t blocks)
{
	uint64_t prev = pts->n ? mta_tl_point (pts, pts->n - 1).until : 0;

	/* no sample since its previous change saw this value */
	if (t->len == 0 || t->lines[t->len - 1] <= prev)
		return;
	if (pts->n == 0 && bytes == 0 && blocks == 0) {
		*pts = (MtaTlPoints) { .zero_until = line, .n = 1, .cap = 0 };
		return;
	}
	if (pts->cap == 0 && pts->n == 1) {
		MtaTlPoint first = mta_tl_point (pts, 0);
		pts->p = g_new (MtaTlPoint, 2);
		pts->p[0] = first;
		pts->cap = 2;
	}
	if (pts->n == pts->cap) {
		if (pts->cap >= 2 * (MTA_TL_MAX + 1))
			compact_points (t, pts);
		if (pts->n == pts->cap) {
			pts->cap = pts->cap ? 2 * pts->cap : 1;
			pts->p = g_renew (MtaTlPoint, pts->p, pts->cap);
		}
	}
	pts->p[pts->n++] = (MtaTlPoint) { line, bytes, (uint32_t) MIN (blocks, G_MAXUINT32) };
}

void
mta_timeline_expand (const MtaTimeline *t, const MtaTlPoints *pts, uint64_t end_bytes,
		     uint64_t end_blocks, uint64_t *bytes, uint32_t *blocks)
{
	guint j = 0;

	for (guint k = 0; k < t->len; k++) {
		while (j < pts->n && mta_tl_point (pts, j).until < t->lines[k])
			j++;
		MtaTlPoint at = j < pts->n ? mta_tl_point (pts, j)
			: (MtaTlPoint) { 0, end_bytes, (uint32_t) MIN (end_blocks, G_MAXUINT32) };
		if (bytes != NULL)
			bytes[k] = at.bytes;
		if (blocks != NULL)
			blocks[k] = at.blocks;
	}
}

void
mta_timeline_finish (MtaTimeline *t, uint64_t lines, uint64_t **sample_lines,
		     uint64_t **sample_times, uint64_t *end_ns)
{
	MtaAnchor zero = { 0, 0 };

	/* the anchors of the clock, from (0, 0) to the last "# time" line */
	t->time_axis = t->time_lines >= MTA_TIME_AXIS_MIN_LINES;
	g_array_prepend_val (t->anchors, zero);
	if (t->last.line > g_array_index (t->anchors, MtaAnchor, t->anchors->len - 1).line)
		g_array_append_val (t->anchors, t->last);
	*end_ns = t->last.ns;

	/* the end of the run as a last sample */
	t->lines[t->len] = lines + 1;
	t->len++;
	*sample_lines = g_memdup2 (t->lines, t->len * sizeof (uint64_t));
	*sample_times = NULL;
	if (t->time_axis) {
		*sample_times = g_new (uint64_t, t->len);
		for (guint k = 0; k < t->len; k++)
			(*sample_times)[k] = (uint64_t) mta_timeline_position (t, t->lines[k]);
	}
}

double
mta_timeline_position (const MtaTimeline *t, uint64_t line)
{
	if (!t->time_axis)
		return (double) line;
	const MtaAnchor *a = (const MtaAnchor *) (void *) t->anchors->data;
	guint lo = 0, hi = t->anchors->len - 1;
	if (line >= a[hi].line)
		return (double) a[hi].ns;
	while (hi - lo > 1) {   /* a[lo].line <= line < a[hi].line */
		guint mid = (lo + hi) / 2;
		if (a[mid].line <= line)
			lo = mid;
		else
			hi = mid;
	}
	double f = (double) (line - a[lo].line) / (double) (a[hi].line - a[lo].line);
	return (double) a[lo].ns + f * (double) (a[hi].ns - a[lo].ns);
}
