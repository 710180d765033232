/* rec-prim.c -- platform primitives for the recorder (see prim.h).
 * Kept apart so that the core reads as the recording logic only. */
#include "prim.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

pid_t prim_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int prim_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
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

const char *prim_getenv(const char *name)
{
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

void prim_say(const char *first, ...)
{
	char buf[1024], *o = buf, *lim = buf + sizeof(buf) - 1;
	const char *s = first;
	va_list ap;

	if (prim_quiet)
		return;
	o = prim_puts(o, lim, "mtrec: ");
	va_start(ap, first);
	while (s) {
		o = prim_puts(o, lim, s);
		/* va_start() is above: the analyzer's warning is mistaken. */
		s = va_arg(ap, const char *); // NOLINT(clang-analyzer-valist.Uninitialized)
	}
	va_end(ap);
	*o++ = '\n';
	prim_write_all(2, buf, (size_t)(o - buf));
}
