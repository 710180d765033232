/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* options.c -- the options several commands take, declared once (options.h).
 * A command that needs other words for one of them gives its help in its
 * MtaSharedSpec; name, argument and storage stay here. */
#include "options.h"
#include "reach.h"

MtaSharedOptions mta_shared;

/* Every shared option, in the order --help lists them. */
static const struct {
	MtaSharedSet set;
	GOptionEntry entry;
} all_entries[] = {
	{ MTA_SHARED_SYSROOT, { "sysroot", 0, 0, G_OPTION_ARG_FILENAME, &mta_shared.sysroot,
	  "Find the traces' objects and debug files under DIR", "DIR" } },
	{ MTA_SHARED_QUIET, { "quiet", 'q', 0, G_OPTION_ARG_NONE, &mta_shared.quiet,
	  "Do not report unreadable trace lines nor show the progress", NULL } },
	{ MTA_SHARED_SKIP, { "skip", 0, 0, G_OPTION_ARG_STRING_ARRAY, &mta_shared.skip,
	  "Also skip functions matching PATTERN (or OBJECT+0xOFF, 0xOFF) as allocation wrappers",
	  "PATTERN" } },
	{ MTA_SHARED_SKIP, { "no-skip", 0, 0, G_OPTION_ARG_NONE, &mta_shared.no_skip,
	  "Charge leaks to wrappers too (no wrapper list)", NULL } },
	{ MTA_SHARED_JSON, { "json", 0, 0, G_OPTION_ARG_NONE, &mta_shared.json,
	  "Print the same facts as JSON", NULL } },
	{ MTA_SHARED_HTML, { "html", 0, 0, G_OPTION_ARG_FILENAME, &mta_shared.html,
	  "Also write the report as one self-contained HTML FILE (share/pictures.md)", "FILE" } },
	{ MTA_SHARED_LEAKS, { "leaks", 0, 0, G_OPTION_ARG_STRING, &mta_shared.leaks,
	  "Count only the blocks not freed of KINDS: definite, indirect, possible, reachable, "
	  "unknown, all (a trace recorded with mtrec --reach)", "KINDS" } },
};

static GOptionEntry entries[G_N_ELEMENTS (all_entries) + 1];

const GOptionEntry *
mta_shared_entries (const MtaSharedSpec *spec)
{
	guint n = 0;

	for (gsize i = 0; spec != NULL && i < G_N_ELEMENTS (all_entries); i++) {
		if (!(spec->set & all_entries[i].set))
			continue;
		GOptionEntry e = all_entries[i].entry;
		if (all_entries[i].set == MTA_SHARED_JSON && spec->json_help != NULL)
			e.description = spec->json_help;
		else if (all_entries[i].set == MTA_SHARED_HTML && spec->html_help != NULL)
			e.description = spec->html_help;
		else if (all_entries[i].set == MTA_SHARED_LEAKS && spec->leaks_help != NULL)
			e.description = spec->leaks_help;
		entries[n++] = e;
	}
	entries[n] = (GOptionEntry) { NULL };
	return entries;
}

gboolean
mta_shared_wrappers (MtaWrappers **out, GError **error)
{
	*out = NULL;
	if (mta_shared.no_skip)
		return TRUE;
	MtaWrappers *w = mta_wrappers_new ();
	if (!mta_wrappers_load_default (w, error)) {
		mta_wrappers_free (w);
		return FALSE;
	}
	for (char **p = mta_shared.skip; p && *p; p++)
		mta_wrappers_add (w, *p);
	*out = w;
	return TRUE;
}

gboolean
mta_shared_leak_kinds (guint *kinds, GError **error)
{
	*kinds = 0;
	return mta_shared.leaks == NULL || mta_reach_parse_kinds (mta_shared.leaks, kinds, error);
}
