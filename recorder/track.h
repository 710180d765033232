/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track.h -- functions of the program tracked by name (MTREC_TRACK,
 * track.c): the spec is parsed once at start into a static table, and
 * each tracked function gets one of a fixed set of prebuilt wrappers that
 * the GOT redirection (got.h) puts in its call slots.  A leaf: it reports
 * to the process life (life.c) what is covered; the events go to
 * events.c like the mtrec.h API's.  See share/track.md. */
#ifndef MTREC_TRACK_H
#define MTREC_TRACK_H

#include "prim.h"

#define MTREC_TRACK_MAX 64	/* tracked functions, all groups together */

struct mtrec_got_func;

/* Parse spec (MTREC_TRACK's value, may be NULL) and fill funcs[0..max)
 * with one entry per tracked function (its wrapper as `ours`, the real
 * function found by the GOT passes).  Each bad item is said once on
 * stderr and left out.  Returns the number of entries. */
int mtrec_track_init(const char *spec, struct mtrec_got_func *funcs, int max) MTREC_HIDDEN;

/* After a GOT pass: at start (first) a summary of the call slots patched
 * per function and a line for each function with none; later, a line for
 * each function whose first slots appeared (an object loaded later). */
void mtrec_track_coverage(int first) MTREC_HIDDEN;

#endif
