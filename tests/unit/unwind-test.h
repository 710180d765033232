/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-test.h -- shared by the pieces of the unwind.c unit test.
 *
 * unwind-shim.c plays libmtrec.so: it is linked with recorder/unwind.c
 * into libuwshim.so, so the module skips the shim's frames exactly as it
 * skips the recorder's.  unwind-chain.c is compiled several times with
 * different flags (and once into a shared library) to make call chains of
 * every frame shape; unwind-test.c drives them and compares each walk with
 * glibc's backtrace().
 */
#ifndef UNWIND_TEST_H
#define UNWIND_TEST_H

#define CAP_MAX 64

struct capture {
	int max;		/* frames asked for */
	int bench;		/* leaf runs shim_bench(bench - 1, ...) instead */
	int no_backtrace;	/* libgcc's unwinder crashes on junk frames */
	long iters;
	double ns;
	void *caller;		/* __builtin_return_address(0) of the shim entry */
	int n;			/* mtrec_unwind's frames */
	void *ips[CAP_MAX];
	int nbt;		/* backtrace()'s frames, shim frames removed */
	void *bt[CAP_MAX + 32];
};

/* The shim ("libmtrec"). */
int shim_capture(struct capture *cap);
/* Time ITERS walks of MAX frames from here: MODE 0 ours with the cache,
   1 ours without it, 2 backtrace(); returns the frames per walk and stores
   the total nanoseconds in *NS. */
int shim_bench(int mode, int max, long iters, double *ns);
void shim_flush(void);
void shim_share(int on);	/* every thread on one memo of walks */

/* A hop of a call chain: does something shaped by its kind, then calls
   h[i + 1].fn, or shim_capture when that is NULL. */
struct hop;
typedef int (*hop_fn)(const struct hop *h, int i, struct capture *cap);
struct hop {
	hop_fn fn;
	int arg;
};

/* The last hop may also be a benchmark leaf (see unwind-test.c). */
int hop_next(const struct hop *h, int i, struct capture *cap);

struct chain_fns {
	const char *name;
	hop_fn plain, alloca_, big, recurse, stackargs, callback;
};

#endif
