/* rec.h -- the one internal interface between the interposition shim
 * (rec-shim.c, which owns every exported symbol) and the recorder core:
 * recording (rec-core.c), the trace file (rec-file.c), caller strings
 * (rec-caller.c), loaded objects (rec-objects.c) and call stacks
 * (rec-stack.c). */
#ifndef MTREC_REC_H
#define MTREC_REC_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "prim.h"

/* The functions the shim forwards to: the next definitions in the chain. */
struct mtrec_real {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	int (*dlclose)(void *);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
};
extern struct mtrec_real mtrec_real MTREC_HIDDEN;

/* Non-zero while events are being recorded; the wrappers' only test. */
extern int mtrec_recording MTREC_HIDDEN;
/* Set around the recorder's own calls into libc that allocate (putenv):
 * those blocks are not the program's and are not recorded. */
extern __thread int mtrec_busy MTREC_HIDDEN;

static inline int mtrec_wants(void)
{
	return unlikely(mtrec_recording) && likely(!mtrec_busy);
}

/* Library start-up, once, from the first wrapper call or the constructor. */
void mtrec_init(void) MTREC_HIDDEN;
/* Process end: let libc free its caches, close the span, trim the file. */
void mtrec_fini(void) MTREC_HIDDEN;
/* From the constructor: mark the environment as a running session. */
void mtrec_mark_session(void) MTREC_HIDDEN;
/* From the constructor: install the MTREC_SIGNAL toggle, if asked for. */
void mtrec_install_signal(void) MTREC_HIDDEN;

/* Events.  An allocation is recorded after it returned, a free before the
 * block is released (see rec-core.c for why the order matters). */
void mtrec_record_alloc(const void *caller, const void *p, size_t size) MTREC_HIDDEN;
void mtrec_record_free(const void *caller, const void *p) MTREC_HIDDEN;

/* realloc both frees and allocates, and can fail: the free's place in the
 * file is fixed before the call, the outcome written after it. */
struct mtrec_realloc {
	char *at;		/* the place reserved for the outcome, or NULL */
	int first_sight;	/* old is libc's environ block (see g.hidden) */
};
void mtrec_realloc_before(struct mtrec_realloc *r, const void *caller,
			  const void *old) MTREC_HIDDEN;
void mtrec_realloc_after(struct mtrec_realloc *r, const void *caller,
			 const void *old, const void *new, size_t size) MTREC_HIDDEN;

/* Scoping (trace_on/trace_off/trace_mark, mtrace/muntrace). */
void mtrec_start(void) MTREC_HIDDEN;
void mtrec_stop(void) MTREC_HIDDEN;
void mtrec_mark(const char *label) MTREC_HIDDEN;
/* A module was unloaded: cached caller strings may be stale. */
void mtrec_forget_callers(void) MTREC_HIDDEN;

/* The program got no memory for a request of size bytes: 1 when the
 * recorder gave address space back and the request is worth retrying. */
int mtrec_out_of_memory(size_t size) MTREC_HIDDEN;

/* fork: keep the child from inheriting a held lock or the parent's file. */
void mtrec_fork_child(void) MTREC_HIDDEN;

/* ---- the trace file (rec-file.c) ---- */

/* Fix the name pattern once: MALLOC_TRACE made absolute, or the absolute
 * one a session's first process passed down (inherited, may be NULL). */
void mtrec_file_pattern_init(const char *inherited) MTREC_HIDDEN;
const char *mtrec_file_pattern(void) MTREC_HIDDEN;
/* Open the trace named by MALLOC_TRACE for this process and map it.
 * first: this is the session's first process (it may truncate the name).
 * Returns 0, or -1 after saying why on stderr. */
int mtrec_file_open(int first) MTREC_HIDDEN;
/* Make sure bytes [0, end) of the file exist and are backed by disk
 * blocks; 0, or -1 when recording must stop (already said why). */
int mtrec_file_grow(size_t end) MTREC_HIDDEN;
/* The same for a chunk ending at end, with the margin kept past it for the
 * last words (see rec-file.c); cheap when the file is large enough. */
int mtrec_file_ensure(size_t end) MTREC_HIDDEN;
/* Cut the file to its used length.  When the last chunk is the one that
 * ends at end, cut at pos instead and return 1. */
int mtrec_file_close(char *pos, char *end) MTREC_HIDDEN;
/* Drop the mapping inherited from the parent (fork child). */
void mtrec_file_forget(void) MTREC_HIDDEN;
/* Recording stopped for good: hand out no more chunks; from now on
 * mtrec_file_note() appends lines (whole, newline included) after
 * everything written, in the margin or at the file's end. */
void mtrec_file_stop(void) MTREC_HIDDEN;
void mtrec_file_note(const char *text, size_t len) MTREC_HIDDEN;
/* After mtrec_file_stop(), give back the address space reserved for the
 * trace when RLIMIT_AS sized it; 1 when some was given back. */
int mtrec_file_release(void) MTREC_HIDDEN;
/* Non-zero once the file shrank under the mapping (truncated by another
 * process): nothing written since reaches it. */
int mtrec_file_lost(void) MTREC_HIDDEN;
/* The program's sigaction() for SIGBUS, while the recorder guards it:
 * keep (and report) the program's action instead of installing it; 1 when
 * handled so.  mtrec_chain_sigbus() runs the program's action. */
