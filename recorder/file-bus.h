/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-bus.h -- the trace mapping's SIGBUS guard (file-bus.c), for
 * file.c alone; mtrec_file_lost() and mtrec_file_bus_action() are in
 * file.h. */
#ifndef MTREC_FILE_BUS_H
#define MTREC_FILE_BUS_H

#include "prim.h"

struct mtrec_file;

/* The real sigaction, to install the guard and chain to the program's,
 * and the file whose mapping is guarded (given, not looked up: the guard
 * is below file.c). */
void mtrec_bus_init(mtrec_sigaction_fn real_sigaction, struct mtrec_file *f) MTREC_HIDDEN;
/* Take SIGBUS (once): after the trace is mapped. */
void mtrec_bus_guard(void) MTREC_HIDDEN;
/* The mapping from the file's end on becomes anonymous memory: 0, or -1
 * when the memory could not be had. */
int mtrec_bus_lose_mapping(void) MTREC_HIDDEN;
/* A forked child starts with its own file. */
void mtrec_bus_fork_child(void) MTREC_HIDDEN;

#endif
