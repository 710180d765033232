/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind.c -- the stack walker behind MTREC_DEPTH call stacks.
 *
 * Debian builds everything with -fomit-frame-pointer, so following the RBP
 * chain gives garbage; glibc's backtrace() goes through libgcc_s, which
 * allocates and locks.  This walker reads the DWARF call-frame information
 * of .eh_frame instead, in the manner of libunwind's x86-64 "fast trace"
 * that heaptrack relies on:
 *
 *   - for an instruction address, find its FDE through _dl_find_object
 *     (glibc 2.35+, lock-free) and the binary-search table of the object's
 *     .eh_frame_hdr, run the CIE and FDE instructions up to that address,
 *     and reduce the result to a frame rule: CFA = RSP+off or RBP+off, the
 *     return address at CFA-8, RBP saved at CFA+k or unchanged;
 *   - keep the rule in a direct-mapped table of 64-bit words, each holding
 *     the address tag and the rule together, so one atomic load gives both
 *     and a torn entry cannot exist; misses and "cannot unwind here" are
 *     cached alike;
 *   - a walk is then a table load and one or two stack loads per frame.
 *
 * Every stack read is checked against the mapping that holds the stack
 * pointer (read once per thread from /proc/self/maps with raw syscalls);
 * anything unexpected ends the walk early instead of guessing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unwind.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#if defined(__x86_64__) && defined(__linux__)

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

/* ------------------------------------------------------------ rule cache
 *
 * 2^17 words (1 MiB of address space, touched as used).  The index mixes the
 * address so that libraries loaded at equal offsets modulo 128 KiB do not
 * collide; the tag is the address shifted right by the index width, and
 * (index, tag) determine the address, so an equal tag is an exact hit.
 * Addresses at or above 2^47 (never code in a 4-level address space) are not
 * cached.  Writers race benignly: the last store wins, every store is whole.
 */
#define CACHE_ORDER 17
#define CACHE_SIZE  (1ul << CACHE_ORDER)

static uint64_t *rule_cache;
static int cache_off;			/* test hook */
static uintptr_t self_lo, self_len;	/* this library's mapping */
static int init_done;

static inline uint64_t cache_get(uint64_t *cache, uintptr_t key)
{
	size_t idx = (key ^ (key >> CACHE_ORDER)) & (CACHE_SIZE - 1);
	uint64_t e = __atomic_load_n(&cache[idx], __ATOMIC_RELAXED);
	if ((e >> RULE_BITS) == (key >> CACHE_ORDER) && (e & RULE_KIND) != K_EMPTY)
		return e & RULE_MASK;
	return K_EMPTY;
}

static inline void cache_put(uint64_t *cache, uintptr_t key, uint64_t rule)
{
	size_t idx = (key ^ (key >> CACHE_ORDER)) & (CACHE_SIZE - 1);
	__atomic_store_n(&cache[idx], (uint64_t)(key >> CACHE_ORDER) << RULE_BITS | rule,
			 __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ DWARF reading
 *
 * All reads of unwind data go through a cursor bounded by the object's
 * mapping (or the entry being read), so corrupt tables end in "stop", not
 * in a fault.
 */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_fixed(struct cur *c, size_t n)
{
	uint64_t v = 0;
	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, n);	/* little-endian */
	c->p += n;
	return v;
}

static uint8_t rd_u8(struct cur *c)
{
	return (uint8_t)rd_fixed(c, 1);
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		uint8_t b = rd_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = rd_u8(c);
		if (c->bad)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* DW_EH_PE_* pointer encodings (LSB Core, "DWARF Extensions"). */
enum {
	PE_absptr = 0x00, PE_uleb128 = 0x01, PE_udata2 = 0x02, PE_udata4 = 0x03,
	PE_udata8 = 0x04, PE_sleb128 = 0x09, PE_sdata2 = 0x0a, PE_sdata4 = 0x0b,
	PE_sdata8 = 0x0c, PE_pcrel = 0x10, PE_datarel = 0x30, PE_omit = 0xff,
};

/* Read a pointer encoded as ENC; pcrel is relative to where it is stored,
   datarel to DATA (the .eh_frame_hdr).  The indirect bit is ignored: only
   personality pointers use it, and their value is never needed. */
static uintptr_t rd_encoded(struct cur *c, uint8_t enc, uintptr_t data)
{
	uintptr_t at = (uintptr_t)c->p, v;
	if (enc == PE_omit)
		return 0;
	switch (enc & 0x0f) {
	case PE_absptr:
	case PE_udata8:
	case PE_sdata8:  v = rd_fixed(c, 8); break;
	case PE_uleb128: v = rd_uleb(c); break;
	case PE_sleb128: v = (uintptr_t)rd_sleb(c); break;
	case PE_udata2:  v = (uint16_t)rd_fixed(c, 2); break;
	case PE_sdata2:  v = (uintptr_t)(int64_t)(int16_t)rd_fixed(c, 2); break;
	case PE_udata4:  v = (uint32_t)rd_fixed(c, 4); break;
	case PE_sdata4:  v = (uintptr_t)(int64_t)(int32_t)rd_fixed(c, 4); break;
	default:         c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0:          break;
	case PE_pcrel:   v += at; break;
	case PE_datarel: v += data; break;
	default:         c->bad = 1; return 0;	/* textrel, funcrel, aligned */
	}
	return v;
}

/* ------------------------------------------------------------ FDE lookup */

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z, signal;
	struct cur insns;
};

struct fde {
	uintptr_t pc_begin, pc_end;
	struct cie cie;
	struct cur insns;
};

/* Length and start of the entry at C (CIE or FDE); its end goes in *END. */
static int entry_header(struct cur *c, const uint8_t **end, int *is64)
{
	uint64_t len = rd_fixed(c, 4);
	*is64 = len == 0xffffffffu;
	if (*is64)
		len = rd_fixed(c, 8);
	if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p))
		return -1;
	*end = c->p + len;
	return 0;
}

