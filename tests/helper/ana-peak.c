/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-peak.c -- a known peak and known temporary allocations (t7030).
 *
 *   phase 1: 100 blocks of 1000 bytes from phase_a (PEAK-A), all freed;
 *   phase 2: 60 from phase_b (PEAK-B) and 50 from phase_c (PEAK-C) live
 *            together: the run's peak, 110000 bytes, none from phase_a;
 *   phase 3: 100 from phase_a again, freed: below the peak.
 *
 * Temporary allocations: temp_one (TEMP-ONE) 10 blocks freed at once;
 * temp_pair: two blocks freed in order, only the second is temporary
 * (TEMP-PAIR-2; TEMP-PAIR-1 is not); temp_realloc: a block reallocated
 * at once counts too (TEMP-REALLOC).  Nothing leaks.
 */
#include <stdlib.h>

static void *blocks[128];

__attribute__((noinline)) static void
phase_a (void)
{
	for (int i = 0; i < 100; i++)
		blocks[i] = malloc (1000);       /* PEAK-A */
	for (int i = 0; i < 100; i++)
		free (blocks[i]);
}

__attribute__((noinline)) static void
phase_b (void)
{
	for (int i = 0; i < 60; i++)
		blocks[i] = malloc (1000);       /* PEAK-B */
}

__attribute__((noinline)) static void
phase_c (void)
{
	for (int i = 60; i < 110; i++)
		blocks[i] = malloc (1000);       /* PEAK-C */
}

__attribute__((noinline)) static void
temp_one (void)
{
	for (int i = 0; i < 10; i++) {
		void *volatile p = malloc (16);  /* TEMP-ONE */
		free (p);
	}
}

__attribute__((noinline)) static void
temp_pair (void)
{
	void *volatile p = malloc (16);      /* TEMP-PAIR-1 */
	void *volatile q = malloc (24);      /* TEMP-PAIR-2 */
	free (p);
	free (q);
}

__attribute__((noinline)) static void
temp_realloc (void)
{
	void *volatile p = malloc (8);       /* TEMP-REALLOC */
	p = realloc (p, 4000);
	free (p);
}

int
main (void)
{
	temp_one ();
	temp_pair ();
	temp_realloc ();
	phase_a ();
	phase_b ();
	phase_c ();
	for (int i = 0; i < 110; i++)
		free (blocks[i]);
	phase_a ();
	return 0;
}
