/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-test.c -- unit test and microbenchmark of recorder/unwind.c.
 *
 * Every walk is compared with glibc's backtrace() (libgcc's DWARF unwinder)
 * taken at the same point: call chains mixing frames from -O0/-O2/-Os code
 * with and without frame pointers, alloca and big frames, stack arguments,
 * callbacks from libc, a shared library, deep recursion, several threads at
 * once, signal handlers (also on an alternate stack), code without unwind
 * information and corrupted return addresses.  Prints "# ..." diagnostics,
 * the timings, and a last line "PASS" or "FAIL N"; exits 0 only on PASS.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include "unwind-test.h"

#define NOINLINE __attribute__((noinline))

extern const struct chain_fns chain_o2nofp, chain_o2fp, chain_o0, chain_o0nofp, chain_os,
	chain_lib;
#ifdef HAVE_CLANG
extern const struct chain_fns chain_clang;
#endif

static const struct chain_fns *variants[] = {
	&chain_o2nofp, &chain_o2fp, &chain_o0, &chain_o0nofp, &chain_os, &chain_lib,
#ifdef HAVE_CLANG
	&chain_clang,
#endif
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])
#define NKINDS 6

static int failures;
static int checks;
static int verbose;

static hop_fn kind_fn(const struct chain_fns *v, int kind)
{
	hop_fn f[NKINDS] = { v->plain, v->alloca_, v->big, v->recurse, v->stackargs, v->callback };
	return f[kind];
}

static const char *kind_name[NKINDS] = { "plain", "alloca", "big", "recurse", "stackargs",
					 "callback" };

int hop_next(const struct hop *h, int i, struct capture *cap)
{
	if (h[i].fn)
		return h[i].fn(h, i, cap);
	if (cap->bench)
		return shim_bench(cap->bench - 1, cap->max, cap->iters, &cap->ns);
	return shim_capture(cap);
}

static void print_frames(const char *label, void *const *ips, int n)
{
	for (int i = 0; i < n; i++) {
		Dl_info di;
		const char *obj = "?", *sym = "?";
		if (dladdr(ips[i], &di)) {
			obj = di.dli_fname ? strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1
									: di.dli_fname : "?";
			sym = di.dli_sname ? di.dli_sname : "?";
		}
		printf("#   %s[%d] %p %s:%s\n", label, i, ips[i], obj, sym);
	}
}

/* Our frames must be exactly backtrace()'s, cut at MAX. */
static int verdict(const char *what, const struct capture *cap, int expect_n)
{
	int want = expect_n >= 0 ? expect_n : cap->nbt < cap->max ? cap->nbt : cap->max;
	int ok = cap->n == want && cap->n >= 1 && cap->ips[0] == cap->caller;

	for (int i = 0; ok && i < cap->n && expect_n < 0; i++)
		ok = cap->ips[i] == cap->bt[i];
	__atomic_add_fetch(&checks, 1, __ATOMIC_RELAXED);
	if (verbose && ok) {
		printf("# ok %s: %d frames\n", what, cap->n);
		print_frames("ours", cap->ips, cap->n);
	}
	if (!ok) {
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		printf("# FAIL %s: ours %d frames, backtrace %d, max %d, caller %p\n", what, cap->n,
		       cap->nbt, cap->max, cap->caller);
		print_frames("ours", cap->ips, cap->n);
		print_frames("backtrace", cap->bt, cap->nbt);
	}
	return ok;
}

static int run_chain(const char *what, const struct hop *h, int max)
{
	struct capture cap;
	memset(&cap, 0, sizeof cap);
	cap.max = max;
	hop_next(h, 0, &cap);
	return verdict(what, &cap, -1);
}

/* A reproducible random chain of up to LEN hops from every variant and
   kind; NAME gets its description. */
static void random_chain(unsigned *seed, struct hop *h, int len, char *name, size_t size)
{
	int n = 1 + (int)(rand_r(seed) % (unsigned)len), off = 0;
	for (int i = 0; i < n; i++) {
		int v = (int)(rand_r(seed) % NVARIANTS), k = (int)(rand_r(seed) % NKINDS);
		h[i].fn = kind_fn(variants[v], k);
		h[i].arg = (int)(rand_r(seed) % 6);
		if (off < (int)size - 40)
			off += snprintf(name + off, size - off, "%s%s.%s", i ? "," : "",
					variants[v]->name, kind_name[k]);
	}
	h[n].fn = NULL;
}

/* ------------------------------------------------------------ cases */

static void test_each_shape(void)
{
	for (int v = 0; v < NVARIANTS; v++)
		for (int k = 0; k < NKINDS; k++) {
			struct hop h[4] = { { kind_fn(variants[v], k), 3 }, { kind_fn(variants[v], k), 1 },
					    { kind_fn(variants[v], k), 0 }, { NULL, 0 } };
			char what[80];
			snprintf(what, sizeof what, "%s.%s x3", variants[v]->name, kind_name[k]);
			run_chain(what, h, CAP_MAX);
			run_chain(what, h + 2, CAP_MAX);	/* a single hop */
		}
}

