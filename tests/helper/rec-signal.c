/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-signal: allocates a block every 20 ms for ITERATIONS rounds, writing
 * the round number into the block's size (1000 + round) so that a trace
 * shows which rounds were recorded, and "round N" on stdout after round N.
 * With REC_SIGNAL_WAIT set, it waits after rounds 15, 35 and 55 until the
 * file go.N exists in the current directory: a test sends its signal, then
 * creates the file, and the signal is taken before the next round however
 * loaded the machine (not after a time: a loaded machine stretches the
 * rounds).  With "own" it installs its own SIGUSR2 handler after starting
 * and prints how often it ran.
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
	int gated = getenv("REC_SIGNAL_WAIT") != NULL;

	if (argc > 2 && strcmp(argv[2], "own") == 0)
		signal(SIGUSR2, own_handler);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < rounds; i++) {
		void *volatile p = malloc(1000 + (size_t)i);
		free(p);
		printf("round %d\n", i);
		fflush(stdout);
		if (gated && (i == 15 || i == 35 || i == 55)) {
			char go[16];

			snprintf(go, sizeof(go), "go.%d", i);
			while (access(go, F_OK) != 0)
				usleep(1000);
		}
		usleep(20000);
	}
	printf("own handler ran %d times\n", (int)own_calls);
	return 0;
}
