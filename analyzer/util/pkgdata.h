/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pkgdata.h -- where mtanalyze finds its data files (wrappers.txt,
 * schema.sql): $MTA_PKGDATADIR when set, the source tree's share/ when the
 * program runs from its build tree, else the installed $(pkgdatadir).
 */
#ifndef MTA_PKGDATA_H
#define MTA_PKGDATA_H

#include <glib.h>

/* The path of data file NAME, or NULL with ERROR set when it is nowhere. */
char *mta_pkgdata_find (const char *name, GError **error);

/* The contents of data file NAME. */
char *mta_pkgdata_read (const char *name, GError **error);

#endif
