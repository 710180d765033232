/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* realloc-turn.c -- libturn.so, preloaded after libmtrec.so, so that it is
 * the allocator the recorder forwards to.  Its realloc moves every block
 * and parks the old one instead of freeing it; its malloc hands the parked
 * block out to the next request of TURN_SIZE bytes.  So another thread can
 * get the old address back while the first is still inside realloc, at
 * the moment the test chooses: between parking and returning, realloc
 * mallocs and frees turn_inner small blocks through the recorder (an
 * allocator that calls malloc inside realloc, which uses up its thread's
 * chunk) and calls the program's turn_hook (see realloc-turn-main.c). */
#include <malloc.h>
#include <stddef.h>
#include <string.h>

#include "realloc-turn.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

void (*turn_hook)(void *old);
int turn_inner;
static void *parked;

void *malloc(size_t n)
{
	void *p = n == TURN_SIZE ? __atomic_exchange_n(&parked, NULL, __ATOMIC_ACQ_REL) : NULL;

	return p ? p : __libc_malloc(n);
}

void free(void *p)
{
	__libc_free(p);
}

void *realloc(void *old, size_t n)
{
	size_t had;
	void *p;

	if (!old)
		return malloc(n);
	if ((p = __libc_malloc(n ? n : 1)) == NULL)
		return NULL;
	had = malloc_usable_size(old);
	memcpy(p, old, had < n ? had : n);
	__atomic_store_n(&parked, old, __ATOMIC_RELEASE);
	/* Through the PLT: the recorder's malloc and free, first in line. */
	for (int i = 0; i < turn_inner; i++)
		free(malloc(16));
	if (turn_hook)
		turn_hook(old);
	return p;
}
