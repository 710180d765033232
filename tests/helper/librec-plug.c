/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-plug.c -- the plugin that tests/helper/rec-plugin-cycles loads and
 * unloads: one allocation freed inside, one handed to the caller. */
#include <stdlib.h>

void *plug_work(int n);

void *plug_work(int n)
{
	void *volatile p = malloc((size_t)n);

	free(p);
	return malloc(8);
}
