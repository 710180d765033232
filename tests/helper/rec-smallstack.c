/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-smallstack: allocations on small stacks (issue 24, point 1;
 * tests/t2350-recorder-small-stacks.sh).  The recorder runs on the stack of
 * whoever calls malloc: a thread with a small stack, or a signal handler
 * on a small sigaltstack, must not overflow it because the call is
 * recorded.
 *
 *   rec-smallstack thread STACK USED N
 *        a thread with a STACK-byte stack that has used USED bytes of it
 *        (16 frames) makes N rounds of malloc, calloc, realloc and free
 *        from three call sites, and of librec-pool's pool_get and
 *        pool_put (for MTREC_TRACK), sleeping now and then so that mtrec ctl's
 *        request file is looked for; "done N"
 *   rec-smallstack sigalt SIZE MS
 *        SIGUSR1's handler runs on a SIZE-byte sigaltstack and allocates
 *        (20 malloc/free pairs);
 *        another thread signals the main thread while it makes
 *        malloc/free pairs for MS milliseconds, and on until 1000 signals
 *        were handled (100 pairs a signal at most: it waits for them);
 *        "handled K"
 *   rec-smallstack measure N
 *        a thread whose stack (1 MiB) is filled with a pattern makes the
 *        calls of "thread" (N rounds); the bytes below the calling frame
 *        that were touched: "deepest BYTES"
 *   rec-smallstack measure N fork
 *        the same in a child the thread forks (its first call opens its
 *        own trace)
 *   rec-smallstack measure N until FILE
 *        the same, on with N rounds more until FILE exists (for mtrec
 *        ctl's requests, taken by the measured thread's calls: the test
 *        says when it has had its answers)
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void pool_init(void);
void *pool_get(size_t size);
void pool_put(void *p);

#define PATTERN 0xa5
#define FRAMES 16

static void *volatile sink;
static long rounds;
static size_t used;

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static __attribute__((noinline)) void site_a(size_t n)
{
	void *p = malloc(n);

	sink = p;
	p = realloc(p, n * 3);
	sink = p;
	free(p);
}

/* pool_get and pool_put (librec-pool.so) for MTREC_TRACK to follow. */
static __attribute__((noinline)) void site_b(size_t n)
{
	void *p = calloc(4, n);

	sink = p;
	free(p);
	p = pool_get(n % 64);
	sink = p;
	pool_put(p);
}

static __attribute__((noinline)) void site_c(size_t n)
{
	void *q[8];

	for (int i = 0; i < 8; i++)
		q[i] = malloc(n + (size_t)i * 40);
	for (int i = 0; i < 8; i++)
		free(q[i]);
}

/* The calls, with a pause of 30 ms every 500 rounds: each pause lets
 * the next call look for a request (they are looked for every 100 ms). */
static __attribute__((noinline)) void calls(void)
{
	for (long i = 0; i < rounds; i++) {
		size_t n = 16 + (size_t)(i % 50) * 24;

		site_a(n);
		site_b(n);
		site_c(n);
		if (i % 500 == 499)
			pause_ms(30);
	}
}

/* FRAMES frames that use used bytes of the stack between them, then the
 * calls from the deepest one (so that MTREC_DEPTH has frames to walk). */
static __attribute__((noinline)) void descend(int level)
{
	volatile char pad[used / FRAMES];

	memset((char *)pad, level, sizeof(pad));
	if (level + 1 < FRAMES)
		descend(level + 1);
	else
		calls();
	sink = (void *)pad;
}

static void *thread_main(void *arg)
{
	(void)arg;
	descend(0);
	return NULL;
}

static int run_thread(size_t stack)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, stack) != 0 ||
	    pthread_create(&t, &attr, thread_main, NULL) != 0) {
		fprintf(stderr, "rec-smallstack: cannot make a thread with a %zu-byte stack\n", stack);
		return 2;
	}
	pthread_join(t, NULL);
	printf("done %ld\n", rounds);
	return 0;
}

/* ---- measure ---------------------------------------------------------- */

static uintptr_t top;
static int in_child;		/* measure fork: the calls in a forked child */
static const char *until;	/* measure until FILE */
static unsigned char *stack;
#define STACK_SIZE (1 << 20)

static unsigned long deepest(void)
{
	size_t i;

	for (i = 0; i < STACK_SIZE && stack[i] == PATTERN; i++)
		;
	return (unsigned long)(top - (uintptr_t)(stack + i));
}

/* The pattern again below the caller (fork itself went deeper than the
 * calls measured). */
static __attribute__((noinline)) void refill(void)
{
	unsigned char *below = (unsigned char *)__builtin_frame_address(0) - 512;

	memset(stack, PATTERN, (size_t)(below - stack));
}

