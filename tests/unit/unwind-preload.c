/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-preload.c -- the unwinder inside real programs' malloc.
 *
 * Built with recorder/unwind.c into a preload library (as libmtrec.so
 * would be) that walks the stack on every malloc and free, compares the
 * walk with glibc's backtrace() taken at the same point, and at exit
 * writes to stderr "unwind-preload: W walks, D differ" (through a copy of
 * fd 2 made at start: ls and other coreutils close stderr at exit).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <execinfo.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include "unwind.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

#define API __attribute__((visibility("default")))

static __thread int busy;	/* backtrace() itself allocates */
static unsigned long walks, differ;
static int out_fd = 2;

static __attribute__((constructor)) void start(void)
{
	int fd = fcntl(2, F_DUPFD_CLOEXEC, 100);
	if (fd >= 0)
		out_fd = fd;
}

static void put_num(unsigned long v, int base)
{
	char b[24];
	int i = sizeof b;
	do
		b[--i] = "0123456789abcdef"[v % base];
	while ((v /= base) && i > 1);
	b[--i] = ' ';
	write(out_fd, b + i, sizeof b - i);
}

static void put_frames(const char *label, void **ips, int n)
{
	write(out_fd, label, strlen(label));
	for (int k = 0; k < n; k++)
		put_num((unsigned long)ips[k], 16);
	write(out_fd, "\n", 1);
}

static __attribute__((noinline)) void check(void)
{
	void *ips[64], *bt[100];
	struct dl_find_object self;
	int n, m, i = 0, want;

	if (busy)
		return;
	busy = 1;
	n = mtrec_unwind(ips, 64);
	m = backtrace(bt, 100);
	if (_dl_find_object((void *)check, &self) == 0)
		while (i < m && bt[i] >= self.dlfo_map_start && bt[i] < self.dlfo_map_end)
			i++;
	want = m - i < 64 ? m - i : 64;
	__atomic_add_fetch(&walks, 1, __ATOMIC_RELAXED);
	if (n != want || memcmp(ips, bt + i, (size_t)n * sizeof ips[0]) != 0) {
		if (__atomic_add_fetch(&differ, 1, __ATOMIC_RELAXED) <= 3) {
			put_frames("unwind-preload: ours", ips, n);
			put_frames("unwind-preload: backtrace", bt + i, m - i);
		}
	}
	busy = 0;
}

API void *malloc(size_t n)
{
	check();
	return __libc_malloc(n);
}

API void free(void *p)
{
	if (p)
		check();
	__libc_free(p);
}

static __attribute__((destructor)) void report(void)
{
	write(out_fd, "unwind-preload:", 15);
	put_num(walks, 10);
	write(out_fd, " walks,", 7);
	put_num(differ, 10);
	write(out_fd, " differ\n", 8);
}
