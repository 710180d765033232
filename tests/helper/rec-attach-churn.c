/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-attach-churn.c -- a program started without the recorder, for mtrec
 * attach and detach (t2400).
 *
 *   rec-attach-churn churn N [USEC]
 *                              N threads allocate and free without pause
 *                              (each keeps its last 64 blocks; with USEC,
 *                              a pause that long every 100); the main
 *                              thread waits in nanosleep() for commands,
 *                              allocating nothing meanwhile (N may be 0;
 *                              with N 0 and USEC -T, it waits in poll()
 *                              T microseconds at a time)
 *   rec-attach-churn busy N    the same, the main thread churning too:
 *                              no thread ever waits in a system call
 *   rec-attach-churn traced    a child that another process (this one)
 *                              traces: "ready CHILD"
 *   rec-attach-churn seccomp N as churn N, under a seccomp filter that
 *                              allows every call
 *   rec-attach-churn nodump N  as churn N, after prctl(PR_SET_DUMPABLE, 0)
 *   rec-attach-churn signals N as churn N, a thread sending SIGUSR1 to the
 *                              first churning thread every 100 us (its
 *                              handler checks that errno is kept;
 *                              "handled N" before "bye")
 *   rec-attach-churn waiter sigwait|epoll
 *                              the one thread waiting outside the process
 *                              waits in rt_sigtimedwait() or epoll_wait()
 *                              itself (no libc loop that retries) and says
 *                              "eintr" on stderr each time the call fails
 *                              with EINTR; the main thread waits for
 *                              commands in a futex (pthread_cond_timedwait)
 *
 * With REC_BLOCK_SIGTRAP set, every thread blocks SIGTRAP; a SIGTRAP
 * that reaches the program's handler says "sigtrap" on stderr.
 *
 * Commands come in the file "cmd" of the current directory (removed once
 * read): "leak N" allocates N blocks of 4242 bytes in leak_here() and
 * never frees them ("leaked N" on stdout), "fork" forks a child that
 * allocates in leak_here() too, frees the first block leaked and exits
 * ("forked PID STATUS"), "strdup N" makes N strings
 * with libc's strdup and frees them in this program ("strdups N"), "exit"
 * stops the threads, frees their blocks and exits 0 ("bye").  Prints
 * "ready PID" once the threads run. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEP 64

static volatile int stop;
static long pause_us;	/* churn N USEC: a pause every 100 rounds */
static unsigned long rounds[64];

static void *churn(void *arg)
{
	unsigned long me = (unsigned long)arg, x = me * 2654435761u + 1;
	void *ring[KEEP] = { 0 };

	for (unsigned long i = 0; !stop; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		free(ring[i % KEEP]);
		ring[i % KEEP] = (x >> 33) % 3 ? malloc(16 + (x >> 40) % 512) : calloc(1, 32 + (x >> 44) % 64);
		rounds[me % 64]++;
		if (pause_us && i % 100 == 99)
			nanosleep(&(struct timespec){ 0, pause_us * 1000 }, NULL);
	}
	for (int i = 0; i < KEEP; i++)
		free(ring[i]);
	return NULL;
}

static __attribute__((noinline)) void *leak_here(void)
{
	return malloc(4242);
}

static void *kept[1024];
static int nkept;

/* The command file, if one came: 1 when the program should end. */
static int command(void)
{
	char line[64] = "";
	FILE *f;
	int n = 0;

	/* access() first: an idle loop that allocates nothing */
	if (access("cmd", F_OK) != 0 || (f = fopen("cmd", "r")) == NULL)
		return 0;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	unlink("cmd");
	if (sscanf(line, "leak %d", &n) == 1) {
		for (int i = 0; i < n && nkept < 1024; i++)
			kept[nkept++] = leak_here();
		printf("leaked %d\n", n);
	} else if (sscanf(line, "strdup %d", &n) == 1) {
		for (int i = 0; i < n; i++)
			free(strdup("a string strdup made inside libc"));
		printf("strdups %d\n", n);
	} else if (strncmp(line, "fork", 4) == 0) {
		pid_t child = fork();
		int status = -1;

		if (child == 0) {
			/* the child's own leak, and a free of one of the parent's */
			kept[nkept++] = leak_here();
			if (nkept > 1)
				free(kept[0]);
			_exit(0);
		}
		waitpid(child, &status, 0);
		printf("forked %d %d\n", (int)child, status);
	} else if (strncmp(line, "exit", 4) == 0) {
		return 1;
	}
	fflush(stdout);
	return 0;
}

