/* refcount.h -- the reference counts of one reference kind ("# k KIND r"
 * and "u" lines): objects whose count is not zero at the end of the run,
 * or went below zero, grouped by the call paths that took and dropped
 * their references.
 *
 * The count of an object is its references taken (r) minus those dropped
 * (u); an object its kind allocated ("+", still live when its first r or u
 * comes) starts at 1, its creator's reference, charged to the allocation's
 * path; a "-" of the kind ends the object, whatever its count.  Memory
 * follows the objects with a count (or still allocated), never the number
 * of events: an object whose count comes back to 0 and that its kind does
 * not hold allocated is forgotten, unless it went below zero.
 */
#ifndef MTA_REFCOUNT_H
#define MTA_REFCOUNT_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	uint32_t path;             /* the run's call path (run.h) */
	uint64_t refs, unrefs;     /* references taken and dropped there */
} MtaRefPath;

/* Objects with the same end count, the same fate (below zero or not) and
 * the same call paths: one entry however many objects. */
typedef struct {
	int64_t net;               /* each object's count at the end */
	gboolean negative;         /* the count went below zero */
	int64_t lowest;            /* the lowest count any of them reached */
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
/* The kind released ADDR: its count ends. */
void mta_refs_released (MtaRefTable *t, uint64_t addr);

/* The groups of the objects unbalanced at the end: MtaRefGroup *, below
 * zero first, then most objects first.  Free with the array. */
GPtrArray *mta_refs_groups (MtaRefTable *t);

uint64_t mta_refs_taken (const MtaRefTable *t);
uint64_t mta_refs_dropped (const MtaRefTable *t);

#endif
