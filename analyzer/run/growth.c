/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* growth.c -- the growth class of a leaking site (share/growth.md).
 *
 * What is classified is the site's leak itself: the cumulative bytes of
 * the blocks that are never freed, by the moment each was allocated.  That
 * is the site's live bytes restricted to its leaked blocks, a step curve
 * known exactly at the end of the run, without the noise of the blocks
 * that come and go (a site with a large working set and a small leak would
 * hide the leak in its live bytes).  Only whether the leak stopped growing
 * also looks at the site's live blocks: a cache at its size that evicts
 * keeps its newest entries, which look late-born, while its live count
 * stays flat.
 *
 * A class other than constant needs evidence: a CI gate on "linear,
 * exponential" that fails on a shutdown burst or a full cache gets switched
 * off, and one whose verdict changes from run to run of the same program
 * too.  The rule, in order:
 *   1. the site freed blocks until the end and what it leaks was all
 *      allocated after the last block it freed was: constant (what a full
 *      FIFO cache or a queue holds at the end, not an accumulation);
 *   2. a cache at its size, over the last PLATEAU of the run's events
 *      (is_full_cache): bounded;
 *   3. the middle 80% of the leaked bytes (from 10% to 90%) allocated within
 *      BURST of the run's span: constant (a one-off, at start-up or later);
 *   4. the blocks allocated in the run's last END_ZONE are set aside (a
 *      shutdown, blocks in flight when the trace or its window ended); if
 *      nothing is left, or what is left is a burst by rule 3: constant;
 *   5. what is left made in fewer than MIN_MOMENTS bursts (blocks closer
 *      together than TIGHT of the leak's mean gap): constant (a start-up
 *      and a shutdown that the end zone cut through);
 *   6. the leak stopped growing (but STRAGGLERS of its blocks) for PLATEAU
 *      of the run before the end zone while the program went on
 *      (PLATEAU_LINES of the run's lines): bounded; under MIN_FIT blocks,
 *      made within half MIN_SPAN of the run: constant (a start-up that
 *      took a while);
 *   7. fewer than MIN_FIT blocks or bursts, or the leak's span (from its
 *      first block to the end zone) shorter than MIN_SPAN of the run:
 *      unknown;
 *   8. otherwise fit y = a + b x^p by least squares to the curve sampled at
 *      SAMPLES points, x from the first leaked block to the end zone, both
 *      x and y scaled to [0, 1], p on a geometric grid from 0.05 to 8;
 *      p < LOG_MAX: logarithmic, p <= LINEAR_MAX: linear, else exponential;
 *      but a leak logarithmic in time that is steady in the program's
 *      events (the same fit on trace lines, from its first block to the
 *      end zone's first line, p from EVENTS_LINEAR_MIN to
 *      EVENTS_LINEAR_MAX) is linear (events_power).
 */
#include "growth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BURST 0.05
#define END_ZONE 0.01
#define TIGHT 0.1
#define MIN_FIT 8
#define MIN_SPAN 0.25
#define MIN_MOMENTS 4
#define SURVIVORS 0.9
#define PLATEAU (1.0 / 3)
#define NOISY_PLATEAU 0.5
#define PLATEAU_LINES 0.1
#define STRAGGLERS 0.02
#define LIVE_TOL 0.1
#define TREND_TOL 0.1
#define SAMPLES 64
#define LOG_MAX 0.6
#define LINEAR_MAX 1.6
#define EVENTS_LINEAR_MIN 0.8     /* rule 8's second look: steady in events */
#define EVENTS_LINEAR_MAX 1.25

static const char *const names[MTA_GROWTH_N] = {
	"", "constant", "bounded", "logarithmic", "linear", "exponential", "unknown",
};

const char *
mta_growth_name (MtaGrowth g)
{
	return g < MTA_GROWTH_N ? names[g] : "";
}

