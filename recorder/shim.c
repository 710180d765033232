/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shim.c -- every symbol libmtrec.so exports: the interposed allocation
 * functions, the scoping API (mtrec.h, glibc's mtrace/muntrace), dlclose,
 * and the bootstrap of the real functions.
 *
 * Each wrapper takes its caller once, calls the real function, makes one
 * record call, and returns.  A free is recorded before the real free and an
 * allocation after the real allocation, so the file order follows the
 * program's (glibc 2.34+ does it the other way round and its traces show
 * impossible frees under threads). */
#include "got.h"
#include "rec.h"
#include "shim.h"
#include "track.h"

#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtrec.h"
/* This file defines the functions the header wraps in macros. */
#undef trace_on
#undef trace_off
#undef trace_mark
#undef mtrec_alloc
#undef mtrec_free
#undef mtrec_ref
#undef mtrec_unref

#define EXPORT __attribute__((visibility("default")))
#define CALLER() __builtin_return_address(0)

/* A request the real allocator refused, that the trace's address-space
 * reservation may have caused (RLIMIT_AS): the recorder gives it back and
 * the request is made again, so that the program never fails where it
 * would not without us. */
#define RETRY_IF_NO_MEMORY(p, size, again) \
	do { \
		if (unlikely((p) == NULL) && (size) != 0 && mtrec_out_of_memory(size)) \
			(p) = (again); \
	} while (0)

/* shim.h's types are libc's. */
#define SAME_TYPE(name, ret, params) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(name), ret params), \
		       "the type of " #name " in shim.h");
MTREC_MALLOC_FAMILY(SAME_TYPE)
MTREC_INTERPOSED(SAME_TYPE)

/* The functions the shim forwards to: the next definitions in the chain. */
#define REAL(name, ret, params) ret (*name) params;	/* NOLINT(bugprone-macro-parentheses): a declarator */
static struct {
	MTREC_MALLOC_FAMILY(REAL)
	MTREC_INTERPOSED(REAL)
	void *(*dlsym)(void *, const char *);
} mtrec_real;

/* ---- bootstrap -------------------------------------------------------
 * dlsym() itself may call calloc/malloc/free before the real functions are
 * known: those calls are served from this static pool and never recorded;
 * free() recognises the pool and ignores its blocks. */

static char boot_pool[64 * 1024] __attribute__((aligned(64)));
static size_t boot_used;

static int in_boot_pool(const void *p)
{
	return (const char *)p >= boot_pool && (const char *)p < boot_pool + sizeof(boot_pool);
}

static void *boot_alloc(size_t size, size_t align)
{
	size_t *hdr;
	size_t start;

	if (align < 16)
		align = 16;
	start = (boot_used + sizeof(size_t) + align - 1) & ~(align - 1);
	if (start + size > sizeof(boot_pool))
		return NULL;
	hdr = (size_t *)(boot_pool + start) - 1;
	*hdr = size;
	boot_used = start + size;
	return boot_pool + start;	/* static memory: already zero */
}

static size_t boot_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* libc's dlsym.  The recorder exports a dlsym of its own (below), which
 * its own calls would reach too: the real one is found by version. */
static void *(*real_dlsym(void))(void *, const char *)
{
	if (!mtrec_real.dlsym) {
		void *f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");

		if (!f)
			f = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
		mtrec_real.dlsym = (void *(*)(void *, const char *))f;
	}
	return mtrec_real.dlsym;
}

static void *next_sym(const char *name)
{
	return real_dlsym() ? mtrec_real.dlsym(RTLD_NEXT, name) : NULL;
}

/* Were we loaded before the object whose malloc is the next one (libc's),
 * as LD_PRELOAD (or linking against us) does?  dlopen() loads us after
 * it: the program's calls then go to libc's malloc, never through us, and
 * a trace would show only what the objects loaded after us allocate,
 * frees of memory it never saw allocated, and no word of why. */
