/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* growth-test.c -- unit test of the growth rules (analyzer/run/growth.c,
 * share/growth.md), alone: linked with growth.o only.
 *
 * Each rule of share/growth.md is shown on a leak built for it, on a run
 * that spans [0, 1]: a burst, a burst once the end zone is set aside, too
 * few blocks, too short a span, the blocks a cache holds at the end (and
 * the same blocks without the frees, which are linear), and the three
 * fitted shapes, y = x^0.3, x and x^3.  Then the names and --growth's
 * parsing. */
#include <math.h>
#include <string.h>

#include "growth.h"
#include "unit-check.h"

#define NPTS 200

/* N blocks of 100 bytes, block I (1..N) allocated at FROM + (TO - FROM)
 * * (I/N)^(1/P): their cumulative bytes grow as the P-th power. */
static size_t
shape (MtaGrowthPoint *pts, size_t n, double from, double to, double p)
{
	for (size_t i = 0; i < n; i++) {
		pts[i].pos = from + (to - from) * pow ((double) (i + 1) / (double) n, 1.0 / p);
		pts[i].bytes = 100;
		pts[i].line = 0;
	}
	return n;
}

static const char *
name (MtaGrowth g)
{
	return g == MTA_GROWTH_CONSTANT ? "constant" : mta_growth_name (g);
}

static void
expect (const char *what, MtaGrowthPoint *pts, size_t n, const MtaGrowthFrees *frees,
	MtaGrowth want, double pmin, double pmax)
{
	double p = -1;
	MtaGrowth g = mta_growth_classify (pts, n, 0.0, 1.0, frees, &p);

	CHECK (g == want, "%s: %s, want %s (exponent %.2f)", what, name (g), name (want), p);
	CHECK (p >= pmin && p <= pmax, "%s: exponent %.2f, want %.2f to %.2f", what, p, pmin, pmax);
	printf ("# %-44s %-12s exponent %.2f\n", what, name (g), p);
}

static void
check_rules (void)
{
	MtaGrowthPoint pts[NPTS];
	size_t n;

	/* rule 1: 80% of the bytes within 5% of the run */
	n = shape (pts, 100, 0.50, 0.52, 1.0);
	expect ("rule 1: a burst half-way", pts, n, NULL, MTA_GROWTH_CONSTANT, 0, 0);

	/* rule 2: 5 blocks at start-up, 20 in the last 1% (a shutdown) */
	n = shape (pts, 5, 0.099, 0.10, 1.0);
	n += shape (pts + n, 20, 0.995, 0.999, 1.0);
	expect ("rule 2: start-up, then the end zone", pts, n, NULL, MTA_GROWTH_CONSTANT, 0, 0);

	/* rule 3: fewer than 8 blocks; a span under a quarter of the run */
	n = shape (pts, 5, 0.10, 0.90, 1.0);
	expect ("rule 3: 5 blocks", pts, n, NULL, MTA_GROWTH_UNKNOWN, 0, 0);
	n = shape (pts, 20, 0.80, 0.95, 1.0);
	expect ("rule 3: a span of 0.19", pts, n, NULL, MTA_GROWTH_UNKNOWN, 0, 0);

	/* rule 4: the site freed until the end, and what it leaks was born
	 * after the last block it freed was: a full cache */
	const MtaGrowthFrees cache = { TRUE, 0.45, 0.985, NULL };
	n = shape (pts, 50, 0.50, 0.98, 1.0);
	expect ("rule 4: what a cache holds at the end", pts, n, &cache, MTA_GROWTH_CONSTANT, 0, 0);
	n = shape (pts, 50, 0.50, 0.98, 1.0);
	expect ("rule 4: the same blocks, no frees", pts, n, NULL, MTA_GROWTH_LINEAR, 0.6, 1.6);
	/* frees that stop when the leak begins are not a cache */
	const MtaGrowthFrees stopped = { TRUE, 0.45, 0.50, NULL };
	n = shape (pts, 50, 0.50, 0.98, 1.0);
	expect ("rule 4: frees that stop when the leak starts", pts, n, &stopped, MTA_GROWTH_LINEAR,
		0.6, 1.6);

	/* rule 5: the fitted power */
	n = shape (pts, 150, 0.0, 0.98, 0.3);
	expect ("rule 5: y = x^0.3", pts, n, NULL, MTA_GROWTH_LOGARITHMIC, 0.05, 0.6);
	n = shape (pts, 150, 0.0, 0.98, 1.0);
	expect ("rule 5: y = x", pts, n, NULL, MTA_GROWTH_LINEAR, 0.8, 1.25);
	n = shape (pts, 150, 0.0, 0.98, 3.0);
	expect ("rule 5: y = x^3", pts, n, NULL, MTA_GROWTH_EXPONENTIAL, 1.6, 8.0);

	/* the points need not come in order */
	n = shape (pts, 150, 0.0, 0.98, 1.0);
	for (size_t i = 0; i < n / 2; i++) {
		MtaGrowthPoint t = pts[i];
		pts[i] = pts[n - 1 - i];
		pts[n - 1 - i] = t;
	}
	expect ("rule 5: y = x, blocks given backwards", pts, n, NULL, MTA_GROWTH_LINEAR, 0.8, 1.25);

	/* nothing to judge */
	expect ("no blocks", pts, 0, NULL, MTA_GROWTH_CONSTANT, 0, 0);
	double p = -1;
	n = shape (pts, 150, 0.0, 0.98, 1.0);
	CHECK (mta_growth_classify (pts, n, 1.0, 1.0, NULL, &p) == MTA_GROWTH_CONSTANT && p == 0,
	       "a run of no length: constant");
}