gboolean
mta_growth_parse (const char *list, guint *mask, GError **error)
{
	g_auto (GStrv) words = g_strsplit (list, ",", -1);

	*mask = 0;
	for (char **w = words; *w; w++) {
		char *s = g_strstrip (*w);
		guint k;
		if (strcmp (s, "all") == 0) {
			*mask |= ((1u << MTA_GROWTH_N) - 1) & ~1u;
			continue;
		}
		for (k = 1; k < MTA_GROWTH_N && strcmp (s, names[k]) != 0; k++)
			;
		if (k == MTA_GROWTH_N) {
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "unknown growth class '%s' (constant, bounded, logarithmic, "
				     "linear, exponential, unknown, all)", s);
			return FALSE;
		}
		*mask |= 1u << k;
	}
	if (*mask == 0) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--growth needs a class");
		return FALSE;
	}
	return TRUE;
}

static int
point_cmp (const void *a, const void *b)
{
	const MtaGrowthPoint *x = a, *y = b;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Position at which the cumulative bytes first reach FRACTION of TOTAL. */
static double
quantile (const MtaGrowthPoint *pts, size_t n, uint64_t total, double fraction)
{
	double want = fraction * (double) total, sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += (double) pts[i].bytes;
		if (sum >= want)
			return pts[i].pos;
	}
	return pts[n - 1].pos;
}

/* Sum of squared residuals of the least-squares fit y = a + b x^p. */
static double
fit_power (const double *x, const double *y, int n, double p)
{
	double sf = 0, sff = 0, sy = 0, sfy = 0;
	for (int i = 0; i < n; i++) {
		double f = pow (x[i], p);
		sf += f;
		sff += f * f;
		sy += y[i];
		sfy += f * y[i];
	}
	double det = n * sff - sf * sf;
	double b = det > 1e-12 ? (n * sfy - sf * sy) / det : 0;
	double a = (sy - b * sf) / n, sse = 0;
	for (int i = 0; i < n; i++) {
		double r = y[i] - a - b * pow (x[i], p);
		sse += r * r;
	}
	return sse;
}

/* Rule 3 on the N blocks PTS (sorted) holding TOTAL bytes. */
static gboolean
is_burst (const MtaGrowthPoint *pts, size_t n, uint64_t total, double span)
{
	return quantile (pts, n, total, 0.9) - quantile (pts, n, total, 0.1) < BURST * span;
}

static uint64_t
sum_bytes (const MtaGrowthPoint *pts, size_t n)
{
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += pts[i].bytes;
	return total;
}

/* Rule 1: the site kept freeing blocks while those it leaks were made, and
 * (nearly) all of those were made after the last block it freed was. */
static gboolean
are_survivors (const MtaGrowthPoint *pts, size_t n, uint64_t total, const MtaGrowthFrees *frees)
{
	uint64_t after = 0;

	if (!frees || !frees->any || frees->last_free < quantile (pts, n, total, 0.9))
		return FALSE;
	for (size_t i = 0; i < n; i++)
		if (pts[i].pos > frees->last_born)
			after += pts[i].bytes;
	return (double) after >= SURVIVORS * (double) total;
}

/* Rule 8: the power p that fits the cumulative curve of PTS from its
 * first block to CUT best. */
static double
best_power (const MtaGrowthPoint *pts, size_t n, uint64_t total, double cut)
{
	double x[SAMPLES], y[SAMPLES], sum = 0, first = pts[0].pos;
	size_t k = 0;

	for (int i = 0; i < SAMPLES; i++) {
		double u = (double) i / (SAMPLES - 1);
		double at = first + u * (cut - first);
		while (k < n && pts[k].pos <= at)
			sum += (double) pts[k++].bytes;
		x[i] = u;
		y[i] = sum / (double) total;
	}
	double best_p = 1, best = INFINITY;
	for (int step = 0;; step++) {
		double p = 0.05 * pow (1.1, step);
		if (p > 8.0)
			break;
		double sse = fit_power (x, y, SAMPLES, p);
		if (sse < best) {
			best = sse;
			best_p = p;
		}
	}
	return best_p;
}

/* Rule 8's second look, on a time axis: the power that fits the leak of
 * the M blocks PTS (sorted) in event order, from its first block to
 * CUT_LINE; 0 when their lines are not known.  A leak per request grows
 * in time as the requests come: a loaded machine, or a test script that
 * runs ever slower, bends it, and a per-port leak of ovs-vswitchd under a
 * churn script that went from 10 rounds a second to 3 (32 blocks, one
 * every 12,000 lines) was logarithmic, out of the gate (p 0.96 in
 * events).  A cache that fills ever more slowly does so in its requests
 * too.  The band is narrower than the clock's, since it overrides the
 * clock: glusterd's 16 blocks of _gf_msg, logged at start-up and at each
 * volume operation, are p 1.55 in events, logarithmic in time. */