static int loaded_first(void)
{
	struct link_map *ours = NULL, *next = NULL;
	Dl_info info;

	if (!mtrec_real.malloc ||
	    !dladdr1((void *)loaded_first, &info, (void **)&ours, RTLD_DL_LINKMAP) || !ours ||
	    !dladdr1((void *)mtrec_real.malloc, &info, (void **)&next, RTLD_DL_LINKMAP) || !next)
		return 1;	/* cannot tell: as before */
	for (const struct link_map *l = ours; l; l = l->l_next)
		if (l == next)
			return 1;
	return 0;
}

/* Loaded by dlopen() (mtrec attach's, or the program's own): nothing is
 * recorded until mtrec_attach() is called. */
static int dormant;

/* Resolve the real functions; returns once they are all known.  Threads
 * racing here all store the same values. */
static void bootstrap(void)
{
	static int state;	/* 0 not started, 1 running, 2 done */

	if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (__atomic_exchange_n(&state, 1, __ATOMIC_ACQ_REL) == 1)
		return;		/* recursive call from inside dlsym */
#define RESOLVE(name, ret, params) mtrec_real.name = next_sym(#name);
	MTREC_MALLOC_FAMILY(RESOLVE)
	MTREC_INTERPOSED(RESOLVE)
	prim_loader_init(mtrec_real.dl_iterate_phdr);
	__atomic_store_n(&state, 2, __ATOMIC_RELEASE);
	if (!loaded_first()) {
		dormant = 1;
		if (prim_getenv("MALLOC_TRACE"))
			prim_say("libmtrec.so was loaded after the program's malloc (by dlopen(), "
				 "not LD_PRELOAD): its calls never come here; not recording", SAY_END);
		return;
	}
	mtrec_init(mtrec_real.sigaction);
}

static inline int ready(void)
{
	if (unlikely(!mtrec_real.free))
		bootstrap();
	return mtrec_real.free != NULL;
}

/* ---- allocation functions ------------------------------------------- */

EXPORT void *malloc(size_t size)
{
	const void *caller = CALLER();
	void *p;

	if (unlikely(!ready()))
		return boot_alloc(size, 16);
	p = mtrec_real.malloc(size);
	RETRY_IF_NO_MEMORY(p, size, mtrec_real.malloc(size));
	if (mtrec_wants())
		mtrec_record.alloc(caller, p, size);
	return p;
}

EXPORT void free(void *p)
{
	const void *caller = CALLER();

	if (p == NULL || unlikely(in_boot_pool(p)))
		return;
	if (unlikely(!ready()))
		return;
	if (mtrec_wants())
		mtrec_record.free(caller, p);
	mtrec_real.free(p);
}

EXPORT void *calloc(size_t n, size_t size)
{
	const void *caller = CALLER();
	size_t bytes;
	void *p;

	if (unlikely(!ready()))
		return __builtin_mul_overflow(n, size, &bytes) ? NULL : boot_alloc(bytes, 16);
	p = mtrec_real.calloc(n, size);
	/* An overflowing request allocates nothing and, as in glibc, logs nothing. */
	if (__builtin_mul_overflow(n, size, &bytes))
		return p;
	RETRY_IF_NO_MEMORY(p, bytes, mtrec_real.calloc(n, size));
	if (mtrec_wants())
		mtrec_record.alloc(caller, p, bytes);
	return p;
}

static void *realloc_common(const void *caller, void *old, size_t size)
{
	struct mtrec_realloc r;
	void *p;

	if (unlikely(in_boot_pool(old))) {
		p = mtrec_real.malloc(size);
		if (p)
			memcpy(p, old, boot_size(old) < size ? boot_size(old) : size);
		if (mtrec_wants())
			mtrec_record.alloc(caller, p, size);
		return p;
	}
	if (!mtrec_wants()) {
		p = mtrec_real.realloc(old, size);
		RETRY_IF_NO_MEMORY(p, size, mtrec_real.realloc(old, size));
		return p;
	}
	mtrec_record.realloc_before(&r, caller, old);
	p = mtrec_real.realloc(old, size);
	RETRY_IF_NO_MEMORY(p, size, mtrec_real.realloc(old, size));
	mtrec_record.realloc_after(&r, caller, old, p, size);
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	const void *caller = CALLER();

	if (unlikely(!ready())) {
		void *p = boot_alloc(size, 16);
		if (p && old)
			memcpy(p, old, boot_size(old) < size ? boot_size(old) : size);
		return p;
	}
	return realloc_common(caller, old, size);
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	const void *caller = CALLER();
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;		/* nothing allocated, nothing logged */
		return NULL;
	}
	if (unlikely(!ready()))
		return NULL;
	return realloc_common(caller, old, bytes);
}

