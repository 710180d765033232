/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reach-roots.h -- where the scan (reach.c) looks for pointers to blocks
 * (reach-roots.c): the loaded objects' segments, the threads' stacks and
 * TLS, the program's own mappings, read from /proc/self/maps. */
#ifndef MTREC_REACH_ROOTS_H
#define MTREC_REACH_ROOTS_H

#include <link.h>
#include <stdint.h>
#include <sys/types.h>

#include "prim.h"

/* /proc/self/maps into sc.maps: 0, or -1 when it cannot be read. */
int load_maps(void) MTREC_HIDDEN;
/* prim_dl_iterate_phdr's callback: each object's writable segments. */
int object_roots(struct dl_phdr_info *info, size_t size, void *data) MTREC_HIDDEN;
void stack_roots(pid_t tid, uintptr_t sample, uintptr_t sp, uintptr_t tp) MTREC_HIDDEN;
void other_threads(pid_t self) MTREC_HIDDEN;
void map_roots(pid_t self) MTREC_HIDDEN;
/* Scan every root taken, then the blocks they reach. */
void scan_roots(void) MTREC_HIDDEN;

#endif
