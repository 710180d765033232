/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gen-ana-trace.c -- a program whose glibc mtrace is the analyzer's bench
 * trace: EVENTS allocation events (malloc, calloc, realloc, free) from a
 * dozen call sites over a live set of at most SLOTS blocks, of which LEAK
 * stay allocated at exit.  The live set does not grow with EVENTS, so two
 * traces of different lengths compare the analyzer's memory use.
 *
 * usage: gen-ana-trace EVENTS [SLOTS [LEAK]]   (run with MALLOC_TRACE set
 * and libc_malloc_debug.so preloaded; it calls mtrace() itself)
 */
#include <mcheck.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next (void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

#define SITE(n) __attribute__((noinline)) static void *site##n (size_t s) { return malloc (s + n); }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
static void *(*const sites[]) (size_t) = { site0, site1, site2, site3, site4, site5, site6, site7 };

int
main (int argc, char **argv)
{
	long events = argc > 1 ? atol (argv[1]) : 4250000;
	long slots = argc > 2 ? atol (argv[2]) : 4096;
	long leak = argc > 3 ? atol (argv[3]) : 100;
	void **live = calloc ((size_t) slots, sizeof *live);

	mtrace ();
	for (long i = 0; i < events; i++) {
		size_t k = next () % (size_t) slots;
		uint64_t r = next ();
		if (live[k] == NULL) {
			if (r % 8 == 0)
				live[k] = calloc (1, 16 + r % 200);
			else
				live[k] = sites[r % 8] (16 + r % 500);
		} else if (r % 4 == 0) {
			live[k] = realloc (live[k], 16 + r % 900);
			i++;  /* a realloc writes two lines */
		} else {
			free (live[k]);
			live[k] = NULL;
		}
	}
	for (long k = leak; k < slots; k++)
		free (live[k]);
	muntrace ();
	return 0;
}
