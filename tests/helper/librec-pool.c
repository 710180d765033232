/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-pool.c -- a pool allocator in a shared library, for MTREC_TRACK's
 * tests (t2600-t2619): objects are carved from one malloc'd arena, so
 * malloc alone sees one block, freed at pool_fini(), and no leak.
 * pool_dup() calls pool_get() through the library's own PLT (an exported
 * function, built without -Bsymbolic): a call inside the library that
 * tracking must see too.  Built with -DUSE_MTREC_API, it tells the
 * recorder of its objects itself through mtrec.h (kind "pool"). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifdef USE_MTREC_API
#include "mtrec.h"
#else
#define mtrec_alloc(kind, p, size) ((void)0)
#define mtrec_free(kind, p) ((void)0)
#endif

#define POOL_OBJ 64
#define POOL_SLOTS 8192

void pool_init(void);
void pool_fini(void);
void *pool_get(size_t size);
void pool_put(void *p);
void *pool_dup(const void *src, size_t size);

static char *arena;
static unsigned char used[POOL_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void pool_init(void)
{
	arena = malloc((size_t)POOL_SLOTS * POOL_OBJ);
}

void pool_fini(void)
{
	free(arena);
	arena = NULL;
}

void *pool_get(size_t size)
{
	void *p = NULL;

	if (size > POOL_OBJ || !arena)
		return NULL;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < POOL_SLOTS && !p; i++)
		if (!used[i]) {
			used[i] = 1;
			p = arena + (size_t)i * POOL_OBJ;
		}
	pthread_mutex_unlock(&lock);
	if (p)
		mtrec_alloc("pool", p, size);
	return p;
}

void pool_put(void *p)
{
	if (!p)
		return;
	mtrec_free("pool", p);
	pthread_mutex_lock(&lock);
	used[((char *)p - arena) / POOL_OBJ] = 0;
	pthread_mutex_unlock(&lock);
}

void *pool_dup(const void *src, size_t size)
{
	void *p = pool_get(size);	/* through the PLT: POOL-DUP-GET */

	if (p)
		memcpy(p, src, size);
	return p;
}
