/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-inline.h -- the functions inlined at an address (DWARF).
 *
 * An address inside code that the compiler inlined belongs to several
 * functions at once: the inlined one (xmalloc), the one it was inlined
 * into (cache_put), itself perhaps inlined (into worker).  The DWARF
 * says so with DW_TAG_inlined_subroutine entries nested in the concrete
 * function's DW_TAG_subprogram, each with the place of its call
 * (DW_AT_call_file, DW_AT_call_line) in the function around it.
 *
 * One MtaDwarfInline per object: each compilation unit's functions are
 * indexed by address the first time an address of it is asked (one walk
 * of its top-level entries), each function's inlined code the first time
 * an address in it is asked; then an address costs binary searches, and
 * every address is answered once.  Units are found without .debug_aranges as well.
 */
#ifndef MTA_DWARF_INLINE_H
#define MTA_DWARF_INLINE_H

#include <elfutils/libdwfl.h>
#include <glib.h>

typedef struct {
	const char *function;   /* DW_AT_linkage_name, else DW_AT_name; "" unknown */
	const char *call_file;  /* as addr2line names it ("" unknown) */
	unsigned call_line;     /* 0: unknown */
} MtaInlineCall;

typedef struct MtaDwarfInline MtaDwarfInline;

/* For the module MOD (of a Dwfl that outlives the result). */
MtaDwarfInline *mta_dwarf_inline_new (Dwfl_Module *mod);
void mta_dwarf_inline_free (MtaDwarfInline *d);

/* The functions inlined at ADDR (a module address: libdwfl's, bias
 * included), innermost first, each with the place it was called from: in
 * the next one, and for the last in the concrete function that holds
 * them all.  *N 0 (and NULL) when the code at ADDR is no inlined code,
 * or there is no DWARF.  Owned by D. */
const MtaInlineCall *mta_dwarf_inline_at (MtaDwarfInline *d, Dwarf_Addr addr, guint *n);

/* The compilation unit holding ADDR (a module address), with the bias
 * of its addresses, or NULL.  libdwfl finds a unit through
 * .debug_aranges, which clang does not emit: then by the ranges of every
 * unit (indexed once), as binutils does. */
Dwarf_Die *mta_dwarf_unit_at (MtaDwarfInline *d, Dwarf_Addr addr, Dwarf_Addr *bias);

#endif
