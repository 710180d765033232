/* demangle.c -- C++ names through libstdc++'s __cxa_demangle, found at
 * run time (dlopen of libstdc++.so.6) rather than linked:
 *
 * - a machine with C++ programs to analyze has libstdc++.so.6 (each of
 *   them needs it), and Debian's apt itself depends on it; where it is
 *   missing there is nothing to demangle;
 * - linking -lstdc++ would make the C++ development package a build
 *   dependency (the unversioned libstdc++.so) and load the C++ runtime,
 *   its static constructors included, into every run of a C program;
 * - libiberty's cplus_demangle is a static archive without pkg-config
 *   (libiberty-dev), not installed with binutils, and its header clashes
 *   with glibc's basename.
 *
 * __cxa_demangle is the demangler of c++filt's and gdb's grammar (GCC's
 * libiberty code compiled into the runtime), so names read as they do. */
#include "demangle.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*CxaDemangle) (const char *mangled, char *buf, size_t *len, int *status);

static CxaDemangle
cxa_demangle (void)
{
	static CxaDemangle fn;
	static gsize once;

	if (g_once_init_enter (&once)) {
		void *h = dlopen ("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (h != NULL)
			fn = (CxaDemangle) dlsym (h, "__cxa_demangle");
		g_once_init_leave (&once, 1);
	}
	return fn;
}

char *
mta_demangle (const char *name)
{
	/* the Itanium ABI's prefix: anything else is a C name, never given
	 * to a demangler that would read "f" as a type */
	if (name == NULL || strncmp (name, "_Z", 2) != 0 || cxa_demangle () == NULL)
		return NULL;
	int status = 0;
	char *d = cxa_demangle () (name, NULL, NULL, &status);
	if (d == NULL || status != 0) {
		free (d);
		return NULL;
	}
	char *r = g_strdup (d);
	free (d);
	return r;
}
