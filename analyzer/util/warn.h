/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* warn.h -- how every part of the analyzer hands a warning up: to the
 * function main.c passes down, which prints it (once, at the edge). */
#ifndef MTA_WARN_H
#define MTA_WARN_H

#include <glib.h>

typedef void (*MtaWarnFunc) (const char *message, gpointer user_data);

#endif
