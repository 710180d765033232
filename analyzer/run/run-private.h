/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run-private.h -- what run.c and auto-skip.c share of a run: struct
 * MtaRun itself, which no other file sees (run.h is the interface). */
#ifndef MTA_RUN_PRIVATE_H
#define MTA_RUN_PRIVATE_H

#include "run.h"
#include "kinds.h"
#include "index-table.h"
#include "live-table.h"
#include "timeline.h"

typedef struct {
	uint64_t last_addr;        /* its latest allocation */
	gboolean valid;            /* ... not followed by a free yet */
} ThreadState;

typedef struct {
	uint64_t *addrs;
	uint32_t *vals;            /* 0: an empty slot */
	size_t mask, count;
} AddrSites;

/* Memory for what lives as long as the run (sites, paths, their frames):
 * no malloc header each, and nothing to free one by one. */
typedef struct {
	GSList *blocks;
	char *cur;
	size_t left;
} Arena;

struct MtaRun {
	MtaSymbolizer *sym;
	const MtaWrappers *wrappers;
	MtaRunInfo info;
	MtaRunEventFunc event_func;
	gpointer event_data;
	uint32_t tid;
	MtaLiveTable blocks;       /* live blocks: line, size, path, tid */
	MtaStrtab callers;
	GArray *path_by_caller;    /* caller id -> path + 1 */
	GArray *path_by_stack;     /* dense stack id -> path + 1 */
	GHashTable *path_by_big_stack;  /* stack id -> path + 1 */
	GArray *stack_by_id;       /* dense stack id -> StackDef * (arena), NULL: not defined */
	GHashTable *stacks;        /* other stack ids (gint64 *) -> StackDef * (arena) */
	GPtrArray *paths;
	GPtrArray *sites;
	/* after finish: the paths of site i are site_paths[site_path_start[i]]
	 * up to site_path_start[i + 1], in path order */
	uint32_t *site_path_start, *site_paths;
	MtaIndexTable site_by_key; /* sites by function, file, line, object */
	/* the sites' strings, the paths' callers and the field keys: a
	 * malloc'd string each costs more than most of them hold */
	GStringChunk *strings;
	Arena arena;
	Arena arena4;              /* the paths' frames: 12 bytes for 3, not 16 */
	GArray *scratch_frames, *scratch_addrs, *scratch_inlined;   /* resolve_path's */
	GHashTable *site_by_field; /* frame field (string chunk) -> FieldSites (arena) */
	AddrSites field_by_addr;   /* stack frames "[0xADDR]" by ADDR (run.c) */
	GPtrArray *addr_fields;    /* those of several sites: FieldSites (arena) */
	struct FieldSites *one_field;   /* sites_for_addr's answer of one site */
	GArray *leaks;
	GArray *bad_frees;
	GHashTable *threads;
	MtaTimeline timeline;
	uint64_t cur_line;
	/* peak */
	uint64_t peak_epoch;
	uint64_t compact_peak_epoch;  /* the epoch of a compacted trace's peak, 0: none */
	/* path -> its live bytes at the run's peak when the peak lies in a
	 * compacted trace's dropped lines ("# pathsum", compact-sum.h); NULL
	 * in a run without them (most: 8 bytes a path) */
	GArray *compact_shares;
	/* temporary allocations: tid -> ThreadState index + 1 */
	GHashTable *thread_index;
	GArray *thread_states;
	ThreadState *cur_thread;
	MtaKinds *kinds;           /* "# k" events */
	/* "# reach" verdicts by address (flags: the MtaReach); they may come
	 * before the block's own line, which another thread wrote later in
	 * the file, so they are matched with the blocks live at the end */
	MtaLiveTable verdicts;
	/* the scan being read: its verdicts and notes until its "end" */
	MtaLiveTable scan;
	GPtrArray *scan_notes;
	gboolean in_scan;
	uint64_t scan_line, scan_announced, scan_verdicts;
	/* wrappers found without symbols: for each candidate site (+1), the
	 * set of its callers' sites (+1) */
	GHashTable *callers_of;
	MtaIndexTable funcs;       /* the first site of each function (MtaSite.func_id) */
};

static inline MtaSite *
site_at (MtaRun *r, uint32_t i)
{
	return r->sites->pdata[i];
}

/* Before S's live bytes change: keep what it held at the latest peak. */
static inline void
site_touch (MtaRun *r, MtaSite *s)
{
	if (s->peak_mark != r->peak_epoch) {
		s->peak_share_bytes = s->live_bytes;
		s->peak_mark = r->peak_epoch;
	}
	s->charged = TRUE;
	mta_timeline_keep (&r->timeline, &s->tl, r->cur_line, s->live_bytes, s->live_blocks);
}

/* auto-skip.c: wrappers found without symbols. */
/* Charge resolved path P to the first of its frames that is not a wrapper. */
void mta_run_charge_path (MtaRun *r, MtaPath *p);
/* At the end: each found wrapper's callers, all of them. */
void mta_run_count_auto_callers (MtaRun *r);

/* run.c's, for run-finish.c (the end of a run): */
void *mta_run_arena_alloc0 (Arena *a, size_t n);
void mta_run_resolve_path (MtaRun *r, MtaPath *p, gboolean force);
void mta_run_reach_finish (MtaRun *r);
void mta_run_drop_path_tables (MtaRun *r);
/* the reachability counts of a site without verdicts: all zero */
extern const uint64_t mta_run_no_reach[2 * MTA_REACH_N];

#endif
