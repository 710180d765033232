/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-gluster-wrappers.c -- leaks through allocation wrappers shaped like
 * GlusterFS's (t4005): __gf_calloc and __gf_malloc (libglusterfs's
 * mem-pool.c, without the accounting header), mem_get0 over __gf_calloc
 * and gf_strdup over __gf_malloc, called from three functions that leak
 * 4, 3 and 2 blocks (LEAK-x comments mark the lines).  With argument
 * "pool" the leaks go instead through slab_take, a pool of this program's
 * own that no wrapper list knows, from three callers (POOL-x).  Built with
 * -DDIFFERENT it is another build of the same program (another build-id).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink[32];
static int nsink;

__attribute__((noinline)) void *
__gf_calloc (size_t nmemb, size_t size, uint32_t type, const char *typestr)
{
	(void) type, (void) typestr;
	return calloc (nmemb, size);   /* GF-CALLOC */
}

__attribute__((noinline)) void *
__gf_malloc (size_t size, uint32_t type, const char *typestr)
{
	(void) type, (void) typestr;
	return malloc (size);
}

__attribute__((noinline)) void *
mem_get0 (size_t size)
{
	return __gf_calloc (1, size, 7, "gf_common_mt_mem_pool");
}

__attribute__((noinline)) char *
gf_strdup (const char *s)
{
	size_t n = strlen (s) + 1;
	char *d = __gf_malloc (n, 3, "gf_common_mt_strdup");
	return memcpy (d, s, n);
}

__attribute__((noinline)) void *
slab_take (size_t size)
{
	return malloc (size);   /* SLAB-CALL */
}

__attribute__((noinline)) static void
inode_new (void)
{
	sink[nsink++] = __gf_calloc (1, 64, 1, "gf_common_mt_inode_t");  /* LEAK-INODE */
}

__attribute__((noinline)) static void
dict_new (void)
{
	sink[nsink++] = mem_get0 (48);  /* LEAK-DICT */
}

__attribute__((noinline)) static void
xlator_set_name (void)
{
	sink[nsink++] = gf_strdup ("posix-brick");  /* LEAK-NAME */
}

__attribute__((noinline)) static void
fd_create (void)
{
	sink[nsink++] = slab_take (40);  /* POOL-FD */
}

__attribute__((noinline)) static void
stub_new (void)
{
	sink[nsink++] = slab_take (24);  /* POOL-STUB */
}

__attribute__((noinline)) static void
frame_new (void)
{
	sink[nsink++] = slab_take (16);  /* POOL-FRAME */
}

#ifdef DIFFERENT
__attribute__((noinline)) void
another_build (void)
{
	sink[nsink++] = malloc (1);
	free (sink[--nsink]);
}
#endif

int
main (int argc, char **argv)
{
	free (__gf_calloc (1, 1000, 0, "freed"));
	if (argc > 1 && strcmp (argv[1], "pool") == 0) {
		for (int i = 0; i < 3; i++)
			fd_create ();
		for (int i = 0; i < 2; i++)
			stub_new ();
		frame_new ();
		return 0;
	}
	for (int i = 0; i < 4; i++)
		inode_new ();
	for (int i = 0; i < 3; i++)
		dict_new ();
	for (int i = 0; i < 2; i++)
		xlator_set_name ();
	return 0;
}
