/* prim.h -- the platform primitives the recorder uses, each with a
 * one-line contract.  Everything here is safe inside malloc: no
 * allocation, no stdio, no locks. */
#ifndef MTREC_PRIM_H
#define MTREC_PRIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define MTREC_COLD __attribute__((noinline, cold))
#define MTREC_HIDDEN __attribute__((visibility("hidden")))

/* The kernel thread id of the calling thread. */
pid_t prim_gettid(void) MTREC_HIDDEN;
/* Write all of buf to fd, retrying on EINTR and short writes; 0 or -errno. */
int prim_write_all(int fd, const void *buf, size_t len) MTREC_HIDDEN;
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t prim_monotonic_ns(void) MTREC_HIDDEN;
/* A description of errno value err that never allocates. */
const char *prim_strerror(int err) MTREC_HIDDEN;
/* An environment variable, ignored in set-uid/set-gid programs. */
const char *prim_getenv(const char *name) MTREC_HIDDEN;
/* Anonymous private memory that never comes from malloc; NULL on failure. */
void *prim_map_anon(size_t len) MTREC_HIDDEN;

/* Small string building into a caller-provided buffer (no stdio).  Each
 * returns the new end; none writes past lim. */
char *prim_puts(char *o, char *lim, const char *s) MTREC_HIDDEN;
char *prim_putu(char *o, char *lim, unsigned long v) MTREC_HIDDEN;
char *prim_putx(char *o, char *lim, unsigned long v) MTREC_HIDDEN;

/* Set from MTREC_QUIET: prim_say says nothing. */
extern int prim_quiet MTREC_HIDDEN;
/* "mtrec: " + the given pieces (ended by SAY_END) + newline, on stderr. */
void prim_say(const char *first, ...) __attribute__((sentinel)) MTREC_HIDDEN;
#define SAY_END ((const char *)0)

#endif
