/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-shim.c -- stands in for libmtrec.so in the unwinder's unit test.
 *
 * Linked with recorder/unwind.c into one shared object, built with the
 * recorder's flags, so that the frames mtrec_unwind must skip (the
 * "wrapper" and the "record" function below) are, as in the recorder,
 * those of the library that contains it.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <time.h>
#include "unwind.h"
#include "unwind-test.h"

#define API __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))

static NOINLINE void record(struct capture *cap)
{
	void *bt[CAP_MAX + 32];
	struct dl_find_object self;
	int n, i = 0, j = 0;

	cap->n = mtrec_unwind(cap->ips, cap->max);
	/* backtrace() starts in this function: drop the shim's frames. */
	n = cap->no_backtrace ? 0 : backtrace(bt, CAP_MAX + 32);
	if (_dl_find_object((void *)record, &self) == 0)
		while (i < n && bt[i] >= self.dlfo_map_start && bt[i] < self.dlfo_map_end)
			i++;
	while (i < n)
		cap->bt[j++] = bt[i++];
	cap->nbt = j;
}

API NOINLINE int shim_capture(struct capture *cap)
{
	cap->caller = __builtin_return_address(0);
	record(cap);
	__asm__ volatile("" ::: "memory");
	return 0;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

API NOINLINE int shim_bench(int mode, int max, long iters, double *ns)
{
	void *ips[CAP_MAX + 32];
	int n = 0;
	double t0;

	mtrec_unwind_test_cache(mode != 1);
	n = mode == 2 ? backtrace(ips, max) : mtrec_unwind(ips, max);	/* warm up */
	t0 = now_ns();
	for (long k = 0; k < iters; k++) {
		n = mode == 2 ? backtrace(ips, max) : mtrec_unwind(ips, max);
		__asm__ volatile("" : : "r"(ips) : "memory");
	}
	*ns = now_ns() - t0;
	mtrec_unwind_test_cache(1);
	return n;
}

API void shim_flush(void)
{
	mtrec_unwind_flush();
}

API void shim_share(int on)
{
	mtrec_unwind_test_share(on);
}