static int parse_cie(const uint8_t *at, const uint8_t *limit, struct cie *cie)
{
	struct cur c = { at, limit, 0 };
	const uint8_t *end, *aug, *augend = NULL;
	int is64;
	uint8_t version;

	if (entry_header(&c, &end, &is64) < 0)
		return -1;
	c.end = end;
	if (rd_fixed(&c, is64 ? 8 : 4) != 0)	/* CIE id is 0 in .eh_frame */
		return -1;
	version = rd_u8(&c);
	if (version != 1 && version != 3 && version != 4)
		return -1;
	aug = c.p;
	while (rd_u8(&c) != 0)
		if (c.bad)
			return -1;
	if (version == 4 && (rd_u8(&c) != 8 || rd_u8(&c) != 0))
		return -1;	/* address size, segment selector size */
	cie->code_align = rd_uleb(&c);
	cie->data_align = rd_sleb(&c);
	cie->ra_reg = version == 1 ? rd_u8(&c) : rd_uleb(&c);
	cie->fde_enc = PE_absptr;
	cie->has_z = aug[0] == 'z';
	cie->signal = 0;
	if (cie->has_z) {
		uint64_t n = rd_uleb(&c);
		if (c.bad || n > (uint64_t)(c.end - c.p))
			return -1;
		augend = c.p + n;
		for (const uint8_t *a = aug + 1; *a && !c.bad; a++) {
			uint8_t penc;
			if (*a == 'R') {
				cie->fde_enc = rd_u8(&c);
			} else if (*a == 'L') {
				rd_u8(&c);
			} else if (*a == 'P') {
				penc = rd_u8(&c);
				rd_encoded(&c, penc, 0);
			} else if (*a == 'S') {
				cie->signal = 1;
			} else if (*a != 'B' && *a != 'G') {
				/* Unknown: its data (and what follows) cannot be
				   parsed; fine if the FDE encoding is known. */
				if (!strchr((const char *)aug, 'R') ||
				    strchr((const char *)aug, 'R') > (const char *)a)
					return -1;
				break;
			}
		}
		if (c.bad)
			return -1;
		c.p = augend;
	} else if (aug[0] != 0) {
		return -1;	/* e.g. GCC 2's "eh" */
	}
	if (c.bad || cie->code_align == 0)
		return -1;
	cie->insns = (struct cur){ c.p, end, 0 };
	return 0;
}

/* The bounds of the mapping that holds the object's .eh_frame_hdr, in
   *START and *LIMIT.  glibc describes a main program whose segments are
   not contiguous (a gap between two PT_LOADs: binutils up to 2.35 left
   one before the data, and so does -z max-page-size=0x10000) segment by
   segment, so its FO covers only the text the address lies in, not the
   read-only segment the unwind tables are in: that segment is then asked
   for on its own (lock-free as well). */
static int eh_bounds(const struct dl_find_object *fo, const uint8_t **start,
		     const uint8_t **limit)
{
	const uint8_t *hdr = fo->dlfo_eh_frame;
	struct dl_find_object seg;

	*start = fo->dlfo_map_start;
	*limit = fo->dlfo_map_end;
	if (hdr >= *start && hdr < *limit)
		return 0;
	if (_dl_find_object((void *)hdr, &seg) != 0 || seg.dlfo_link_map != fo->dlfo_link_map)
		return -1;
	*start = seg.dlfo_map_start;
	*limit = seg.dlfo_map_end;
	return hdr >= *start && hdr < *limit ? 0 : -1;
}

/* Find the FDE covering PC through the object's .eh_frame_hdr search
   table.  Only the table encoding every linker emits (datarel sdata4
   pairs, sorted) is used; without it the object has no usable unwind
   data for us. */
static int find_fde(uintptr_t pc, struct fde *out, const struct dl_find_object *fo)
{
	const uint8_t *hdr = fo->dlfo_eh_frame, *start, *limit;
	struct cur c;
	uint8_t version, ptr_enc, count_enc, table_enc;
	uintptr_t count;
	const int32_t *tab;
	size_t lo, hi;
	const uint8_t *fde, *end, *cie_at;
	int is64;

	if (eh_bounds(fo, &start, &limit) < 0)
		return -1;
	c = (struct cur){ hdr, limit, 0 };
	version = rd_u8(&c);
	ptr_enc = rd_u8(&c);
	count_enc = rd_u8(&c);
	table_enc = rd_u8(&c);
	if (version != 1 || table_enc != (PE_datarel | PE_sdata4) || count_enc == PE_omit)
		return -1;
	rd_encoded(&c, ptr_enc, (uintptr_t)hdr);
	count = rd_encoded(&c, count_enc, (uintptr_t)hdr);
	if (c.bad || count == 0 || ((uintptr_t)c.p & 3) ||
	    count > (uintptr_t)(limit - c.p) / 8)
		return -1;
	tab = (const int32_t *)c.p;

	/* The last entry whose initial location is <= pc. */
	if ((uintptr_t)hdr + (intptr_t)tab[0] > pc)
		return -1;
	lo = 0;
	hi = count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)tab[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	fde = hdr + tab[2 * lo + 1];
	if (fde < start || fde >= limit)
		return -1;

	c = (struct cur){ fde, limit, 0 };
	if (entry_header(&c, &end, &is64) < 0)
		return -1;
	c.end = end;
	cie_at = c.p;
	{
		uint64_t id = rd_fixed(&c, is64 ? 8 : 4);
		if (c.bad || id == 0 || id > (uintptr_t)(cie_at - start))
			return -1;
		cie_at -= id;
	}
	if (parse_cie(cie_at, limit, &out->cie) < 0)
		return -1;
	out->pc_begin = rd_encoded(&c, out->cie.fde_enc, (uintptr_t)hdr);
	out->pc_end = out->pc_begin + rd_encoded(&c, out->cie.fde_enc & 0x0f, 0);
	if (out->cie.has_z) {
		uint64_t n = rd_uleb(&c);
		if (n > (uint64_t)(c.end - c.p))
			return -1;
		c.p += n;
	}
	if (c.bad || pc < out->pc_begin || pc >= out->pc_end)
		return -1;
	out->insns = c;
	return 0;
}

