/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* events.h -- what process life (life.c) sets up in the event layer
 * (events.c); the record calls themselves are the shim's (rec.h). */
#ifndef MTREC_EVENTS_H
#define MTREC_EVENTS_H

#include "prim.h"

/* Map the ordering table; depth: frames per stack (MTREC_DEPTH).  0, or
 * -1 when the memory cannot be had. */
int mtrec_events_init(int depth) MTREC_HIDDEN;
/* A block that is not the program's (our putenv()'s environ array): its
 * free is not recorded, and its growth by realloc is the program's first
 * sight of the new block. */
void mtrec_events_hide(const void *p) MTREC_HIDDEN;
/* MTREC_REACH=1: from now on the record calls keep the table of live
 * blocks too (rec.h's mtrec_record, reach-table.h). */
void mtrec_events_reach(void) MTREC_HIDDEN;
/* Every event any thread writes from now on comes after the calling
 * thread's chunk in the file (a scan's verdicts, reach.h). */
void mtrec_events_fence(void) MTREC_HIDDEN;
/* Fork child: the parent's lines are not in the child's file. */
void mtrec_events_fork_child(void) MTREC_HIDDEN;

/* The program's line the innermost running tracked-function wrapper
 * returns to, NULL outside every wrapper (recorder/track.c sets it): a
 * tracked function that ends in a tail call of malloc's family
 * (iobuf_unref -> iobuf_put -> ... jmp free) makes that call return into
 * the wrapper, and its caller field is then this line. */
extern __thread const void *mtrec_wrapper_caller MTREC_HIDDEN;

#endif
