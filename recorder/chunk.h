/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chunk.h -- the chunk writer (chunk.c): which thread writes where in
 * the trace file, and the lines that are not events.
 *
 * Each thread, at each signal-nesting level, has a slot; a slot writes
 * into its own chunk of the file.  Every call into the recorder is
 * bracketed by mtrec_enter() and mtrec_leave(), which keep the nesting
 * level.  Below it: the file (file.h) and the objects' text for part
 * zones (tables.h); above it: events (events.c) and process life
 * (life.c), which tells it, through struct mtrec_life_hooks, what only
 * process life knows. */
#ifndef MTREC_CHUNK_H
#define MTREC_CHUNK_H

#include <stddef.h>
#include "words.h"
#include <stdint.h>
#include <sys/types.h>

#include "file.h"
#include "prim.h"

#define MTREC_NEST 4		/* record calls of one thread nested by signal handlers */

/* What a thread writes into.  Slots live in memory of our own, never in
 * TLS, so that the exit path can finish the chunks of other threads. */
struct mtrec_slot {
	char *pos;		/* next byte to write */
	char *end;		/* end of the chunk */
	/* end as an offset in the trace, which the ordering table of
	 * events.c compares: addresses do not follow the trace's order
	 * once rotated parts take places in the range again (file.c). */
	size_t end_off;
	unsigned long gen;	/* the chunk is stale once mtrec_gen moves on */
	pid_t tid;
	uint64_t name_checked;	/* when the thread's name was last looked at */
	char name[16];		/* as last written in a "# thread" line */
	unsigned long lost_stopped;	/* events after recording stopped */
	unsigned long lost_nested;	/* events a signal handler could not write */
	/* Another thread closes the chunk of a thread that writes nothing
	 * (chunk.c, "Parts that complete"): these say when it may. */
	unsigned busy;		/* the owner is inside the recorder at this level */
	unsigned held;		/* realloc outcomes held in the chunk (events.c) */
	unsigned claim;		/* who moves pos and end off the fast path */
} __attribute__((aligned(64)));

/* Record calls of this thread in progress: a signal handler's comes at
 * depth 1 or more. */
extern __thread unsigned mtrec_depth MTREC_HIDDEN;
/* The calling thread's slot at each nesting level. */
extern __thread struct mtrec_slot *mtrec_self[MTREC_NEST] MTREC_HIDDEN;
/* Bumped to send every thread to a new chunk. */
extern unsigned long mtrec_gen MTREC_HIDDEN;
/* Recording stopped for good (mtrec_give_up): events are only counted. */
extern int mtrec_failed MTREC_HIDDEN;
/* Work was put off until a thread leaves the recorder (mtrec_defer). */
extern int mtrec_pending MTREC_HIDDEN;

/* What process life (life.c) does for the slow paths here; set once,
 * before the first event. */
struct mtrec_life_hooks {
	/* The slots belong to another process: this is a child made
	 * without fork handlers (_Fork, a raw clone); make it a child. */
	void (*new_process)(void);
	/* A thread got its slot (a forked child opens its trace at its first
	 * event): 0 when its event may be recorded, -1 when this process does
	 * not record, -2 when it cannot start now (its lock is held). */
	int (*attached)(void);
	/* What mtrec_defer() put off. */
	void (*deferred)(void);
};
void mtrec_chunk_set_hooks(const struct mtrec_life_hooks *hooks) MTREC_HIDDEN;

/* Map the slots; 0, or -1 when the memory cannot be had. */
int mtrec_chunk_init(void) MTREC_HIDDEN;
/* The process the slots belong to. */
pid_t mtrec_chunk_owner(void) MTREC_HIDDEN;
/* The trace is open: hand out chunks.  header: the process header, which
 * starts each part of a rotated trace again (kept, not copied). */
void mtrec_chunk_begin(const char *header, size_t len) MTREC_HIDDEN;
/* The process exits, and recording has stopped: wait (a few seconds at
 * most) for the other threads inside the recorder to leave it, their
 * lines whole; the number of those that did not. */
unsigned mtrec_chunk_drain(void) MTREC_HIDDEN;
/* The process exits: finish every chunk and trim the file, so that it
 * ends where the caller's last line does when its chunk is the last. */
void mtrec_chunk_finish(void) MTREC_HIDDEN;
/* Before an exec, which may fail, in a process of one thread: finish every
 * chunk and trim the file as at exit; after a failed exec, resume: the
 * file grows again from the cut.  (Events of a signal handler meanwhile
 * are counted as lost.) */
void mtrec_chunk_pause(void) MTREC_HIDDEN;
void mtrec_chunk_resume(void) MTREC_HIDDEN;
/* Fork child: no slot, no chunk, and the parent's file is not ours. */
void mtrec_chunk_fork_child(void) MTREC_HIDDEN;

/* The slow ways of the inline functions below (cold, so that the
 * compiler lays the fast ways out straight). */
MTREC_COLD struct mtrec_slot *mtrec_me_slow(unsigned level) MTREC_HIDDEN;
MTREC_COLD char *mtrec_chunk_new(struct mtrec_slot *s, size_t need) MTREC_HIDDEN;
MTREC_COLD void mtrec_run_pending(void) MTREC_HIDDEN;

