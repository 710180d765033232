/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* refcount.h -- the reference counts of one reference kind ("# k KIND r"
 * and "u" lines): objects whose count is above zero at the end of the
 * run, grouped by the call paths that took and dropped their references,
 * and apart, the unreferences that found no reference to drop, by path.
 *
 * An object is one life at an address: it begins with a reference (or
 * its kind's "+": an object its kind allocated starts at 1, its creator's
 * reference, charged to the allocation's path) and ends when its count
 * comes back to 0 (unless its kind still holds it allocated) or when the
 * memory is released ("-" of any kind at the address: mem_put of a pool
 * object); a pooled address that comes back is a new object.  An unref of
 * an object with no count (its first tracked event, or the count at 0)
 * had its reference taken before the recording began or by a path not
 * tracked: it goes below zero, counted by its path, not per object.
 */
#ifndef MTA_REFCOUNT_H
#define MTA_REFCOUNT_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	uint32_t path;             /* the run's call path (run.h) */
	uint64_t refs, unrefs;     /* references taken and dropped there */
} MtaRefPath;

/* Objects with the same end count and the same call paths: one entry
 * however many objects.  Or (negative) one path's unreferences that found
 * no reference to drop: net and lowest -1, objects the unreferences, and
 * that path alone in PATHS. */
typedef struct {
	int64_t net;               /* each object's count at the end */
	gboolean negative;         /* below zero: unreferences with no reference */
	int64_t lowest;            /* net, or -1 */
	uint64_t objects;
	uint64_t first_line;       /* the first event of the first object */
	uint64_t example;          /* the address of one object */
	GArray *paths;             /* MtaRefPath, most events first */
} MtaRefGroup;

typedef struct MtaRefTable MtaRefTable;

MtaRefTable *mta_refs_new (void);
void mta_refs_free (MtaRefTable *t);

/* An r or u (OP) of the object ADDR at LINE, from PATH.  ALLOCATED: the
 * kind holds ADDR allocated, from ALLOC_PATH (the count starts at 1 when
 * the object is new). */
void mta_refs_event (MtaRefTable *t, char op, uint64_t addr, uint32_t path, uint64_t line,
		     gboolean allocated, uint32_t alloc_path);
/* The memory at ADDR was released: the life there ends. */
void mta_refs_released (MtaRefTable *t, uint64_t addr);

/* The groups of the objects above zero at the end, most objects first,
 * then the paths below zero, most unreferences first: MtaRefGroup *.
 * Free with the array. */
GPtrArray *mta_refs_groups (MtaRefTable *t);

uint64_t mta_refs_taken (const MtaRefTable *t);
uint64_t mta_refs_dropped (const MtaRefTable *t);
/* The objects seen: lives begun (share/analyzer.md). */
uint64_t mta_refs_lives (const MtaRefTable *t);
/* The addresses the drops below zero were at (each counted once). */
uint64_t mta_refs_below_addresses (const MtaRefTable *t);

#endif
