/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-deep-stack [EVENTS [DEPTH]]: two threads, each DEPTH (80) calls
 * deep, allocate and free EVENTS / 4 (200000) blocks from one place: the
 * same long stack for every event, as a program's inner loop has. */
#include <pthread.h>
#include <stdlib.h>

static long iters = 50000;
static int depth = 80;

__attribute__((noinline)) static void work(void)
{
	for (long i = 0; i < iters; i++) {
		void *p = malloc(16 + (size_t)(i & 63));
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

__attribute__((noinline)) static int nest(int n)
{
	int r;

	if (n == 0) {
		work();
		return 0;
	}
	r = nest(n - 1);
	__asm__ volatile("" : "+r"(r));	/* not a tail call */
	return r + 1;
}

static void *thread(void *arg)
{
	(void)arg;
	nest(depth);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		iters = atol(argv[1]) / 4;
	if (argc > 2)
		depth = atoi(argv[2]);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread, NULL) != 0)
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
