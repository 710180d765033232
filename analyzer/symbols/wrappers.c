/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* wrappers.c -- matching function names against the wrapper list.
 *
 * Names without a wildcard go in a hash set (the common case, and the whole
 * default list but for "operator new*"); the rest are compiled GPatternSpecs
 * tried in order.  Each distinct function is asked about once per run (the
 * caller caches the answer with its call site), so this is not a hot path.
 *
 * Code without symbols (a stripped Debian binary, issue 11) has no name to
 * give: its frames are reported as "0xOFF in OBJECT", and the same words
 * name it here, "OBJECT+0xOFF" (OBJECT by path or by file name) or "0xOFF"
 * in the main executable.  They match the return address the report shows,
 * not a whole function: without symbols nothing says where one ends.
 */
#include "wrappers.h"
#include "pkgdata.h"

#include <string.h>

/* A wrapper named by an offset. */
typedef struct {
	char *object;          /* path or file name; NULL: the main executable */
	uint64_t offset;
} OffsetEntry;

struct MtaWrappers {
	GHashTable *names;     /* literal names */
	GPtrArray *patterns;   /* GPatternSpec */
	GArray *offsets;       /* OffsetEntry */
	guint count;
};

MtaWrappers *
mta_wrappers_new (void)
{
	MtaWrappers *w = g_new0 (MtaWrappers, 1);
	w->names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
	w->patterns = g_ptr_array_new_with_free_func ((GDestroyNotify) g_pattern_spec_free);
	w->offsets = g_array_new (FALSE, FALSE, sizeof (OffsetEntry));
	return w;
}

void
mta_wrappers_free (MtaWrappers *w)
{
	if (w == NULL)
		return;
	g_hash_table_destroy (w->names);
	g_ptr_array_free (w->patterns, TRUE);
	for (guint i = 0; i < w->offsets->len; i++)
		g_free (g_array_index (w->offsets, OffsetEntry, i).object);
	g_array_free (w->offsets, TRUE);
	g_free (w);
}

/* "0x1f2e" in full: its value. */
static gboolean
parse_offset (const char *p, uint64_t *v)
{
	char *end;

	if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X') || !g_ascii_isxdigit (p[2]))
		return FALSE;
	*v = g_ascii_strtoull (p + 2, &end, 16);
	return *end == '\0';
}

/* "OBJECT+0xOFF" or "0xOFF": an offset entry.  No function name has a
 * '+' or starts with "0x" (C++ operators are mangled), so the forms
 * cannot be mistaken for names. */
static gboolean
add_offset (MtaWrappers *w, const char *pattern)
{
	OffsetEntry e = { NULL, 0 };
	const char *plus = strrchr (pattern, '+');

	if (plus != NULL && plus > pattern && parse_offset (plus + 1, &e.offset))
		e.object = g_strndup (pattern, (gsize) (plus - pattern));
	else if (!parse_offset (pattern, &e.offset))
		return FALSE;
	g_array_append_val (w->offsets, e);
	return TRUE;
}

void
mta_wrappers_add (MtaWrappers *w, const char *pattern)
{
	if (pattern[0] == '\0')
		return;
	w->count++;
	if (add_offset (w, pattern))
		return;
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

static const char *
base_name (const char *path)
{
	const char *slash = strrchr (path, '/');
	return slash ? slash + 1 : path;
}

/* Whether ENTRY names OBJECT: the same path, or, for an entry without a
 * '/', the same file name wherever the object was. */
static gboolean
entry_names_object (const OffsetEntry *e, const char *object, gboolean main_exe)
{
	if (e->object == NULL)
		return main_exe;
	if (object == NULL || object[0] == '\0')
		return FALSE;
	if (strchr (e->object, '/') != NULL)
		return strcmp (e->object, object) == 0;
	return strcmp (e->object, base_name (object)) == 0;
}

gboolean
mta_wrappers_match_frame (const MtaWrappers *w, const char *function, const char *object,
			  uint64_t offset, gboolean main_exe)
{
	for (guint i = 0; i < w->offsets->len; i++) {
		const OffsetEntry *e = &g_array_index (w->offsets, OffsetEntry, i);
		if (e->offset == offset && entry_names_object (e, object, main_exe))
			return TRUE;
	}
	/* a frame without a symbol is named by its offset: never by a
	 * pattern ("x*" must not catch "0x16d4c5") */
	if (function != NULL && function[0] == '0' && function[1] == 'x')
		return FALSE;
	return mta_wrappers_match (w, function);
}

guint
mta_wrappers_count (const MtaWrappers *w)
{
	return w->count;
}
