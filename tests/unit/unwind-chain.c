/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-chain.c -- call-chain hops of different frame shapes, compiled
 * once per VARIANT with different flags (-O0/-O2/-Os, with and without
 * frame pointers, as a shared library, with clang) by build-unwind-test.sh.
 * Every hop uses its result after the call so that no call is a tail call.
 */
#include <alloca.h>
#include <stdlib.h>
#include "unwind-test.h"

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define V(name) CAT(name, VARIANT)
#define STR2(x) #x
#define STR(x) STR2(x)
#define NOINLINE __attribute__((noinline))

static volatile int sink;

/* hop_next lives in the test program; a shared-library variant reaches it
   through the PLT, which is the "calls through a shared library" case. */
static NOINLINE int V(plain)(const struct hop *h, int i, struct capture *cap)
{
	volatile int local[4] = { i, i, i, i };
	int r = hop_next(h, i + 1, cap);
	return r + local[1] - i;
}

/* A run-time sized frame: the CFA is RBP-based even with
   -fomit-frame-pointer. */
static NOINLINE int V(alloca_)(const struct hop *h, int i, struct capture *cap)
{
	char *p = alloca(16 + (size_t)h[i].arg * 8);
	p[0] = (char)i;
	sink = p[0];
	int r = hop_next(h, i + 1, cap);
	return r + (p[0] - (char)i);
}

/* A large fixed frame (sub with a 32-bit immediate). */
static NOINLINE int V(big)(const struct hop *h, int i, struct capture *cap)
{
	volatile char buf[70000];
	buf[0] = 1;
	buf[sizeof buf - 1] = 2;
	int r = hop_next(h, i + 1, cap);
	return r + buf[0] + buf[sizeof buf - 1] - 3;
}

static NOINLINE int V(rec)(int depth, const struct hop *h, int i, struct capture *cap)
{
	int r;
	if (depth <= 0)
		return hop_next(h, i + 1, cap);
	r = V(rec)(depth - 1, h, i, cap);
	sink = depth;
	return r;
}

/* Recursion, h[i].arg levels deep. */
static NOINLINE int V(recurse)(const struct hop *h, int i, struct capture *cap)
{
	int r = V(rec)(h[i].arg, h, i, cap);
	return r + sink * 0;
}

/* Arguments on the stack: pushes around the call, DW_CFA_GNU_args_size. */
static NOINLINE int V(many)(int a, int b, int c, int d, int e, int f, int g, int k, int l,
			    const struct hop *h, int i, struct capture *cap)
{
	int r = hop_next(h, i + 1, cap);
	return r + a + b + c + d + e + f + g + k + l;
}

static NOINLINE int V(stackargs)(const struct hop *h, int i, struct capture *cap)
{
	int r = V(many)(i, 1, 2, 3, 4, 5, 6, 7, -28 - i, h, i, cap);
	return r;
}

/* Through libc: qsort calls back into us. */
struct qs_ctx {
	const struct hop *h;
	int i;
	struct capture *cap;
	int r, done;
};
static __thread struct qs_ctx *qs_now;

static int V(cmp)(const void *a, const void *b)
{
	struct qs_ctx *q = qs_now;
	if (!q->done) {
		q->done = 1;
		q->r = hop_next(q->h, q->i + 1, q->cap);
	}
	return *(const int *)a - *(const int *)b;
}

static NOINLINE int V(callback)(const struct hop *h, int i, struct capture *cap)
{
	int v[2] = { 2, 1 };
	struct qs_ctx q = { h, i, cap, 0, 0 }, *saved = qs_now;
	qs_now = &q;
	qsort(v, 2, sizeof v[0], V(cmp));
	qs_now = saved;
	return q.r + v[0] - 1;
}

const struct chain_fns V(chain) = {
	STR(VARIANT), V(plain), V(alloca_), V(big), V(recurse), V(stackargs), V(callback),
};
