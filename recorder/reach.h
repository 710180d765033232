/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach.h -- MTREC_REACH=1 (reach.c): a table of the blocks the trace
 * holds live, and at the end of the recorded run a conservative scan of
 * memory, as valgrind's leak check makes, that tells of each live block
 * whether the program could still reach it ("# reach" lines,
 * share/trace-format.md).
 *
 * A leaf: it calls nothing of the recorder but prim.h, owns its locks, and
 * hands its lines to its caller.  Nothing here allocates with malloc. */
#ifndef MTREC_REACH_H
#define MTREC_REACH_H

#include <stddef.h>

#include "prim.h"

/* Map the table; 0, or -1 when the memory cannot be had.  Once, at
 * start-up, before the first event. */
int mtrec_reach_init(void) MTREC_HIDDEN;

/* The block p of size bytes is live: after the allocation returned. */
void mtrec_reach_add(const void *p, size_t size) MTREC_HIDDEN;
/* The block p is released: before the release.  1 when it was in the
 * table, with its size in *size (a realloc that fails puts it back). */
int mtrec_reach_remove(const void *p, size_t *size) MTREC_HIDDEN;

/* Fork child: it keeps the parent's blocks (its heap is a copy), not
 * the locks nor the parent's threads. */
void mtrec_reach_fork_child(void) MTREC_HIDDEN;

/* Where the scan's lines go.  A scan is one unbroken piece of the file,
 * taken before the table is copied: region(len) gives room for len bytes
 * of whole lines there (NULL when it cannot: then text() takes them in
 * pieces), fence() then makes every event written from then on come after
 * that piece (so that a free, or an allocation at the same address, made
 * while the scan runs follows the verdicts), and region_end(end) says
 * where its lines end (the rest is filler). */
struct mtrec_reach_out {
	char *(*region)(size_t len);
	void (*fence)(void);
	void (*region_end)(char *end);
	void (*text)(const char *text, size_t len);	/* whole lines, newlines included */
};

/* Scan now and write "# reach begin" ... "# reach end"; the number of
 * blocks judged.  At exit (live 0) the table is frozen from then on:
 * later events do not change it.  While the program runs (live 1, mtrec
 * ctl PID reach) each part of it is copied under its lock and the table
 * goes on.  The caller holds no lock a running thread may wait for while
 * holding another, and makes one scan at a time.  A scan that cannot be
 * made says why ("# reach refused WHY"). */
size_t mtrec_reach_scan(const struct mtrec_reach_out *out, int live) MTREC_HIDDEN;

#endif
