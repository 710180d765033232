/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* foreign-format.h -- what a file that is no trace is (foreign-format.c). */
#ifndef MTA_FOREIGN_FORMAT_H
#define MTA_FOREIGN_FORMAT_H

#include <stddef.h>

/* What the first N bytes at P (of a part) say it is, a sentence for a
 * message after its name, or NULL when they say nothing. */
const char *mta_foreign_magic (const char *p, size_t n);

#endif
