/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* unwind-cfi.c -- the frame rule of a code address, from DWARF call-frame
 * information (unwind-rule.h): find its FDE through _dl_find_object and
 * the binary-search table of the object's .eh_frame_hdr, run the CIE and
 * FDE instructions up to the address, and reduce the row to a rule.  The
 * slow path of the walker (unwind.c), which caches what this returns:
 * it runs once per code address.  No allocation, no lock.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "unwind-rule.h"

#if defined(__x86_64__) && defined(__linux__)

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
uint64_t mtrec_unwind_rule(uintptr_t key)
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

#endif
