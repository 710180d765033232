/* wrappers.h -- the allocation wrappers skipped when a block is charged
 * to a call site: share/wrappers.txt, plus --skip patterns.
 */
#ifndef MTA_WRAPPERS_H
#define MTA_WRAPPERS_H

#include <glib.h>

typedef struct MtaWrappers MtaWrappers;

MtaWrappers *mta_wrappers_new (void);
void mta_wrappers_free (MtaWrappers *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaWrappers, mta_wrappers_free)

/* Add one shell-style pattern ('*', '?') matched against a whole
 * function name. */
void mta_wrappers_add (MtaWrappers *w, const char *pattern);

/* Add the patterns of a wrappers.txt file (one per line, '#' comments). */
gboolean mta_wrappers_load (MtaWrappers *w, const char *path, GError **error);

/* Add the default list (wrappers.txt from the data directory). */
gboolean mta_wrappers_load_default (MtaWrappers *w, GError **error);

/* TRUE when FUNCTION (NULL: unknown) is a wrapper. */
gboolean mta_wrappers_match (const MtaWrappers *w, const char *function);

/* Number of patterns. */
guint mta_wrappers_count (const MtaWrappers *w);

#endif
