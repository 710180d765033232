/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-reach-roots: blocks pointed to only from memory the program mapped
 * itself, or only from memory that must not count, for MTREC_REACH=1
 * (t2710).  Each block has a size of its own, so that the verdicts and
 * the byte totals tell them apart; valgrind's leak check says the same
 * of each:
 *
 *   reachable  0x101  from an anonymous private mapping (a pool)
 *              0x102  from an anonymous shared mapping (MAP_SHARED)
 *              0x103  from a file of /dev/shm mapped shared (shm_open)
 *              0x104  from a private mapping of /dev/zero
 *              0x105  from an anonymous mapping next to the one malloc
 *                     made for a large block (0x100000, kept from a
 *                     global, reachable): the kernel merges the two
 *              0x106  from 200 MB into a reservation of 256 MB of which
 *                     only that page was touched
 *   possible   0x107  from an anonymous mapping, 8 bytes into the block
 *   definite   0x108  from a freed block of the main arena
 *              0x109  from a freed block of the arena of a thread that
 *                     ended
 *              0x10a  from the stack of a thread that ended (joined)
 *              0x10f  from below the stack pointer of a thread that
 *                     runs when the program exits, and that never
 *                     allocated (the recorder does not know its stack)
 *              0x10b  from a mapping made read-only after
 *              0x10c  from a mapping made PROT_NONE after
 *
 * The pointers are written in functions that return, and the stack they
 * used is cleared, so that no stale copy of them is left in a root.
 *
 * Usage: rec-reach-roots         the blocks above
 *        rec-reach-roots nobrk   the same, after a mapping put at the end
 *                                of the heap made brk() fail: malloc's
 *                                main arena goes on in memory it mapped
 *                                (not an arena's heap, no heap_info),
 *                                where it puts a block kept from a global
 *                                (0x10d, reachable) and a freed block
 *                                that held the only pointer to another
 *                                (0x10e, definite): that mapping is
 *                                left out, and said unscanned */
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MB ((size_t)1 << 20)

static void *volatile large;	/* the block malloc mapped: reachable */
static void *volatile kept;	/* nobrk: 0x10d */
/* 0x109 and 0x10a, made by main, dropped by the thread: its arena holds
 * no live block, only the freed one (the arena's heap_info keeps it out). */
static void *volatile in_thread, *volatile to_stack;
static void *volatile to_spinner;	/* 0x10f */
static volatile int spinning;

static NOINLINE void clear_stack(void)
{
	volatile char junk[16384];

	memset((char *)junk, 0, sizeof(junk));
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void *map(size_t len, int prot, int flags, int fd)
{
	void *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		exit(2);
	return p;
}

/* Put a block of size bytes, at offset off into it, at where. */
static NOINLINE void store(void *where, size_t size, size_t off)
{
	char *b = malloc(size);

	memset(b, 0, size);
	memcpy(where, &(char *){ b + off }, sizeof(char *));
}

/* 0x105 from 64 kB of ours that the kernel merges with the mapping malloc
 * makes for large (1 MB and a page, with the chunk's header): a hole of
 * that size is made just below them, and is where the kernel puts
 * malloc's (the highest place that fits, and nothing else is mapped
 * meanwhile: the first malloc of the loop was for the recorder to make
 * what it makes at a new call site). */
static NOINLINE void large_below(void)
{
	size_t chunk = MB + 4096, ours = 64 << 10;
	void *p = NULL;

	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			char *r = map(chunk + ours, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);

			store(r + chunk + 64, 0x105, 0);
			munmap(r, chunk);
		}
		p = malloc(MB);
		if (i == 0)
			free(p);
	}
	memset(p, 0, MB);
	large = p;
}