static void test_recursion(void)
{
	for (int v = 0; v < NVARIANTS; v++) {
		struct hop h[2] = { { variants[v]->recurse, 40 }, { NULL, 0 } };
		char what[80];
		snprintf(what, sizeof what, "%s recursion 40", variants[v]->name);
		run_chain(what, h, CAP_MAX);
		h[0].arg = 100;		/* deeper than max: cut at max */
		snprintf(what, sizeof what, "%s recursion 100", variants[v]->name);
		run_chain(what, h, CAP_MAX);
		run_chain(what, h, 1);
		run_chain(what, h, 7);
	}
}

static void test_random(unsigned seed, int count)
{
	for (int t = 0; t < count; t++) {
		struct hop h[16];
		char name[600];
		random_chain(&seed, h, 12, name, sizeof name);
		run_chain(name, h, CAP_MAX);
	}
}

static void *thread_main(void *arg)
{
	test_random((unsigned)(uintptr_t)arg, 400);
	return NULL;
}

static void test_threads(void)
{
	pthread_t th[8];
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(1000 + i));
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	/* Again with one memo for all: a thread finds it held by another. */
	shim_share(1);
	for (int i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)(uintptr_t)(2000 + i % 2));
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	shim_share(0);
}

/* Signal frames: the handler walks back through __restore_rt into the
   code that raised the signal. */
static struct capture *sig_cap;
static const struct hop *sig_chain;

static void on_signal(int sig)
{
	(void)sig;
	hop_next(sig_chain, 0, sig_cap);
}

static NOINLINE int raise_hop(const struct hop *h, int i, struct capture *cap)
{
	(void)h;
	(void)i;
	(void)cap;
	raise(SIGUSR1);
	return 0;
}

static void test_signal(int altstack)
{
	struct sigaction sa;
	struct hop under[3] = { { chain_o2nofp.plain, 0 }, { chain_o0.alloca_, 2 }, { NULL, 0 } };
	struct hop outer[3] = { { chain_lib.recurse, 3 }, { raise_hop, 0 }, { NULL, 0 } };
	struct capture cap;
	stack_t ss = { 0 }, old;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = altstack ? SA_ONSTACK : 0;
	if (altstack) {
		ss.ss_size = 1 << 16;
		ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
		sigaltstack(&ss, &old);
	}
	sigaction(SIGUSR1, &sa, NULL);
	memset(&cap, 0, sizeof cap);
	cap.max = CAP_MAX;
	sig_cap = &cap;
	sig_chain = under;
	hop_next(outer, 0, &cap);
	verdict(altstack ? "signal handler on sigaltstack" : "signal handler", &cap, -1);
	if (altstack) {
		sigaltstack(&old, NULL);
		munmap(ss.ss_sp, ss.ss_size);
	}
}

/* Code without unwind information (as JIT code): the walk stops there. */
static void test_no_fde(void)
{
	static const unsigned char code[] = {
		0x48, 0x83, 0xec, 0x08,		/* sub $8, %rsp */
		0x48, 0x89, 0xf8,		/* mov %rdi, %rax */
		0x48, 0x89, 0xf7,		/* mov %rsi, %rdi */
		0xff, 0xd0,			/* call *%rax */
		0x48, 0x83, 0xc4, 0x08,		/* add $8, %rsp */
		0xc3,				/* ret */
	};
	struct capture cap;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*tramp)(int (*)(struct capture *), struct capture *);

	memcpy(page, code, sizeof code);
	mprotect(page, 4096, PROT_READ | PROT_EXEC);
	tramp = (int (*)(int (*)(struct capture *), struct capture *))page;
	memset(&cap, 0, sizeof cap);
	cap.max = CAP_MAX;
	tramp(shim_capture, &cap);
	verdict("code without FDE ends the walk", &cap, 1);
	munmap(page, 4096);
}

/* Corrupted return addresses must end the walk, never crash it. */
static uintptr_t bad_ra;

static NOINLINE int corrupt_hop(const struct hop *h, int i, struct capture *cap)
{
	void **fp = __builtin_frame_address(0);
	void *saved = fp[1];
	int r;

	fp[1] = (void *)bad_ra;
	r = hop_next(h, i + 1, cap);
	fp[1] = saved;
	__asm__ volatile("" ::: "memory");
	return r;
}

static void test_corrupt(void)
{
	volatile uintptr_t on_stack = 0;
	uintptr_t junk[] = {
		1, 0xffffffff81000000ul, 0x7fffffffffffull, (uintptr_t)&on_stack,
		(uintptr_t)&failures, (uintptr_t)printf + 1, (uintptr_t)test_corrupt + 3,
		(uintptr_t)corrupt_hop + 12, 0xdeadbeefcafe,
	};
	for (size_t j = 0; j < sizeof junk / sizeof junk[0]; j++) {
		struct hop h[3] = { { chain_o2nofp.plain, 0 }, { corrupt_hop, 0 }, { NULL, 0 } };
		struct capture cap;
		int ok;

		bad_ra = junk[j];
		memset(&cap, 0, sizeof cap);
		cap.max = CAP_MAX;
		cap.no_backtrace = 1;
		hop_next(h, 0, &cap);
		/* The caller is right, then comes the junk return address
		   (unless it is too small to be one) and whatever it leads to
		   within the stack. */
		ok = cap.n >= 1 && cap.ips[0] == cap.caller;
		if (ok && junk[j] >= 4096)
			ok = cap.n >= 2 && cap.ips[1] == (void *)junk[j];
		else if (ok)
			ok = cap.n == 1;
		checks++;
		if (!ok) {
			failures++;
			printf("# FAIL corrupted return address %#lx\n", (unsigned long)junk[j]);
			print_frames("ours", cap.ips, cap.n);
		}
	}
}

