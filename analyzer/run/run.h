/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run.h -- one run of a trace, analyzed by call site.
 *
 * Feed every line of the run (mta_run_line is an MtaLineFunc), then call
 * mta_run_finish.  The run follows the script's bookkeeping of blocks
 * (a block is live from its '+' or '>' to its '-' or '<'; a '+' of a live
 * address is a duplicate and changes nothing), so its leaks are exactly
 * the rows of the "Memory not freed" table for well-formed traces.
 *
 * Every event is charged to a call path: the recorded stack ("# stack ID"
 * and the event's s=ID), or the caller field alone when the trace has no
 * stacks.  A path is charged to a site, the first of its frames that is not
 * an allocation wrapper; a site is a function, source file, line and
 * object, the same from one build to the next.  Memory follows the live
 * blocks, the paths and the sites, never the length of the trace.
 */
#ifndef MTA_RUN_H
#define MTA_RUN_H

#include <glib.h>
#include <stdint.h>

#include "incomplete.h"
#include "reach.h"
#include "symbolize.h"
#include "timeline.h"
#include "trace-reader.h"
#include "wrappers.h"

/* A call path's or a site's totals.  The fields are named once, for
 * MtaTotals and for MtaPath's own names of the same memory: run.c writes
 * and reads a path's by those names, and hands out &path->totals only
 * when it is done (mta_run_finish), for the reports to read. */
#define MTA_TOTALS_FIELDS \
	uint64_t allocs;           /* '+' and '>' that stored a block */ \
	uint64_t frees;            /* '-' and '<' of blocks allocated here */ \
	uint64_t bytes_allocated; \
	uint64_t leaked_blocks, leaked_bytes; \
	uint64_t bad_frees;        /* frees here of memory never allocated */ \
	uint64_t first_line;       /* first event charged here; 0: none */ \
	/* The first leaked block's and the first bad free's lines: the \
	 * order of equal sites in their lists, kept by shrink (which keeps \
	 * those lines, and drops allocations that were freed). */ \
	uint64_t first_leak_line, first_bad_line; \
	/* allocations here freed before any other in their thread */ \
	uint64_t temporary; \
	/* The last free of a block from here, and the latest allocation \
	 * line among the blocks freed: the growth rule's evidence \
	 * (growth.c). */ \
	uint64_t last_free_line, last_freed_born;

typedef struct {
	MTA_TOTALS_FIELDS
} MtaTotals;

typedef struct {
	/* (in an order without holes: a run may have millions of sites) */
	char *function;            /* never NULL: "" unknown, "0xOFF" no symbol */
	char *file;                /* "" unknown */
	char *object;              /* "" unknown */
	unsigned line;             /* 0 unknown */
	uint32_t func_id;          /* its function's (by name, or code bounds without one), for auto_callers */
	/* Code without symbols found to be an allocation wrapper (run.c,
	 * "wrappers found without symbols"): how many callers it had then,
	 * and the size of its function's code (.eh_frame; 0: unknown) and
	 * where it starts */
	uint32_t auto_callers;
	uint32_t code_size;        /* (a function's code is far below 4 GB) */
	uint64_t code_lo;
	/* Totals of the paths charged here (after mta_run_finish; before, all
	 * zero): a site of one path shares that path's, and most sites have
	 * one (2 million callers: 96 bytes each not kept twice) */
	const MtaTotals *t;
	uint64_t peak_live_bytes;  /* most bytes allocated here and live at once */
	uint64_t live_bytes;       /* while reading */
	uint64_t live_blocks;      /* while reading */
	uint64_t peak_share_bytes; /* bytes from here live at the run's peak (after finish) */
	/* one after the other in the same place: 8 bytes a site */
	union {
		uint64_t peak_mark;        /* while reading: the peak epoch of peak_share_bytes */
		double growth_exponent;    /* after finish: p of the best fit y = a + b x^p, 0 when not fitted */
	};
	/* its live bytes and blocks over the run: mta_run_site_timeline */
	MtaTlPoints tl;
	/* Its leaks by reachability at exit (reach.h), after finish: blocks
	 * then bytes, MTA_REACH_N of each (all zero for a site without leaks,
	 * and for every site when the run has no verdicts: MtaRunInfo.reach);
	 * mta_site_reach_blocks, mta_site_reach_bytes */
	const uint64_t *reach;
	uint8_t wrapper;           /* the function is on the wrapper list, or found (auto_wrapper) */
	uint8_t auto_wrapper;
	uint8_t inlined;           /* a frame here was inlined code (see mta_path_inlined) */
	uint8_t charged;           /* any block was charged here */
	uint8_t named;             /* the function has a name (FUNCTION is no offset) */
	uint8_t growth;            /* MtaGrowth of its leaks (after finish) */
	/* an auto_wrapper's callers counted through thin ones, as it was
	 * found (xre__, called by xre alone, reaches xre's callers);
	 * saturating, in the padding after growth */
	uint16_t auto_callers_via;
} MtaSite;

typedef struct {
	int64_t trace_id;          /* the trace's stack id, -1: caller field only */
	char *caller;              /* the caller field of its first event ("" none) */
	uint64_t *addrs;           /* frame addresses, NULL without a stack */
	/* the site of each frame; when any_inlined, NFRAMES bytes after
	 * them: mta_path_inlined */
	uint32_t *frames;
	uint32_t nframes;          /* 0 until resolved; inlined code counts one frame a function */
	uint32_t site_frame;       /* the frame charged */
	int32_t site;              /* the site charged; -1 until resolved */
	uint8_t any_inlined;
	/* its totals, by name or as one MtaTotals (what its site points to
	 * when it is the site's only path) */
	union {
		MtaTotals totals;
		struct {
			MTA_TOTALS_FIELDS
		};
	};
	uint64_t live_bytes;
} MtaPath;

static inline const uint64_t *
mta_site_reach_blocks (const MtaSite *s)
{
	return s->reach;
}

static inline const uint64_t *
mta_site_reach_bytes (const MtaSite *s)
{
	return s->reach + MTA_REACH_N;
}

/* Whether frame I of P is its function's code inlined into the next
 * frame's: both have the same address, the next frame's line is the
 * inlined call's. */
static inline gboolean
mta_path_inlined (const MtaPath *p, uint32_t i)
{
	return p->any_inlined && i < p->nframes && ((const uint8_t *) (p->frames + p->nframes))[i];
}

/* A leaked block or a bad free. */
typedef struct {
	uint64_t addr, size;
	uint64_t line;             /* position in the trace (1-based, all parts) */
	uint32_t path;
	uint32_t tid;              /* 0: not recorded */
	char op;                   /* '+' '>' (leaks), '-' '<' (bad frees) */
	uint8_t reach;             /* a leak's MtaReach */
} MtaRecord;

typedef struct {
	GPtrArray *traces;         /* char *, as given */
	char *binary;              /* NULL when not given */
	int64_t pid, ppid;         /* -1: not recorded */
	char *exe, *cmdline;       /* NULL: not recorded */
	char *start;               /* "SEC.NSEC" (CLOCK_REALTIME), or NULL */
	int depth;                 /* frames per stack, 0: not recorded */
	uint64_t lines, unreadable_lines, events;
	uint64_t allocs, frees, reallocs, failed_allocs, duplicates;
	uint64_t bytes_allocated, live_bytes, peak_live_bytes;
	uint64_t leaked_blocks, leaked_bytes, bad_frees;
	uint64_t bad_frees_kept;   /* records in mta_run_bad_frees (capped) */
	/* mtrec attach ("# attached N"): the process ran without the recorder
	 * before; its frees of blocks allocated then are counted here, not
	 * as bad frees, and its leaks are those of the recorded windows. */
	uint64_t attaches;         /* the largest N seen; 0: not attached */
	uint64_t frees_before_attach;
	gboolean skip_wrappers;
	gboolean auto_skip;        /* wrappers found without symbols are skipped (--no-auto-skip) */
	/* Peak and temporary allocations */
	uint64_t peak_line;        /* the event that reached peak_live_bytes (first time) */
	uint64_t temporary;        /* blocks freed before any other allocation in their thread */
	/* Timeline: the run's axis is the recorder's clock ("# time") when the
	 * trace has enough of it, else the trace's lines (event order). */
	gboolean time_axis;
	uint64_t time_lines;       /* "# time" lines read */
	uint64_t end_time_ns;      /* the last "# time" (time axis) */
	guint tl_len;              /* timeline samples (after finish: the last is the end) */
	uint64_t *tl_lines;        /* the line of each sample */
	uint64_t *tl_times;        /* its time (ns since start), time axis only */
	/* What the recorder said it did not record ("# stopped", "# lost",
	 * "# freeres"): in a run that stopped, the blocks not freed are
	 * those live when it stopped, not proven leaks. */
	MtaIncomplete incomplete;
	/* Reachability (reach.h, MTREC_REACH): whether the trace has the
	 * verdicts of a recorder's scan (the latest that finished, else one
	 * the trace ends in); the blocks not freed of each category, all of
	 * them (--leaks or not); what the recorder said that scan could not
	 * scan.  leaked_blocks and leaked_bytes count only the kinds --leaks
	 * names (leak_kinds, 0: every block not freed); all_leaked_blocks
	 * and all_leaked_bytes every one. */
	gboolean reach;
	gboolean reach_finished;   /* the scan used has its "end" line */
	uint64_t reach_line;       /* its "begin" line */
	uint64_t reach_announced, reach_verdicts;	/* its "begin" N, and the verdicts read */
	uint64_t reach_read_bytes, reach_ms;	/* its "end" line's */
	uint64_t reach_scans;      /* scans that finished */
	uint64_t reach_unfinished; /* scans without an "end" not used */
	uint64_t reach_blocks[MTA_REACH_N], reach_bytes[MTA_REACH_N];
	GPtrArray *reach_notes;    /* char *: "WHAT: WHY" */
	GPtrArray *reach_refused;  /* char *: why each scan asked for was not made */
	uint64_t reach_bad_lines;  /* "# reach" lines that could not be read */
	uint64_t reach_first_bad_line;
	guint leak_kinds;
	uint64_t all_leaked_blocks, all_leaked_bytes;
} MtaRunInfo;

/* A trace of ours without its "# freeres" line: the process never went
 * through the recorder's exit while recording -- it left by _exit (as a
 * daemonizing parent does), a signal or an exec, or recording was off --
 * and the scan of MTREC_REACH is made there, so a trace recorded with
 * --reach has no verdicts either.  Said so, not "record with --reach". */
#define MTA_RUN_LEFT_BEFORE_EXIT \
	"its process did not go through exit() while recording (it left by _exit, a signal " \
	"or an exec, or recording was off then), where 'mtrec --reach' scans"
static inline gboolean
mta_run_left_before_exit (const MtaRunInfo *info)
{
	return info->pid >= 0 && info->incomplete.freeres == NULL && info->reach_refused->len == 0;
}

typedef struct {
	uint64_t line;
	char op;
	uint64_t addr, size;
	uint32_t path;             /* the event's own path */
	uint32_t tid;
} MtaRunEvent;

typedef gboolean (*MtaRunEventFunc) (const MtaRunEvent *ev, gpointer data, GError **error);

typedef struct MtaRun MtaRun;

/* WRAPPERS NULL: nothing is skipped. */
MtaRun *mta_run_new (MtaSymbolizer *sym, const MtaWrappers *wrappers, const char *binary);
void mta_run_free (MtaRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaRun, mta_run_free)

void mta_run_add_trace (MtaRun *run, const char *path);
/* Only the blocks not freed of the categories in MASK (1 << MtaReach) are
 * leaks (--leaks); 0, the default: all of them. */
void mta_run_set_leak_kinds (MtaRun *run, guint mask);
/* Whether allocation wrappers in code without symbols are found and
 * skipped (default: when wrappers are skipped at all).  Before any line. */
void mta_run_set_auto_skip (MtaRun *run, gboolean on);
/* Wrappers found without symbols: a function of at most this many bytes
 * of code (.eh_frame) charged with the blocks of this many distinct
 * callers one frame up. */
#define MTA_AUTO_WRAPPER_CALLERS 3
#define MTA_AUTO_WRAPPER_MAX_CODE 512
/* A caller of at most this many bytes of code does nothing but call (a
 * thin wrapper: xrealloc around xrealloc__): its own callers count. */
#define MTA_AUTO_WRAPPER_THIN_CODE 64
/* Called for every event, in order (--all-events). */
void mta_run_set_event_func (MtaRun *run, MtaRunEventFunc func, gpointer data);

gboolean mta_run_line (const MtaLine *line, gpointer run, GError **error);
void mta_run_finish (MtaRun *run, uint64_t lines, uint64_t unreadable_lines);

const MtaRunInfo *mta_run_info (const MtaRun *run);
MtaSymbolizer *mta_run_symbolizer (const MtaRun *run);
GPtrArray *mta_run_sites (const MtaRun *run);       /* MtaSite * */
GPtrArray *mta_run_paths (const MtaRun *run);       /* MtaPath * */
/* The paths charged to SITE (indices into mta_run_paths, in that order),
 * *N of them; after mta_run_finish. */
const uint32_t *mta_run_site_paths (const MtaRun *run, uint32_t site, guint *n);
/* The frames after the charged one of a path, up to MAX: what the reports
 * show under a site.  Site indices; free with g_array_unref. */
GArray *mta_path_tail (const MtaPath *path, guint max);
GArray *mta_run_leaks (const MtaRun *run);          /* MtaRecord, by address */
GArray *mta_run_bad_frees (const MtaRun *run);      /* MtaRecord, trace order */
/* The events of other allocators and reference counts ("# k" lines),
 * by kind (kinds.h); complete after mta_run_finish. */
typedef struct MtaKinds MtaKinds;
const MtaKinds *mta_run_kinds (const MtaRun *run);
/* Thread names: tid (GUINT_TO_POINTER) -> name */
GHashTable *mta_run_threads (const MtaRun *run);

/* S's live BYTES and BLOCKS at each of the run's tl_len timeline samples
 * (either may be NULL); FALSE, and nothing filled, when nothing was ever
 * charged there. */
gboolean mta_run_site_timeline (const MtaRun *run, const MtaSite *s, uint64_t *bytes,
				uint32_t *blocks);

/* Position of trace line LINE on the run's axis: ns since the start
 * (time axis, interpolated between "# time" lines) or the line itself. */
double mta_run_position (const MtaRun *run, uint64_t line);

/* ---- the sites in report order (site-rank.c) */

/* Site indices with leaks, largest first (bytes, then blocks, then the
 * first seen); and with bad frees, most first.  Free with g_array_unref. */
GArray *mta_run_leak_sites (const MtaRun *run);
GArray *mta_run_bad_free_sites (const MtaRun *run);

/* Sites with leaks whose growth class is in MASK (1 << MtaGrowth), largest
 * first; MASK 0: all of them (mta_run_leak_sites). */
GArray *mta_run_leak_sites_filtered (const MtaRun *run, guint mask);

/* Sites by their live bytes at the run's peak, most first, those holding
 * any; at most MAX (0: all). */
GArray *mta_run_peak_sites (const MtaRun *run, guint max);

/* Sites by temporary allocations, most first, those having any; at most
 * MAX (0: all). */
GArray *mta_run_temporary_sites (const MtaRun *run, guint max);

/* Whether the leak of site S is proven: not when the recording stopped
 * (its blocks were live then, and may have been freed later), nor when
 * the recorder lost at least as many events as it has leaked blocks
 * (their frees may be among them).  The --growth gate counts proven
 * leaks only. */
gboolean mta_run_site_proven (const MtaRun *run, const MtaSite *s);

/* "function at file:line in object", the way the reports print a site. */
char *mta_site_label (const MtaSite *site);
/* The same words for any location: "FUNCTION at FILE:LINE in OBJECT",
 * leaving out what is unknown (empty strings, line 0). */
char *mta_location_label (const char *function, const char *file, unsigned line,
			  const char *object);

#endif
