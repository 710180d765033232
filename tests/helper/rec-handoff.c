/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-handoff: THREADS threads hand blocks to one another through a shared
 * ring, so that blocks are freed and reallocated by threads other than the
 * one that allocated them and addresses are reused constantly; then the
 * main thread leaks exactly LEAKS blocks of 4242 bytes.
 * Usage: rec-handoff THREADS EVENTS_PER_THREAD LEAKS */
#include <mcheck.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define RING 256

static void *ring[RING];
static unsigned head;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long per_thread;

static void *swap_slot(void *p, unsigned seed)
{
	void *old;

	pthread_mutex_lock(&lock);
	old = ring[(head + seed) % RING];
	ring[(head + seed) % RING] = p;
	head++;
	pthread_mutex_unlock(&lock);
	return old;
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg * 7919u + 1;

	for (long i = 0; i < per_thread; i += 2) {
		seed = seed * 1103515245u + 12345u;
		size_t size = 16 + (seed >> 16) % 200;
		void *p = (seed & 0x100) ? malloc(size) : calloc(1, size);
		void *old = swap_slot(p, seed >> 20);
		if (!old)
			continue;
		if (seed & 0x200) {
			free(old);
		} else {
			old = realloc(old, size + 8);
			free(swap_slot(old, seed >> 24));
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	long leaks = argc > 3 ? atol(argv[3]) : 0;
	pthread_t tid[64];

	per_thread = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > 64)
		return 2;
	mtrace();
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)t);
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	for (int i = 0; i < RING; i++)
		free(ring[i]);
	for (long i = 0; i < leaks; i++)
		if (!malloc(4242))
			return 1;
	return 0;
}