static double
events_power (const MtaGrowthPoint *pts, size_t m, uint64_t kept, uint64_t cut_line)
{
	if (m == 0 || cut_line == 0 || pts[0].line >= cut_line)
		return 0;
	MtaGrowthPoint *by_line = g_new (MtaGrowthPoint, m);
	for (size_t i = 0; i < m; i++) {
		if (pts[i].line == 0) {
			g_free (by_line);
			return 0;
		}
		by_line[i] = pts[i];
		by_line[i].pos = (double) pts[i].line;
	}
	/* lines follow time on a time axis: they are in order already */
	double p = best_power (by_line, m, kept, (double) cut_line);
	g_free (by_line);
	return p;
}

/* Rule 5: the bursts the M blocks PTS (sorted) were made in. */
static size_t
moments (const MtaGrowthPoint *pts, size_t m)
{
	double tight = TIGHT * (pts[m - 1].pos - pts[0].pos) / (double) (m - 1);
	size_t k = 1;
	for (size_t i = 1; i < m; i++)
		if (pts[i].pos - pts[i - 1].pos > tight)
			k++;
	return k;
}

/* The line of the first sample of LIVE at or after POS (the run's end when
 * none). */
static uint64_t
line_at (const MtaGrowthLive *live, double pos)
{
	for (guint k = 0; k < live->n; k++)
		if (live->pos[k] >= pos)
			return live->lines[k];
	return live->lines[live->n - 1];
}

/* Whether the program went on from FROM to CUT: a share of its lines. */
static gboolean
went_on (const MtaGrowthLive *live, double from, double cut)
{
	if (live == NULL || live->n == 0)
		return TRUE;   /* not known: the span alone decides */
	uint64_t all = live->lines[live->n - 1], a = line_at (live, from), b = line_at (live, cut);
	return b > a && (double) (b - a) >= PLATEAU_LINES * (double) all;
}

static int
u32_cmp (const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
	return x < y ? -1 : x > y;
}

/* The lower quartile of the N values V (sorted here): the level of a
 * site's live blocks, which blocks in flight only ever raise. */
static double
lower_quartile (uint32_t *v, guint n)
{
	guint quarter = n / 4;

	qsort (v, n, sizeof *v, u32_cmp);
	return v[quarter];
}

/* The spread of the N values V (sorted here): their interquartile range,
 * how far a site's live blocks come and go around their level. */
static double
quartile_spread (uint32_t *v, guint n)
{
	guint lower = n / 4, upper = 3 * n / 4;

	qsort (v, n, sizeof *v, u32_cmp);
	return (double) v[upper] - (double) v[lower];
}

/* Whether the site's live blocks over the last SHARE of the run's events
 * before CUT (the samples are evenly spaced in lines: what the program
 * did, not how long it idled), while it freed blocks, stayed level at the
 * N blocks it leaks: in the first and in the second half of the samples
 * there, their lower quartiles (against blocks in flight) are N within
 * LIVE_TOL -- or, with SPREAD, within their interquartile range there --
 * and grew by TREND_TOL of N at most. */
static gboolean
is_level (size_t n, double cut, const MtaGrowthFrees *frees, const MtaGrowthLive *live,
	  double share, gboolean spread)
{
	double tol = MAX (1, LIVE_TOL * (double) n);
	guint k0 = 0, k1 = 0;

	while (k1 + 1 < live->n && live->pos[k1 + 1] <= cut)
		k1++;
	double from = (1 - share) * (double) live->lines[k1];
	while (k0 + 1 <= k1 && (double) live->lines[k0 + 1] <= from)
		k0++;
	guint len = k1 - k0 + 1, half = len / 2;
	if (len < 4 || frees->last_free < live->pos[k0])
		return FALSE;
	g_autofree uint32_t *v = g_memdup2 (live->blocks + k0, len * sizeof *v);
	if (spread) {
		tol = MAX (tol, quartile_spread (v, len));
		memcpy (v, live->blocks + k0, len * sizeof *v);
	}
	double first = lower_quartile (v, half), last = lower_quartile (v + half, len - half);
	return fabs (first - (double) n) <= tol && fabs (last - (double) n) <= tol &&
		fabs (last - first) <= MAX (1, TREND_TOL * (double) n);
}

