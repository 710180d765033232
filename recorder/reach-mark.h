/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-mark.h -- the scan's state, its output and the marking of the
 * blocks reached (reach-mark.c), shared by the scan (reach.c) and its
 * roots (reach-roots.c).  Nothing else includes it. */
#ifndef MTREC_REACH_MARK_H
#define MTREC_REACH_MARK_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "reach.h"
#include "reach-table.h"

/* ---- the scan's state ----------------------------------------------- */

enum { UNREACHED, POSSIBLE, REACHABLE, INDIRECT };

#define BUF_SIZE (1u << 20)	/* memory is read through this, in pieces */
#define BATCH 1024		/* pieces of memory read by one system call (IOV_MAX) */
#define IDS 16384		/* blocks taken off the stack at a time */
#define GAP 256			/* blocks closer than this are read as one piece */
#define OUT_SIZE (64u << 10)	/* without a region: lines are handed on in pieces of this */
/* "# reach 0x", the address, " reachable\n": 21 bytes and the digits,
 * 12 where user space ends at 2^48 (x86-64 and arm64 unless the program
 * asks for more: lines that do not fit are counted). */
#define VERDICT_LINE(digits) (21 + (digits))
#define NOTES_ROOM (64u << 10)	/* what of the notes a region keeps room for */
#define TAIL_ROOM ((size_t)4096)	/* the lines after the notes: 8 of 512 bytes */
#define NOTES_SIZE (256u << 10)
#define MAX_ROOTS 65536	/* mapped as used: 8 MB at most */
#define MAX_OWN (NSTRIPES + 32)
#define MAX_ARENAS_RING 1024	/* arenas: glibc makes 8 per core at most */
#define RED_ZONE 128		/* below the stack pointer, still the thread's */
#define PAGE ((size_t)4096)
#define RADIX_BITS 11		/* of an address, sorted by a pass */
#define RADIX_PASSES 6		/* 64 bits at most */

/* Memory of this file's: never a root. */
struct own {
	uintptr_t lo, hi;
	int unmap;		/* the scan's own, unmapped after it */
};

struct map {
	uintptr_t lo, hi;
	int kind;		/* MK_* */
	unsigned flags;		/* MF_* */
	const char *name;	/* its name, namelen bytes, in the text of /proc/self/maps (kept) */
	size_t namelen;
};
enum { MK_OTHER, MK_STACK, MK_HEAP };
/* What a mapping is to map_roots(). */
enum {
	MF_RW = 1,		/* readable and writable */
	MF_SHARED = 2,		/* MAP_SHARED */
	MF_FILE = 4,		/* named by a path: a file, or shared memory (/dev/zero, /SYSV, memfd) */
	MF_SKIP = 8,		/* never a root as a mapping (see map_roots) */
};

/* A range of memory [lo, hi). */
struct span {
	uintptr_t lo, hi;
};

struct root {
	uintptr_t lo, hi;
	uintptr_t from;		/* a stack's mapping starts here: [from, lo) is never scanned */
	int whole;		/* a stack inside a heap block: the block is not left out */
	int resident;		/* a mapping read only where its pages are in memory (scan_resident) */
	char what[108];
};

