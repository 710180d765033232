/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pkgdata.c -- locating the files mtanalyze reads from share/.
 *
 * An installed mtanalyze reads $(pkgdatadir) (compiled in as
 * MTA_PKGDATADIR); one run from the build tree must read the files next to
 * its sources, not those of an older installed copy, so the directory of
 * the executable is checked for the tree's marks first.
 */
#include "pkgdata.h"

#include <unistd.h>

#ifndef MTA_PKGDATADIR
#define MTA_PKGDATADIR "/usr/local/share/mtrec"
#endif

/* share/ of the source tree holding the running executable, or NULL. */
static char *
build_tree_share (void)
{
	g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
	if (exe == NULL)
		return NULL;
	g_autofree char *dir = g_path_get_dirname (exe);
	g_autofree char *top = g_path_get_dirname (dir);
	g_autofree char *mark = g_build_filename (top, "Makefile.in", NULL);
	g_autofree char *share = g_build_filename (top, "share", NULL);
	if (g_file_test (mark, G_FILE_TEST_IS_REGULAR) && g_file_test (share, G_FILE_TEST_IS_DIR))
		return g_steal_pointer (&share);
	return NULL;
}

char *
mta_pkgdata_find (const char *name, GError **error)
{
	const char *env = g_getenv ("MTA_PKGDATADIR");
	g_autofree char *tree = NULL;
	char *path;

	if (env != NULL && env[0] != '\0') {
		path = g_build_filename (env, name, NULL);
		if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
			return path;
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
			     "cannot find '%s' (MTA_PKGDATADIR is '%s')", name, env);
		g_free (path);
		return NULL;
	}
	if ((tree = build_tree_share ()) != NULL) {
		path = g_build_filename (tree, name, NULL);
		if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
			return path;
		g_free (path);
	}
	path = g_build_filename (MTA_PKGDATADIR, name, NULL);
	if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
		return path;
	g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
		     "cannot find '%s' in '%s' (set MTA_PKGDATADIR to the directory that holds it)",
		     name, MTA_PKGDATADIR);
	g_free (path);
	return NULL;
}

char *
mta_pkgdata_read (const char *name, GError **error)
{
	g_autofree char *path = mta_pkgdata_find (name, error);
	g_autoptr (GError) local = NULL;
	char *text = NULL;

	if (path == NULL)
		return NULL;
	if (!g_file_get_contents (path, &text, NULL, &local)) {
		g_set_error (error, G_FILE_ERROR, local->code, "cannot read '%s': %s",
			     path, local->message);
		return NULL;
	}
	return text;
}