/* ------------------------------------------------------------ CFA program
 *
 * Only what a frame rule needs is tracked: the CFA, RBP (DWARF register 6),
 * RSP (7, which must stay "the CFA") and the return-address column (16).
 */
enum { R_SAME, R_OFFSET, R_UNDEF, R_OTHER };
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA  16
#define STATE_DEPTH 8

struct row {
	uint64_t cfa_reg;
	int64_t cfa_off;
	int cfa_expr;
	int bp_how, ra_how, sp_how;
	int64_t bp_off, ra_off;
};

static void set_reg(struct row *r, uint64_t reg, int how, int64_t off)
{
	if (reg == REG_RBP) {
		r->bp_how = how;
		r->bp_off = off;
	} else if (reg == REG_RA) {
		r->ra_how = how;
		r->ra_off = off;
	} else if (reg == REG_RSP) {
		r->sp_how = how;
	}
}

static void restore_reg(struct row *r, const struct row *init, uint64_t reg)
{
	if (reg == REG_RBP) {
		r->bp_how = init->bp_how;
		r->bp_off = init->bp_off;
	} else if (reg == REG_RA) {
		r->ra_how = init->ra_how;
		r->ra_off = init->ra_off;
	} else if (reg == REG_RSP) {
		r->sp_how = init->sp_how;
	}
}

/* Run the instructions in C on ROW, starting at code address LOC, until
   the row for TARGET is known.  INIT is the row after the CIE's initial
   instructions (NULL while running those).  Returns -1 on anything not
   understood. */
static int run_cfa(struct cur c, const struct cie *cie, uintptr_t loc, uintptr_t target,
		   struct row *row, const struct row *init)
{
	struct row stack[STATE_DEPTH];
	int depth = 0;

