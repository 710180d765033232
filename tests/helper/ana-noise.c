/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-noise: a program whose leaks vary at random from run to run, as a
 * daemon's do (requests in flight at exit, races), for `mtanalyze diff
 * --base` (tests/t5001).  The seed makes a run's counts repeatable:
 *
 *   ana-noise SEED [feature|moved|moved-more]
 *
 * leak_steady      4 blocks of 64 bytes, every run
 * leak_inflight    rand() % 4 blocks of 32 bytes
 * leak_race        1 + rand() % 3 blocks of 16 + rand() % 64 bytes each
 * leak_path        1 block of 48 bytes, allocated there, or with "moved"
 *                  by its callee leak_path_deeper (ovs-vswitchd's block
 *                  left in flight at exit, which one run in nine had
 *                  taken another path through the same caller); with
 *                  "moved-more" leak_path_deeper leaks 2 blocks of 48
 *                  there, one more than leak_path lost (a real leak)
 * with "feature":  leak_feature 2 blocks of 128 bytes (a new leak), and
 *                  leak_steady 6 blocks more (a grown one)
 *
 * glibc's rand() after srand(SEED) gives, for inflight and race:
 * 2: 2, 2 (20 31)   3: 2, 2 (40 56)   5: 3, 3 (58 24 60)
 * 6: 1, 2 (40 65)   7: 1, 1 (75). */
#include <stdlib.h>
#include <string.h>

static void *keep[64];
static int nkeep;

static __attribute__((noinline)) void hold(void *p)
{
	if (!p)
		exit(1);
	memset(p, 1, 16);
	keep[nkeep++] = p;
}

static __attribute__((noinline)) void leak_steady(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(64));
}

static __attribute__((noinline)) void leak_inflight(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(32));
}

static __attribute__((noinline)) void leak_race(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(16 + (size_t)(rand() % 64)));
}

static __attribute__((noinline)) void leak_feature(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(128));
}

static __attribute__((noinline)) void leak_path_deeper(int n)
{
	for (int i = 0; i < n; i++)
		hold(malloc(48));
}

static __attribute__((noinline)) void leak_path(int deeper)
{
	if (deeper)
		leak_path_deeper(deeper);
	else
		hold(malloc(48));
}

int main(int argc, char **argv)
{
	int feature = argc > 2 && strcmp(argv[2], "feature") == 0;
	int deeper = argc < 3 ? 0 : strcmp(argv[2], "moved") == 0 ? 1 : strcmp(argv[2], "moved-more") == 0 ? 2 : 0;

	if (argc < 2)
		return 2;
	srand((unsigned)atoi(argv[1]));
	leak_steady(4);
	leak_inflight(rand() % 4);
	leak_race(1 + rand() % 3);
	leak_path(deeper);
	if (feature) {
		leak_feature(2);
		leak_steady(6);
	}
	return 0;
}