/* In a child, the calls include its first event: its own trace opened
 * from inside malloc. */
static void *measured(void *arg)
{
	pid_t pid;
	int st;

	(void)arg;
	top = (uintptr_t)__builtin_frame_address(0);
	if (!in_child) {
		do
			calls();
		while (until && access(until, F_OK) != 0);
		return NULL;
	}
	if ((pid = fork()) == 0) {
		refill();
		calls();
		printf("deepest %lu\n", deepest());
		exit(0);
	}
	waitpid(pid, &st, 0);
	exit(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
}

static int measure(void)
{
	size_t size = STACK_SIZE;
	pthread_attr_t attr;
	pthread_t t;

	stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		     -1, 0);
	if (stack == MAP_FAILED)
		return 2;
	memset(stack, PATTERN, size);
	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, stack, size) != 0 ||
	    pthread_create(&t, &attr, measured, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	printf("deepest %lu\n", deepest());
	return 0;
}

/* ---- sigalt ------------------------------------------------------------ */

static volatile sig_atomic_t handled;
static volatile int stop_flag;

/* glibc's malloc is not reentrant: the handler only meets tcache hits,
 * in bins of its own (primed by sigalt; the main thread's sizes stay
 * under 400 bytes). */
#define HANDLER_SIZE(i) (600 + (size_t)(i) * 16)

static void on_usr1(int sig)
{
	(void)sig;
	for (int i = 0; i < 20; i++) {
		void *p = malloc(HANDLER_SIZE(i));

		sink = p;
		free(p);
	}
	handled++;
}

static void *signaller(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!stop_flag) {
		pthread_kill(target, SIGUSR1);
		sched_yield();
	}
	return NULL;
}

static int sigalt(size_t size, long ms)
{
	stack_t ss = { .ss_sp = malloc(size), .ss_size = size, .ss_flags = 0 };
	struct sigaction sa;
	pthread_t self = pthread_self(), t;

	for (int i = 0; i < 20; i++)
		free(malloc(HANDLER_SIZE(i)));
	if (ss.ss_sp)
		memset(ss.ss_sp, PATTERN, size);
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0) {
		perror("rec-smallstack: sigaltstack");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&t, NULL, signaller, &self);
	struct timespec t0, now;

	long pairs = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0;; i++) {
		if (i % 256 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >= ms &&
			    handled >= 1000)
				break;
		}
		/* At most 100 pairs a signal handled (beyond the first 25600):
		 * on a loaded machine the signaller is starved, and the pairs
		 * made meanwhile were a 1 GB trace for the same 1000 signals. */
		if (pairs > 100L * handled + 25600) {
			sched_yield();
			continue;
		}
		void *p = malloc(16 + (size_t)(i % 40) * 8);

		sink = p;
		free(p);
		pairs++;
		/* Time outside malloc too: a handler's call that is not nested
		 * in the main thread's is the one that looks for mtrec ctl's
		 * requests, and takes the paths of a first call. */
		for (volatile int k = 0; k < 200; k++)
			;
	}
	stop_flag = 1;
	pthread_join(t, NULL);
	size_t i;
	for (i = 0; i < size && ((unsigned char *)ss.ss_sp)[i] == PATTERN; i++)
		;
	printf("handled %d\n", (int)handled);
	fprintf(stderr, "rec-smallstack: %zu bytes of the sigaltstack touched\n", size - i);
	return 0;
}

int main(int argc, char **argv)
{
	pool_init();
	/* The program's own calls bound now, not from the small stack: the
	 * loader's lazy binding is the program's cost, not the recorder's. */
	site_a(16);
	site_b(16);
	site_c(16);
	pause_ms(0);
	(void)access(".", F_OK);
	if (argc == 5 && strcmp(argv[1], "thread") == 0) {
		used = strtoul(argv[3], NULL, 0);
		rounds = atol(argv[4]);
		return run_thread(strtoul(argv[2], NULL, 0));
	}
	if (argc == 4 && strcmp(argv[1], "sigalt") == 0)
		return sigalt(strtoul(argv[2], NULL, 0), atol(argv[3]));
	if ((argc == 3 || (argc == 4 && strcmp(argv[3], "fork") == 0) ||
	     (argc == 5 && strcmp(argv[3], "until") == 0)) &&
	    strcmp(argv[1], "measure") == 0) {
		rounds = atol(argv[2]);
		in_child = argc == 4;
		until = argc == 5 ? argv[4] : NULL;
		return measure();
	}
	fprintf(stderr, "usage: rec-smallstack thread STACK USED N | sigalt SIZE MS | "
		"measure N [fork | until FILE]\n");
	return 2;
}
