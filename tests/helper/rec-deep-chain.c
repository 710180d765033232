/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-deep-chain [ROUNDS [fork]]: main, then a second thread, each call a chain
 * of 31 distinct functions (chain30 -> chain29 -> ... -> chain0) whose
 * innermost one mallocs a block of 4321 bytes (main) or 4322 (the thread)
 * and frees it, ROUNDS (3) times.  Each link does work before and after
 * its call, so that no optimizer folds it into a tail call or inlines it:
 * a trace of it taken at any -O, with or without frame pointers, must show
 * chain0 ... chain30 and then main or chain_thread, in that order.
 * With "fork", main forks after its calls and the child makes the same
 * calls, from the same place, then 24 stacks of its own (spread: blocks
 * of 4400 at depths 1 to 24), and exits; the parent waits. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef __clang__
#define LINK __attribute__((noinline))
#else
#define LINK __attribute__((noinline, noclone))
#endif

static volatile unsigned long sink;

LINK unsigned long chain0(unsigned long x, size_t size)
{
	char *p = malloc(size);

	if (p)
		memset(p, (int)x, size);
	sink += p ? (unsigned char)p[x % size] : 0;
	free(p);
	return x * 7 + 1;
}

/* Link N: a buffer of its own on the stack, a call, then work with the
 * result (the call is not in tail position). */
#define CHAIN(n, m)                                                     \
	LINK unsigned long chain##n(unsigned long x, size_t size)      \
	{                                                               \
		char buf[8 + (n % 5) * 8];                              \
		unsigned long r;                                        \
		memset(buf, (int)(x + n), sizeof buf);                  \
		__asm__ volatile("" : : "r"(buf) : "memory");           \
		r = chain##m(x + (unsigned char)buf[n % sizeof buf], size); \
		sink += r ^ n;                                          \
		return r * 31 + (unsigned char)buf[1];                  \
	}

CHAIN(1, 0) CHAIN(2, 1) CHAIN(3, 2) CHAIN(4, 3) CHAIN(5, 4)
CHAIN(6, 5) CHAIN(7, 6) CHAIN(8, 7) CHAIN(9, 8) CHAIN(10, 9)
CHAIN(11, 10) CHAIN(12, 11) CHAIN(13, 12) CHAIN(14, 13) CHAIN(15, 14)
CHAIN(16, 15) CHAIN(17, 16) CHAIN(18, 17) CHAIN(19, 18) CHAIN(20, 19)
CHAIN(21, 20) CHAIN(22, 21) CHAIN(23, 22) CHAIN(24, 23) CHAIN(25, 24)
CHAIN(26, 25) CHAIN(27, 26) CHAIN(28, 27) CHAIN(29, 28) CHAIN(30, 29)

static int rounds = 3;

LINK static unsigned long spread(int d)
{
	unsigned long r;

	if (d == 0) {
		void *p = malloc(4400);
		sink += (unsigned long)p;
		free(p);
		return 1;
	}
	r = spread(d - 1);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

LINK static void *chain_thread(void *arg)
{
	for (int i = 0; i < rounds; i++)
		sink += chain30((unsigned long)i, 4322);
	return arg;
}

int main(int argc, char **argv)
{
	int forking = argc > 2 && strcmp(argv[2], "fork") == 0, status;
	pid_t pid = -1;
	pthread_t t;

	if (argc > 1)
		rounds = atoi(argv[1]);
	for (int pass = 0; pass <= forking; pass++) {
		if (pass == 1) {
			if ((pid = fork()) < 0)
				return 1;
			if (pid > 0) {
				if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
				    WEXITSTATUS(status))
					return 1;
				break;
			}
		}
		for (int i = 0; i < rounds; i++)
			sink += chain30((unsigned long)i, 4321);
	}
	if (pid == 0) {
		for (int d = 1; d <= 24; d++)
			sink += spread(d);
		exit(0);
	}
	if (pthread_create(&t, NULL, chain_thread, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
