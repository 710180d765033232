/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-dtor: a library whose constructor allocates a block and whose
 * destructor frees it (as libnuma does its masks), for rec-dtor. */
#include <stdlib.h>

void *rec_dtor_mask;

__attribute__((constructor)) static void take(void)
{
	rec_dtor_mask = malloc(72);
}

__attribute__((destructor)) static void give_back(void)
{
	free(rec_dtor_mask);	/* the library's free */
	rec_dtor_mask = NULL;
}
