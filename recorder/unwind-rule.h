/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-rule.h -- what the stack walker (unwind.c) keeps of a code
 * address: a frame rule, worked out from the object's call-frame
 * information by unwind-cfi.c.  Private to the two. */
#ifndef MTREC_UNWIND_RULE_H
#define MTREC_UNWIND_RULE_H

#include <stdint.h>

/* ------------------------------------------------------------ frame rules
 *
 * A rule is 34 bits:
 *   bits  0..1   kind
 *   bit   2      CFA is RBP+off (else RSP+off)
 *   bits  3..9   RBP slot s, signed: 0 unchanged, BP_LOST unknown, else
 *                RBP was saved at CFA + 8*s
 *   bits 10..33  CFA offset in bytes, signed
 * The cache word puts the address tag above it (see cache_get).
 */
enum { K_EMPTY = 0, K_FRAME = 1, K_STOP = 2, K_SIGNAL = 3 };
#define RULE_KIND      3ull
#define RULE_CFA_RBP   4ull
#define RULE_BITS      34
#define RULE_MASK      ((1ull << RULE_BITS) - 1)
#define BP_LOST        (-64)
#define RULE_NOCACHE   (1ull << 63)	/* compute_rule: do not cache this */
#define OFF_MAX        ((1 << 23) - 1)

static inline uint64_t rule_make(int cfa_rbp, int bp_slot, int64_t off)
{
	return K_FRAME | (cfa_rbp ? RULE_CFA_RBP : 0) |
	       ((uint64_t)(bp_slot & 0x7f) << 3) |
	       (((uint64_t)off & 0xffffff) << 10);
}

static inline int rule_bp_slot(uint64_t r)
{
	return (int)((int64_t)(r << 54) >> 57);
}

static inline int64_t rule_off(uint64_t r)
{
	return (int64_t)(r << (64 - RULE_BITS)) >> (64 - RULE_BITS + 10);
}

/* The frame rule for code address KEY (a return address minus one, or an
 * interrupted instruction), worked out from scratch from the .eh_frame of
 * the object that holds it: K_STOP where the walk cannot go on, K_SIGNAL
 * for glibc's signal return, RULE_NOCACHE set where no object is mapped
 * (a later dlopen may map one). */
uint64_t mtrec_unwind_rule(uintptr_t key) __attribute__((visibility("hidden")));

#endif
