/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* timeline.h -- a run over time (timeline.c): every site's live blocks and
 * bytes sampled at up to MTA_TL_MAX points of the run, and the recorder's
 * clock ("# time" lines) to put those points, and any line, on its axis.
 * Embedded in the run; the fields are the timeline's own.
 *
 * A sample does not visit the sites (a run may have millions): each site
 * keeps the values it held before its changes that some sample needs
 * (MtaTlPoint, mta_timeline_keep), at most about two per sample, and the
 * samples are read back from them (mta_timeline_expand). */
#ifndef MTA_TIMELINE_H
#define MTA_TIMELINE_H

#include <glib.h>
#include <stdint.h>

/* Fewer "# time" lines than this: the timeline is in lines.  The recorder
 * writes one at the start and one at the end of recording, and one every
 * 100 ms while events come, so every trace of ours has a clock however
 * short the run; a glibc trace has none, a crashed run of ours only its
 * start's. */
#define MTA_TIME_AXIS_MIN_LINES 2

/* Samples kept a site (even). */
#define MTA_TL_MAX 64

typedef struct {
	uint64_t line, ns;
} MtaAnchor;

typedef struct {
	/* samples: evenly spaced in lines, every other one dropped and the
	 * spacing doubled when they fill up */
	uint64_t step, next;
	guint len;
	uint64_t lines[MTA_TL_MAX + 1];
	/* the clock: "# time" lines as anchors, thinned the same way */
	GArray *anchors;           /* MtaAnchor */
	uint64_t anchor_every, anchor_seen;
	MtaAnchor last;
	uint64_t time_lines;
	gboolean time_axis;        /* after finish: positions are times */
} MtaTimeline;

/* A value a site held up to line UNTIL (the samples taken before it). */
typedef struct {
	uint64_t until;
	uint64_t bytes;
	uint32_t blocks;
} MtaTlPoint;

/* One site's points, in line order.  A site's first point is most often
 * its only one, and zero (it was charged after a sample, and held nothing
 * before): that one is kept in place of the array (CAP 0, N 1), not as
 * 32 bytes of heap a site. */
typedef struct {
	union {
		MtaTlPoint *p;         /* CAP > 0 */
		uint64_t zero_until;   /* CAP 0, N 1: { zero_until, 0, 0 } */
	};
	uint32_t n, cap;
} MtaTlPoints;

/* Point J of PTS. */
static inline MtaTlPoint
mta_tl_point (const MtaTlPoints *pts, guint j)
{
	return pts->cap > 0 ? pts->p[j] : (MtaTlPoint) { pts->zero_until, 0, 0 };
}

static inline void
mta_tl_points_release (MtaTlPoints *pts)
{
	if (pts->cap > 0)
		g_free (pts->p);
	*pts = (MtaTlPoints) { 0 };
}

void mta_timeline_init (MtaTimeline *t);
void mta_timeline_release (MtaTimeline *t);

/* A "# time NS" line read at trace line LINE. */
void mta_timeline_clock (MtaTimeline *t, uint64_t line, uint64_t ns);

/* Whether the event of LINE is due a sample before it. */
static inline gboolean
mta_timeline_due (const MtaTimeline *t, uint64_t line)
{
	return line >= t->next;
}
/* A sample before LINE. */
void mta_timeline_sample (MtaTimeline *t, uint64_t line);

/* A site's live BYTES and BLOCKS, held since its previous change, are
 * about to change at LINE: keep them when a sample was taken since. */
void mta_timeline_keep (const MtaTimeline *t, MtaTlPoints *pts, uint64_t line, uint64_t bytes,
			uint64_t blocks);

/* The site's value at each sample (after finish: t->len of them), from its
 * points and its value at the end; BYTES or BLOCKS may be NULL. */
void mta_timeline_expand (const MtaTimeline *t, const MtaTlPoints *pts, uint64_t end_bytes,
			  uint64_t end_blocks, uint64_t *bytes, uint32_t *blocks);

/* The run ended after LINES lines: a last sample (the end), and the clock
 * closed.  The samples' lines (and times, on a time axis) are copied out
 * for the run's info (free them); the end's time in *END_NS. */
void mta_timeline_finish (MtaTimeline *t, uint64_t lines, uint64_t **sample_lines,
			  uint64_t **sample_times, uint64_t *end_ns);

/* Position of LINE on the run's axis (after finish): ns since the start,
 * interpolated between anchors, on a time axis; else the line itself. */
double mta_timeline_position (const MtaTimeline *t, uint64_t line);

#endif
