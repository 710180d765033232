/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* wrappers.h -- the allocation wrappers skipped when a block is charged
 * to a call site: share/wrappers.txt, plus --skip patterns.
 */
#ifndef MTA_WRAPPERS_H
#define MTA_WRAPPERS_H

#include <glib.h>
#include <stdint.h>

typedef struct MtaWrappers MtaWrappers;

MtaWrappers *mta_wrappers_new (void);
void mta_wrappers_free (MtaWrappers *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaWrappers, mta_wrappers_free)

/* Add one shell-style pattern ('*', '?') matched against a whole
 * function name, or an offset for code without symbols: "OBJECT+0xOFF"
 * (OBJECT a path, or a file name matched wherever the object is) or
 * "0xOFF" (in the main executable). */
void mta_wrappers_add (MtaWrappers *w, const char *pattern);

/* Add the patterns of a wrappers.txt file (one per line, '#' comments). */
gboolean mta_wrappers_load (MtaWrappers *w, const char *path, GError **error);

/* Add the default list (wrappers.txt from the data directory). */
gboolean mta_wrappers_load_default (MtaWrappers *w, GError **error);

/* TRUE when FUNCTION (NULL: unknown) is a wrapper. */
gboolean mta_wrappers_match (const MtaWrappers *w, const char *function);

/* TRUE when a frame is a wrapper: its FUNCTION (NULL: unknown; "0xOFF"
 * when it has no symbol) matches a pattern, or its OFFSET in OBJECT (the
 * program itself when MAIN_EXE) an offset entry. */
gboolean mta_wrappers_match_frame (const MtaWrappers *w, const char *function,
				   const char *object, uint64_t offset, gboolean main_exe);

/* Number of patterns. */
guint mta_wrappers_count (const MtaWrappers *w);

#endif
