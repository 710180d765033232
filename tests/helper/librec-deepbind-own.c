/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-deepbind-own.c -- a plugin with an allocator of its own, loaded
 * with RTLD_DEEPBIND by tests/helper/rec-deepbind-main (tests/t2330): its
 * calls to malloc and free bind to its own definitions, which the
 * recorder must leave alone (its free given a libc block would crash). */
#include <stddef.h>
#include <string.h>

void *malloc(size_t size);
void free(void *p);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void *plug_run(void **blocks, int n);

static char arena[1 << 16] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t size)
{
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (size > sizeof(arena) - used)
		return NULL;
	p = arena + used;
	used += size;
	return p;
}

void free(void *p)
{
	/* A block not from the arena would be a bug of the recorder's. */
	if (p && ((char *)p < arena || (char *)p >= arena + sizeof(arena)))
		__builtin_trap();
}

void *calloc(size_t n, size_t size)
{
	void *p = n && size > sizeof(arena) / n ? NULL : malloc(n * size);

	return p ? memset(p, 0, n * size) : NULL;
}

void *realloc(void *p, size_t size)
{
	void *q = malloc(size);

	if (q && p)
		memcpy(q, p, size);	/* the arena is large enough to read */
	free(p);
	return q;
}

/* The blocks are the program's: not ours to free.  Nothing is handed back. */
void *plug_run(void **blocks, int n)
{
	void *volatile p;

	(void)blocks, (void)n;
	for (int i = 0; i < 100; i++) {
		p = malloc(24);
		free(p);
		p = realloc(calloc(2, 8), 40);
		free(p);
	}
	return NULL;
}
