/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* prim.c -- platform primitives for the recorder (see prim.h).
 * Kept apart so that the core reads as the recording logic only. */
#include "lock.h"
#include "prim.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int (*real_dl_iterate_phdr)(prim_phdr_fn, void *);
__thread int prim_loader_depth;

void prim_loader_init(int (*real)(prim_phdr_fn, void *))
{
	__atomic_store_n(&real_dl_iterate_phdr, real, __ATOMIC_RELEASE);
}

int prim_dl_iterate_phdr(prim_phdr_fn cb, void *data)
{
	int (*real)(prim_phdr_fn, void *) = __atomic_load_n(&real_dl_iterate_phdr, __ATOMIC_ACQUIRE);
	int ret;

	if (!real)
		return 0;
	prim_loader_depth++;
	ret = real(cb, data);
	prim_loader_depth--;
	return ret;
}

pid_t prim_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int prim_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = syscall(SYS_write, fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int prim_open(const char *path, int flags, mode_t mode)
{
	long r;

	do
		r = syscall(SYS_openat, AT_FDCWD, path, flags, mode);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

int prim_close(int fd)
{
	/* Linux releases the descriptor even when close reports EINTR. */
	return (int)syscall(SYS_close, fd);
}

ssize_t prim_read(int fd, void *buf, size_t len)
{
	long r;

	do
		r = syscall(SYS_read, fd, buf, len);
	while (r < 0 && errno == EINTR);
	return r;
}

ssize_t prim_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	long r;

	do
		r = syscall(SYS_pwrite64, fd, buf, len, off);
	while (r < 0 && errno == EINTR);
	return r;
}

int prim_fallocate(int fd, off_t off, off_t len)
{
	long r;

	do
		r = syscall(SYS_fallocate, fd, 0, off, len);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

int prim_flock(int fd, int op)
{
	long r;

	do
		r = syscall(SYS_flock, fd, op);
	while (r < 0 && errno == EINTR);
	return (int)r;
}

int prim_membarrier(void)
{
	/* -1 not asked yet, else the command that works (0: none). */
	static int cmd = -1;
	int c = __atomic_load_n(&cmd, __ATOMIC_RELAXED);

	if (c < 0) {
		long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
		c = 0;
		if (have > 0 && (have & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
			c = MEMBARRIER_CMD_PRIVATE_EXPEDITED;
		else if (have > 0 && (have & MEMBARRIER_CMD_GLOBAL))
			c = MEMBARRIER_CMD_GLOBAL;
		__atomic_store_n(&cmd, c, __ATOMIC_RELAXED);
	}
	if (c == 0)
		return -1;
	return syscall(SYS_membarrier, c, 0, 0) == 0 ? 0 : -1;
}

/* A few entries at a time: this runs in exit(), from whichever thread
 * called it (its stack may be small). */
int prim_count_threads(void)
{
	char buf[1024];
	int fd = prim_open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	int count = 0;
	long n;

	if (fd < 0)
		return -1;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			const struct dirent64 *d = (const struct dirent64 *)(buf + off);
			if (d->d_name[0] != '.')
				count++;
			off += d->d_reclen;
		}
	}
	prim_close(fd);
	return n < 0 ? -1 : count;
}

uint64_t prim_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *prim_strerror(int err)
{
	/* strerror() may allocate for unknown values; this never does. */
	const char *s = strerrordesc_np(err);
	return s ? s : "unknown error";
}

/* mtrec attach's settings, "NAME=VALUE\n" lines: in an attached process
 * they are the recorder's only MALLOC_TRACE and MTREC_* variables -- the
 * program's environment names none, or older ones of its own. */
static char attach_env[8192];
static int attach_env_set;

int prim_attach_env(const char *config)
{
	size_t len = strnlen(config, sizeof(attach_env));

	if (len >= sizeof(attach_env))
		return -1;
	memcpy(attach_env, config, len + 1);
	for (char *c = attach_env; *c; c++)
		if (*c == '\n')
			*c = '\0';
	attach_env_set = 1;
	return 0;
}

static const char *attach_getenv(const char *name)
{
	size_t n = strlen(name);

	for (const char *e = attach_env; *e; e += strlen(e) + 1)
		if (strncmp(e, name, n) == 0 && e[n] == '=')
			return e + n + 1;
	return NULL;
}

const char *prim_getenv(const char *name)
{
	if (attach_env_set && (strncmp(name, "MTREC_", 6) == 0 || strcmp(name, "MALLOC_TRACE") == 0))
		return attach_getenv(name);
	return secure_getenv(name);
}

void *prim_map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

char *prim_puts(char *o, char *lim, const char *s)
{
	while (*s && o < lim)
		*o++ = *s++;
	return o;
}

char *prim_putu(char *o, char *lim, unsigned long v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0 && o < lim)
		*o++ = tmp[--n];
	return o;
}

char *prim_putx(char *o, char *lim, unsigned long v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[20];
	int n = 0;

	do
		tmp[n++] = digits[v & 15];
	while ((v >>= 4) != 0);
	while (n > 0 && o < lim)
		*o++ = tmp[--n];
	return o;
}

int prim_quiet;
/* lock.h: the locks this thread holds, or waits for. */
__thread unsigned mtrec_held;

#define SAY_PIECES 16

/* The pieces go out with one writev(), never copied into a buffer: this
 * may run inside malloc on a small stack (a full disk, a truncated trace). */
static void say_pieces(const char *first, va_list ap)
{
	struct iovec iov[SAY_PIECES + 2];
	const char *s = first;
	int n = 0;
	ssize_t w;

	iov[n++] = (struct iovec){ (void *)"mtrec: ", 7 };
	while (s && n <= SAY_PIECES) {
		iov[n++] = (struct iovec){ (void *)s, strlen(s) };
		/* va_start() is in the caller: the analyzer's warning is mistaken. */
		s = va_arg(ap, const char *); // NOLINT(clang-analyzer-valist.Uninitialized)
	}
	iov[n++] = (struct iovec){ (void *)"\n", 1 };
	do
		w = syscall(SYS_writev, 2, iov, n);
	while (w < 0 && errno == EINTR);
}

void prim_say(const char *first, ...)
{
	va_list ap;

	if (prim_quiet)
		return;
	va_start(ap, first);
	say_pieces(first, ap);
	va_end(ap);
}

void prim_say_error(const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	say_pieces(first, ap);
	va_end(ap);
}

int prim_in_recorder(const void *addr)
{
	static uintptr_t lo, hi;
	uintptr_t l = __atomic_load_n(&lo, __ATOMIC_ACQUIRE), h = __atomic_load_n(&hi, __ATOMIC_ACQUIRE);

	if (h == 0) {
		struct dl_find_object fo;

		if (_dl_find_object((void *)&prim_in_recorder, &fo) != 0)
			return 0;
		l = (uintptr_t)fo.dlfo_map_start, h = (uintptr_t)fo.dlfo_map_end;
		__atomic_store_n(&lo, l, __ATOMIC_RELEASE);
		__atomic_store_n(&hi, h, __ATOMIC_RELEASE);
	}
	return (uintptr_t)addr - l < h - l;
}
