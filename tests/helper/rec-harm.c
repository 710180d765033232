/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-harm: programs that put the recorder where it could harm them (issue
 * 18; tests/t2300-recorder-never-harm.sh).  Each mode prints what it did
 * on stdout so that a traced run can be compared with a plain one, and
 * exits 0 when the program itself saw nothing wrong.
 *
 *   rec-harm churn SECONDS [STOPFILE]  malloc/free churn in 2 threads
 *                              for SECONDS (a float), or until STOPFILE
 *                              exists, every block freed; "done"
 *   rec-harm selfcancel N      a thread with a cancellation request pending
 *                              makes N malloc/free pairs: POSIX says neither
 *                              is a cancellation point, so it must finish;
 *                              "survived N" (exit 1 when it was cancelled)
 *   rec-harm cancel ROUNDS     each round starts 4 threads that allocate
 *                              (with cleanup handlers that free) and cancels
 *                              them after a random few hundred microseconds;
 *                              "rounds ROUNDS"
 *   rec-harm exitstdio         4 threads loop on snprintf/fopen/fprintf/
 *                              localtime while main calls exit() after 20 ms
 *   rec-harm closefrom N       closes every descriptor above 2 (as daemons
 *                              do), then makes N malloc/free pairs; all freed
 *   rec-harm sigalloc N        a 20 us interval timer whose handler
 *                              allocates 900 bytes (a tcache bin of its own) and frees its previous
 *                              block, while main makes N malloc/free pairs
 *                              (never over 520 bytes); "handled K" (K runs)
 *   rec-harm grab MB           allocates 1 MiB blocks (touching none) until
 *                              MB of them or the first NULL; "got K"
 *   rec-harm lategrab MB         the same under an address-space limit of
 *                              MB + 64 that the program sets itself once
 *                              running (setrlimit), as a daemon may after
 *                              reading its configuration
 *   rec-harm threadexit N      3 threads allocate; one calls exit() after N
 *                              of its own events
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;
static volatile int stop_flag;

static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(16 + (size_t)(i % 64) * 8);
		if (!p)
			exit(1);
		sink = p;
		free(p);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *stop_file;

