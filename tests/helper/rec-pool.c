/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-pool.c -- uses the pool of librec-pool.so (t2600-t2619): leaks 3
 * pool objects at LEAK-POOL, gets and puts back one copy made by
 * pool_dup(), and has THREADS threads get and put ROUNDS objects each.
 * With "fork", a child does the same and leaks 1 object at LEAK-CHILD.
 * The arena is freed at the end: malloc sees no leak.
 *
 *   rec-pool [THREADS ROUNDS [fork]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void pool_init(void);
void pool_fini(void);
void *pool_get(size_t size);
void pool_put(void *p);
void *pool_dup(const void *src, size_t size);

static void *churn(void *arg)
{
	long rounds = (long)arg;

	for (long i = 0; i < rounds; i++) {
		char *p = pool_get(32);	/* CHURN-GET */

		if (!p)
			abort();
		p[0] = (char)i;
		pool_put(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	long rounds = argc > 2 ? atol(argv[2]) : 100;
	pthread_t tid[16];
	void *leaked[3], *copy;
	pid_t child = -1;

	pool_init();
	for (int i = 0; i < 3; i++)
		leaked[i] = pool_get(48);	/* LEAK-POOL */
	copy = pool_dup("tracked", 8);
	pool_put(copy);
	if (argc > 3 && strcmp(argv[3], "fork") == 0 && (child = fork()) == 0) {
		churn((void *)rounds);
		(void)pool_get(40);	/* LEAK-CHILD */
		_exit(0);
	}
	if (threads > 16)
		threads = 16;
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, churn, (void *)rounds);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	printf("%p %p %p\n", leaked[0], leaked[1], leaked[2]);
	pool_fini();
	return 0;
}
