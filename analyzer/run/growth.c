/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* growth.c -- the growth class of a leaking site (share/growth.md).
 *
 * What is classified is the site's leak itself: the cumulative bytes of
 * the blocks that are never freed, by the moment each was allocated.  That
 * is the site's live bytes restricted to its leaked blocks, a step curve
 * known exactly at the end of the run, without the noise of the blocks
 * that come and go (a site with a large working set and a small leak would
 * hide the leak in its live bytes).
 *
 * A class other than constant needs evidence: a CI gate on "linear,
 * exponential" that fails on a shutdown burst or a full cache gets switched
 * off.  The rule, in order:
 *   1. the middle 80% of the leaked bytes (from 10% to 90%) allocated within
 *      BURST of the run's span: constant (a one-off, at start-up or later);
 *   2. the blocks allocated in the run's last END_ZONE are set aside (a
 *      shutdown, blocks in flight when the trace or its window ended); if
 *      nothing is left, or what is left is a burst by rule 1: constant;
 *   3. fewer than MIN_FIT blocks left, or the leak's span (from its first
 *      block to the end zone) shorter than MIN_SPAN of the run: unknown;
 *   4. the site freed blocks until the end and what it leaks was all
 *      allocated after the last block it freed was: constant (what a full
 *      cache or a queue holds at the end, not an accumulation);
 *   5. otherwise fit y = a + b x^p by least squares to the curve sampled at
 *      SAMPLES points, x from the first leaked block to the end zone, both
 *      x and y scaled to [0, 1], p on a geometric grid from 0.05 to 8;
 *      p < LOG_MAX: logarithmic, p <= LINEAR_MAX: linear, else exponential.
 */
#include "growth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BURST 0.05
#define END_ZONE 0.01
#define MIN_FIT 8
#define MIN_SPAN 0.25
#define SURVIVORS 0.9
#define SAMPLES 64
#define LOG_MAX 0.6
#define LINEAR_MAX 1.6

static const char *const names[MTA_GROWTH_N] = {
	"", "constant", "logarithmic", "linear", "exponential", "unknown",
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
				     "unknown growth class '%s' (constant, logarithmic, linear, "
				     "exponential, unknown, all)", s);
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

/* Rule 1 on the N blocks PTS (sorted) holding TOTAL bytes. */
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

/* Rule 4: the site kept freeing blocks while those it leaks were made, and
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

/* Rule 5: the power p that fits the cumulative curve of PTS from its
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

MtaGrowth
mta_growth_classify (MtaGrowthPoint *pts, size_t n, double start, double end,
		     const MtaGrowthFrees *frees, double *exponent)
{
	double span = end - start, cut = end - END_ZONE * span;
	uint64_t total = sum_bytes (pts, n), kept;
	size_t m = 0;

	*exponent = 0;
	if (n == 0 || total == 0 || span <= 0)
		return MTA_GROWTH_CONSTANT;
	qsort (pts, n, sizeof *pts, point_cmp);
	if (is_burst (pts, n, total, span))
		return MTA_GROWTH_CONSTANT;
	while (m < n && pts[m].pos < cut)
		m++;
	kept = sum_bytes (pts, m);
	if (m == 0 || kept == 0 || is_burst (pts, m, kept, span))
		return MTA_GROWTH_CONSTANT;
	if (m < MIN_FIT || cut - pts[0].pos < MIN_SPAN * span)
		return MTA_GROWTH_UNKNOWN;
	if (are_survivors (pts, m, kept, frees))
		return MTA_GROWTH_CONSTANT;
	*exponent = best_power (pts, m, kept, cut);
	if (*exponent < LOG_MAX)
		return MTA_GROWTH_LOGARITHMIC;
	if (*exponent <= LINEAR_MAX)
		return MTA_GROWTH_LINEAR;
	return MTA_GROWTH_EXPONENTIAL;
}
