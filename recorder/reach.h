/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach.h -- MTREC_REACH=1 (reach.c): at the end of the recorded run, a
 * conservative scan of memory, as valgrind's leak check makes, that tells
 * of each block live in the table (reach-table.h) whether the program
 * could still reach it ("# reach" lines, share/trace-format.md).
 *
 * A leaf: it calls nothing of the recorder but prim.h and the trace file's
 * place (file.h), owns its locks, and hands its lines to its caller.
 * Nothing here allocates with malloc. */
#ifndef MTREC_REACH_H
#define MTREC_REACH_H

#include <stddef.h>

#include "prim.h"
#include "reach-table.h"

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
