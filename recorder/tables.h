/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tables.h -- what the recorder remembers between events: the caller
 * strings (tables-caller.c), the interned call stacks (tables-stack.c) and the
 * loaded objects (tables-objects.c).  Leaves: each owns its lock, calls
 * nothing of the recorder but prim.h and symtab.h, and hands its lines to
 * its caller.  Lookups take no lock; a miss is the caller's to act on. */
#ifndef MTREC_TABLES_H
#define MTREC_TABLES_H

#include <stddef.h>

#include "prim.h"

/* ---- caller strings (tables-caller.c) ---- */

/* "@ OBJECT:(SYM+OFF)[0xREL] ", the prefix glibc writes for a caller. */
struct mtrec_caller {
	const void *addr;
	unsigned short len;
	char text[];
};
/* The entry for addr, or NULL when it has none yet. */
const struct mtrec_caller *mtrec_caller_find(const void *addr) MTREC_HIDDEN;
/* A new entry for addr (or the one another thread just made); never NULL:
 * without memory, or nested in its own thread's insertion (a signal
 * handler), the lookup-free "@ [0xADDR] " form of glibc. */
const struct mtrec_caller *mtrec_caller_add(const void *addr) MTREC_HIDDEN;
/* glibc's "@ [0xADDR] " form, which needs no lookup: not kept in the
 * table, valid until this thread's next call. */
const struct mtrec_caller *mtrec_caller_unlisted(const void *addr) MTREC_HIDDEN;
/* Objects were unloaded: the entries may be stale. */
void mtrec_caller_reset(void) MTREC_HIDDEN;
void mtrec_caller_fork_child(void) MTREC_HIDDEN;

/* ---- call stacks (tables-stack.c) ---- */

/* An interned stack.  Its "# stack" line is the caller's to write, before
 * the first event of each part that uses it: *mtrec_stack_part() says in
 * which part it was last written. */
struct mtrec_stack;
/* The stack ips[0..n), or NULL when it has none yet. */
struct mtrec_stack *mtrec_stack_find(void *const *ips, int n) MTREC_HIDDEN;
/* A new entry (or the one another thread just made); NULL when out of
 * memory or nested in its own thread's insertion. */
struct mtrec_stack *mtrec_stack_add(void *const *ips, int n) MTREC_HIDDEN;
unsigned long mtrec_stack_id_of(const struct mtrec_stack *st) MTREC_HIDDEN;
unsigned *mtrec_stack_part(struct mtrec_stack *st) MTREC_HIDDEN;
size_t mtrec_stack_def_room(const struct mtrec_stack *st) MTREC_HIDDEN;
char *mtrec_stack_put_def(char *o, const struct mtrec_stack *st) MTREC_HIDDEN;
/* A new file (fork child) has none of the definitions: start over. */
void mtrec_stack_fork_child(void) MTREC_HIDDEN;

/* ---- loaded objects (tables-objects.c) ---- */

/* Where the lines go: one whole line, without its newline. */
typedef void (*mtrec_line_sink)(const char *line, size_t len);
/* Hand "# object" lines for objects loaded since the last call and
 * "# unload" lines for those gone to sink; cheap when nothing changed. */
void mtrec_objects_sync(mtrec_line_sink sink) MTREC_HIDDEN;
/* Copy the "# object" lines of every object loaded now (whole lines that
 * fit before lim) to o; returns the end.  Takes no lock, waits for none. */
char *mtrec_objects_put(char *o, char *lim) MTREC_HIDDEN;
/* A new file (fork child) must describe every object again. */
void mtrec_objects_fork_child(void) MTREC_HIDDEN;

#endif
