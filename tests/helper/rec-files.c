/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-files: a program whose trace file is taken away, or refused, while
 * it runs (issue 24; tests/t2380-recorder-trace-taken-away.sh,
 * t2385-recorder-planted-files.sh).  Prints "done" and exits 0 when the
 * program itself saw nothing wrong.
 *
 *   rec-files churn SECONDS      malloc/free churn in 2 threads for
 *                                SECONDS (a float), every block freed
 *   rec-files paced SECONDS      the same at about 200,000 pairs a
 *                                second (100 in each thread every ms):
 *                                a trace small enough to read back
 *                                with /usr/bin/mtrace in seconds
 *   rec-files nostat SECONDS     the same, under a seccomp filter that
 *                                refuses every stat call (fstat, stat,
 *                                lstat, newfstatat, statx: EPERM), as a
 *                                sandboxed daemon's may; installed after
 *                                start-up, the trace being open
 *   rec-files nap SECONDS        a few allocations, a sleep of SECONDS,
 *                                a few more, exit: no chunk turnover after
 *                                the sleep
 *   rec-files slow SECONDS       one malloc/free pair every 200 ms, as an
 *                                idle daemon makes: a chunk lasts seconds
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct churn {
	double until;
	int batch;      /* pairs between pauses */
	long pause_ns;  /* 0: none */
};

static void *churner(void *arg)
{
	const struct churn *c = arg;
	void *keep[64] = { 0 };
	unsigned i = 0;

	while (now() < c->until) {
		for (int k = 0; k < c->batch; k++, i++) {
			free(keep[i % 64]);
			keep[i % 64] = malloc(8 + i % 200);
		}
		if (c->pause_ns)
			nanosleep(&(struct timespec){ 0, c->pause_ns }, NULL);
	}
	for (int k = 0; k < 64; k++)
		free(keep[k]);
	return NULL;
}

/* Every stat-like call fails with EPERM, in this thread and the ones it
 * starts after. */
static void deny_stat(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fstat, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_newfstatat, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_stat, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_lstat, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_statx, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("rec-files: seccomp");
		exit(3);
	}
}

static int churn(double seconds, int paced)
{
	struct churn c = { now() + seconds, paced ? 100 : 1000, paced ? 1000000 : 0 };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, churner, &c) != 0)
			return 2;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}

static void few(void)
{
	for (int i = 0; i < 10; i++) {
		{
			void *own = malloc(32);
			sink = own;	/* another thread may store here too */
			free(own);
		}
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 1;
	int ret = 1;

	if (argc > 2 && strcmp(argv[1], "churn") == 0) {
		ret = churn(seconds, 0);
	} else if (argc > 2 && strcmp(argv[1], "paced") == 0) {
		ret = churn(seconds, 1);
	} else if (argc > 2 && strcmp(argv[1], "nostat") == 0) {
		deny_stat();
		ret = churn(seconds, 0);
	} else if (argc > 2 && strcmp(argv[1], "slow") == 0) {
		for (double until = now() + seconds; now() < until;) {
			{
				void *own = malloc(24);
				sink = own;	/* another thread may store here too */
				free(own);
			}
			nanosleep(&(struct timespec){ 0, 200000000 }, NULL);
		}
		ret = 0;
	} else if (argc > 2 && strcmp(argv[1], "nap") == 0) {
		few();
		nanosleep(&(struct timespec){ (time_t)seconds,
					      (long)((seconds - (double)(time_t)seconds) * 1e9) }, NULL);
		few();
		ret = 0;
	} else {
		fprintf(stderr, "usage: rec-files churn|paced|nostat|nap|slow SECONDS\n");
		return 2;
	}
	if (ret == 0)
		printf("done\n");
	return ret;
}