	while (c.p < c.end) {
		uint8_t op = rd_u8(&c);
		uint64_t reg, delta;
		int64_t off;

		switch (op >> 6) {
		case 1:				/* DW_CFA_advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 2:				/* DW_CFA_offset */
			reg = op & 0x3f;
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			set_reg(row, reg, R_OFFSET, off);
			continue;
		case 3:				/* DW_CFA_restore */
			if (!init)
				return -1;
			restore_reg(row, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00:			/* DW_CFA_nop */
			break;
		case 0x01:			/* DW_CFA_set_loc */
			loc = rd_encoded(&c, cie->fde_enc, 0);
			if (c.bad)
				return -1;
			if (loc > target)
				return 0;
			break;
		case 0x02:			/* DW_CFA_advance_loc1 */
			delta = rd_fixed(&c, 1);
			goto advance;
		case 0x03:			/* DW_CFA_advance_loc2 */
			delta = rd_fixed(&c, 2);
			goto advance;
		case 0x04:			/* DW_CFA_advance_loc4 */
			delta = rd_fixed(&c, 4);
			goto advance;
		case 0x05:			/* DW_CFA_offset_extended */
			reg = rd_uleb(&c);
			off = (int64_t)rd_uleb(&c) * cie->data_align;
			set_reg(row, reg, R_OFFSET, off);
			break;
		case 0x06:			/* DW_CFA_restore_extended */
			reg = rd_uleb(&c);
			if (!init)
				return -1;
			restore_reg(row, init, reg);
			break;
		case 0x07:			/* DW_CFA_undefined */
			set_reg(row, rd_uleb(&c), R_UNDEF, 0);
			break;
		case 0x08:			/* DW_CFA_same_value */
			set_reg(row, rd_uleb(&c), R_SAME, 0);
			break;
		case 0x09:			/* DW_CFA_register */
			reg = rd_uleb(&c);
			rd_uleb(&c);
			set_reg(row, reg, R_OTHER, 0);
			break;
		case 0x0a:			/* DW_CFA_remember_state */
			if (depth == STATE_DEPTH)
				return -1;
			stack[depth++] = *row;
			break;
		case 0x0b:			/* DW_CFA_restore_state (CFA included, as in libgcc) */
			if (depth == 0)
				return -1;
			*row = stack[--depth];
			break;
		case 0x0c:			/* DW_CFA_def_cfa */
			row->cfa_reg = rd_uleb(&c);
			row->cfa_off = (int64_t)rd_uleb(&c);
			row->cfa_expr = 0;
			break;
		case 0x0d:			/* DW_CFA_def_cfa_register */
			row->cfa_reg = rd_uleb(&c);
			row->cfa_expr = 0;
			break;
		case 0x0e:			/* DW_CFA_def_cfa_offset */
			row->cfa_off = (int64_t)rd_uleb(&c);
			break;
		case 0x0f:			/* DW_CFA_def_cfa_expression */
			delta = rd_uleb(&c);
			if (delta > (uint64_t)(c.end - c.p))
				return -1;
			c.p += delta;
			row->cfa_expr = 1;
			break;
		case 0x10:			/* DW_CFA_expression */
		case 0x16:			/* DW_CFA_val_expression */
			reg = rd_uleb(&c);
			delta = rd_uleb(&c);
			if (delta > (uint64_t)(c.end - c.p))
				return -1;
			c.p += delta;
			set_reg(row, reg, R_OTHER, 0);
			break;
		case 0x11:			/* DW_CFA_offset_extended_sf */
			reg = rd_uleb(&c);
			off = rd_sleb(&c) * cie->data_align;
			set_reg(row, reg, R_OFFSET, off);
			break;
		case 0x12:			/* DW_CFA_def_cfa_sf */
			row->cfa_reg = rd_uleb(&c);
			row->cfa_off = rd_sleb(&c) * cie->data_align;
			row->cfa_expr = 0;
			break;
		case 0x13:			/* DW_CFA_def_cfa_offset_sf */
			row->cfa_off = rd_sleb(&c) * cie->data_align;
			break;
		case 0x14:			/* DW_CFA_val_offset */
			set_reg(row, rd_uleb(&c), R_OTHER, 0);
			rd_uleb(&c);
			break;
		case 0x15:			/* DW_CFA_val_offset_sf */
			set_reg(row, rd_uleb(&c), R_OTHER, 0);
			rd_sleb(&c);
			break;
		case 0x2e:			/* DW_CFA_GNU_args_size */
			rd_uleb(&c);
			break;
		case 0x2f:			/* DW_CFA_GNU_negative_offset_extended */
			reg = rd_uleb(&c);
			off = -(int64_t)rd_uleb(&c) * cie->data_align;
			set_reg(row, reg, R_OFFSET, off);
			break;
		default:
			return -1;
		}
		if (c.bad)
			return -1;
		continue;
advance:
		if (c.bad)
			return -1;
		loc += delta * cie->code_align;
		if (loc > target)
			return 0;
	}
	return c.bad ? -1 : 0;
}

/* glibc's __restore_rt, the sa_restorer of every handler installed through
   sigaction: "mov $__NR_rt_sigreturn, %rax; syscall".  Its FDE (augmentation
   "S") describes the frame with expressions; recognising the code, as
   libunwind and gdb do, lets the walk continue in the interrupted code. */
static const uint8_t sigreturn_code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

/* The frame rule for code address KEY (a return address minus one, or an
   interrupted instruction), worked out from scratch. */
static uint64_t compute_rule(uintptr_t key)
{
	struct dl_find_object fo;
	struct fde fde;
	struct row init, row;
	int slot;

	/* No object here is not cached: a later dlopen may map one. */
	if (_dl_find_object((void *)key, &fo) != 0)
		return K_STOP | RULE_NOCACHE;
	if (fo.dlfo_eh_frame == NULL)
		return K_STOP;
	if (find_fde(key, &fde, &fo) < 0 || fde.cie.ra_reg != REG_RA)
		return K_STOP;
	if (fde.cie.signal && key + 1 + sizeof sigreturn_code <= (uintptr_t)fo.dlfo_map_end &&
	    memcmp((const void *)(key + 1), sigreturn_code, sizeof sigreturn_code) == 0)
		return K_SIGNAL;

	memset(&init, 0, sizeof init);
	init.bp_how = init.sp_how = R_SAME;
	init.ra_how = R_UNDEF;
	if (run_cfa(fde.cie.insns, &fde.cie, fde.pc_begin, fde.pc_begin, &init, NULL) < 0)
		return K_STOP;
	row = init;
	if (run_cfa(fde.insns, &fde.cie, fde.pc_begin, key, &row, &init) < 0)
		return K_STOP;

	if (row.cfa_expr || (row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) ||
	    row.cfa_off < -OFF_MAX || row.cfa_off > OFF_MAX)
		return K_STOP;
	if (row.ra_how != R_OFFSET || row.ra_off != -8 || row.sp_how != R_SAME)
		return K_STOP;	/* includes "RA undefined": the outermost frame */
	switch (row.bp_how) {
	case R_SAME:
		slot = 0;
		break;
	case R_OFFSET:
		if ((row.bp_off & 7) || row.bp_off == 0 || row.bp_off < -8L * 63 || row.bp_off > 8L * 63)
			return K_STOP;
		slot = (int)(row.bp_off / 8);
		break;
	default:
		slot = BP_LOST;
		break;
	}
	return rule_make(row.cfa_reg == REG_RBP, slot, row.cfa_off);
}

/* ------------------------------------------------------------ stack bounds
 *
 * A walk reads only [sp at entry, end of the mapping holding it).  The
 * mapping is looked up once per thread and stack, through raw syscalls (no
 * stdio, no cancellation point, errno kept): Linux 6.11+ answers the
 * PROCMAP_QUERY ioctl on /proc/self/maps for one address (a few
 * microseconds); older kernels get the file parsed byte by byte.  Two
 * ranges are remembered so that a handler on a sigaltstack does not evict
 * the thread's own stack.
 */
struct range {
	uintptr_t lo, hi;
};

static __thread struct range tls_stacks[2];

extern void *__libc_stack_end;

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return 0;
}

/* <linux/fs.h> of Linux 6.11; Debian 12's headers predate it. */
struct procmap_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define PROCMAP_QUERY 0xc0686611ul	/* _IOWR('f', 17, struct procmap_query) */
#define PROCMAP_QUERY_VMA_READABLE 1

/* Read a few lines at a time: this runs on the stack of whoever called
 * malloc (the kernel's seq_file hands the rest over at the next read). */