struct scan {
	pid_t pid;
	struct ent *blk;	/* the live blocks, by address */
	size_t n;
	unsigned char *state;
	uint32_t *stack;	/* blocks to scan (each is pushed at most twice) */
	size_t top;
	uintptr_t lo, hi;	/* [lowest block, end of the highest) */
	size_t last;		/* the block find() found last */
	long leader;		/* the clique being made, or -1 while marking */
	int collect;		/* scanning lost blocks for their pointers to lost blocks */
	uint32_t cur;		/* ... the block being scanned */
	uint32_t *edge;		/* ... the blocks each points to: edge[first[b]] on, */
	size_t *first;		/* ... cnt[b] of them */
	uint32_t *cnt;
	size_t nedge;
	char *buf;
	struct iovec iov[BATCH];
	uint32_t ids[IDS];
	uint64_t scanned;
	uint64_t unreadable_bytes;	/* of blocks */
	unsigned long unreadable;	/* blocks */
	int no_vm;		/* process_vm_readv refused: read through a pipe */
	int pipefd[2];
	struct map *maps;
	size_t nmaps;
	uintptr_t self_lo, self_hi;	/* libmtrec.so's writable segment */
	size_t nloads;		/* PT_LOAD segments of every object */
	struct span *skip;	/* never roots as mappings (map_roots), sorted, merged */
	size_t nskip, skip_cap;
	uint64_t *pagemap;	/* scan_resident's */
	unsigned char *incore;
	int pagemap_fd;		/* the descriptor + 1; 0: not opened yet, -1: cannot be */
	struct root *roots;
	size_t nroots;
	size_t tls_size;	/* PT_TLS of every object: the static TLS, about */
	struct own own[MAX_OWN];
	int nown;
	char *out, *notes;
	size_t outlen, noteslen;
	size_t outcap;		/* of out: OUT_SIZE, or the region's length */
	char *region;		/* out is a piece of the trace file (mtrec_reach_out) */
	unsigned long lines_lost;	/* verdicts that did not fit in the region */
	int tail;		/* writing the lines after the notes */
	unsigned long notes_lost;	/* notes that did not fit */
	unsigned long roots_lost;	/* roots beyond MAX_ROOTS */
	const struct mtrec_reach_out *to;
	uint32_t counts[RADIX_PASSES][1u << RADIX_BITS];	/* the sort's */
};

extern struct scan sc MTREC_HIDDEN;

void own(const void *p, size_t len, int unmap) MTREC_HIDDEN;
void *scan_map(size_t len) MTREC_HIDDEN;

/* Output: lines (put_line) and notes (note), pieces ended by SAY_END. */
void flush(void) MTREC_HIDDEN;
__attribute__((sentinel)) void put_line(const char *first, ...) MTREC_HIDDEN;
__attribute__((sentinel)) void note(const char *first, ...) MTREC_HIDDEN;
void put_verdict(uintptr_t addr, int kind) MTREC_HIDDEN;
void put_verdicts(void) MTREC_HIDDEN;
const char *dec(char *b, unsigned long v) MTREC_HIDDEN;
const char *hex(char *b, unsigned long v) MTREC_HIDDEN;

/* Memory that may be gone: the bytes read (0 where unreadable). */
size_t read_mem(void *dst, uintptr_t src, size_t len) MTREC_HIDDEN;
uintptr_t peek(uintptr_t a) MTREC_HIDDEN;

void scan_words(const char *buf, uintptr_t at, size_t len, int definite) MTREC_HIDDEN;
uint64_t scan_range(uintptr_t lo, uintptr_t hi, int definite) MTREC_HIDDEN;
void scan_blocks(void) MTREC_HIDDEN;

/* Does block k hold address w? */
static inline int holds(size_t k, uintptr_t w)
{
	return w - sc.blk[k].addr < (sc.blk[k].size ? sc.blk[k].size : 1);
}

/* The block holding address w, or -1.  Pointers next to each other
 * often point to blocks next to each other: the last block found and
 * the next one are tried first. */
static inline long find(uintptr_t w)
{
	size_t l = 0, r = sc.n, size, last = sc.last;

	if (w - sc.lo >= sc.hi - sc.lo)
		return -1;
	if (holds(last, w))
		return (long)last;
	if (last + 1 < sc.n && holds(last + 1, w))
		return (long)(sc.last = last + 1);
	while (r - l > 1) {
		size_t m = (l + r) / 2;

		if (sc.blk[m].addr <= w)
			l = m;
		else
			r = m;
	}
	size = sc.blk[l].size ? sc.blk[l].size : 1;	/* as valgrind: malloc(0) has a byte */
	if (w - sc.blk[l].addr >= size)
		return -1;
	sc.last = l;
	return (long)l;
}

static inline void push(size_t k)
{
	sc.stack[sc.top++] = (uint32_t)k;
}

/* Block k's whole words. */
static inline size_t block_words(size_t k)
{
	return sc.blk[k].size & ~(size_t)7;
}

#endif
