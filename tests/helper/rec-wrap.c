/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-wrap: a long rotated trace for a small reserved range (t2625) --
 * many times the range, with the order between threads mattering in every
 * part.  Three threads:
 *   - an idle one that allocates 1111 bytes at start and frees them at the
 *     end, and wakes up twice (after a third and two thirds of the
 *     hand-offs) to allocate 50 blocks of 4321 bytes and free 49 of them:
 *     one leak of 4321 bytes per wake-up, in parts far apart;
 *   - a producer that allocates blocks and hands them to
 *   - a consumer, which frees them and allocates and frees blocks of its
 *     own: the addresses come back in the other thread, so every part has
 *     events on one address from both threads.
 *
 * Usage: rec-wrap COUNT [RATE]
 *   COUNT hand-offs (a recorded hand-off writes about 280 bytes of trace);
 *   with RATE, the producer naps a millisecond after every RATE of them.
 * Prints "rec-wrap: 2 wake-ups" and exits 3, so that a caller can tell its
 * own status from the recorder's. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RING 256

static long count, rate;
static void *ring[RING];
static unsigned long head, tail;	/* written by producer, consumer */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int wake, quit, wakeups;
static void *volatile sink;	/* so that the compiler keeps malloc and free */

static void *idle(void *arg)
{
	void *first = malloc(1111);
	void *blocks[50];

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!wake && !quit)
			pthread_cond_wait(&cond, &lock);
		if (!wake)
			break;
		wake--;
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < 50; i++)
			sink = blocks[i] = malloc(4321);
		for (int i = 1; i < 50; i++)
			free(blocks[i]);
		pthread_mutex_lock(&lock);
		wakeups++;
	}
	pthread_mutex_unlock(&lock);
	free(first);
	return NULL;
}

static void wake_idle(void)
{
	pthread_mutex_lock(&lock);
	wake++;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
}

static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *producer(void *arg)
{
	(void)arg;
	for (long i = 0; i < count; i++) {
		if (rate > 0 && i % rate == 0)
			nap();
		void *p = malloc(16 + (size_t)(i % 200));

		while (__atomic_load_n(&head, __ATOMIC_RELAXED) -
		       __atomic_load_n(&tail, __ATOMIC_ACQUIRE) >= RING)
			sched_yield();
		ring[head % RING] = p;
		__atomic_store_n(&head, head + 1, __ATOMIC_RELEASE);
		if (i == count / 3 || i == 2 * count / 3)
			wake_idle();
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (long i = 0; i < count; i++) {
		for (int spins = 0; __atomic_load_n(&tail, __ATOMIC_RELAXED) ==
		     __atomic_load_n(&head, __ATOMIC_ACQUIRE); spins++)
			if (spins < 100)
				sched_yield();
			else
				nap();	/* the producer naps too */
		free(ring[tail % RING]);
		__atomic_store_n(&tail, tail + 1, __ATOMIC_RELEASE);
		{
			void *own = malloc(16 + (size_t)(i % 300));
			sink = own;	/* another thread may store here too */
			free(own);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t_idle, t_prod, t_cons;

	if (argc < 2 || (count = atol(argv[1])) < 3) {
		fprintf(stderr, "usage: rec-wrap COUNT [RATE] (COUNT 3 or more)\n");
		return 2;
	}
	rate = argc > 2 ? atol(argv[2]) : 0;
	if (pthread_create(&t_idle, NULL, idle, NULL) != 0 ||
	    pthread_create(&t_prod, NULL, producer, NULL) != 0 ||
	    pthread_create(&t_cons, NULL, consumer, NULL) != 0)
		return 2;
	pthread_join(t_prod, NULL);
	pthread_join(t_cons, NULL);
	pthread_mutex_lock(&lock);
	quit = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(t_idle, NULL);
	printf("rec-wrap: %d wake-ups\n", wakeups);
	return 3;
}
