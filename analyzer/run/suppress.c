/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* suppress.c -- parsing and matching suppression files.
 *
 * One rule per line, made of KEY=PATTERN terms separated by blanks, all
 * of which must match; a bare PATTERN is function=PATTERN.  '#' starts a
 * comment.  Patterns are shell-style ('*', '?') and match the whole
 * string; for file and object, a pattern without '/' is also tried on the
 * base name, so that "demo.c:4*" or "libfoo.so*" match wherever the
 * program was built or installed.  A file pattern is tried on "FILE:LINE"
 * and on "FILE" alone.
 */
#include "suppress.h"

#include <errno.h>
#include <unistd.h>

typedef enum { KEY_FUNCTION, KEY_FILE, KEY_OBJECT, KEY_CALLER, N_KEYS } Key;

static const char *const key_names[N_KEYS] = { "function", "file", "object", "caller" };

typedef struct {
	GPatternSpec *spec[N_KEYS];     /* NULL: any */
	gboolean base_name[N_KEYS];     /* no '/' in the pattern */
} Rule;

struct MtaSuppressions {
	GPtrArray *rules;
};

static void
rule_free (gpointer p)
{
	Rule *r = p;
	for (int k = 0; k < N_KEYS; k++)
		if (r->spec[k] != NULL)
			g_pattern_spec_free (r->spec[k]);
	g_free (r);
}

MtaSuppressions *
mta_suppressions_new (void)
{
	MtaSuppressions *s = g_new0 (MtaSuppressions, 1);
	s->rules = g_ptr_array_new_with_free_func (rule_free);
	return s;
}

void
mta_suppressions_free (MtaSuppressions *s)
{
	if (s == NULL)
		return;
	g_ptr_array_free (s->rules, TRUE);
	g_free (s);
}

guint
mta_suppressions_count (const MtaSuppressions *s)
{
	return s->rules->len;
}

/* Parse one line; NULL with *BAD set to a copy of the offending term,
 * or NULL for an empty line. */
static Rule *
parse_rule (char *line, char **bad)
{
	char *hash = strchr (line, '#');
	Rule *r = NULL;

	*bad = NULL;
	if (hash != NULL)
		*hash = '\0';
	g_auto (GStrv) terms = g_strsplit_set (g_strstrip (line), " \t", -1);
	for (char **t = terms; *t != NULL; t++) {
		if (**t == '\0')
			continue;
		char *eq = strchr (*t, '=');
		int k = KEY_FUNCTION;
		const char *pattern = *t;
		if (eq != NULL) {
			*eq = '\0';
			for (k = 0; k < N_KEYS && strcmp (*t, key_names[k]) != 0; k++)
				;
			pattern = eq + 1;
			if (k == N_KEYS || *pattern == '\0' || (r != NULL && r->spec[k] != NULL)) {
				*eq = '=';
				*bad = g_strdup (*t);
				if (r != NULL)
					rule_free (r);
				return NULL;
			}
		}
		if (r == NULL)
			r = g_new0 (Rule, 1);
		r->spec[k] = g_pattern_spec_new (pattern);
		r->base_name[k] = strchr (pattern, '/') == NULL;
	}
	return r;
}

gboolean
mta_suppressions_load (MtaSuppressions *s, const char *path, GError **error)
{
	g_autofree char *text = NULL;
	g_autoptr (GError) local = NULL;

	if (!g_file_get_contents (path, &text, NULL, &local)) {
		/* GLib's message names the file in its own words: say why alone */
		int e = access (path, R_OK) < 0 ? errno : EIO;
		g_set_error (error, G_FILE_ERROR, local->code, "cannot read '%s': %s", path,
			     g_file_test (path, G_FILE_TEST_IS_DIR) ? g_strerror (EISDIR) : g_strerror (e));
		return FALSE;
	}
	g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		g_autofree char *bad = NULL;
		Rule *r = parse_rule (lines[i], &bad);
		if (r != NULL)
			g_ptr_array_add (s->rules, r);
		else if (bad != NULL) {
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "%s:%u: cannot use '%s' (terms are function=, file=, object=, "
				     "caller=, each once)", path, i + 1, bad);
			return FALSE;
		}
	}
	return TRUE;
}

/* PATTERN matches S, or its base name when the pattern has no '/'. */
static gboolean
match_path (GPatternSpec *spec, gboolean base_name, const char *s)
{
	if (g_pattern_spec_match_string (spec, s))
		return TRUE;
	if (!base_name)
		return FALSE;
	const char *slash = strrchr (s, '/');
	return slash != NULL && g_pattern_spec_match_string (spec, slash + 1);
}

static gboolean
rule_match (const Rule *r, const MtaLeakSite *site)
{
	if (r->spec[KEY_FUNCTION] && !g_pattern_spec_match_string (r->spec[KEY_FUNCTION], site->function))
		return FALSE;
	if (r->spec[KEY_CALLER] && !g_pattern_spec_match_string (r->spec[KEY_CALLER], site->caller))
		return FALSE;
	if (r->spec[KEY_OBJECT] && !match_path (r->spec[KEY_OBJECT], r->base_name[KEY_OBJECT], site->object))
		return FALSE;
	if (r->spec[KEY_FILE]) {
		g_autofree char *fl = g_strdup_printf ("%s:%u", site->file, site->line);
		if (!match_path (r->spec[KEY_FILE], r->base_name[KEY_FILE], fl) &&
		    !match_path (r->spec[KEY_FILE], r->base_name[KEY_FILE], site->file))
			return FALSE;
	}
	return TRUE;
}

gboolean
mta_suppressions_match (const MtaSuppressions *s, const MtaLeakSite *site)
{
	for (guint i = 0; s != NULL && i < s->rules->len; i++)
		if (rule_match (s->rules->pdata[i], site))
			return TRUE;
	return FALSE;
}
