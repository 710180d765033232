/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-reach-live: a program that runs until SIGTERM, for "mtrec ctl PID
 * reach" (a scan while it runs).  At start it drops a block of 24 bytes
 * (definitely lost) and keeps one of 64 in a global (still reachable),
 * prints "ready PID", then allocates and frees a block every millisecond
 * (so that the recorder takes requests).  On SIGUSR1 it frees the 64-byte
 * block, drops one of 40 bytes and prints "phase2"; on SIGTERM it prints
 * "bye" and exits 0.
 *
 * Usage: rec-reach-live */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *volatile kept;	/* still reachable */
static volatile sig_atomic_t phase2, stop;

/* Write over the stack below the caller, where the dropped pointers were. */
static NOINLINE void clear_stack(void)
{
	volatile char junk[16384];

	memset((char *)junk, 0, sizeof(junk));
	__asm__ volatile("" ::: "memory");
}

static NOINLINE void drop(size_t size)
{
	volatile char *p = malloc(size);

	p[0] = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	phase2 = 1;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct timespec ms = { 0, 1000000 };

	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	setvbuf(stdout, NULL, _IONBF, 0);
	drop(24);
	kept = malloc(64);
	clear_stack();
	printf("ready %ld\n", (long)getpid());
	while (!stop) {
		void *volatile t = malloc(16);

		free(t);
		if (phase2 == 1) {
			phase2 = 2;
			free(kept);
			kept = NULL;
			drop(40);
			clear_stack();
			printf("phase2\n");
		}
		nanosleep(&ms, NULL);
	}
	printf("bye\n");
	return 0;
}
