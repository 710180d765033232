/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* options.h -- the options that several commands take, declared once:
 * where the traces' files are (--sysroot), quiet, the outputs (--json,
 * --html), the allocation wrappers (--skip, --no-skip) and the kinds of
 * leaks that count (--leaks).  Each command says which of them it takes
 * and how its help describes them; main.c adds them to its parser.
 * Which writer the outputs select is outputs.c's to decide.
 */
#ifndef MTA_OPTIONS_H
#define MTA_OPTIONS_H

#include <glib.h>
#include "wrappers.h"

typedef enum {
	MTA_SHARED_SYSROOT = 1 << 0,
	MTA_SHARED_QUIET = 1 << 1,
	MTA_SHARED_JSON = 1 << 2,
	MTA_SHARED_HTML = 1 << 3,
	MTA_SHARED_SKIP = 1 << 4,    /* --skip and --no-skip */
	MTA_SHARED_LEAKS = 1 << 5,
} MtaSharedSet;

/* The values, as parsed. */
typedef struct {
	char *sysroot;
	gboolean quiet;
	gboolean json;
	char *html;
	char **skip;
	gboolean no_skip;
	char *leaks;
} MtaSharedOptions;

extern MtaSharedOptions mta_shared;

/* Which shared options a command takes, and the help of those whose
 * meaning is the command's (what --json prints and where it is
 * documented, what --html writes, what --leaks selects for). */
typedef struct {
	MtaSharedSet set;
	const char *json_help;
	const char *html_help;
	const char *leaks_help;
} MtaSharedSpec;

/* SPEC's options as GOption entries, NULL-terminated; static storage,
 * built once per call (main.c calls it once). */
const GOptionEntry *mta_shared_entries (const MtaSharedSpec *spec);

/* The wrapper list of --skip and --no-skip: share/wrappers.txt and the
 * patterns given, or *OUT NULL with --no-skip.  FALSE when the default
 * list cannot be read. */
gboolean mta_shared_wrappers (MtaWrappers **out, GError **error);

/* --leaks parsed (1 << MtaReach for each kind); 0 when not given. */
gboolean mta_shared_leak_kinds (guint *kinds, GError **error);

#endif