static int maps_lookup(uintptr_t addr, struct range *out)
{
	char buf[256];
	uintptr_t a = 0, b = 0;
	int field = 0, readable = 0, found = 0;
	long fd, n;
	struct procmap_query q;

	do
		fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof q);
	q.size = sizeof q;
	q.query_flags = PROCMAP_QUERY_VMA_READABLE;
	q.query_addr = addr;
	if (syscall(SYS_ioctl, (int)fd, PROCMAP_QUERY, &q) == 0) {
		out->lo = q.vma_start;
		out->hi = q.vma_end;
		found = q.vma_start <= addr && addr < q.vma_end;
	} else if (errno == ENOENT) {
		found = -1;	/* no readable mapping there */
	}
	while (!found) {
		n = syscall(SYS_read, (int)fd, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (long i = 0; i < n && !found; i++) {
			char ch = buf[i];
			switch (field) {
			case 0:
				if (ch == '-')
					field = 1;
				else
					a = a << 4 | hexval(ch);
				break;
			case 1:
				if (ch == ' ')
					field = 2;
				else
					b = b << 4 | hexval(ch);
				break;
			case 2:
				readable = ch == 'r';
				field = 3;
				break;
			default:
				if (ch != '\n')
					break;
				if (readable && a <= addr && addr < b) {
					out->lo = a;
					out->hi = b;
					found = 1;
				}
				a = b = 0;
				field = 0;
			}
		}
	}
	syscall(SYS_close, (int)fd);
	return found > 0 ? 0 : -1;
}

static void range_set(struct range *dst, struct range src)
{
	dst->hi = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	dst->lo = src.lo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	dst->hi = src.hi;
}

/* The end of the readable stack above SP, or 0 when unknown. */
static __attribute__((noinline, cold)) uintptr_t stack_refresh(uintptr_t sp)
{
	int saved = errno;
	struct range r;

	if (maps_lookup(sp, &r) < 0) {
		/* No /proc: trust glibc's layout.  The main thread's stack ends
		   at __libc_stack_end; another thread's descriptor sits at the
		   top of its stack block. */
		uintptr_t end = (uintptr_t)__libc_stack_end, self = (uintptr_t)pthread_self();
		if (sp < end && end - sp < (1ul << 30))
			r.hi = end;
		else if (sp < self && self - sp < (1ul << 30))
			r.hi = self;
		else
			r.hi = 0;
		r.lo = r.hi > (1ul << 30) ? r.hi - (1ul << 30) : 0;
	}
	errno = saved;
	if (r.hi == 0)
		return 0;
	/* A signal handler walking in between must never see a range made
	   of two halves: empty it (hi = 0), then fill it, hi last. */
	range_set(&tls_stacks[1], tls_stacks[0]);
	range_set(&tls_stacks[0], r);
	return r.hi;
}

static inline uintptr_t stack_end(uintptr_t sp)
{
	for (int i = 0; i < 2; i++) {
		uintptr_t hi = tls_stacks[i].hi;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (likely(hi != 0 && sp >= tls_stacks[i].lo && sp < hi))
			return hi;
	}
	return 0;
}

/* ------------------------------------------------------------ step memo
 *
 * With the rule cache alone a walk is a chain of dependent loads: the
 * return address, from it the cache slot, from it the CFA and so the next
 * return address -- some 20 cycles a frame, and a deep stack costs ten
 * times a shallow one.  A program's stacks repeat, so each thread also
 * remembers, for each step of its walks, the code address seen there, its
 * rule, and the RBP value loaded there.  A step whose address is the one
 * remembered takes the rule from the memo, whose address depends on the
 * step number only, and a loaded RBP equal to the remembered one is used
 * in its remembered form: the processor then runs ahead through the frames
 * of a repeated stack while the loads that confirm them complete.  Every
 * rule used is still the rule of the address actually found, so a stack
 * that differs anywhere is walked as it is.
 *
 * A memo is a block of a shared pool (the TLS of a library that mtrec
 * attach loads late must stay small), taken round-robin by threads; the
 * walk that uses one holds it (seq odd), so a thread sharing it or a
 * signal handler nested in the walk goes without.
 */
#define MEMO_STEPS 72
#define MEMO_POOL  256
#define MEMO_LOADS 160

struct memo_step {
	uintptr_t key;
	uint64_t rule;
	uintptr_t bp;		/* the RBP loaded at this step */
};

/* The last walk as a function of what it read: from the same entry (SP,
   the stack's end, RBP when the walk used it before reloading it) and the
   same words at the same addresses, a walk takes the same steps to the
   same end, so checking those words is the whole walk.  They all lie in
   [sp0, hi), which is mapped while this stack is. */
struct memo_rec {
	int ok, need_bp0, max, n;
	unsigned nloads;
	uintptr_t sp0, bp0, hi;
	const void *tag;	/* mtrec_unwind_tag's, for these frames */
	uintptr_t at[MEMO_LOADS], word[MEMO_LOADS];
	void *ips[MEMO_STEPS];
};

/* Records per memo: malloc and free reach the walk through different
   frames of the recorder, so a loop's events alternate between entries. */
#define MEMO_RECS 4

struct memo {
	unsigned seq;
	unsigned gen;
	struct memo_step step[MEMO_STEPS];
	struct memo_rec rec[MEMO_RECS];
};

static struct memo *memo_pool;
#ifdef MTREC_UNWIND_TEST
static int memo_shared;		/* test hook */
#endif
static unsigned memo_next, memo_gen;
static __thread struct memo *tls_memo;