/* The memalign family: one helper, handed the user's caller, so that
 * valloc() is charged to the user's line and not to memalign(). */
static void *aligned_common(const void *caller, void *p, size_t size)
{
	if (mtrec_wants())
		mtrec_record.alloc(caller, p, size);
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	const void *caller = CALLER();

	if (unlikely(!ready()))
		return boot_alloc(size, align);
	void *p = mtrec_real.memalign(align, size);

	RETRY_IF_NO_MEMORY(p, size, mtrec_real.memalign(align, size));
	return aligned_common(caller, p, size);
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	const void *caller = CALLER();

	if (unlikely(!ready()))
		return boot_alloc(size, align);
	void *p = mtrec_real.aligned_alloc(align, size);

	RETRY_IF_NO_MEMORY(p, size, mtrec_real.aligned_alloc(align, size));
	return aligned_common(caller, p, size);
}

EXPORT void *valloc(size_t size)
{
	const void *caller = CALLER();

	if (unlikely(!ready()))
		return boot_alloc(size, (size_t)sysconf(_SC_PAGESIZE));
	void *p = mtrec_real.valloc(size);

	RETRY_IF_NO_MEMORY(p, size, mtrec_real.valloc(size));
	return aligned_common(caller, p, size);
}

EXPORT void *pvalloc(size_t size)
{
	const void *caller = CALLER();
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (unlikely(!ready()))
		return NULL;
	/* Log the page-rounded size really allocated; glibc 2.36 logs
	 * size + 1 rounded wrongly (0x1001 for pvalloc(100)). */
	return aligned_common(caller, mtrec_real.pvalloc(size),
			      size > SIZE_MAX - page ? size : (size + page - 1) & ~(page - 1));
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	const void *caller = CALLER();
	int err;

	if (unlikely(!ready())) {
		*out = boot_alloc(size, align);
		return *out ? 0 : ENOMEM;
	}
	err = mtrec_real.posix_memalign(out, align, size);
	if (unlikely(err == ENOMEM) && size && mtrec_out_of_memory(size))
		err = mtrec_real.posix_memalign(out, align, size);
	/* A bad alignment allocates nothing and logs nothing, as in glibc;
	 * running out of memory logs "+ (nil) SIZE" as glibc does. */
	if (err == 0 || err == ENOMEM)
		aligned_common(caller, err == 0 ? *out : NULL, size);
	return err;
}

/* ---- dynamic loading --------------------------------------------------
 * The dynamic linker looks at dlopen's and dlsym's caller (the return
 * address) to find the RUNPATH, $ORIGIN, the namespace and RTLD_NEXT's
 * place: their wrappers must leave it untouched.  On x86-64 they are
 * stubs that call dl_enter() and then jump (not call) to the real
 * function.  dl_enter() redirects the call slots of objects loaded since
 * the last look (got.c): at a dlsym() after a dlopen(), the plugin's
 * slots are redirected before its functions are called; a dlopen()
 * catches those of the previous one.  The code an object runs inside
 * dlopen() itself (its constructors) cannot be caught so.
 *
 * dlclose is wrapped in C: once a module is gone, its addresses may be
 * reused by another. */

static void *dl_fail(void)
{
	return NULL;
}

/* Which: 0 dlsym, 1 dlopen; the real function to jump to. */
MTREC_HIDDEN void *mtrec_dl_enter(int which);
MTREC_HIDDEN void *mtrec_dl_enter(int which)
{
	int saved = errno;
	void *f;

	if (ready()) {
		mtrec_loader_moved();
		mtrec_track_coverage(0);
	}
	f = which == 0 ? (void *)real_dlsym() : (void *)mtrec_real.dlopen;
	errno = saved;
	return f ? f : (void *)dl_fail;
}

