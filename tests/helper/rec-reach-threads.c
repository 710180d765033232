/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-reach-threads: blocks whose kind valgrind and MTREC_REACH=1 once
 * told apart (issue 26), each of a size of its own:
 *
 *   rec-reach-threads cleared   blocks of 24, 100 and 1000 bytes whose only
 *                               pointer, in a global, is cleared: definitely
 *                               lost (the last one is next to malloc's top
 *                               chunk, which glibc's main arena points to
 *                               inside it)
 *   rec-reach-threads ended     three threads that run together, each with
 *                               a block of 40 bytes in a __thread variable
 *                               (still reachable: the static TLS of an ended
 *                               thread stays where glibc keeps its stack for
 *                               the next threads) and one of 48 only its
 *                               stack held (definitely lost), then joined;
 *                               their DTVs, which their cached thread
 *                               control blocks point into, possibly lost
 *                               (when libc's caches are not freed at exit) */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static char *volatile cleared;
static pthread_barrier_t together;
static __thread void *volatile mine;

static NOINLINE void clear_stack(void)
{
	volatile char junk[16384];

	memset((char *)junk, 0, sizeof(junk));
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void drop(size_t size)
{
	cleared = malloc(size);
	memset(cleared, 1, size);
	cleared = NULL;
}

static void *run(void *arg)
{
	void *volatile on_stack = malloc(48);

	mine = malloc(40);
	pthread_barrier_wait(&together);
	(void)on_stack;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc > 1 && strcmp(argv[1], "cleared") == 0) {
		drop(24);
		drop(100);
		drop(1000);
		clear_stack();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "ended") == 0) {
		pthread_barrier_init(&together, NULL, 4);
		for (int i = 0; i < 3; i++)
			if (pthread_create(&t[i], NULL, run, NULL) != 0)
				return 2;
		pthread_barrier_wait(&together);
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		clear_stack();
		return 0;
	}
	return 2;
}
