/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pace.h -- the clock of the growth fixtures (ana-growth.c,
 * ana-daemon-shapes.c, ana-compact.c): tick K is K ms after pace_start(),
 * whatever the machine's load.  A sleep of 1 ms at each tick instead made
 * the shapes in time what the scheduler made of them (a stretch of the run
 * slowed by another job was a leak that slowed down); a late tick is
 * caught up at once, so a stall distorts only itself. */
#ifndef PACE_H
#define PACE_H

#include <errno.h>
#include <time.h>

static struct timespec pace_t0;

static void
pace_start (void)
{
	clock_gettime (CLOCK_MONOTONIC, &pace_t0);
}

static void
pace (long k)
{
	struct timespec t = pace_t0;

	t.tv_sec += k / 1000;
	t.tv_nsec += (k % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

#endif
