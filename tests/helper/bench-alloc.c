/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-alloc: the recorder benchmark's workload.  THREADS threads (2) each
 * make about 2 million allocation events: a sliding window of live blocks,
 * malloc and free with an occasional realloc, sizes 16-271 bytes.  It calls
 * mtrace() so that glibc's libc_malloc_debug.so traces it too.
 * Usage: bench-alloc [THREADS [ITERATIONS_PER_THREAD]] */
#include <mcheck.h>
#include <pthread.h>
#include <stdlib.h>

#define WINDOW 64

static long iterations = 1000000;

static void *work(void *arg)
{
	void *live[WINDOW] = { 0 };
	unsigned seed = (unsigned)(unsigned long)arg + 1;

	for (long i = 0; i < iterations; i++) {
		unsigned slot = (unsigned)i % WINDOW;
		seed = seed * 1103515245u + 12345u;
		free(live[slot]);
		live[slot] = malloc(16 + (seed >> 16) % 256);
		if ((seed & 0xf00) == 0)
			live[slot] = realloc(live[slot], 300);
	}
	for (int i = 0; i < WINDOW; i++)
		free(live[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t tid[64];

	if (argc > 2)
		iterations = atol(argv[2]);
	if (threads < 1 || threads > 64)
		return 2;
	mtrace();
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, work, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	return 0;
}
