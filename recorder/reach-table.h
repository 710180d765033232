/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-table.h -- MTREC_REACH=1's table of the blocks the trace holds
 * live (reach-table.c): what the recorder's malloc and free call, on the
 * hot path.  The scan (reach.h) reads it through the second half of this
 * header, which nothing else uses.
 *
 * A leaf: it calls nothing of the recorder but prim.h.  Nothing here
 * allocates with malloc. */
#ifndef MTREC_REACH_TABLE_H
#define MTREC_REACH_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prim.h"

/* Map the table; 0, or -1 when the memory cannot be had.  Once, at
 * start-up, before the first event. */
int mtrec_reach_init(void) MTREC_HIDDEN;

/* The block p of size bytes is live: after the allocation returned. */
void mtrec_reach_add(const void *p, size_t size) MTREC_HIDDEN;
/* The block p is released: before the release.  1 when it was in the
 * table, with its size in *size (a realloc that fails puts it back). */
int mtrec_reach_remove(const void *p, size_t *size) MTREC_HIDDEN;

/* The program got no memory: give back what of the tables' reservation
 * is not used (1 when some was). */
int mtrec_reach_release(void) MTREC_HIDDEN;

/* Fork child: it keeps the parent's blocks (its heap is a copy), not
 * the locks nor the parent's threads. */
void mtrec_reach_fork_child(void) MTREC_HIDDEN;

/* ---- for the scan (reach.c, reach-roots.c) only --------------------- */

#define NSTRIPES 64
#define STRIPE_MIN 1024u	/* entries of a stripe's first table */
#define EMPTY ((uintptr_t)0)
#define TOMB ((uintptr_t)1)	/* a removed entry: probes go on past it */

struct ent {
	uintptr_t addr;
	size_t size;
};

struct stripe {
	int lock;
	size_t cap;		/* entries, a power of two (0: not mapped yet) */
	size_t used;		/* live entries and tombs */
	size_t live;
	struct ent *e;
} __attribute__((aligned(64)));

extern struct stripe stripes[NSTRIPES] MTREC_HIDDEN;
/* Where a stripe's entries are put aside while it grows (its lock, e, cap). */
extern struct stripe table_aside MTREC_HIDDEN;
/* Where the stripes' tables are carved from (NULL: each is a mapping). */
extern char *table_arena MTREC_HIDDEN;
extern size_t table_arena_len MTREC_HIDDEN;
int in_table_arena(const void *p) MTREC_HIDDEN;
extern int enabled MTREC_HIDDEN;
extern int frozen MTREC_HIDDEN;		/* the scan took its copy: no more updates */
extern unsigned long missed MTREC_HIDDEN;	/* updates dropped (no memory, queue full) */
/* The thread is inside the table (a signal handler's update is queued). */
extern __thread int in_table MTREC_HIDDEN;

/* Where each thread's stack and thread pointer are, by tid (a later
 * thread with the same tid modulo NTHR takes the place). */
#define NTHR 65536u
struct thr {
	pid_t tid;
	uintptr_t stack;	/* an address in its stack */
	uintptr_t tp;		/* its thread pointer */
};
extern struct thr *thr MTREC_HIDDEN;

static inline uintptr_t thread_pointer(void)
{
	uintptr_t tp;

#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = (uintptr_t)&in_table;	/* an address in its static TLS */
#endif
	return tp;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ volatile("" ::: "memory");
#endif
}

void stripe_unlock(struct stripe *s) MTREC_HIDDEN;
/* Leave the table, making the updates signal handlers queued meanwhile. */
void table_leave(void) MTREC_HIDDEN;

#endif
