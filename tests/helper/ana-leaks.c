/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-leaks.c -- a program with known leaks for the analyzer's tests.
 *
 * It calls mtrace() so that glibc's libc_malloc_debug.so traces it (our
 * recorder traces it either way).  Leaks from a static function, from
 * main, through realloc and strdup (a caller inside libc), plus blocks
 * that are freed.  Arguments:
 *   l        also leak from libana-leak.so (build with -DWITH_LIB, linked)
 *   d LIB    dlopen LIB, leak from its ana_lib_leak, dlclose it
 */
#include <dlfcn.h>
#include <mcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITH_LIB
void *ana_lib_leak (int n);
#endif

__attribute__((noinline)) static void *
leaky (int n)
{
	return malloc (n);
}

__attribute__((noinline)) static void *
zeroed (int n)
{
	return calloc (1, n);
}

int
main (int argc, char **argv)
{
	mtrace ();
	void *a = leaky (10);
	void *b = malloc (100);
	b = realloc (b, 200);
	char *s = strdup ("hello, leak");
	free (a);
	for (int i = 0; i < 3; i++)
		leaky (20 + i);
	void *z = zeroed (48);
	free (zeroed (64));
	for (int i = 1; i < argc; i++) {
#ifdef WITH_LIB
		if (strcmp (argv[i], "l") == 0)
			ana_lib_leak (33);
#endif
		if (strcmp (argv[i], "d") == 0 && i + 1 < argc) {
			void *h = dlopen (argv[++i], RTLD_NOW);
			if (h == NULL) {
				fprintf (stderr, "%s\n", dlerror ());
				return 2;
			}
			void *(*f) (int) = (void *(*) (int)) dlsym (h, "ana_lib_leak");
			f (44);
			dlclose (h);
		}
	}
	(void) s;
	(void) z;
	return 0;
}
