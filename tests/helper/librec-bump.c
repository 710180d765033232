/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* librec-bump.so: an allocator that signal handlers may call (tests/t2300).
 *
 * glibc's malloc is not reentrant: a program whose signal handler
 * allocates while the program is inside malloc is undefined, with or
 * without a recorder (its tcache aborts with "double free detected" now
 * and then).  Preloaded after libmtrec.so, this allocator makes such a
 * program well defined, so that any event missing from its trace is the
 * recorder's fault.  It hands out memory from one reservation with an
 * atomic add and never reuses it: free() does nothing, realloc() copies. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define ARENA ((size_t)16 << 30)

static char *arena;
static size_t used;

static char *get_arena(void)
{
	char *a = __atomic_load_n(&arena, __ATOMIC_ACQUIRE), *fresh;

	if (a)
		return a;
	fresh = mmap(NULL, ARENA, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (fresh == MAP_FAILED)
		return NULL;
	if (!__atomic_compare_exchange_n(&arena, &a, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		munmap(fresh, ARENA);
		return a;
	}
	return fresh;
}

/* Each block is preceded by its size, and aligned to align (>= 16). */
static void *bump(size_t size, size_t align)
{
	char *a = get_arena();
	size_t need, off, start;

	if (!a || size > ARENA / 2 || align > 4096)
		return NULL;
	if (align < 16)
		align = 16;
	need = (size + 16 + 2 * align + 15) & ~(size_t)15;
	off = __atomic_fetch_add(&used, need, __ATOMIC_RELAXED);
	if (off + need > ARENA)
		return NULL;
	start = (off + 16 + align - 1) & ~(align - 1);
	((size_t *)(a + start))[-1] = size;
	return a + start;
}

void *malloc(size_t size)
{
	return bump(size, 16);
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return bump(bytes, 16);	/* fresh anonymous memory is zero */
}

void *realloc(void *old, size_t size)
{
	void *p;

	if (size == 0 && old)
		return NULL;
	p = bump(size, 16);
	if (p && old) {
		size_t was = ((size_t *)old)[-1];
		memcpy(p, old, was < size ? was : size);
	}
	return p;
}

void *memalign(size_t align, size_t size)
{
	return bump(size, align);
}

void *aligned_alloc(size_t align, size_t size)
{
	return bump(size, align);
}

int posix_memalign(void **out, size_t align, size_t size)
{
	void *p = bump(size, align);

	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t size)
{
	return bump(size, 4096);
}

void *pvalloc(size_t size)
{
	return bump((size + 4095) & ~(size_t)4095, 4096);
}

size_t malloc_usable_size(void *p)
{
	return p ? ((size_t *)p)[-1] : 0;
}
