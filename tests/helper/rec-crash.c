/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-crash: a program that dies while it allocates, for the recorder's
 * crash safety (tests/t2110).
 *
 *   rec-crash loop COUNTFILE THREADS
 *       THREADS threads (1-16) allocate without end; thread T allocates
 *       blocks of 3000+T bytes, keeps the last 8 and frees the older ones.
 *       After each malloc() returns, the thread stores how many it has made
 *       in slot T (a 64-bit integer) of COUNTFILE, which is mapped shared:
 *       the counts survive a SIGKILL and tell how many "+" lines of that
 *       size the trace must hold at least.  Prints "ready" once every
 *       thread has made its first allocation.
 *   rec-crash abort N    allocates N blocks of 9029 bytes, frees every
 *                        other one (N/2 rounded up are leaked), then
 *                        calls abort()
 *   rec-crash segv N     the same, then writes through a null pointer
 *   rec-crash exit N     the same, then returns 0 (the reference)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile uint64_t *counts;
static volatile int started;

static void *worker(void *arg)
{
	long t = (long)arg;
	size_t size = 3000 + (size_t)t;
	void *keep[8] = { 0 };

	for (uint64_t i = 0;; i++) {
		void *p = malloc(size);
		if (!p)
			abort();
		__atomic_store_n(&counts[t], i + 1, __ATOMIC_RELEASE);
		if (i == 0)
			__atomic_add_fetch(&started, 1, __ATOMIC_ACQ_REL);
		free(keep[i % 8]);
		keep[i % 8] = p;
	}
	return NULL;
}

static void *volatile sink;

static void leak_some(int n)
{
	void *prev = NULL;

	for (int i = 0; i < n; i++) {
		void *p = malloc(9029);
		if (!p)
			exit(1);
		sink = p;
		if (i % 2) {
			free(prev);	/* every other one is freed */
		}
		prev = p;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "loop") && argc > 3) {
		int n = atoi(argv[3]);
		int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
		pthread_t tid;

		if (n < 1 || n > 16 || fd < 0 || ftruncate(fd, 4096) < 0)
			return 2;
		counts = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (counts == MAP_FAILED)
			return 2;
		for (long t = 0; t < n; t++)
			if (pthread_create(&tid, NULL, worker, (void *)t) != 0)
				return 1;
		while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < n)
			usleep(1000);
		printf("ready\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc > 2) {
		leak_some(atoi(argv[2]));
		if (!strcmp(mode, "abort"))
			abort();
		if (!strcmp(mode, "segv")) {
			int *volatile null = NULL;
			*null = 1;
		}
		if (!strcmp(mode, "exit"))
			return 0;
	}
	fprintf(stderr, "usage: rec-crash loop COUNTFILE THREADS | abort|segv|exit N\n");
	return 2;
}
