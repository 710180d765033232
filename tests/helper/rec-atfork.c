/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-atfork: fork handlers that allocate (pthread_atfork), with the
 * recorder preloaded.  Each handler mallocs and frees one block of 9009
 * bytes; the program forks ROUNDS times, each child leaks one block of
 * 2002 bytes and exit()s; the parent leaks one block of 1001 per round.
 *
 * Built plainly (make helpers) the handlers are registered from the
 * program's own constructor, so after the recorder's.  Built with
 * -DREC_ATFORK_LIB -shared -fPIC it is a library whose constructor
 * registers them; a copy built with -DREC_ATFORK_USE_LIB and linked
 * against that library then gets handlers registered *before* the
 * recorder's (libraries a program links are initialised before an
 * LD_PRELOAD'ed one), as with any library that calls pthread_atfork()
 * from its constructor.
 * Usage: rec-atfork [ROUNDS]; prints "rounds ROUNDS"; exit 0, 1 on error. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef REC_ATFORK_USE_LIB
static void *volatile hsink;

static void handler(void)
{
	void *p = malloc(9009);
	hsink = p;
	free(p);
}

__attribute__((constructor)) static void register_handlers(void)
{
	if (pthread_atfork(handler, handler, handler) != 0)
		abort();
}
#endif

#ifndef REC_ATFORK_LIB
static void *volatile sink;

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;

	for (int r = 0; r < rounds; r++) {
		int st;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			sink = malloc(2002);
			exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || st != 0)
			return 1;
		sink = malloc(1001);
	}
	printf("rounds %d\n", rounds);
	return 0;
}
#endif
