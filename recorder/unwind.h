/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind.h -- call stacks for MTREC_DEPTH > 1: a DWARF-CFI stack walker that
 * runs inside malloc (no allocation, no lock on the fast path, no libgcc_s or
 * libunwind), with a lock-free cache of per-address frame rules.  x86-64 only;
 * elsewhere mtrec_unwind returns 0.  The recorder's own frames are skipped
 * through their CFI too, so rec-*.c must keep unwind tables (the x86-64
 * default).  Implemented in unwind.c.
 */
#ifndef MTREC_UNWIND_H
#define MTREC_UNWIND_H

/* Optional: set up the rule cache and this library's own address range now
   rather than on the first mtrec_unwind call; idempotent and thread-safe. */
void mtrec_unwind_init(void);

/* Fill ips[0..max) with the return addresses of the calling thread's stack,
   innermost first, leaving out every frame whose return address lies in
   libmtrec.so itself (the leading ones, and a tracked function's wrapper
   further up); returns how many (0 when max <= 0).  Never allocates,
   never crashes on bad frames: the walk just stops there. */
int mtrec_unwind(void **ips, int max);

/* What mtrec_unwind_known says of a walk beyond its frames. */
struct mtrec_unwind_known {
	const void *tag;	/* the tag an earlier walk with the same frames got */
	void *memo, *rec;	/* for mtrec_unwind_tag */
	unsigned seq;
};

/* As mtrec_unwind; when the frames are those of an earlier walk of this
   thread that mtrec_unwind_tag gave a tag, K->tag is that tag and IPS is
   left as it was (the caller knows the frames by their tag).  Otherwise
   K->tag is NULL, and mtrec_unwind_tag(K, tag) gives these frames a tag,
   a pointer that stays meaningful until mtrec_unwind_flush. */
int mtrec_unwind_known(void **ips, int max, struct mtrec_unwind_known *k);
void mtrec_unwind_tag(const struct mtrec_unwind_known *k, const void *tag);

/* Forget every tag, not the rules (a forked child, whose stack table
   starts anew, keeps the warm rule cache: its first walk stays shallow). */
void mtrec_unwind_forget_tags(void);

/* Forget every cached frame rule (call after code was unmapped, e.g. after
   dlclose, so that new code at the same address is not walked with old
   rules) and every tag.  Safe while other threads walk. */
void mtrec_unwind_flush(void);

#ifdef MTREC_UNWIND_TEST
/* Test hook: 0 turns the rule cache off (every frame is a cache miss). */
void mtrec_unwind_test_cache(int on);
/* Test hook: 1 makes every thread use the same memo of walks (as when
   there are more threads than memos), 0 gives each its own again. */
void mtrec_unwind_test_share(int on);
#endif

#endif