#if defined(__x86_64__)
#define DL_STUB(name, which) \
	__asm__(".text\n" \
		".globl " #name "\n" \
		".type " #name ", @function\n" \
		".p2align 4\n" \
		#name ":\n" \
		".cfi_startproc\n" \
		"endbr64\n" \
		"pushq %rdi\n.cfi_adjust_cfa_offset 8\n" \
		"pushq %rsi\n.cfi_adjust_cfa_offset 8\n" \
		"pushq %rdx\n.cfi_adjust_cfa_offset 8\n" \
		"movl $" #which ", %edi\n" \
		"call mtrec_dl_enter\n" \
		"popq %rdx\n.cfi_adjust_cfa_offset -8\n" \
		"popq %rsi\n.cfi_adjust_cfa_offset -8\n" \
		"popq %rdi\n.cfi_adjust_cfa_offset -8\n" \
		"jmp *%rax\n" \
		".cfi_endproc\n" \
		".size " #name ", .-" #name "\n")
DL_STUB(dlsym, 0);
DL_STUB(dlopen, 1);
#endif

/* A dl_iterate_phdr() callback runs under the loader's lock.  One that
 * allocates must not have the recorder ask dladdr() about its caller:
 * dladdr takes the loader's other lock, which a dlopen() in another thread
 * holds while it waits for the first (a deadlock glibc's own tracer has
 * too).  The recorder's own calls go to libc's through prim.c, which
 * counts both (prim_loader_depth). */
EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	if (!mtrec_real.dl_iterate_phdr)
		bootstrap();
	return prim_dl_iterate_phdr(cb, data);	/* 0 while the recorder resolves its own functions */
}

EXPORT int dlclose(void *handle)
{
	int ret;

	if (!ready() || !mtrec_real.dlclose)
		return -1;
	ret = mtrec_real.dlclose(handle);
	mtrec_forget_callers();
	return ret;
}

/* ---- SIGBUS --------------------------------------------------------------
 * The recorder's SIGBUS handler (file.c) must stay in place when the
 * program installs its own (GlusterFS does, to print a backtrace): the
 * program's action is kept and run for every SIGBUS that is not ours, and
 * reported back as the current one.  sysv_signal, bsd_signal and sigset
 * are not wrapped. */

EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (!ready() || !mtrec_real.sigaction) {
		errno = ENOSYS;
		return -1;
	}
	if (sig == SIGBUS && mtrec_sigbus_action(act, old))
		return 0;
	return mtrec_real.sigaction(sig, act, old);
}

EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	if (!ready() || !mtrec_real.signal)
		return SIG_ERR;
	if (sig != SIGBUS)
		return mtrec_real.signal(sig, handler);
	/* glibc's signal(): BSD semantics, the signal blocked in its handler. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, sig);
	if (!mtrec_sigbus_action(&sa, &old))
		return mtrec_real.signal(sig, handler);
	return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
						 : old.sa_handler;
}

/* ---- exec ----------------------------------------------------------------
 * A new image does not run our exit code: the file is cut before the exec
 * (life.c), and recording goes on when the exec fails.  Every
 * function of the family is wrapped, since libc's own execvp and execl
 * call execve inside libc, where no wrapper sees them; the execl ones are
 * made into execv calls here. */

