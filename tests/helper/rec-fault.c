/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-fault: programs that make the recorder's life hard (tests/t2120),
 * and plain exit statuses for the launcher (tests/t2150).  Every mode
 * prints what it did on stdout, so that a run with the recorder can be
 * compared with a run without it.
 *
 *   rec-fault work N      N allocations of assorted sizes, all freed but
 *                         the last 3; prints a checksum; exits 3
 *   rec-fault big N       N malloc/free pairs (a trace of many MB); prints
 *                         "fsize LIMIT" (RLIMIT_FSIZE, or "unlimited") and
 *                         "done N"; exits 0
 *   rec-fault closeall N  allocates, closes every descriptor from 3 to
 *                         1023, writes "data\n" into ./closeall.dat and
 *                         opens that file 200 more times (taking the low
 *                         descriptor numbers again), then makes N
 *                         malloc/free pairs (enough to make the trace
 *                         grow); the file must still hold "data\n" (the
 *                         test looks after exit); prints "closed K" (how
 *                         many were open), "reopened 200", "done N" and
 *                         "data ok"; exits 0
 *   rec-fault dup2 FILE N writes "payload" into FILE, dup2()s that
 *                         descriptor over every descriptor from 3 to 1023,
 *                         then makes N malloc/free pairs; FILE must still
 *                         hold exactly "payload\n" afterwards (the test
 *                         looks); prints "replaced K" and "done N"
 *   rec-fault exit S      allocates, leaks one block of 1234, exits S
 *   rec-fault raise SIG   allocates, leaks one block of 1234, raises SIG
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void *volatile sink;

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

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (!strcmp(mode, "work")) {
		unsigned long sum = 0;
		void *keep[3] = { 0 };

		for (long i = 0; i < n; i++) {
			size_t size = 1 + (size_t)(i * 37 % 5000);
			unsigned char *p = malloc(size);
			if (!p)
				return 1;
			memset(p, (int)(i & 0xff), size);
			sum = sum * 31 + p[size - 1] + size;
			free(keep[i % 3]);
			keep[i % 3] = p;
		}
		printf("sum %lu\n", sum);
		return 3;
	}
	if (!strcmp(mode, "big")) {
		struct rlimit rl;

		getrlimit(RLIMIT_FSIZE, &rl);
		if (rl.rlim_cur == RLIM_INFINITY)
			printf("fsize unlimited\n");
		else
			printf("fsize %llu\n", (unsigned long long)rl.rlim_cur);
		pairs(n);
		printf("done %ld\n", n);
		return 0;
	}
	if (!strcmp(mode, "closeall")) {
		int closed = 0, fd, reopened = 0;
		char buf[16] = "";

		pairs(100);
		fflush(stdout);
		for (fd = 3; fd < 1024; fd++)
			if (close(fd) == 0)
				closed++;
		fd = open("closeall.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "data\n", 5) != 5)
			return 1;
		/* Take the low numbers again, the recorder's old one among them. */
		for (int i = 0; i < 200; i++)
			if (open("closeall.dat", O_RDWR) >= 0)
				reopened++;
		pairs(n);
		if (pread(fd, buf, 6, 0) != 5 || memcmp(buf, "data\n", 5) != 0)
			return 1;
		printf("closed %d\nreopened %d\ndone %ld\ndata ok\n", closed, reopened, n);
		return 0;
	}
	if (!strcmp(mode, "dup2") && argc > 3) {
		int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644), replaced = 0;

		n = atol(argv[3]);
		if (fd < 0 || write(fd, "payload\n", 8) != 8)
			return 1;
		pairs(100);
		for (int i = 3; i < 1024; i++) {
			if (i == fd)
				continue;
			if (fcntl(i, F_GETFD) != -1)
				replaced++;
			if (dup2(fd, i) < 0)
				return 1;
		}
		pairs(n);
		printf("replaced %d\ndone %ld\n", replaced, n);
		return 0;
	}
	if (!strcmp(mode, "exit") || !strcmp(mode, "raise")) {
		pairs(10);
		sink = malloc(1234);
		if (!strcmp(mode, "raise")) {
			signal((int)n, SIG_DFL);
			raise((int)n);
		}
		return (int)n;
	}
	fprintf(stderr, "usage: rec-fault work|big|closeall N | dup2 FILE N | exit S | raise SIG\n");
	return 2;
}
