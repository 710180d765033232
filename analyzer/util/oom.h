/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* oom.h -- running out of memory without leaving half an output behind.
 *
 * GLib's allocators abort the process (g_error in the "GLib" domain: a
 * trap, status 133) when memory runs out.  mta_oom_init() takes that over:
 * the files the run was writing are cleaned up by the functions registered
 * here (a database it created is removed, a load in progress is rolled
 * back, a temporary output is unlinked), output sent to a regular file on
 * stdout is cut back to where it started, and the process exits with
 * status 2 and one line: "mtanalyze: out of memory (...)".
 */
#ifndef MTA_OOM_H
#define MTA_OOM_H

#include <glib.h>

typedef void (*MtaOomCleanup) (gpointer data);

/* Once, at the start of main. */
void mta_oom_init (void);

/* Call FUNC (DATA) if memory runs out, until removed; the latest added
 * runs first.  Returns a handle for mta_oom_remove (0: no room left, only
 * when more than a few outputs are open at once). */
guint mta_oom_add (MtaOomCleanup func, gpointer data);
void mta_oom_remove (guint handle);

/* A cleanup that unlinks DATA, a file name. */
void mta_oom_unlink (gpointer path);

#endif