static int traced(void)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		for (;;)
			pause();
	}
	printf("ready %d\n", (int)child);
	fflush(stdout);
	/* The child's signals stop it (traced): let them through. */
	while (waitpid(child, &status, 0) == child && WIFSTOPPED(status))
		ptrace(PTRACE_CONT, child, 0, (void *)(long)WSTOPSIG(status));
	return 0;
}

/* waiter: the kernel's own answer is all the program sees. */
static int waiter_fd = -1;

static void *wait_outside(void *arg)
{
	const char *kind = arg;
	sigset_t set;
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = -1;
	long r;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	if (strcmp(kind, "epoll") == 0) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		epoll_ctl(ep, EPOLL_CTL_ADD, waiter_fd, &ev);
	}
	for (;;) {
		if (ep >= 0)
			r = syscall(SYS_epoll_wait, ep, &ev, 1, -1);
		else
			r = syscall(SYS_rt_sigtimedwait, &set, NULL, NULL, 8);
		if (r < 0 && errno == EINTR)
			fprintf(stderr, "eintr\n");
		else if (r >= 0)
			return NULL;
	}
}

static int waiter(const char *kind)
{
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	pthread_t t;
	sigset_t set;
	uint64_t one = 1;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	waiter_fd = eventfd(0, EFD_CLOEXEC);
	pthread_create(&t, NULL, wait_outside, (void *)kind);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_mutex_lock(&mu);
	while (!command()) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 20000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&cv, &mu, &ts);
	}
	pthread_mutex_unlock(&mu);
	if (write(waiter_fd, &one, sizeof(one)) < 0 || pthread_kill(t, SIGUSR2) != 0)
		return 1;
	pthread_join(t, NULL);
	printf("bye\n");
	return 0;
}

static void allow_all(void)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		perror("seccomp");
}

/* signals: the handler runs on top of malloc, free, or the recorder. */
static volatile unsigned long handled;
static pthread_t victim;

static void on_usr1(int sig)
{
	int saved = errno;

	(void)sig;
	handled++;
	for (volatile int i = 0; i < 500; i++)
		;
	if (errno != saved && write(2, "errno changed\n", 14) < 0)
		_exit(3);
}

static void *kicker(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_kill(victim, SIGUSR1);
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	}
	return NULL;
}

/* A SIGTRAP that reached the program: mtrec attach's own never should. */
static void on_trap(int sig)
{
	(void)sig;
	if (write(2, "sigtrap\n", 8) < 0)
		_exit(3);
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 2, busy;
	pthread_t t[65];	/* and the kicker */

	if (argc > 1 && strcmp(argv[1], "traced") == 0)
		return traced();
	if (argc > 2 && strcmp(argv[1], "waiter") == 0)
		return waiter(argv[2]);
	if (argc > 1 && strcmp(argv[1], "seccomp") == 0)
		allow_all();
	if (argc > 1 && strcmp(argv[1], "nodump") == 0)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (argc < 2 || (strcmp(argv[1], "churn") && strcmp(argv[1], "busy") && strcmp(argv[1], "seccomp") &&
			  strcmp(argv[1], "nodump") && strcmp(argv[1], "signals")) ||
	    n < 0 || n > 64) {
		fprintf(stderr, "usage: rec-attach-churn churn|busy|seccomp|nodump|signals N | traced | waiter sigwait|epoll\n");
		return 2;
	}
	signal(SIGTRAP, on_trap);
	if (getenv("REC_BLOCK_SIGTRAP")) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	busy = strcmp(argv[1], "busy") == 0;
	pause_us = argc > 3 ? atol(argv[3]) : 0;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, churn, (void *)(unsigned long)i);
	if (strcmp(argv[1], "signals") == 0 && n > 0) {
		signal(SIGUSR1, on_usr1);
		victim = t[0];
		pthread_create(&t[n++], NULL, kicker, NULL);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (busy) {
		void *ring[KEEP] = { 0 };

		for (unsigned long i = 0;; i++) {
			free(ring[i % KEEP]);
			ring[i % KEEP] = malloc(8 + i % 300);
			if (i % 200000 == 0 && command())
				break;
		}
		for (int i = 0; i < KEEP; i++)
			free(ring[i]);
	} else {
		while (!command())
			if (pause_us < 0)
				poll(NULL, 0, (int)(-pause_us / 1000));
			else
				nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < nkept; i++)
		free(kept[i]);
	if (handled)
		printf("handled %lu\n", handled);
	printf("bye\n");
	return 0;
}