static NOINLINE void mapped(void)
{
	char name[64];
	void *p;
	int fd;

	store((char *)map(MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1) + 4096, 0x101, 0);
	store((char *)map(64 << 10, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1) + 64, 0x102, 0);

	snprintf(name, sizeof(name), "/rec-reach-roots.%d", (int)getpid());
	if ((fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0 || ftruncate(fd, 64 << 10) != 0)
		exit(3);
	p = map(64 << 10, PROT_READ | PROT_WRITE, MAP_SHARED, fd);
	close(fd);
	shm_unlink(name);
	store((char *)p + 8192, 0x103, 0);

	if ((fd = open("/dev/zero", O_RDWR)) < 0)
		exit(4);
	p = map(64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	close(fd);
	store((char *)p + 128, 0x104, 0);

	large_below();

	p = map(256 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
	store((char *)p + 200 * MB + 512, 0x106, 0);

	store((char *)map(64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1) + 256, 0x107, 8);

	p = map(64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	store((char *)p + 512, 0x10b, 0);
	mprotect(p, 64 << 10, PROT_READ);

	p = map(64 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	store((char *)p + 512, 0x10c, 0);
	mprotect(p, 64 << 10, PROT_NONE);
}

/* A pointer kept only in memory malloc was given back: a stale one. */
static NOINLINE void in_freed(void)
{
	void **holder = malloc(256);

	memset(holder, 0, 256);
	store(&holder[4], 0x108, 0);
	free(holder);
}

/* to_stack 8 kB deep on the stack: deep enough that what the thread does
 * as it ends (the recorder's frees of its cache) does not write over it,
 * not so deep that glibc gives the page back (it keeps the 16 kB below
 * its last frame, madvise(MADV_DONTNEED) the rest). */
static NOINLINE int deep_frame(void)
{
	void *volatile mine[1024];

	mine[0] = to_stack;
	to_stack = NULL;
	mine[1023] = NULL;
	return mine[1023] != NULL;
}

static NOINLINE void *thread_work(void)
{
	void **holder = malloc(256);	/* in the thread's own arena */

	if (deep_frame())
		return NULL;
	memset(holder, 0, 256);
	((void *volatile *)holder)[4] = in_thread;	/* not a store the compiler drops */
	in_thread = NULL;
	free(holder);
	return NULL;
}

static void *thread_main(void *arg)
{
	(void)arg;
	return thread_work();
}

/* Keep to_spinner on the stack, in a frame that returns: far enough below
 * the stack pointer after (valgrind counts 128 bytes below it as the
 * thread's), and in no register (valgrind reads them). */
static NOINLINE int spinner_frame(void)
{
	void *volatile mine[64];

	mine[0] = to_spinner;
	to_spinner = NULL;
	mine[63] = NULL;
	return mine[63] != NULL;
}

static void *spinner(void *arg)
{
	spinning = spinner_frame() + 1 + (arg != NULL);
	for (;;)
		__asm__ volatile("" ::: "memory");
	return NULL;
}

static NOINLINE void running_thread(void)
{
	pthread_t t;

	store((void *)&to_spinner, 0x10f, 0);
	if (pthread_create(&t, NULL, spinner, NULL) != 0)
		exit(6);
	while (!spinning)
		;
}

static NOINLINE void ended_thread(void)
{
	pthread_t t;

	store((void *)&in_thread, 0x109, 0);
	store((void *)&to_stack, 0x10a, 0);
	if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0)
		exit(5);
}

/* A block of size bytes beyond the end of the heap, brk being blocked:
 * the blocks malloc hands out from what is left in the heap first are
 * given back after (they end in its bins, not in a root). */
static NOINLINE void *beyond(size_t size, const char *end)
{
	void *in_heap[4096], *p;
	int n = 0;

	while ((p = malloc(size)) != NULL && (const char *)p < end && n < 4096)
		in_heap[n++] = p;
	while (n)
		free(in_heap[--n]);
	return p;
}

static NOINLINE void no_brk(void)
{
	char *end = sbrk(0);
	void **holder;

	end = (char *)(((uintptr_t)end + 4095) & ~(uintptr_t)4095);
	if (mmap(end, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != end)
		return;		/* (valgrind's brk is its own: nothing to block) */
	kept = beyond(0x10d, end);
	holder = beyond(256, end);
	memset(holder, 0, 256);
	store(&holder[4], 0x10e, 0);
	free(holder);
	/* A page of nothing below the arena's memory: the next mapping is
	 * not merged with it (the whole mapping would be left out). */
	map(4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
}

int main(int argc, char **argv)
{
	/* glibc's default, fixed: a large block freed does not raise it, so
	 * that the next one is mapped as well */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	mapped();
	clear_stack();
	in_freed();
	clear_stack();
	/* after the mappings: malloc's is not merged with one of them */
	if (argc > 1 && strcmp(argv[1], "nobrk") == 0) {
		no_brk();
		clear_stack();
	}
	running_thread();	/* first: a stack of its own, not the ended thread's */
	clear_stack();
	ended_thread();
	clear_stack();
	return 0;
}
