/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-signal: allocates a block every 20 ms for ITERATIONS rounds, writing
 * the round number into the block's size (1000 + round) so that a trace
 * shows which rounds were recorded.  With "own" it installs its own
 * SIGUSR2 handler after starting and prints how often it ran.
 * Usage: rec-signal ITERATIONS [own] */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t own_calls;

static void own_handler(int sig)
{
	own_calls++;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;

	if (argc > 2 && strcmp(argv[2], "own") == 0)
		signal(SIGUSR2, own_handler);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < rounds; i++) {
		void *volatile p = malloc(1000 + (size_t)i);
		free(p);
		usleep(20000);
	}
	printf("own handler ran %d times\n", (int)own_calls);
	return 0;
}
