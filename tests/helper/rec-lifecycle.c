/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-lifecycle: allocations at awkward moments of a process's life --
 * 200 threads that start, allocate and exit at once, an atexit handler
 * that allocates and frees, and a detached thread still allocating while
 * main exits -- plus LEAKS leaked blocks of 3333 bytes, the only leaks the
 * program makes.  Usage: rec-lifecycle [LEAKS] */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void at_exit_handler(void)
{
	char *volatile p = malloc(100);
	free(p);
}

static void *short_lived(void *arg)
{
	char *volatile p = malloc(64 + (size_t)arg);
	p = realloc(p, 128);
	free(p);
	return NULL;
}

static void *busy_forever(void *arg)
{
	for (;;) {
		char *volatile p = malloc(32);
		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	long leaks = argc > 1 ? atol(argv[1]) : 0;
	pthread_t t;

	atexit(at_exit_handler);
	for (long i = 0; i < 200; i++) {
		if (pthread_create(&t, NULL, short_lived, (void *)i) != 0)
			return 2;
		if (i % 2)
			pthread_join(t, NULL);
		else
			pthread_detach(t);
	}
	if (pthread_create(&t, NULL, busy_forever, NULL) != 0)
		return 2;
	pthread_detach(t);
	usleep(20000);
	for (long i = 0; i < leaks; i++)
		if (!malloc(3333))
			return 1;
	return 0;
}
