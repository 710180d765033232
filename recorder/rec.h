/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec.h -- all the interposition shim (shim.c, which owns every
 * exported symbol) sees of the recorder: process life (life.c) and the
 * record calls (events.c).  The recorder's own layers, from the
 * bottom: prim.h and lock.h; the leaves file.h, tables.h, symtab.h,
 * unwind.h; the chunk writer chunk.h; events and life. */
#ifndef MTREC_REC_H
#define MTREC_REC_H

#include <signal.h>
#include <stddef.h>

#include "prim.h"

/* Non-zero while events are being recorded; the wrappers' only test. */
extern int mtrec_recording MTREC_HIDDEN;
/* Set around the recorder's own calls into libc that allocate (putenv):
 * those blocks are not the program's and are not recorded. */
extern __thread int mtrec_busy MTREC_HIDDEN;

/* Calls of this thread left before it next looks at the clock for mtrec
 * ctl's requests (control.h); mtrec_control_poll() looks, acts on a
 * request when one is due, and sets the count again. */
extern __thread int mtrec_ctl_countdown MTREC_HIDDEN;
MTREC_COLD void mtrec_control_poll(void) MTREC_HIDDEN;
/* mtrec ctl made this thread call the recorder (mtrec_ctl_now): take a
 * request now, whatever the clock; 1 when one was taken. */
int mtrec_control_now(void) MTREC_HIDDEN;

/* Every wrapper asks this once per call, recording or not: so it is also
 * where mtrec ctl's requests are looked for.  Reading even the coarse clock
 * costs about as much as a malloc here (8-10 ns, measured), so a busy
 * thread reads it only every so many calls (see mtrec_control_poll). */
static inline int mtrec_wants(void)
{
	if (unlikely(--mtrec_ctl_countdown < 0))
		mtrec_control_poll();
	return unlikely(mtrec_recording) && likely(!mtrec_busy);
}

/* ---- process life (life.c) ---- */

/* Library start-up, once, from the first wrapper call or the constructor;
 * real_sigaction is the next sigaction in the chain. */
void mtrec_init(mtrec_sigaction_fn real_sigaction) MTREC_HIDDEN;
/* Process end: let libc free its caches, close the span, trim the file. */
void mtrec_fini(void) MTREC_HIDDEN;
/* From the constructor: mark the environment as a running session. */
/* LIBC_PUTENV: libc's putenv, not a program's own (bash's defines shell
 * variables, and would run before the program's main). */
void mtrec_mark_session(int (*libc_putenv)(char *)) MTREC_HIDDEN;
/* From the constructor: install the MTREC_SIGNAL toggle, if asked for. */
void mtrec_install_signal(void) MTREC_HIDDEN;
/* exec, which may fail: the file is cut at what was written before it
 * (an exec'd image would leave it padded with the growth ahead), and
 * recording goes on after a failed one.  mtrec_exec_begin (WHAT: the
 * path, or "-") returns what to hand mtrec_exec_end. */
int mtrec_exec_begin(const char *what) MTREC_HIDDEN;
void mtrec_exec_end(int paused) MTREC_HIDDEN;
/* fork: keep the child from inheriting a held lock or the parent's file. */
void mtrec_fork_child(void) MTREC_HIDDEN;
/* fork: mark the fork in the parent's trace, for the child's analysis. */
void mtrec_fork_prepare(void) MTREC_HIDDEN;
void mtrec_fork_parent(void) MTREC_HIDDEN;

/* mtrec attach: after mtrec_init() read the attacher's settings, open the
 * trace if it is not (its header says "# attached N"; a later attach
 * writes the line) and start recording; NULL, or why it could not.
 * mtrec detach: "# detached N" and "= End" (after the scan, with
 * MTREC_REACH); the trace stays open for the next attach and is ended at
 * exit.  The path of the trace. */
const char *mtrec_attach_begin(void) MTREC_HIDDEN;
void mtrec_attach_end(void) MTREC_HIDDEN;
const char *mtrec_attached_path(void) MTREC_HIDDEN;

/* Scoping (trace_on/trace_off/trace_mark, mtrace/muntrace). */
void mtrec_start(void) MTREC_HIDDEN;
/* trace_off() and muntrace(): stop recording, after a scan of the live
 * blocks with MTREC_REACH=2. */
