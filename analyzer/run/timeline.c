/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timeline.c -- a run over time (timeline.h).  Memory stays MTA_TL_MAX
 * values a site and MAX_ANCHORS anchors however long the trace: both are
 * thinned by dropping every other one and doubling their spacing. */
#include "timeline.h"
#include "run.h"

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

/* Sample n: every site's live bytes and blocks now. */
static void
put_sample (GPtrArray *sites, guint n)
{
	for (guint k = 0; k < sites->len; k++) {
		MtaSite *s = sites->pdata[k];
		if (s->tl_bytes == NULL)
			continue;
		s->tl_bytes[n] = s->live_bytes;
		s->tl_blocks[n] = (uint32_t) MIN (s->live_blocks, G_MAXUINT32);
	}
}

void
mta_timeline_sample (MtaTimeline *t, GPtrArray *sites, uint64_t line)
{
	guint n = t->len;
	if (n == MTA_TL_MAX) {
		for (guint i = 0; i < MTA_TL_MAX / 2; i++)
			t->lines[i] = t->lines[2 * i + 1];
		for (guint k = 0; k < sites->len; k++) {
			MtaSite *s = sites->pdata[k];
			if (s->tl_bytes == NULL)
				continue;
			for (guint i = 0; i < MTA_TL_MAX / 2; i++) {
				s->tl_bytes[i] = s->tl_bytes[2 * i + 1];
				s->tl_blocks[i] = s->tl_blocks[2 * i + 1];
			}
		}
		n = MTA_TL_MAX / 2;
		t->step *= 2;
	}
	t->lines[n] = line;
	put_sample (sites, n);
	t->len = n + 1;
	t->next = line + t->step;
}

void
mta_timeline_finish (MtaTimeline *t, GPtrArray *sites, uint64_t lines,
		     uint64_t **sample_lines, uint64_t **sample_times, uint64_t *end_ns)
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
	put_sample (sites, t->len);
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
