/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* file-open.h -- the trace file's name and its safe opening (file-open.c),
 * for file.c alone.  A leaf: it calls nothing of the recorder but prim.h. */
#ifndef MTREC_FILE_OPEN_H
#define MTREC_FILE_OPEN_H

#include <stddef.h>
#include <sys/types.h>

#include "prim.h"

/* pattern with %p replaced by pid, then suffix; 0 or -1 when too long. */
int make_name(char *out, size_t cap, const char *pattern, pid_t pid,
	      int add_pid, unsigned serial) MTREC_HIDDEN;
/* Keep away from the low numbers a program may close or dup2 over. */
int move_high(int fd) MTREC_HIDDEN;
/* Open path to write it, never a planted file: the descriptor, or -1. */
int open_checked(const char *path, uid_t *owner) MTREC_HIDDEN;
/* The session's own name: checked, then locked before it is truncated. */
int open_first(const char *path, uid_t *owner) MTREC_HIDDEN;
/* "refusing trace file 'PATH': ..." for a file open_checked found planted
 * (why: its -4 or -5). */
void say_planted(const char *path, int why, uid_t owner, const char *then) MTREC_HIDDEN;

#endif