void mtrec_stop_asked(void) MTREC_HIDDEN;
void mtrec_mark(const char *label) MTREC_HIDDEN;
/* A module was unloaded: cached caller strings may be stale. */
void mtrec_forget_callers(void) MTREC_HIDDEN;

/* From the constructor: redirect, in objects that bypass the preload
 * (RTLD_DEEPBIND plugins), the slots for funcs[0..n) (got.h), unless
 * MTREC_PATCH=0, and everywhere those of the ntracked functions that
 * MTREC_TRACK names (funcs[n..n+ntracked), track.h), never touching the
 * objects that hold keep[0..nkeep).  1 when the slots were looked at (then
 * the shim has track.c say what it found), 0 when not. */
struct mtrec_got_func;
int mtrec_redirect_init(struct mtrec_got_func *funcs, int n, int ntracked,
			const void *const *keep, int nkeep) MTREC_HIDDEN;
/* From the dl* wrappers: objects may have been loaded since the last
 * look; redirect their slots. */
void mtrec_loader_moved(void) MTREC_HIDDEN;

/* The program got no memory for a request of size bytes: 1 when the
 * recorder gave address space back and the request is worth retrying. */
int mtrec_out_of_memory(size_t size) MTREC_HIDDEN;
/* The program's sigaction() for SIGBUS, while the recorder guards it
 * (file.c): keep (and report) the program's action instead of
 * installing it; 1 when handled so. */
int mtrec_sigbus_action(const struct sigaction *act, struct sigaction *old) MTREC_HIDDEN;

/* ---- events (events.c) ---- */

/* An allocation is recorded after it returned, a free before the block is
 * released (see events.c for why the order matters). */
void mtrec_record_alloc(const void *caller, const void *p, size_t size) MTREC_HIDDEN;
void mtrec_record_free(const void *caller, const void *p) MTREC_HIDDEN;
/* An event of a tracked allocator or reference count (mtrec.h's
 * mtrec_alloc/free/ref/unref): op '+', '-', 'r' or 'u' on p of KIND, with
 * its size when with_size.  Written as a "# k KIND" line, which glibc's
 * mtrace script ignores. */
void mtrec_record_kind(const void *caller, const char *kind, char op, const void *p,
		       int with_size, size_t size) MTREC_HIDDEN;

/* realloc both frees and allocates, and can fail: the outcome's place in
 * the file is held before the call, the outcome written after it. */
enum mtrec_realloc_state {
	MTREC_REALLOC_NEW,		/* realloc(NULL, n): an allocation */
	MTREC_REALLOC_FIRST_SIGHT,	/* old is not the program's (see events.h) */
	MTREC_REALLOC_HELD,		/* [at, end) is held for the outcome */
	MTREC_REALLOC_ADRIFT,		/* no place could be held */
};
struct mtrec_realloc {
	enum mtrec_realloc_state state;
	char *at, *end;
	int reach_had;		/* MTREC_REACH: old was in the table, ... */
	size_t reach_size;	/* ... of this size (put back if the call fails) */
};
void mtrec_realloc_before(struct mtrec_realloc *r, const void *caller,
			  const void *old) MTREC_HIDDEN;
void mtrec_realloc_after(struct mtrec_realloc *r, const void *caller,
			 const void *old, const void *new, size_t size) MTREC_HIDDEN;

/* The record calls the shim makes for the malloc family: the four above,
 * or, with MTREC_REACH=1, versions that also keep the table of live
 * blocks (reach-table.h).  Chosen once at start-up (mtrec_events_reach) and
 * called through these pointers, so that the option costs the calls
 * nothing when it is off: a call through a pointer is one instruction,
 * as a direct call is, where a test of the option in each would be two
 * more (1% of a malloc and free under callgrind). */
struct mtrec_record_calls {
	void (*alloc)(const void *caller, const void *p, size_t size);
	void (*free)(const void *caller, const void *p);
	void (*realloc_before)(struct mtrec_realloc *r, const void *caller, const void *old);
	void (*realloc_after)(struct mtrec_realloc *r, const void *caller,
			      const void *old, const void *new, size_t size);
};
extern struct mtrec_record_calls mtrec_record MTREC_HIDDEN;

#endif