/* A site's live blocks over 64 samples of a run spanning [0, 1]: the
 * steady part LEAK * I/63 (none when 0) plus LEVEL, plus IN_FLIGHT's
 * pattern; nothing before the fourth sample. */
static void
live_shape (MtaGrowthLive *live, double *pos, uint64_t *lines, uint32_t *blocks,
	    double leak, uint32_t level, const uint32_t *in_flight, guint period)
{
	for (guint i = 0; i < 64; i++) {
		pos[i] = i / 63.0;
		lines[i] = 1000 * (uint64_t) (i + 1);
		blocks[i] = i < 3 ? 0 : (uint32_t) (leak * i / 63.0) + level + in_flight[i % period];
	}
	*live = (MtaGrowthLive) { 64, pos, lines, blocks };
}

/* Rule 2 on a site that holds a few entries of a cache that other sites
 * share (GlusterFS's FUSE client: one caller holds 9 of the 1,024 entries
 * of its gid cache, give or take 3, its survivors born all along): the
 * level it ends at is anywhere within its spread.  A steady leak of as
 * few blocks, with as many in flight, is still no cache. */
static void
check_shared_cache (void)
{
	static const uint32_t noise[] = { 0, 2, 4, 3, 1, 5, 2, 0, 4, 6, 1, 3 };
	MtaGrowthPoint pts[NPTS];
	double pos[64];
	uint64_t lines[64];
	uint32_t blocks[64];
	MtaGrowthLive live;
	size_t n;

	n = shape (pts, 9, 0.05, 0.95, 1.0);
	live_shape (&live, pos, lines, blocks, 0, 6, noise, G_N_ELEMENTS (noise));
	MtaGrowthFrees shared = { TRUE, 0.97, 0.98, &live };
	expect ("rule 2: 9 entries of a shared cache", pts, n, &shared, MTA_GROWTH_BOUNDED, 0, 0);

	n = shape (pts, 9, 0.05, 0.95, 1.0);
	live_shape (&live, pos, lines, blocks, 9, 0, noise, G_N_ELEMENTS (noise));
	MtaGrowthFrees steady = { TRUE, 0.97, 0.98, &live };
	expect ("rule 2: a steady leak of 9, 0 to 6 in flight", pts, n, &steady, MTA_GROWTH_LINEAR,
		0.6, 1.6);

	n = shape (pts, 40, 0.05, 0.95, 1.0);
	live_shape (&live, pos, lines, blocks, 40, 0, noise, G_N_ELEMENTS (noise));
	expect ("rule 2: a steady leak of 40, 0 to 6 in flight", pts, n, &steady, MTA_GROWTH_LINEAR,
		0.6, 1.6);
}

