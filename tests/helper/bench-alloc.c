/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-alloc: the recorder benchmark's workload.  THREADS threads (2) each
 * make about 2 million allocation events: a sliding window of live blocks,
 * malloc and free with an occasional realloc, sizes 16-271 bytes.  It calls
 * mtrace() so that glibc's libc_malloc_debug.so traces it too.
 * Usage: bench-alloc [THREADS [ITERATIONS_PER_THREAD [FLOOR_FILE [BYTES]]]]
 *
 * With FLOOR_FILE, the program itself writes a line of BYTES (70) into a
 * shared mapping of that file after each call, as a recorder would, with
 * nothing else a recorder does (no order between threads, no formatting,
 * no caller, no clock): the least a kill-safe recorder of this format
 * costs on this machine -- the kernel's work of putting that many bytes
 * in the page cache through a mapping, as the recorder's file.c does it
 * (chunks of 2 KiB taken from a shared tail, 2 MiB folios, pages
 * written long enough ago let go). */
#include <fcntl.h>
#include <mcheck.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WINDOW 64
#define LET_GO_STEP (2u << 20)
#define KEEP_CACHED (32u << 20)

static long iterations = 1000000;
static int floor_fd = -1;
static char *floor_map;
static size_t floor_len, line_len = 70;
static size_t floor_tail;       /* the next chunk's offset, shared */
static size_t floor_let_go;     /* let go below this, shared */

#define CHUNK 2048

struct worker {
	long id;
	size_t at, end;         /* the free room of its chunk */
};

/* Everything below upto but the last KEEP_CACHED bytes leaves the
 * mapping and the page cache; by the thread that crosses a step. */
static void let_go(size_t upto)
{
	size_t from = __atomic_load_n(&floor_let_go, __ATOMIC_RELAXED);

	upto = upto > KEEP_CACHED ? (upto - KEEP_CACHED) & ~(size_t)(LET_GO_STEP - 1) : 0;
	if (upto < from + LET_GO_STEP ||
	    !__atomic_compare_exchange_n(&floor_let_go, &from, upto, 0, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return;
	/* a page still mapped is not dropped from the cache: unmap first */
	madvise(floor_map + from, upto - from, MADV_DONTNEED);
	posix_fadvise(floor_fd, (off_t)from, (off_t)(upto - from), POSIX_FADV_DONTNEED);
}

/* The line of one call, into this thread's chunk of the floor file; a
 * chunk taken from the shared tail when full, as the recorder's are. */
static void put_line(struct worker *w)
{
	static const char line[256] =
		"@ /usr/lib/bench/bench-alloc:[0x55d1c0a0b1c4] + 0x7f3a4c0012a0 0x5f\n";

	if (w->at + line_len > w->end) {
		w->at = __atomic_fetch_add(&floor_tail, CHUNK, __ATOMIC_RELAXED);
		w->end = w->at + CHUNK;
		if (w->end > floor_len) {
			w->at = w->end = floor_len;
			return;
		}
		let_go(w->at);
	}
	memcpy(floor_map + w->at, line, line_len);
	w->at += line_len;
}

static void *work(void *arg)
{
	struct worker w = { (long)arg, 0, 0 };
	void *live[WINDOW] = { 0 };
	unsigned seed = (unsigned)w.id + 1;
	int floor_on = floor_map != NULL;

	for (long i = 0; i < iterations; i++) {
		unsigned slot = (unsigned)i % WINDOW;
		seed = seed * 1103515245u + 12345u;
		free(live[slot]);
		if (floor_on)
			put_line(&w);
		live[slot] = malloc(16 + (seed >> 16) % 256);
		if (floor_on)
			put_line(&w);
		if ((seed & 0xf00) == 0) {
			live[slot] = realloc(live[slot], 300);
			if (floor_on)
				put_line(&w);
		}
	}
	for (int i = 0; i < WINDOW; i++)
		free(live[i]);
	return NULL;
}

/* The floor file: sized for every call, sparse, mapped as the recorder
 * maps its parts. */
static int open_floor(const char *path, int threads)
{
	size_t lines = (size_t)iterations * 2 + (size_t)iterations / 8 + 64;

	floor_len = lines * (size_t)threads * (line_len + line_len / 8 + 1);
	floor_len = (floor_len + LET_GO_STEP - 1) / LET_GO_STEP * LET_GO_STEP;
	floor_fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (floor_fd < 0 || ftruncate(floor_fd, (off_t)floor_len) != 0)
		return -1;
	/* at a 2 MiB boundary, as the recorder maps, for whole 2 MiB folios */
	char *raw = mmap(NULL, floor_len + LET_GO_STEP, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return -1;
	floor_map = (char *)(((unsigned long)raw + LET_GO_STEP - 1) & ~(unsigned long)(LET_GO_STEP - 1));
	if (mmap(floor_map, floor_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, floor_fd, 0) == MAP_FAILED)
		return -1;
	madvise(floor_map, floor_len, MADV_HUGEPAGE);
	return 0;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t tid[64];

	if (argc > 2)
		iterations = atol(argv[2]);
	if (argc > 4)
		line_len = (size_t)atol(argv[4]);
	if (threads < 1 || threads > 64 || iterations < 1 || line_len < 1 || line_len > 256)
		return 2;
	if (argc > 3 && open_floor(argv[3], threads) != 0)
		return 1;
	mtrace();
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, work, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return 0;
}