/* Two callers with the same frame, so that the walks below them start at
   the same stack pointer and read the same words but one: a walk that
   repeats the last one must still see that word. */
static NOINLINE int twin_a(const struct hop *h, int i, struct capture *cap)
{
	int r = hop_next(h, i + 1, cap);
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static NOINLINE int twin_b(const struct hop *h, int i, struct capture *cap)
{
	int r = hop_next(h, i + 1, cap);
	__asm__ volatile("" : "+r"(r));
	return r + 2;
}

static void test_repeat(void)
{
	for (int v = 0; v < NVARIANTS; v++) {
		struct hop h[5] = { { variants[v]->plain, 0 }, { twin_a, 0 }, { variants[v]->recurse, 6 },
				    { variants[v]->big, 0 }, { NULL, 0 } };
		char what[80];
		/* a a b b a a: each walk after the first of a pair repeats */
		for (int k = 0; k < 12; k++) {
			int b = (k / 2) % 2;
			h[1].fn = b ? twin_b : twin_a;
			snprintf(what, sizeof what, "%s repeated, twin_%c, max %d", variants[v]->name,
				 b ? 'b' : 'a', k < 6 ? CAP_MAX : 9);
			run_chain(what, h, k < 6 ? CAP_MAX : 9);
		}
	}
}

static void test_flush(void)
{
	struct hop h[3] = { { chain_o2nofp.recurse, 5 }, { chain_o0.alloca_, 1 }, { NULL, 0 } };
	shim_flush();
	run_chain("after flush", h, CAP_MAX);
	run_chain("after flush, cached", h, CAP_MAX);
}

/* ------------------------------------------------------------ benchmark */

/* ns per frame of one walk from a 40-deep recursion, the best of 7 runs
   (the machine may be shared). */
static double bench(int mode, long iters, int *frames)
{
	struct hop h[2] = { { chain_o2nofp.recurse, 40 }, { NULL, 0 } };
	double best = 1e300;
	for (int run = 0; run < 7; run++) {
		struct capture cap;
		memset(&cap, 0, sizeof cap);
		cap.max = CAP_MAX;
		cap.bench = mode + 1;
		cap.iters = iters;
		*frames = hop_next(h, 0, &cap);
		if (cap.ns / iters / *frames < best)
			best = cap.ns / iters / *frames;
	}
	return best;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *first_walk(void *arg)
{
	struct hop h[2] = { { chain_o2nofp.plain, 0 }, { NULL, 0 } };
	struct capture cap;
	double t0;

	memset(&cap, 0, sizeof cap);
	cap.max = CAP_MAX;
	cap.no_backtrace = 1;
	t0 = now_us();
	hop_next(h, 0, &cap);
	*(double *)arg = now_us() - t0;
	return NULL;
}

static void run_bench(void)
{
	pthread_t th;
	double first = 0;

	int f0, f1, f2;
	double hit = bench(0, 50000, &f0);
	double miss = bench(1, 1000, &f1);
	double bt = bench(2, 5000, &f2);
	printf("# bench: mtrec_unwind cache hit  %6.2f ns/frame (%d frames)\n", hit, f0);
	printf("# bench: mtrec_unwind cache miss %6.2f ns/frame (%d frames)\n", miss, f1);
	printf("# bench: glibc backtrace()       %6.2f ns/frame (%d frames)\n", bt, f2);
	printf("# bench: backtrace/hit ratio %.1f\n", bt / hit);
	/* With the rules cached, what is left is finding the new stack. */
	pthread_create(&th, NULL, first_walk, &first);
	pthread_join(th, NULL);
	printf("# bench: first walk in a new thread (finds its stack) %.1f us\n", first);
}

int main(int argc, char **argv)
{
	int only_bench = argc > 1 && strcmp(argv[1], "--bench") == 0;

	verbose = getenv("UNWIND_TEST_VERBOSE") != NULL;

	if (!only_bench) {
		test_each_shape();
		test_recursion();
		test_random(1, 500);
		test_threads();
		test_signal(0);
		test_signal(1);
		test_no_fde();
		test_corrupt();
		test_repeat();
		test_flush();
		printf("# %d checks, %d failed\n", checks, failures);
	}
	if (only_bench || (argc > 1 && strcmp(argv[1], "--with-bench") == 0))
		run_bench();
	if (failures)
		printf("FAIL %d\n", failures);
	else
		printf("PASS\n");
	return failures != 0;
}
