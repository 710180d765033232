/* shim.h -- the functions shim.c interposes, listed once (as glibc's
 * malloc-debug lists them in DEBUG_FN, heaptrack in HOOK).
 *
 * Each list takes a macro X(NAME, RETURN, (PARAMETERS)) and calls it once
 * per function.  From them come shim.c's table of the real functions, the
 * order they are resolved in, the GOT redirection's table (got.h) and a
 * compile-time check of each type against libc's declaration; track.c's
 * refusal of the malloc family as MTREC_TRACK names; and libmtrec.map must
 * export every name (t1030 checks it, and that nothing else is exported).
 * A new allocation function is one line in MTREC_MALLOC_FAMILY and its
 * wrapper in shim.c. */
#ifndef MTREC_SHIM_H
#define MTREC_SHIM_H

/* The allocation functions: recorded, and redirected in the objects the
 * preload does not reach (got.c).  In the order they are resolved: while
 * dlsym() looks them up it may call calloc and malloc, which are real
 * from the moment free is known (shim.c, ready()). */
#define MTREC_MALLOC_FAMILY(X) \
	X(calloc, void *, (size_t, size_t)) \
	X(malloc, void *, (size_t)) \
	X(free, void, (void *)) \
	X(realloc, void *, (void *, size_t)) \
	X(reallocarray, void *, (void *, size_t, size_t)) \
	X(memalign, void *, (size_t, size_t)) \
	X(posix_memalign, int, (void **, size_t, size_t)) \
	X(aligned_alloc, void *, (size_t, size_t)) \
	X(valloc, void *, (size_t)) \
	X(pvalloc, void *, (size_t))

/* The other functions of libc and the loader whose next definition the
 * shim calls: loading and unloading objects, the signals the recorder
 * keeps for itself, and exec (the trace's end before the image goes). */
#define MTREC_INTERPOSED(X) \
	X(dlclose, int, (void *)) \
	X(dlopen, void *, (const char *, int)) \
	X(sigaction, int, (int, const struct sigaction *, struct sigaction *)) \
	X(signal, sighandler_t, (int, sighandler_t)) \
	X(execve, int, (const char *, char *const[], char *const[])) \
	X(execv, int, (const char *, char *const[])) \
	X(execvp, int, (const char *, char *const[])) \
	X(execvpe, int, (const char *, char *const[], char *const[])) \
	X(fexecve, int, (int, char *const[], char *const[])) \
	X(execveat, int, (int, const char *, char *const[], char *const[], int)) \
	X(dl_iterate_phdr, int, (int (*)(struct dl_phdr_info *, size_t, void *), void *))

/* Exported without a next definition resolved by name: dlsym (libc's is
 * found by version), the execl family (built on execv and execve), and
 * the API of mtrec.h and of glibc's mcheck.h. */
#define MTREC_EXPORTED(N) \
	N(dlsym) N(execl) N(execlp) N(execle) \
	N(trace_on) N(trace_off) N(trace_mark) N(mtrace) N(muntrace) \
	N(mtrec_alloc) N(mtrec_free) N(mtrec_ref) N(mtrec_unref) \
	N(mtrec_attach) N(mtrec_detach) N(mtrec_ctl_now)

#endif