/* Rule 2: the site is a cache at its size -- its live blocks level at
 * what it leaks over the last PLATEAU of the run's events: it replaced
 * blocks, it did not accumulate.  A steady leak grows by a sixth of
 * itself from one half to the other; one beside blocks that the program
 * frees at exit holds more than it leaks.  Or, for a site whose blocks
 * come and go by more than LIVE_TOL (one that holds a few entries of a
 * cache other sites share: GlusterFS's FUSE client, whose 1,024-entry
 * gid cache one caller holds 9 of, give or take 3, ends anywhere in that
 * band), level within their spread over the last NOISY_PLATEAU: a steady
 * leak grows there by a quarter of itself, more than TREND_TOL. */
static gboolean
is_full_cache (size_t n, double cut, const MtaGrowthFrees *frees, const MtaGrowthLive *live)
{
	if (n < MIN_FIT || frees == NULL || !frees->any || live == NULL || live->n == 0)
		return FALSE;
	return is_level (n, cut, frees, live, PLATEAU, FALSE) ||
		is_level (n, cut, frees, live, NOISY_PLATEAU, TRUE);
}

/* Rule 6: the leak of the M blocks PTS (sorted) stopped growing (but
 * STRAGGLERS of its blocks) for a good share of the run before CUT while
 * the program went on. */
static gboolean
is_plateau (const MtaGrowthPoint *pts, size_t m, double cut, double span, const MtaGrowthLive *live)
{
	size_t stragglers = (size_t) (STRAGGLERS * (double) m);
	double stop = pts[m - 1 - stragglers].pos;

	return cut - stop >= PLATEAU * span && went_on (live, stop, cut);
}

MtaGrowth
mta_growth_classify (MtaGrowthPoint *pts, size_t n, double start, double end,
		     const MtaGrowthFrees *frees, double *exponent)
{
	const MtaGrowthLive *live = frees ? frees->live : NULL;
	double span = end - start, cut = end - END_ZONE * span;
	uint64_t total = sum_bytes (pts, n), kept;
	size_t m = 0;

	*exponent = 0;
	if (n == 0 || total == 0 || span <= 0)
		return MTA_GROWTH_CONSTANT;
	qsort (pts, n, sizeof *pts, point_cmp);
	while (m < n && pts[m].pos < cut)
		m++;
	kept = sum_bytes (pts, m);
	if (m > 0 && kept > 0 && are_survivors (pts, m, kept, frees))
		return MTA_GROWTH_CONSTANT;
	if (is_full_cache (n, cut, frees, live))
		return MTA_GROWTH_BOUNDED;
	if (is_burst (pts, n, total, span))
		return MTA_GROWTH_CONSTANT;
	if (m == 0 || kept == 0 || is_burst (pts, m, kept, span))
		return MTA_GROWTH_CONSTANT;
	size_t bursts = moments (pts, m);
	if (bursts < MIN_MOMENTS)
		return MTA_GROWTH_CONSTANT;
	if (is_plateau (pts, m, cut, span, live)) {
		if (m >= MIN_FIT)
			return MTA_GROWTH_BOUNDED;
		if (pts[m - 1].pos - pts[0].pos < MIN_SPAN / 2 * span)
			return MTA_GROWTH_CONSTANT;
	}
	if (m < MIN_FIT || bursts < MIN_FIT || cut - pts[0].pos < MIN_SPAN * span)
		return MTA_GROWTH_UNKNOWN;
	*exponent = best_power (pts, m, kept, cut);
	if (*exponent < LOG_MAX) {
		double q = live && live->n ? events_power (pts, m, kept, line_at (live, cut)) : 0;
		if (q < EVENTS_LINEAR_MIN || q > EVENTS_LINEAR_MAX)
			return MTA_GROWTH_LOGARITHMIC;
		*exponent = q;
		return MTA_GROWTH_LINEAR;
	}
	if (*exponent <= LINEAR_MAX)
		return MTA_GROWTH_LINEAR;
	return MTA_GROWTH_EXPONENTIAL;
}