int mtrec_file_bus_action(const struct sigaction *act, struct sigaction *old) MTREC_HIDDEN;
void mtrec_chain_sigbus(int sig, siginfo_t *si, void *ctx) MTREC_HIDDEN;

/* Each part of a rotated trace starts with a header zone this large. */
#define MTREC_PART_ZONE (64u << 10)

struct mtrec_file {
	int fd;
	char *base;		/* the whole file is mapped here ... */
	size_t maplen;		/* ... this far */
	size_t tail;		/* bytes handed out to writers (atomic) */
	size_t size;		/* bytes backed by the files (atomic) */
	size_t part_size;	/* MTREC_ROTATE, or maplen: one part */
	size_t part_start;	/* offset where the current part begins */
	unsigned part_no;	/* the current part, from 1 */
	char path[4096];	/* the current part's file */
};
extern struct mtrec_file mtrec_file MTREC_HIDDEN;

/* ---- caller strings (rec-caller.c) ---- */

/* "@ OBJECT:(SYM+OFF)[0xREL] ", the prefix glibc writes for a caller. */
struct mtrec_caller {
	const void *addr;
	unsigned short len;
	char text[];
};
const struct mtrec_caller *mtrec_caller_get(const void *addr) MTREC_HIDDEN;
void mtrec_caller_reset(void) MTREC_HIDDEN;

/* ---- loaded objects (rec-objects.c) ---- */

/* Write "# object" lines for objects loaded since the last call and
 * "# unload" lines for those gone; cheap when nothing changed. */
void mtrec_objects_sync(void) MTREC_HIDDEN;
void mtrec_objects_reset(void) MTREC_HIDDEN;
/* Copy the "# object" lines of every object loaded now (whole lines that
 * fit before lim) to o; returns the end.  Takes no lock, waits for none. */
char *mtrec_objects_put(char *o, char *lim) MTREC_HIDDEN;

/* ---- call stacks (rec-stack.c) ---- */

/* The interned stack ips[0..n) (NULL when out of memory).  Its "# stack"
 * line is the caller's to write, before the first event of each part that
 * uses it: st->part says in which part it was last written. */
struct mtrec_stack;
struct mtrec_stack *mtrec_stack_get(void *const *ips, int n) MTREC_HIDDEN;
unsigned long mtrec_stack_id_of(const struct mtrec_stack *st) MTREC_HIDDEN;
unsigned *mtrec_stack_part(struct mtrec_stack *st) MTREC_HIDDEN;
size_t mtrec_stack_def_room(const struct mtrec_stack *st) MTREC_HIDDEN;
char *mtrec_stack_put_def(char *o, const struct mtrec_stack *st) MTREC_HIDDEN;
void mtrec_stack_reset(void) MTREC_HIDDEN;

/* ---- writing lines (rec-core.c) ---- */

/* Write one whole line (without its newline) in the calling thread's chunk. */
void mtrec_write_line(const char *s, size_t len) MTREC_HIDDEN;
/* Stop recording for good, saying why once. */
void mtrec_give_up(const char *why, int err) MTREC_HIDDEN;

/* The module locks; a fork child re-creates them all, so that it never
 * inherits one held by a thread that no longer exists. */
#include <pthread.h>

/* A signal handler that allocates while its thread is inside the recorder
 * makes a nested record call.  It must never wait for a lock that its own
 * thread holds (that thread is suspended under the handler): each lock has
 * a bit in mtrec_held, set before it is taken and cleared after it is
 * released, and mtrec_lock() refuses (returns -1) a lock whose bit is set.
 * Outside signal handlers the bit is never set on entry. */
enum {
	MTREC_LOCK_OBJECTS = 1, MTREC_LOCK_CALLER = 2, MTREC_LOCK_STACK = 4,
	MTREC_LOCK_GROW = 8, MTREC_LOCK_CORE = 16,
};
extern __thread unsigned mtrec_held MTREC_HIDDEN;

static inline int mtrec_lock(pthread_mutex_t *m, unsigned bit)
{
	if (unlikely(mtrec_held & bit))
		return -1;
	mtrec_held |= bit;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_mutex_lock(m);
	return 0;
}

static inline void mtrec_unlock(pthread_mutex_t *m, unsigned bit)
{
	pthread_mutex_unlock(m);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	mtrec_held &= ~bit;
}

extern pthread_mutex_t mtrec_objects_lock MTREC_HIDDEN;
extern pthread_mutex_t mtrec_caller_lock MTREC_HIDDEN;
extern pthread_mutex_t mtrec_stack_lock MTREC_HIDDEN;
extern pthread_mutex_t mtrec_grow_lock MTREC_HIDDEN;

/* Settings read once at start. */
struct mtrec_settings {
	int depth;		/* MTREC_DEPTH: frames per stack, 1 = caller only */
	int scoped;		/* MTREC_SCOPED: wait for trace_on() */
	int freeres;		/* MTREC_FREERES: call __libc_freeres at exit */
	int quiet;		/* MTREC_QUIET: no notes on stderr */
};
extern struct mtrec_settings mtrec_settings MTREC_HIDDEN;

#endif