static inline void mtrec_enter(void)
{
	mtrec_depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Leave the recorder, s being what mtrec_me() returned at this level (or
 * NULL): the slot is no longer busy.  Work put off inside the recorder is
 * done when the outermost call leaves. */
static inline void mtrec_leave_slot(struct mtrec_slot *s)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (s)
		__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	if (--mtrec_depth == 0 && unlikely(__atomic_load_n(&mtrec_pending, __ATOMIC_ACQUIRE)))
		mtrec_run_pending();
}

/* mtrec_leave_slot() for callers that did not keep the slot. */
static inline void mtrec_leave(void)
{
	unsigned level = mtrec_depth - 1;

	mtrec_leave_slot(level < MTREC_NEST ? mtrec_self[level] : NULL);
}

/* Put hooks->deferred off until a thread next leaves the recorder. */
static inline void mtrec_defer(void)
{
	__atomic_store_n(&mtrec_pending, 1, __ATOMIC_RELEASE);
}

/* The slot is in use until mtrec_leave(): a plain store, which the
 * thread that retires a part orders with prim_membarrier() (chunk.c);
 * only the compiler must keep it before the loads that follow. */
static inline struct mtrec_slot *mtrec_slot_in_use(struct mtrec_slot *s)
{
	__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return s;
}

/* The calling thread's slot at its current nesting level (between
 * mtrec_enter and mtrec_leave), or NULL when it has none.  A slot found
 * empty (its thread's first event, or a child process: the slots are
 * wiped on fork, even by _Fork() or a raw clone that runs no fork handler)
 * takes the slow way. */
static inline struct mtrec_slot *mtrec_me(void)
{
	unsigned level = mtrec_depth - 1;
	struct mtrec_slot *s = level < MTREC_NEST ? mtrec_self[level] : NULL;

	if (likely(s != NULL) && likely(s->tid != 0))
		return mtrec_slot_in_use(s);
	return mtrec_me_slow(level);
}

/* Room for need bytes at s->pos, in a chunk of the current epoch; NULL
 * when recording has stopped or the file cannot grow. */
static inline char *mtrec_room(struct mtrec_slot *s, size_t need)
{
	if (likely(s->gen == __atomic_load_n(&mtrec_gen, __ATOMIC_RELAXED) &&
		   (size_t)(s->end - s->pos) >= need))
		return s->pos;
	return mtrec_chunk_new(s, need);
}

/* The part of the trace that the byte at o belongs to, from 1. */
static inline unsigned mtrec_part_of(const char *o)
{
	return mtrec_file_part_of(o);
}

/* Fill [from, to) with one comment line (a newline alone for one byte). */
void mtrec_pad(char *from, char *to) MTREC_HIDDEN;

/* ---- lines that are not events, in the calling thread's chunk ---- */

/* One whole line, without its newline (cut at MTREC_MAX_LINE). */
void mtrec_chunk_line(const char *text, size_t len) MTREC_HIDDEN;
/* Whole lines, newlines included. */
void mtrec_chunk_text(const char *text, size_t len) MTREC_HIDDEN;
/* Room for len bytes of whole lines in one piece of the file, the
 * calling thread's chunk, now; NULL when not recording, or when len does
 * not fit in a part of a rotated trace.  Then mtrec_chunk_region_end(end
 * of what was written): the rest is the thread's, as any chunk's. */
char *mtrec_chunk_region(size_t len) MTREC_HIDDEN;
void mtrec_chunk_region_end(char *end) MTREC_HIDDEN;
/* "# KEY REST", with newlines in REST made spaces. */
void mtrec_chunk_keyed(enum mtrec_word w, const char *rest, size_t len) MTREC_HIDDEN;
/* Send every thread to a new chunk: what they write next comes after
 * whatever the caller writes now. */
void mtrec_new_epoch(void) MTREC_HIDDEN;
/* "# time NSEC" now, due or not, after every line written before it: at
 * the start and the end of recording, so that every trace of ours has a
 * clock however short the run, and at exit, for the order of a parent's
 * and its child's ends. */
void mtrec_chunk_time(void) MTREC_HIDDEN;
/* From the clock look every thread makes anyway (mtrec_control_poll), NOW
 * on CLOCK_MONOTONIC_COARSE: when a "# time" line is due, every thread is
 * sent to a new chunk, and the first to take one writes it.  So the clock
 * is in the trace every TIME_EVERY_NS while events come, not only when a
 * busy thread fills its chunk. */
MTREC_COLD void mtrec_chunk_tick(uint64_t now) MTREC_HIDDEN;

/* Stop recording for good, saying why once, on stderr and in the trace
 * ("# stopped WHY"). */
void mtrec_give_up(const char *why, int err) MTREC_HIDDEN;
/* From a periodic look outside any chunk (the control channel's, every
 * 100 ms of any thread's allocation calls): has the trace file been
 * removed or replaced?  Then recording stops, saying so.  now: the
 * monotonic clock in ns. */
void mtrec_chunk_watch(uint64_t now) MTREC_HIDDEN;
/* The trace could not be opened, and the file layer said why: nothing
 * will be written. */
void mtrec_chunk_refuse(void) MTREC_HIDDEN;
/* The events counted instead of written, over every thread. */
void mtrec_chunk_lost(unsigned long *stopped, unsigned long *nested) MTREC_HIDDEN;

#endif