static void *churner(void *arg)
{
	double until = *(double *)arg;
	void *keep[64] = { 0 };
	unsigned i = 0;

	while (now() < until && !(stop_file && access(stop_file, F_OK) == 0)) {
		for (int k = 0; k < 1000; k++, i++) {
			free(keep[i % 64]);
			keep[i % 64] = malloc(8 + i % 200);
		}
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	return NULL;
}

static int churn(double seconds)
{
	double until = now() + seconds;
	pthread_t t;

	pthread_create(&t, NULL, churner, &until);
	churner(&until);
	pthread_join(t, NULL);
	puts("done");
	return 0;
}

static void *self_canceller(void *arg)
{
	long n = *(long *)arg;

	pthread_cancel(pthread_self());	/* pending until a cancellation point */
	pairs(n);
	return (void *)n;
}

static int selfcancel(long n)
{
	pthread_t t;
	void *ret;

	pthread_create(&t, NULL, self_canceller, &n);
	pthread_join(t, &ret);
	if (ret == PTHREAD_CANCELED) {
		puts("cancelled inside malloc or free");
		return 1;
	}
	printf("survived %ld\n", (long)ret);
	return 0;
}

static void *cancelled_worker(void *arg)
{
	(void)arg;
	for (;;) {
		void *p = malloc(64);
		pthread_cleanup_push(free, p);
		for (int i = 0; i < 100; i++) {
			void *q = malloc(32 + (size_t)i);
			sink = q;
			free(q);
		}
		pthread_testcancel();
		pthread_cleanup_pop(1);
	}
	return NULL;
}

static int cancel_rounds(long rounds)
{
	unsigned seed = 1;

	for (long r = 0; r < rounds; r++) {
		pthread_t t[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, cancelled_worker, NULL);
		usleep(100 + rand_r(&seed) % 400);
		for (int i = 0; i < 4; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	}
	printf("rounds %ld\n", rounds);
	return 0;
}

static void *stdio_user(void *arg)
{
	char buf[256];
	unsigned i = 0;

	(void)arg;
	for (;;) {
		time_t t = (time_t)(i++ * 3600);
		struct tm *tm = localtime(&t);
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			fprintf(f, "%d %s\n", tm ? tm->tm_hour : -1, "x");
			fclose(f);
		}
		snprintf(buf, sizeof(buf), "%u %f", i, i * 0.5);
		/* its own copy freed: through the shared sink, another thread's
		 * store between the two lines made this one free that block */
		char *copy = strdup(buf);
		sink = copy;
		free(copy);
	}
	return NULL;
}

static int exit_stdio(void)
{
	pthread_t t;

	for (int i = 0; i < 4; i++)
		pthread_create(&t, NULL, stdio_user, NULL);
	usleep(20000);
	exit(0);
}

static int closefrom_then(long n)
{
	closefrom(3);
	pairs(n);
	printf("done %ld\n", n);
	return 0;
}

static volatile sig_atomic_t handled;
static void *volatile handler_block;

/* Each run frees the block the previous run allocated: an event lost in
 * either shows as a free of memory never allocated, or a leak. */
static void on_alarm(int sig)
{
	void *p = malloc(900);

	(void)sig;
	free(handler_block);
	handler_block = p;
	handled++;
}

static int sigalloc(long n)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 20 }, { 0, 20 } };

	/* glibc's malloc is not reentrant: the handler may only meet tcache
	 * hits.  Set the tcache up, and put a block in the handler's bin. */
	pairs(1000);
	free(malloc(900));
	handler_block = malloc(900);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	pairs(n);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_IGN);
	free(handler_block);
	printf("handled %d\n", (int)handled);
	return 0;
}

static int grab(long mb)
{
	long k = 0;

	while (k < mb && malloc(1 << 20) != NULL)
		k++;
	printf("got %ld\n", k);
	return 0;
}

static int late_grab(long mb)
{
	struct rlimit rl = { (rlim_t)(mb + 64) << 20, (rlim_t)(mb + 64) << 20 };

	if (setrlimit(RLIMIT_AS, &rl) != 0) {
		perror("setrlimit");
		return 2;
	}
	return grab(mb);
}

static long exit_after;

static void *allocator(void *arg)
{
	long i = 0;

	for (;;) {
		void *p = malloc(16 + (size_t)(i % 100));
		sink = p;
		free(p);
		if (arg && ++i == exit_after)
			exit(0);
	}
	return NULL;
}

static int thread_exit(long n)
{
	pthread_t t;

	exit_after = n;
	pthread_create(&t, NULL, allocator, NULL);
	pthread_create(&t, NULL, allocator, NULL);
	pthread_create(&t, NULL, allocator, (void *)1);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "0";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (!strcmp(mode, "churn")) {
		stop_file = argc > 3 ? argv[3] : NULL;
		return churn(atof(arg));
	}
	if (!strcmp(mode, "selfcancel"))
		return selfcancel(atol(arg));
	if (!strcmp(mode, "cancel"))
		return cancel_rounds(atol(arg));
	if (!strcmp(mode, "exitstdio"))
		return exit_stdio();
	if (!strcmp(mode, "closefrom"))
		return closefrom_then(atol(arg));
	if (!strcmp(mode, "sigalloc"))
		return sigalloc(atol(arg));
	if (!strcmp(mode, "grab"))
		return grab(atol(arg));
	if (!strcmp(mode, "lategrab"))
		return late_grab(atol(arg));
	if (!strcmp(mode, "threadexit"))
		return thread_exit(atol(arg));
	fprintf(stderr, "usage: rec-harm churn|selfcancel|cancel|exitstdio|closefrom|sigalloc|grab|lategrab|threadexit ARG\n");
	return 2;
}
