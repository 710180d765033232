/* file.h -- the trace file (file.c): its name, its mapping, its growth.
 * A leaf: it calls nothing of the recorder but prim.h, and reports to its
 * caller.  Only the chunk writer (chunk.c) and process life
 * (life.c) use it. */
#ifndef MTREC_FILE_H
#define MTREC_FILE_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "prim.h"

/* Each part of a rotated trace starts with a header zone this large. */
#define MTREC_PART_ZONE (64u << 10)

/* Offsets in the trace only grow, over all its parts: part k holds
 * [(k-1)*part_size, k*part_size).  The reserved range holds ring / part_size
 * places of part_size bytes; part k is mapped at place (k-1) mod that, so
 * the byte at offset off is at base + off % ring while its part is mapped
 * (file.c, "Rotation"). */
struct mtrec_file {
	int fd;
	char *base;		/* the trace is mapped here ... */
	size_t maplen;		/* ... within this much reserved */
	size_t ring;		/* the places parts take in turn: a multiple of part_size */
	size_t tail;		/* bytes handed out to writers (atomic) */
	size_t size;		/* bytes backed by the files (atomic) */
	size_t part_size;	/* MTREC_ROTATE, or maplen: one part */
	size_t part_start;	/* offset where the current part begins */
	unsigned part_no;	/* the current part, from 1 */
	unsigned *part_at;	/* the part mapped at each place */
	char path[4096];	/* the current part's file */
};
extern struct mtrec_file mtrec_file MTREC_HIDDEN;

/* The tail once no chunk may be handed out any more: past any offset. */
#define MTREC_TAIL_SHUT ((size_t)1 << 62)

/* Where the byte at offset off is, its part being mapped. */
static inline char *mtrec_file_at(size_t off)
{
	return mtrec_file.base + off % mtrec_file.ring;
}

/* Where a range of the trace that ends at offset end (> 0) ends: just past
 * its last byte, in that byte's part. */
static inline char *mtrec_file_end_at(size_t end)
{
	return mtrec_file_at(end - 1) + 1;
}

/* The part of the byte at o, from 1; the byte's part is mapped. */
static inline unsigned mtrec_file_part_of(const char *o)
{
	return __atomic_load_n(&mtrec_file.part_at[(size_t)(o - mtrec_file.base) /
						    mtrec_file.part_size], __ATOMIC_RELAXED);
}

/* The offset of the byte at o, its part being mapped. */
static inline size_t mtrec_file_off(const char *o)
{
	size_t at = (size_t)(o - mtrec_file.base), ps = mtrec_file.part_size;

	return (size_t)(mtrec_file_part_of(o) - 1) * ps + at % ps;
}

/* Why the file cannot go on: the caller stops recording and says so. */
struct mtrec_file_err {
	const char *why;
	int err;		/* an errno value, or 0 */
};

/* Fix the name pattern once: MALLOC_TRACE made absolute, or the absolute
 * one a session's first process passed down (inherited, may be NULL).
 * real_sigaction installs the SIGBUS guard (the shim's next sigaction). */
void mtrec_file_init(const char *inherited, mtrec_sigaction_fn real_sigaction) MTREC_HIDDEN;
const char *mtrec_file_pattern(void) MTREC_HIDDEN;
/* The name of part 1 of this process's trace ("" before it is open): what
 * a forked child's header names as its parent's trace. */
const char *mtrec_file_first_path(void) MTREC_HIDDEN;
/* Open the trace named by MALLOC_TRACE for this process and map it.
 * first: this is the session's first process (it may truncate the name).
 * -1 after saying why on stderr, or with *e set when the new file cannot
 * even hold its first line. */
int mtrec_file_open(int first, struct mtrec_file_err *e) MTREC_HIDDEN;
/* Make sure the bytes of a chunk ending at end exist and are backed by
 * disk blocks, with the margin kept past it for the last words (see
 * file.c); cheap when the file is large enough.  0, or -1: with *e set
 * when recording must stop, else the growth was refused for now (a signal
 * handler nested in its own thread's growth, or the file already stopped). */
int mtrec_file_ensure(size_t end, struct mtrec_file_err *e) MTREC_HIDDEN;
/* At a chunk turnover, now being CLOCK_MONOTONIC in ns: every 100 ms at
 * most, look whether the file lost its last name (removed, or replaced
 * by a rename over it).  0, or -1 with *e set: recording must stop. */
int mtrec_file_watch(uint64_t now, struct mtrec_file_err *e) MTREC_HIDDEN;
/* After mtrec_file_watch() said so and recording stopped: let the file go
 * (its mapping and descriptor), so that its disk space is freed now. */
void mtrec_file_drop(void) MTREC_HIDDEN;
/* Cut the file to its used length.  When the last chunk is the one that
 * ends at end, cut at pos instead and return 1. */
int mtrec_file_close(char *pos, char *end) MTREC_HIDDEN;
/* Before an exec, which may fail: cut the file as mtrec_file_close does,
 * and hand out no chunk until mtrec_file_untrim() (after a failed exec)
 * lets the file grow again from the cut: 0, or -1 with *e set as by
 * mtrec_file_ensure. */
int mtrec_file_trim(char *pos, char *end) MTREC_HIDDEN;
int mtrec_file_untrim(struct mtrec_file_err *e) MTREC_HIDDEN;
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
 * handled so. */
int mtrec_file_bus_action(const struct sigaction *act, struct sigaction *old) MTREC_HIDDEN;
/* The oldest part still mapped once a later part has begun and every
 * chunk of it has been handed out (the tail is past its end), or 0: the
 * part whose writers the chunk writer waits for. */
unsigned mtrec_file_retirable(void) MTREC_HIDDEN;
/* No writer is left in part k (mtrec_file_retirable): its range becomes
 * an inaccessible reservation again, so that its pages leave the address
 * space and deleting its file frees the disk. */
void mtrec_file_retire(unsigned k) MTREC_HIDDEN;
/* Fork child: re-create the growth lock, drop the parent's mapping. */
void mtrec_file_fork_child(void) MTREC_HIDDEN;

#endif
