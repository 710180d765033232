/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-kinds.c -- call sites at known lines for the tests of tracked
 * kinds (t33xx): other allocators and reference counts.
 *
 * The recorder does not write "# k" lines yet, so the tests write the
 * traces themselves; this program gives them real call sites: each
 * function below calls here() from one marked line, and here() prints
 * "NAME 0xOFFSET", the return address relative to the executable's base,
 * the form of a recorded caller field "@ PATH:[0xOFFSET]".  The analyzer
 * resolves such a field to the marked line.
 */
#include <dlfcn.h>
#include <stdio.h>

#define SITE(name, marker)						\
	static void __attribute__ ((noinline)) name (void)		\
	{								\
		here (#name);						\
		__asm__ volatile ("");	/* no tail call */		\
	}

static void __attribute__ ((noinline))
here (const char *name)
{
	Dl_info di;
	char *ra = __builtin_return_address (0);

	if (dladdr (ra, &di) != 0 && di.dli_fbase != NULL)
		printf ("%s %#lx\n", name, (unsigned long) (ra - (char *) di.dli_fbase));
}

SITE (pool_get_a, POOL-GET-A)
SITE (pool_get_b, POOL-GET-B)
SITE (pool_put, POOL-PUT)
SITE (pool_put_stray, POOL-PUT-STRAY)
SITE (rte_alloc, RTE-ALLOC)
SITE (rte_free, RTE-FREE)
SITE (dict_new, DICT-NEW)
SITE (dict_copy, DICT-COPY)
SITE (dict_unref, DICT-UNREF)
SITE (dict_unref_extra, DICT-UNREF-EXTRA)
SITE (malloc_leak, MALLOC-LEAK)
SITE (malloc_free, MALLOC-FREE)

int
main (void)
{
	pool_get_a ();
	pool_get_b ();
	pool_put ();
	pool_put_stray ();
	rte_alloc ();
	rte_free ();
	dict_new ();
	dict_copy ();
	dict_unref ();
	dict_unref_extra ();
	malloc_leak ();
	malloc_free ();
	return 0;
}