static __attribute__((noinline, cold)) struct memo *memo_assign(void)
{
	struct memo *pool = __atomic_load_n(&memo_pool, __ATOMIC_ACQUIRE);

	if (!pool) {
		int saved = errno;
		void *m = mmap(NULL, MEMO_POOL * sizeof(struct memo), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		struct memo *expect = NULL;
		errno = saved;
		if (m == MAP_FAILED)
			return NULL;
		if (__atomic_compare_exchange_n(&memo_pool, &expect, (struct memo *)m, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			pool = m;
		} else {
			munmap(m, MEMO_POOL * sizeof(struct memo));
			pool = expect;
		}
	}
	tls_memo = &pool[__atomic_fetch_add(&memo_next, 1, __ATOMIC_RELAXED) % MEMO_POOL];
	return tls_memo;
}

/* This thread's memo, held for one walk (*SEQ for memo_give), or NULL. */
static inline struct memo *memo_take(unsigned *seq)
{
	struct memo *mo = tls_memo;
	unsigned s, gen;

	if (unlikely(mo == NULL) && (mo = memo_assign()) == NULL)
		return NULL;
#ifdef MTREC_UNWIND_TEST
	if (__atomic_load_n(&memo_shared, __ATOMIC_RELAXED))
		mo = __atomic_load_n(&memo_pool, __ATOMIC_RELAXED);
#endif
	s = __atomic_load_n(&mo->seq, __ATOMIC_RELAXED);
	if ((s & 1) || !__atomic_compare_exchange_n(&mo->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return NULL;
	gen = __atomic_load_n(&memo_gen, __ATOMIC_RELAXED);
	if (unlikely(mo->gen != gen)) {
		/* Code was unmapped since: its rules may be wrong now. */
		memset(mo->step, 0, sizeof(mo->step));
		for (int i = 0; i < MEMO_RECS; i++)
			mo->rec[i].ok = 0;
		mo->gen = gen;
	}
	*seq = s;
	return mo;
}

static inline void memo_give(struct memo *mo, unsigned seq)
{
	if (mo)
		__atomic_store_n(&mo->seq, seq + 2, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ the walk */

int mtrec_unwind_from(void **ips, int max, uintptr_t sp, uintptr_t bp,
		      struct mtrec_unwind_known *k) __attribute__((visibility("hidden")));

void mtrec_unwind_init(void)
{
	struct dl_find_object fo;

	if (__atomic_load_n(&init_done, __ATOMIC_ACQUIRE))
		return;
	if (_dl_find_object((void *)&mtrec_unwind_from, &fo) == 0) {
		__atomic_store_n(&self_lo, (uintptr_t)fo.dlfo_map_start, __ATOMIC_RELAXED);
		__atomic_store_n(&self_len, (uintptr_t)fo.dlfo_map_end - (uintptr_t)fo.dlfo_map_start,
				 __ATOMIC_RELAXED);
	}
	if (__atomic_load_n(&rule_cache, __ATOMIC_ACQUIRE) == NULL) {
		int saved = errno;
		void *m = mmap(NULL, CACHE_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t *expect = NULL;
		if (m != MAP_FAILED &&
		    !__atomic_compare_exchange_n(&rule_cache, &expect, (uint64_t *)m, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			munmap(m, CACHE_SIZE * sizeof(uint64_t));
		errno = saved;
	}
	__atomic_store_n(&init_done, 1, __ATOMIC_RELEASE);
}

void mtrec_unwind_forget_tags(void)
{
	/* the memos' records go with their step rules: both are rebuilt
	   from the rule cache */
	__atomic_fetch_add(&memo_gen, 1, __ATOMIC_RELEASE);
}

void mtrec_unwind_flush(void)
{
	uint64_t *cache = __atomic_load_n(&rule_cache, __ATOMIC_ACQUIRE);

	__atomic_fetch_add(&memo_gen, 1, __ATOMIC_RELEASE);	/* the memos' rules too */
	if (cache) {
		int saved = errno;
		/* Private anonymous pages read back as zero: every entry empty. */
		madvise(cache, CACHE_SIZE * sizeof(uint64_t), MADV_DONTNEED);
		errno = saved;
	}
}

#ifdef MTREC_UNWIND_TEST
void mtrec_unwind_test_cache(int on)
{
	__atomic_store_n(&cache_off, !on, __ATOMIC_RELAXED);
}

void mtrec_unwind_test_share(int on)
{
	__atomic_store_n(&memo_shared, on, __ATOMIC_RELAXED);
}
#endif

static __attribute__((noinline)) uint64_t rule_miss(uint64_t *cache, uintptr_t key)
{
	uint64_t rule = compute_rule(key);
	if (rule & RULE_NOCACHE)
		return rule;	/* K_STOP: the walk ends, not to be replayed */
	if (cache && (key >> 47) == 0)
		cache_put(cache, key, rule);
	return rule;
}

static inline uint64_t rule_of(uint64_t *cache, uintptr_t key)
{
	uint64_t rule = K_EMPTY;

	if (likely(cache != NULL) && likely((key >> 47) == 0))
		rule = cache_get(cache, key);
	if (unlikely(rule == K_EMPTY))
		rule = rule_miss(cache, key);
	return rule;
}

/* The word at slot_at, RBP's saved value: the memo's copy when equal, so
   that what follows does not wait for the load. */
static inline uintptr_t load_bp(uintptr_t slot_at, struct memo_step *st)
{
	uintptr_t v = *(const uintptr_t *)slot_at, known;

	if (!st)
		return v;
	known = st->bp;
	if (unlikely(v != known)) {
		st->bp = v;
		return v;
	}
	__asm__("" : "+r"(known));	/* not to be replaced by v */
	return known;
}

struct walk {
	void **ips;
	int max;
	uintptr_t hi, lo_self, len_self;
	uint64_t *cache;
	struct memo *mo;
	struct memo_rec *rec;	/* being recorded, or NULL */
};

/* Note a word the walk read, the *NL'th (the walk stays replayable while
   they fit). */
static inline uintptr_t noted(struct memo_rec *rec, unsigned *nl, uintptr_t at, uintptr_t word)
{
	if (rec) {
		if (likely(*nl < MEMO_LOADS)) {
			rec->at[*nl] = at;
			rec->word[*nl] = word;
		}
		++*nl;
	}
	return word;
}

/* The record for a walk from SP: chosen by the return address there too
   (SP is not enough: the same entry serves every allocating call). */
static inline struct memo_rec *memo_rec_for(struct memo *mo, uintptr_t sp, uintptr_t hi)
{
	uintptr_t ra = hi - sp >= 8 ? *(const uintptr_t *)sp : 0;

	return &mo->rec[((sp >> 3) ^ (ra >> 2) ^ (ra >> 9)) % MEMO_RECS];
}

/* The walk, when the record R of an earlier one holds: its frames
   into W->ips (or, when K asks and R has a tag, the tag into K) and
   their number, else -1. */
static int replay(const struct walk *w, const struct memo_rec *r, uintptr_t sp, uintptr_t bp,
		  struct mtrec_unwind_known *k)
{
	uintptr_t diff = 0;

	if (!r->ok || r->sp0 != sp || r->hi != w->hi || r->max != w->max ||
	    (r->need_bp0 && r->bp0 != bp))
		return -1;
	for (unsigned i = 0; i < r->nloads; i++)
		diff |= *(const uintptr_t *)r->at[i] ^ r->word[i];
	if (diff)
		return -1;
	if (k && r->tag)
		k->tag = r->tag;
	else
		memcpy(w->ips, r->ips, (size_t)r->n * sizeof(void *));
	return r->n;
}

static inline __attribute__((always_inline)) int walk(const struct walk *w, uintptr_t sp, uintptr_t bp)
{
	struct memo_rec *rec = w->rec;
	uintptr_t hi = w->hi, ip;
	int n = 0, exact = 0, bp_ok = 1, steps = 0, bp_entry = 1, bp_pending = 0;
	uintptr_t bp_at = 0;
	unsigned nl = 0;

	if (hi - sp < 8)
		return 0;
	ip = noted(rec, &nl, sp, *(const uintptr_t *)sp);
	sp += 8;

	for (;;) {
		struct memo_step *st = NULL;
		uintptr_t key, cfa, slot_at;
		uint64_t rule;
		int slot;

		if (ip < 4096 || ++steps > 4096)
			break;		/* 0 ends the stack; small values are junk */
		/* Not only the leading frames: a tracked function's wrapper
		   (rec-track.c) stays on the stack while the function runs,
		   and the malloc it makes unwinds through it to the program. */
		if (ip - w->lo_self >= w->len_self) {
			w->ips[n++] = (void *)ip;
			if (n == w->max)
				break;
		}

		key = exact ? ip : ip - 1;
		if (likely(w->mo != NULL) && likely(steps <= MEMO_STEPS)) {
			st = &w->mo->step[steps - 1];
			if (likely(st->key == key)) {
				rule = st->rule;
			} else {
				rule = rule_of(w->cache, key);
				if (likely(!(rule & RULE_NOCACHE))) {
					st->key = key;
					st->rule = rule;
				}
			}
		} else {
			rule = rule_of(w->cache, key);
		}

		switch (rule & RULE_KIND) {
		case K_FRAME:
			if (rule & RULE_CFA_RBP) {
				if (!bp_ok)
					goto out;
				/* Only an RBP that makes a CFA is an input of
				   the walk (most saved values are never used). */
				if (rec && bp_entry)
					rec->need_bp0 = 1;
				else if (bp_pending)
					noted(rec, &nl, bp_at, bp);
				bp_pending = 0;
				cfa = bp + rule_off(rule);
			} else {
				cfa = sp + rule_off(rule);
			}
			/* The frame lies in [sp, cfa): the return address is
			   its top word, and the caller's frame is above it. */
			if (cfa < sp + 8 || cfa > hi)
				goto out;
			slot = rule_bp_slot(rule);
			if (slot == BP_LOST) {
				bp_ok = 0;
				bp_entry = 0;
				bp_pending = 0;
			} else if (slot != 0) {
				slot_at = cfa + (intptr_t)slot * 8;
				if (slot_at < sp || slot_at > hi - 8)
					goto out;
				bp = load_bp(slot_at, st);
				bp_at = slot_at;
				bp_pending = 1;
				bp_ok = 1;
				bp_entry = 0;
			}
			ip = noted(rec, &nl, cfa - 8, *(const uintptr_t *)(cfa - 8));
			sp = cfa;
			exact = 0;
			break;
		case K_SIGNAL: {
			/* SP is the ucontext_t the kernel pushed; its gregs
			   start at byte 40 (REG_RBP 10, REG_RSP 15, REG_RIP 16). */
			const uintptr_t *gregs = (const uintptr_t *)(sp + 40);
			uintptr_t nsp;
			nl = MEMO_LOADS + 1;	/* may go on another stack: not replayed */
			bp_pending = 0;
			if (hi - sp < 40 + 17 * 8)
				goto out;
			nsp = gregs[15];
			if (nsp <= sp || nsp >= hi) {
				/* The handler ran on an alternate stack. */
				hi = stack_end(nsp);
				if (hi == 0 || nsp + 8 > hi)
					goto out;
			}
			ip = gregs[16];
			bp = gregs[10];
			bp_ok = 1;
			sp = nsp;
			exact = 1;
			break;
		}
		default:
			if (rule & RULE_NOCACHE)	/* a later dlopen may map code there */
				nl = MEMO_LOADS + 1;
			goto out;
		}
	}
out:
	if (rec)
		rec->nloads = nl;
	return n;
}

/* Walk from the state right after a return from mtrec_unwind or
   mtrec_unwind_known: SP points at that return address, BP is the
   caller's RBP; K is NULL from mtrec_unwind. */
int mtrec_unwind_from(void **ips, int max, uintptr_t sp, uintptr_t bp,
		      struct mtrec_unwind_known *k)
{
	struct walk w;
	struct memo_rec *r = NULL;
	unsigned seq = 0;
	int n;

	if (k) {
		k->tag = NULL;
		k->memo = k->rec = NULL;
	}
	if (max <= 0)
		return 0;
	if (unlikely(!__atomic_load_n(&init_done, __ATOMIC_ACQUIRE)))
		mtrec_unwind_init();
	w.ips = ips;
	w.max = max;
	w.cache = __atomic_load_n(&rule_cache, __ATOMIC_RELAXED);
	w.lo_self = __atomic_load_n(&self_lo, __ATOMIC_RELAXED);
	w.len_self = __atomic_load_n(&self_len, __ATOMIC_RELAXED);
	w.mo = NULL;
	if (unlikely(__atomic_load_n(&cache_off, __ATOMIC_RELAXED)))
		w.cache = NULL;
	else
		w.mo = memo_take(&seq);

	w.rec = NULL;
	w.hi = stack_end(sp);
	if (unlikely(w.hi == 0))
		w.hi = stack_refresh(sp);
	if (w.mo)
		r = memo_rec_for(w.mo, sp, w.hi);
	if (w.hi == 0) {
		n = 0;
		r = NULL;
	} else if (r == NULL || (n = replay(&w, r, sp, bp, k)) < 0) {
		if (r) {
			w.rec = r;
			r->ok = 0;
			r->nloads = 0;
			r->need_bp0 = 0;
			r->tag = NULL;
		}
		n = walk(&w, sp, bp);
		if (r && r->nloads <= MEMO_LOADS && n <= MEMO_STEPS) {
			r->sp0 = sp;
			r->bp0 = bp;
			r->hi = w.hi;
			r->max = max;
			r->n = n;
			memcpy(r->ips, ips, (size_t)n * sizeof(void *));
			r->ok = 1;
		} else {
			r = NULL;
		}
	}
	memo_give(w.mo, seq);
	if (k && r && !k->tag) {
		k->memo = w.mo;
		k->rec = r;
		k->seq = seq + 2;
	}
	return n;
}

void mtrec_unwind_tag(const struct mtrec_unwind_known *k, const void *tag)
{
	struct memo *mo = k->memo;
	unsigned s = k->seq;

	/* Only if no walk took the memo since (another thread sharing it,
	   a signal handler): the record may hold other frames now. */
	if (!mo || !__atomic_compare_exchange_n(&mo->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
		return;
	((struct memo_rec *)k->rec)->tag = tag;
	__atomic_store_n(&mo->seq, s + 2, __ATOMIC_RELEASE);
}

/* The entry point is a three-instruction stub so that the walk starts from
   exact register values: the caller's RSP right after the return and its
   RBP, with no compiler-chosen frame in between. */
__asm__(
	"	.text\n"
	"	.globl	mtrec_unwind\n"
	"	.hidden	mtrec_unwind\n"
	"	.type	mtrec_unwind, @function\n"
	"	.p2align 4\n"
	"mtrec_unwind:\n"
	"	.cfi_startproc\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	movq	%rsp, %rdx\n"
	"	movq	%rbp, %rcx\n"
	"	xorl	%r8d, %r8d\n"
	"	jmp	mtrec_unwind_from\n"
	"	.cfi_endproc\n"
	"	.size	mtrec_unwind, .-mtrec_unwind\n"
	"	.globl	mtrec_unwind_known\n"
	"	.hidden	mtrec_unwind_known\n"
	"	.type	mtrec_unwind_known, @function\n"
	"	.p2align 4\n"
	"mtrec_unwind_known:\n"
	"	.cfi_startproc\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	movq	%rdx, %r8\n"
	"	movq	%rsp, %rdx\n"
	"	movq	%rbp, %rcx\n"
	"	jmp	mtrec_unwind_from\n"
	"	.cfi_endproc\n"
	"	.size	mtrec_unwind_known, .-mtrec_unwind_known\n");

#else /* not x86-64 Linux */

void mtrec_unwind_init(void)
{
}

int mtrec_unwind(void **ips, int max)
{
	(void)ips;
	(void)max;
	return 0;
}

int mtrec_unwind_known(void **ips, int max, struct mtrec_unwind_known *k)
{
	(void)ips;
	(void)max;
	k->tag = NULL;
	k->memo = k->rec = NULL;
	return 0;
}

void mtrec_unwind_tag(const struct mtrec_unwind_known *k, const void *tag)
{
	(void)k;
	(void)tag;
}

void mtrec_unwind_forget_tags(void)
{
	/* the memos' records go with their step rules: both are rebuilt
	   from the rule cache */
	__atomic_fetch_add(&memo_gen, 1, __ATOMIC_RELEASE);
}

void mtrec_unwind_forget_tags(void)
{
}

void mtrec_unwind_flush(void)
{
}

#ifdef MTREC_UNWIND_TEST
void mtrec_unwind_test_cache(int on)
{
	(void)on;
}

void mtrec_unwind_test_share(int on)
{
	(void)on;
}
#endif

#endif
