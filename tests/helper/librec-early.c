/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-early.so: a library whose constructor allocates (before the
 * program's own code, possibly before the recorder's constructor) and whose
 * destructor frees, to prove allocations at both ends of a process are
 * recorded consistently. */
#include <stdlib.h>
#include <string.h>

static char *early;

__attribute__((constructor)) static void early_init(void)
{
	early = strdup("allocated by a constructor");
}

__attribute__((destructor)) static void early_fini(void)
{
	free(early);
}
