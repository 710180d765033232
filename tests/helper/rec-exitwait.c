/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-exitwait: a thread that never leaves the recorder when the program
 * exits (issue 24, point 5; tests/t2360-recorder-exit-waits.sh).
 *
 *   rec-exitwait stuck
 *        a thread allocates without end; SIGUSR1, sent to it again and
 *        again, finds where it interrupted the thread: inside libmtrec.so,
 *        the handler blocks for ever (as a handler waiting for a lock the
 *        program never gives back would).  main then calls exit(0);
 *        "stuck" (or "not stuck" when 10 s of signals never caught it
 *        there: not preloaded).
 *   rec-exitwait exitmany THREADS N
 *        THREADS threads allocate without end; the main thread calls
 *        exit(0) after N malloc/free pairs of its own (on a loaded
 *        machine, some of the others are then descheduled in the middle
 *        of a line)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static void *volatile sink;
static volatile sig_atomic_t stuck;
static volatile int warm;	/* the allocator's sites are in the recorder's tables */

static void on_usr1(int sig, siginfo_t *si, void *ctx)
{
	const ucontext_t *uc = ctx;
	Dl_info info;

	(void)sig;
	(void)si;
#if defined(__x86_64__)
	void *pc = (void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	void *pc = (void *)uc->uc_mcontext.pc;
#else
	void *pc = NULL;
	(void)uc;
#endif
	/* dladdr takes the loader's lock: only when the thread was not in
	 * the loader itself (it never is in this program's loop). */
	if (pc && dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "libmtrec")) {
		stuck = 1;
		for (;;)
			pause();
	}
}

static void *allocator(void *arg)
{
	(void)arg;
	for (unsigned i = 0;; i++) {
		void *p = malloc(16 + i % 500);

		sink = p;
		free(p);
		if (i == 1000)
			warm = 1;
	}
	return NULL;
}

static int exit_many(int threads, long n)
{
	pthread_t t;

	for (int i = 0; i < threads; i++)
		pthread_create(&t, NULL, allocator, NULL);
	for (long i = 0; i < n; i++) {
		void *p = malloc(24 + (size_t)(i % 300));

		sink = p;
		free(p);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;

	if (argc == 4 && strcmp(argv[1], "exitmany") == 0)
		return exit_many(atoi(argv[2]), atol(argv[3]));
	if (argc != 2 || strcmp(argv[1], "stuck") != 0) {
		fprintf(stderr, "usage: rec-exitwait stuck | exitmany THREADS N\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, allocator, NULL);
	/* Caught at its first calls, the thread would block holding the
	 * lock of the recorder's table of callers (a new caller's insert), and
	 * the next new caller -- stdout's buffer, allocated by the printf
	 * below -- waited for it for ever (4 hangs in 30 runs beside 4 busy
	 * loops).  Signalled once its sites are known, and the verdict written
	 * without malloc: the program makes no new caller once it is stuck. */
	while (!warm)
		usleep(1000);
	for (int i = 0; i < 100000 && !stuck; i++) {
		pthread_kill(t, SIGUSR1);
		usleep(100);
	}
	if (stuck)
		(void)!write(1, "stuck\n", 6);
	else
		(void)!write(1, "not stuck\n", 10);
	exit(0);
}
