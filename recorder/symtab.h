/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symtab.h -- what dladdr() says about an address, answered from a
 * per-object index by binary search instead of glibc's walk over the whole
 * dynamic symbol table (symtab.c).  Safe inside malloc: no allocation
 * but prim_map_anon(), no locks, no cancellation points. */
#ifndef MTREC_SYMTAB_H
#define MTREC_SYMTAB_H

#include <dlfcn.h>

#include "prim.h"

/* Exactly what glibc 2.36's dladdr(addr, info) would return and store,
 * from the index when it can tell, from dladdr() itself otherwise. */
int mtrec_symtab_addr(const void *addr, Dl_info *info) MTREC_HIDDEN;

/* The index alone: 1 with *info filled as dladdr() would fill it, or -1
 * when the index cannot tell (unusual object, address in no known object,
 * table being built by another thread); then ask dladdr(). */
int mtrec_symtab_find(const void *addr, Dl_info *info) MTREC_HIDDEN;

/* Objects were unloaded: forget every index (the memory stays mapped for
 * threads still reading it). */
void mtrec_symtab_reset(void) MTREC_HIDDEN;

#endif
