/* wrappers.c -- matching function names against the wrapper list.
 *
 * Names without a wildcard go in a hash set (the common case, and the whole
 * default list but for "operator new*"); the rest are compiled GPatternSpecs
 * tried in order.  Each distinct function is asked about once per run (the
 * caller caches the answer with its call site), so this is not a hot path.
 */
#include "wrappers.h"
#include "pkgdata.h"

#include <string.h>

struct MtaWrappers {
	GHashTable *names;     /* literal names */
	GPtrArray *patterns;   /* GPatternSpec */
	guint count;
};

MtaWrappers *
mta_wrappers_new (void)
{
	MtaWrappers *w = g_new0 (MtaWrappers, 1);
	w->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
	w->patterns = g_ptr_array_new_with_free_func ((GDestroyNotify) g_pattern_spec_free);
	return w;
}

void
mta_wrappers_free (MtaWrappers *w)
{
	if (w == NULL)
		return;
	g_hash_table_destroy (w->names);
	g_ptr_array_free (w->patterns, TRUE);
	g_free (w);
}

void
mta_wrappers_add (MtaWrappers *w, const char *pattern)
{
	if (pattern[0] == '\0')
		return;
	w->count++;
	if (strpbrk (pattern, "*?") == NULL)
		g_hash_table_add (w->names, g_strdup (pattern));
	else
		g_ptr_array_add (w->patterns, g_pattern_spec_new (pattern));
}

gboolean
mta_wrappers_load (MtaWrappers *w, const char *path, GError **error)
{
	g_autofree char *text = NULL;
	g_autoptr (GError) local = NULL;

	if (!g_file_get_contents (path, &text, NULL, &local)) {
		g_set_error (error, G_FILE_ERROR, local->code, "cannot read the wrapper list '%s': %s",
			     path, local->message);
		return FALSE;
	}
	g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
	for (char **l = lines; *l; l++) {
		char *hash = strchr (*l, '#');
		if (hash != NULL)
			*hash = '\0';
		mta_wrappers_add (w, g_strstrip (*l));
	}
	return TRUE;
}

gboolean
mta_wrappers_load_default (MtaWrappers *w, GError **error)
{
	g_autofree char *path = mta_pkgdata_find ("wrappers.txt", error);
	return path != NULL && mta_wrappers_load (w, path, error);
}

gboolean
mta_wrappers_match (const MtaWrappers *w, const char *function)
{
	if (function == NULL || function[0] == '\0')
		return FALSE;
	if (g_hash_table_contains (w->names, function))
		return TRUE;
	for (guint i = 0; i < w->patterns->len; i++)
		if (g_pattern_spec_match_string (w->patterns->pdata[i], function))
			return TRUE;
	return FALSE;
}

guint
mta_wrappers_count (const MtaWrappers *w)
{
	return w->count;
}
