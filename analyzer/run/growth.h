/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* growth.h -- how a site's leak grew over the run: constant (a one-off),
 * bounded (it stopped growing while the program went on: a cache at its
 * size), logarithmic (a cache filling up), linear or exponential (real
 * leaks).  The rule is share/growth.md's.
 */
#ifndef MTA_GROWTH_H
#define MTA_GROWTH_H

#include <glib.h>
#include <stdint.h>

typedef enum {
	MTA_GROWTH_NONE,           /* not a leaking site */
	MTA_GROWTH_CONSTANT,
	MTA_GROWTH_BOUNDED,        /* grew, then stopped while the program went on */
	MTA_GROWTH_LOGARITHMIC,
	MTA_GROWTH_LINEAR,
	MTA_GROWTH_EXPONENTIAL,
	MTA_GROWTH_UNKNOWN,        /* too little evidence to judge */
	MTA_GROWTH_N
} MtaGrowth;

/* All classes of real leaks, for --growth's default. */
#define MTA_GROWTH_REAL ((1u << MTA_GROWTH_LINEAR) | (1u << MTA_GROWTH_EXPONENTIAL))

/* "constant", "bounded", "logarithmic", "linear", "exponential",
 * "unknown"; "" for NONE. */
const char *mta_growth_name (MtaGrowth g);

/* "linear,exponential" -> a mask of (1 << MtaGrowth); "all" is every class. */
gboolean mta_growth_parse (const char *list, guint *mask, GError **error);

typedef struct {
	double pos;                /* when the leaked block was allocated, on the run's axis */
	uint64_t bytes;
	uint64_t line;             /* its trace line (event order), 0 not known */
} MtaGrowthPoint;

/* The site's live blocks over the run: the timeline's samples (timeline.h),
 * the last one the end of the run. */
typedef struct {
	guint n;
	const double *pos;         /* each sample's moment on the run's axis */
	const uint64_t *lines;     /* its line */
	const uint32_t *blocks;    /* the site's live blocks then */
} MtaGrowthLive;

/* What the site's frees say, on the run's axis, and its live blocks. */
typedef struct {
	gboolean any;              /* the site freed blocks */
	double last_born;          /* the latest allocation among the blocks freed */
	double last_free;          /* the site's last free */
	const MtaGrowthLive *live; /* NULL: not known */
} MtaGrowthFrees;

/* Classify the leak made of the N blocks PTS (sorted here) in a run that
 * spans [START, END] on its axis, the site's frees and live blocks being
 * FREES (NULL: not known); *EXPONENT gets the fitted power (0 when the
 * rule decided without a fit). */
MtaGrowth mta_growth_classify (MtaGrowthPoint *pts, size_t n, double start, double end,
			       const MtaGrowthFrees *frees, double *exponent);

#endif