/* Rule 8 on a run whose events came ever slower (a loaded machine, a
 * script that slowed down): the clock runs as the cube of the events.
 * A leak of one block every so many events is then logarithmic in time,
 * and steady in events: linear.  A cache that fills ever more slowly in
 * its events too stays logarithmic; so does a leak that grows as the
 * events to the power 1.55 (glusterd's _gf_msg: the second look, which
 * overrides the clock, wants a leak steady in events, 0.8 to 1.25); and
 * with the lines not known the clock alone decides. */
static void
check_slowing_run (void)
{
	MtaGrowthPoint pts[NPTS];
	double pos[64];
	uint64_t lines[64];
	uint32_t blocks[64] = { 0 };
	MtaGrowthLive live = { 64, pos, lines, blocks };
	MtaGrowthFrees none = { FALSE, 0, 0, &live };
	const size_t n = 40;

	for (guint i = 0; i < 64; i++) {
		lines[i] = 1000 * (uint64_t) (i + 1);
		pos[i] = pow ((double) lines[i] / 64000.0, 3);
	}
	for (int k = 0; k < 3; k++) {
		static const double power[] = { 1.0, 0.3, 1.55 };   /* in events */
		static const char *const what[] = {
			"rule 8: a steady leak, events ever slower",
			"rule 8: a filling cache, events ever slower",
			"rule 8: events^1.55, events ever slower",
		};
		for (size_t i = 0; i < n; i++) {
			double x = pow ((double) (i + 1) / (double) n, 1.0 / power[k]);
			pts[i].line = (uint64_t) (2000 + 60000 * x);
			pts[i].pos = pow ((double) pts[i].line / 64000.0, 3);
			pts[i].bytes = 100;
		}
		if (k == 0)
			expect (what[k], pts, n, &none, MTA_GROWTH_LINEAR, 0.8, 1.25);
		else
			expect (what[k], pts, n, &none, MTA_GROWTH_LOGARITHMIC, 0, 0.6);
	}
	shape (pts, n, 0.05, 0.95, 0.5);   /* lines 0: not known */
	expect ("rule 8: lines not known: the clock decides", pts, n, &none, MTA_GROWTH_LOGARITHMIC,
		0, 0.6);
}

static void
check_names (void)
{
	static const char *const names[] = { "", "constant", "bounded", "logarithmic", "linear",
					     "exponential", "unknown" };
	G_STATIC_ASSERT (G_N_ELEMENTS (names) == MTA_GROWTH_N);
	guint mask = 0;
	GError *error = NULL;

	for (int g = 0; g < MTA_GROWTH_N; g++)
		CHECK (strcmp (mta_growth_name ((MtaGrowth) g), names[g]) == 0, "name of %d: '%s'", g,
		       mta_growth_name ((MtaGrowth) g));
	CHECK (strcmp (mta_growth_name (MTA_GROWTH_N), "") == 0, "name out of range");

	CHECK (mta_growth_parse ("linear,exponential", &mask, &error) && mask == MTA_GROWTH_REAL,
	       "linear,exponential: %#x", mask);
	CHECK (mta_growth_parse (" unknown , constant", &mask, &error) &&
	       mask == ((1u << MTA_GROWTH_UNKNOWN) | (1u << MTA_GROWTH_CONSTANT)), "blanks: %#x", mask);
	CHECK (mta_growth_parse ("all", &mask, &error) &&
	       mask == ((1u << MTA_GROWTH_N) - 1 - (1u << MTA_GROWTH_NONE)), "all: %#x", mask);
	CHECK (!mta_growth_parse ("linear,bogus", &mask, &error) && error != NULL &&
	       strstr (error->message, "'bogus'") != NULL, "an unknown class is an error naming it");
	g_clear_error (&error);
	CHECK (!mta_growth_parse ("", &mask, &error) && error != NULL, "no class is an error");
	g_clear_error (&error);
}

int
main (void)
{
	check_rules ();
	check_shared_cache ();
	check_slowing_run ();
	check_names ();
	return verdict ();
}
