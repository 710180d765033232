/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-nopie: a program built without -fPIE, bound lazily, that takes the
 * addresses of malloc and free (as Debian's python3 does): their address
 * everywhere in the process is then this program's PLT entry.  It
 * allocates through the PLT and through the pointers, frees all but one
 * block, and prints "done".
 *
 * Usage: rec-nopie */
#include <stdio.h>
#include <stdlib.h>

static void *(*volatile alloc_fn)(size_t);
static void (*volatile free_fn)(void *);

int main(void)
{
	/* taken in code, not in initialized data: the link then makes the
	 * PLT entries the functions' canonical addresses */
	alloc_fn = malloc;
	free_fn = free;
	for (int i = 0; i < 100; i++) {
		void *a = malloc(16 + (size_t)i);
		void *b = alloc_fn(32);

		free(b);
		free_fn(a);
	}
	void *kept = alloc_fn(77);	/* the leak */

	printf("done %p\n", kept != NULL ? (void *)"ok" : NULL);
	return 0;
}