#define AROUND_EXEC(what, real, ...) \
	do { \
		int paused_, ret_, err_; \
		if (!ready() || !(real)) { \
			errno = ENOSYS; \
			return -1; \
		} \
		paused_ = mtrec_exec_begin(what); \
		ret_ = (real)(__VA_ARGS__); \
		err_ = errno; \
		mtrec_exec_end(paused_); \
		errno = err_; \
		return ret_; \
	} while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	AROUND_EXEC(path, mtrec_real.execve, path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	AROUND_EXEC(path, mtrec_real.execv, path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	AROUND_EXEC(file, mtrec_real.execvp, file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	AROUND_EXEC(file, mtrec_real.execvpe, file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	AROUND_EXEC("-", mtrec_real.fexecve, fd, argv, envp);
}

EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	AROUND_EXEC(path, mtrec_real.execveat, dirfd, path, argv, envp, flags);
}

/* The execl functions: their arguments are counted (the closing NULL
 * included), then copied into an array on the stack -- no allocation,
 * since a vfork child may call them. */

/* The size of the array: ARG, those AP holds, the NULL. */
static size_t execl_count(va_list *ap)
{
	size_t n = 2;

	/* started by the caller: the analyzer does not follow a va_list by pointer */
	while (va_arg(*ap, const char *) != NULL) // NOLINT(clang-analyzer-valist.Uninitialized)
		n++;
	return n;
}

/* Fills ARGV; AP is left after the NULL (execle's envp follows it). */
static void execl_copy(const char **argv, const char *arg, va_list *ap)
{
	size_t i = 0;

	argv[i++] = arg;
	while ((argv[i++] = va_arg(*ap, const char *)) != NULL) // NOLINT(clang-analyzer-valist.Uninitialized)
		;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	const char *argv[execl_count(&ap)];
	va_end(ap);
	va_start(ap, arg);
	execl_copy(argv, arg, &ap);
	va_end(ap);
	AROUND_EXEC(path, mtrec_real.execv, path, (char *const *)argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	const char *argv[execl_count(&ap)];
	va_end(ap);
	va_start(ap, arg);
	execl_copy(argv, arg, &ap);
	va_end(ap);
	AROUND_EXEC(file, mtrec_real.execvp, file, (char *const *)argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;

	va_start(ap, arg);
	const char *argv[execl_count(&ap)];
	va_end(ap);
	va_start(ap, arg);
	execl_copy(argv, arg, &ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	AROUND_EXEC(path, mtrec_real.execve, path, (char *const *)argv, envp);
}

/* ---- scoping API (mtrec.h) and glibc's mtrace()/muntrace() ------------ */

EXPORT void trace_on(void)
{
	if (ready())
		mtrec_start();
}

EXPORT void trace_off(void)
{
	if (ready())
		mtrec_stop_asked();
}

EXPORT void trace_mark(const char *label)
{
	if (ready())
		mtrec_mark(label ? label : "");
}

/* Allocators and reference counts the program tells us of (mtrec.h): a
 * release or an unreference is recorded like free, an allocation or a
 * reference like malloc's result, by the caller of these. */
EXPORT void mtrec_alloc(const char *kind, const void *ptr, size_t size)
{
	const void *caller = CALLER();

	if (ready() && mtrec_wants())
		mtrec_record_kind(caller, kind, '+', ptr, 1, size);
}

EXPORT void mtrec_free(const char *kind, const void *ptr)
{
	const void *caller = CALLER();

	if (ready() && mtrec_wants())
		mtrec_record_kind(caller, kind, '-', ptr, 0, 0);
}

EXPORT void mtrec_ref(const char *kind, const void *ptr)
{
	const void *caller = CALLER();

	if (ready() && mtrec_wants())
		mtrec_record_kind(caller, kind, 'r', ptr, 0, 0);
}

EXPORT void mtrec_unref(const char *kind, const void *ptr)
{
	const void *caller = CALLER();

	if (ready() && mtrec_wants())
		mtrec_record_kind(caller, kind, 'u', ptr, 0, 0);
}

EXPORT void mtrace(void)
{
	trace_on();
}

EXPORT void muntrace(void)
{
	trace_off();
}

/* ---- process life ----------------------------------------------------- */

/* The functions redirected in objects that bypass the preload (got.c):
 * each slot bound to the next definition in the chain, or not bound yet,
 * is made to point to ours. */
/* Our functions' own addresses.  Not "(void *)malloc": in a program
 * built without -fPIE that takes malloc's address (Debian's python3),
 * malloc's address everywhere, ours included, is the program's PLT entry
 * for it -- a slot made to point there calls itself for ever. */
#define OWN(name, ret, params) \
	extern __typeof__(name) own_##name __attribute__((alias(#name), visibility("hidden")));
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-attributes"	/* only its address is taken */
#endif
MTREC_MALLOC_FAMILY(OWN)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#define ONE(name, ret, params) + 1	/* NOLINT(bugprone-macro-parentheses): a term of a sum */
#define NREDIRECTS (0 MTREC_MALLOC_FAMILY(ONE))	/* then the functions MTREC_TRACK names */
#define REDIRECT(name, ret, params) { #name, (void *)own_##name, NULL, 0, 0 },
static struct mtrec_got_func redirects[NREDIRECTS + MTREC_TRACK_MAX] = {
	MTREC_MALLOC_FAMILY(REDIRECT)
};

/* Would the dynamic linker bind a lazy slot for NAME to ours?  Yes when
 * the first definition in the global scope is ours, or when the first
 * symbol of that name is only the canonical PLT entry of a program that
 * takes the function's address (undefined there: a call's lookup passes
 * it by, and finds ours). */
static int binds_to_ours(const char *name, const void *ours)
{
	const void *d = mtrec_real.dlsym(RTLD_DEFAULT, name);
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (d == ours)
		return 1;
	return d && dladdr1(d, &info, (void **)&sym, RTLD_DL_SYMENT) && sym &&
	       sym->st_shndx == SHN_UNDEF;
}

/* Objects never patched: the recorder, libc, the dynamic linker, and the
 * allocators the real functions live in. */
static const void *keep[NREDIRECTS + 3];

/* ATTACHED: loaded by mtrec attach, after libc, into a program that ran
 * without us.  No object's slot was bound to us then: every slot bound to
 * libc's function is redirected, libc's own among them (its strdup, its
 * fopen call malloc through them, as they call ours under the preload),
 * and a lazy stub wherever the dynamic linker would bind it to libc's. */
static void setup_redirects(int attached)
{
	int nkeep = 0;

	keep[nkeep++] = (const void *)setup_redirects;
	/* libc's definition, not the canonical address (a program's PLT
	 * entry when it takes the function's address) */
	keep[nkeep] = attached ? NULL : next_sym("dl_iterate_phdr");
	if (keep[nkeep])
		nkeep++;
	keep[nkeep++] = (const void *)&_r_debug;
	for (int i = 0; i < NREDIRECTS; i++) {
		redirects[i].real = next_sym(redirects[i].name);
		if (attached) {
			redirects[i].flags |= MTREC_GOT_OWN;
			if (redirects[i].real && real_dlsym() &&
			    mtrec_real.dlsym(RTLD_DEFAULT, redirects[i].name) == redirects[i].real)
				redirects[i].flags |= MTREC_GOT_LAZY;
			continue;
		}
		/* A slot not bound yet may be pointed at ours only when the
		 * dynamic linker would bind it to ours: nobody before us in
		 * the global scope (the program itself) defines the name. */
		if (real_dlsym() && binds_to_ours(redirects[i].name, redirects[i].ours))
			redirects[i].flags |= MTREC_GOT_LAZY;
		if (redirects[i].real)
			keep[nkeep++] = redirects[i].real;
	}
	if (mtrec_redirect_init(redirects, NREDIRECTS,
				mtrec_track_init(prim_getenv("MTREC_TRACK"), redirects + NREDIRECTS,
						 MTREC_TRACK_MAX),
				keep, nkeep))
		mtrec_track_coverage(1);
}

/* ---- mtrec attach PID, mtrec detach PID (share/attach.md) -------------
 * Called by the attacher through ptrace, in one thread of a program that
 * was started without us and loaded us with dlopen(); the others run.
 * Each answers "ok TEXT" or "no TEXT", which the attacher reads from here
 * and prints. */

static char attach_answer[512];
static int attach_busy, attach_inited, attach_on;

static const char *answer(const char *a, const char *b, unsigned long n, const char *c)
{
	char *o = attach_answer, *lim = attach_answer + sizeof(attach_answer) - 1;

	o = prim_puts(o, lim, a);
	if (b)
		o = prim_puts(o, lim, b);
	if (c) {
		o = prim_puts(o, lim, "; ");
		o = prim_putu(o, lim, n);
		o = prim_puts(o, lim, c);
	}
	*o = '\0';
	__atomic_store_n(&attach_busy, 0, __ATOMIC_RELEASE);
	return attach_answer;
}

static unsigned long slots_redirected(void)
{
	unsigned long n = 0;

	for (int i = 0; i < NREDIRECTS + MTREC_TRACK_MAX; i++)
		n += __atomic_load_n(&redirects[i].slots, __ATOMIC_RELAXED);
	return n;
}

EXPORT const char *mtrec_attach(const char *config)
{
	const char *why;
	unsigned long before;

	if (__atomic_exchange_n(&attach_busy, 1, __ATOMIC_ACQ_REL))
		return "no another mtrec attach or detach is at work in this process";
	if (!ready())
		return answer("no the recorder could not find libc's functions", NULL, 0, NULL);
	if (!dormant)
		return answer("no the recorder was preloaded in this process: use 'mtrec ctl PID on'",
			      NULL, 0, NULL);
	if (attach_on)
		return answer("ok already attached, recording into ", mtrec_attached_path(), 0, NULL);
	if (!attach_inited) {
		if (!config || prim_attach_env(config) < 0)
			return answer("no the settings are too long", NULL, 0, NULL);
		mtrec_init(mtrec_real.sigaction);
		pthread_atfork(mtrec_fork_prepare, mtrec_fork_parent, mtrec_fork_child);
		attach_inited = 1;
	}
	if ((why = mtrec_attach_begin()) != NULL)
		return answer("no ", why, 0, NULL);
	before = slots_redirected();
	if (attach_inited == 1) {
		setup_redirects(1);
		attach_inited = 2;
	} else {
		mtrec_got_resume();
		mtrec_loader_moved();
		mtrec_track_coverage(0);
	}
	attach_on = 1;
	return answer("ok recording into ", mtrec_attached_path(), slots_redirected() - before,
		      " call slots redirected");
}

EXPORT const char *mtrec_detach(void)
{
	unsigned n;

	if (__atomic_exchange_n(&attach_busy, 1, __ATOMIC_ACQ_REL))
		return "no another mtrec attach or detach is at work in this process";
	if (!attach_on)
		return answer(dormant ? "no not attached: recording is already off"
			      : "no the recorder was preloaded in this process: use 'mtrec ctl PID off'",
			      NULL, 0, NULL);
	/* The program's calls first: a call that still reaches us meanwhile
	 * is recorded, before "= End". */
	n = mtrec_got_restore();
	mtrec_attach_end();
	attach_on = 0;
	return answer("ok recording stopped in ", mtrec_attached_path(), n, " call slots given back");
}

/* mtrec ctl, when no allocation call of the program took its request in
 * a moment: it makes a thread call this (as mtrec attach does). */
EXPORT const char *mtrec_ctl_now(void)
{
	if (!ready())
		return "no the recorder could not find libc's functions";
	return mtrec_control_now() ? "ok request taken" : "no no request taken";
}

__attribute__((constructor)) static void shim_constructor(void)
{
	ready();
	if (dormant)
		return;		/* mtrec_attach() does the rest, if it comes */
	setup_redirects(0);
	mtrec_mark_session((int (*)(char *))next_sym("putenv"));
	mtrec_install_signal();
	pthread_atfork(mtrec_fork_prepare, mtrec_fork_parent, mtrec_fork_child);
}

static void fini_after_destructors(void *unused)
{
	(void)unused;
	mtrec_fini();
}

int __cxa_atexit(void (*func)(void *), void *arg, void *dso);

/* The dynamic linker runs the objects' destructors from one exit handler
 * (_dl_fini), ours among the first: a library's destructor that frees
 * what its constructor allocated (libnuma's masks, in ovsdb-server) came
 * after the trace's end, and its blocks showed as leaks.  A handler
 * registered now runs when _dl_fini is done, after every destructor, as
 * valgrind's leak check does; and at once when it cannot be registered.
 * Not atexit(): that names our object, whose own last destructor
 * (__cxa_finalize) would run the handler at once. */
__attribute__((destructor)) static void shim_destructor(void)
{
	if (__cxa_atexit(fini_after_destructors, NULL, NULL) != 0)
		mtrec_fini();
}
