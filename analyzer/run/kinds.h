/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kinds.h -- the tracked events of a run ("# k KIND ..." lines,
 * trace-format.md "Tracked events"), kept apart by kind.
 *
 * An allocator kind has its own live blocks: a "+" stores a block, a "-"
 * of a block this kind did not allocate is a bad free of the kind, what
 * is left at the end are its leaks, grouped by call site as malloc's are.
 * A reference kind (r and u events) has its counts (refcount.h).  One
 * name may be both: then a live block of the kind starts its object's
 * count at 1.  Kinds are interned per run, across its parts; the events
 * are charged to the run's call paths, so their sites are the run's.
 */
#ifndef MTA_KINDS_H
#define MTA_KINDS_H

#include <glib.h>
#include <stdint.h>

#include "refcount.h"
#include "run.h"
#include "trace-reader.h"

/* One call site's share of a kind's leaks or bad frees. */
typedef struct {
	uint32_t site;             /* the run's site (run.h) */
	uint64_t blocks, bytes;    /* leaked, or bad frees (bytes 0) */
	uint64_t first_line;       /* its first leaked block or bad free */
	uint32_t path;             /* that one's call path: the callers shown */
} MtaKindSite;

typedef struct {
	char *name;
	uint64_t allocs, frees, bytes_allocated, bad_frees;
	uint64_t leaked_blocks, leaked_bytes;
	uint64_t refs, unrefs;     /* r and u events */
	uint64_t ref_objects;      /* the objects they were of (lives) */
	uint64_t ref_below_addresses; /* the addresses of the drops below zero */
	/* after mta_kinds_finish: */
	GArray *leak_sites;        /* MtaKindSite, most bytes first */
	GArray *bad_free_sites;    /* MtaKindSite, most first */
	GArray *leaks;             /* MtaRecord, by address */
	GArray *bad_free_records;  /* MtaRecord, in trace order (capped) */
	GPtrArray *ref_groups;     /* MtaRefGroup *, NULL: not a reference kind */
} MtaKind;

typedef struct MtaKinds MtaKinds;

MtaKinds *mta_kinds_new (void);
void mta_kinds_free (MtaKinds *k);

/* A MTA_LINE_TRACKED line, charged to the run's call path PATH, in
 * thread TID. */
void mta_kinds_event (MtaKinds *k, const MtaLine *l, uint32_t path, uint32_t tid);

/* The leaks, the sites and the reference groups, once the run's paths
 * have their sites (PATHS: MtaPath *). */
void mta_kinds_finish (MtaKinds *k, const GPtrArray *paths);

/* The kinds in the order they first appeared. */
guint mta_kinds_count (const MtaKinds *k);
const MtaKind *mta_kinds_get (const MtaKinds *k, guint i);

/* Whether any kind leaks: blocks not released, or objects whose count is
 * unbalanced (the exit status's 1; bad frees do not count, as malloc's
 * do not). */
gboolean mta_kinds_any_leak (const MtaKinds *k);

#endif
