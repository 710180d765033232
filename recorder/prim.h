/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
/* Whether ADDR lies in libmtrec.so's own mapping. */
int prim_in_recorder(const void *addr) MTREC_HIDDEN;
/* Write all of buf to fd, retrying on EINTR and short writes; 0 or -errno. */
int prim_write_all(int fd, const void *buf, size_t len) MTREC_HIDDEN;

/* System calls made straight to the kernel.  glibc's wrappers of open,
 * close, read, pwrite, fallocate and flock(LOCK_EX) are cancellation
 * points, and POSIX does not let malloc or free be one: a thread cancelled
 * inside the recorder would leave its locks held or a returned block
 * unrecorded.  Each returns what the system call returns, -1 with errno
 * set on failure, and retries on EINTR. */
int prim_open(const char *path, int flags, mode_t mode) MTREC_HIDDEN;
int prim_close(int fd) MTREC_HIDDEN;
ssize_t prim_read(int fd, void *buf, size_t len) MTREC_HIDDEN;
ssize_t prim_pwrite(int fd, const void *buf, size_t len, off_t off) MTREC_HIDDEN;
int prim_fallocate(int fd, off_t off, off_t len) MTREC_HIDDEN;
int prim_flock(int fd, int op) MTREC_HIDDEN;
/* Threads in this process (entries of /proc/self/task), or -1 when that
 * cannot be told. */
int prim_count_threads(void) MTREC_HIDDEN;
/* A full memory barrier in every running thread of the process, so that
 * one thread's store, barrier, load handshake pairs with the other
 * threads' plain store then load (membarrier(2), private expedited, or
 * the global command where that is missing): 0, or -1 when the kernel
 * has neither. */
int prim_membarrier(void) MTREC_HIDDEN;
/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t prim_monotonic_ns(void) MTREC_HIDDEN;
/* A description of errno value err that never allocates. */
const char *prim_strerror(int err) MTREC_HIDDEN;
/* An environment variable, ignored in set-uid/set-gid programs; in an
 * attached process, MALLOC_TRACE and MTREC_* come from mtrec attach's
 * settings alone (prim_attach_env). */
const char *prim_getenv(const char *name) MTREC_HIDDEN;
/* Take CONFIG ("NAME=VALUE\n" lines, copied) as those variables from now
 * on; 0, or -1 when it is too long. */
int prim_attach_env(const char *config) MTREC_HIDDEN;
/* Anonymous private memory that never comes from malloc; NULL on failure. */
void *prim_map_anon(size_t len) MTREC_HIDDEN;

/* A character of a label, name or path as it may stand in one line. */
static inline char prim_flat(char c)
{
	if (c == '\n' || c == '\r' || c == '\0')
		c = ' ';
	return c;
}

/* Small string building into a caller-provided buffer (no stdio).  Each
 * returns the new end; none writes past lim. */
char *prim_puts(char *o, char *lim, const char *s) MTREC_HIDDEN;
char *prim_putu(char *o, char *lim, unsigned long v) MTREC_HIDDEN;
char *prim_putx(char *o, char *lim, unsigned long v) MTREC_HIDDEN;

/* sigaction(2) as the next definition in the chain has it (the shim's
 * bootstrap finds it; the recorder calls it so as not to call its own). */
struct sigaction;
typedef int (*mtrec_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* The loader's list of objects, from libc's dl_iterate_phdr() -- never the
 * shim's exported one, which the recorder's own calls would reach too --
 * once prim_loader_init() was handed it (the shim's bootstrap does, a unit
 * test may); 0 before.  Holds the loader's lock around the callback, as
 * libc's does: the one primitive that takes a lock. */
struct dl_phdr_info;
typedef int (*prim_phdr_fn)(struct dl_phdr_info *, size_t, void *);
void prim_loader_init(int (*real)(prim_phdr_fn, void *)) MTREC_HIDDEN;
int prim_dl_iterate_phdr(prim_phdr_fn cb, void *data) MTREC_HIDDEN;
/* How deep this thread is in dl_iterate_phdr callbacks (its own or the
 * program's, through the shim): events made there take callers that need
 * no dladdr, whose lock a dlopen in another thread may hold while it
 * waits for the loader's. */
extern __thread int prim_loader_depth MTREC_HIDDEN;

/* Set from MTREC_QUIET: prim_say says nothing. */
extern int prim_quiet MTREC_HIDDEN;
/* "mtrec: " + the given pieces (ended by SAY_END) + newline, on stderr. */
void prim_say(const char *first, ...) __attribute__((sentinel)) MTREC_HIDDEN;
/* The same, even under MTREC_QUIET: a setting the recorder could not
 * take (MTREC_TRACK's syntax) is an error, not a message to silence. */
void prim_say_error(const char *first, ...) __attribute__((sentinel)) MTREC_HIDDEN;
#define SAY_END ((const char *)0)

#endif
