/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libana-leak.c -- a shared library that leaks, for the analyzer's tests
 * (linked into ana-leaks, or dlopen'ed and dlclose'd by it). */
#include <stdlib.h>

__attribute__((noinline)) static void *
lib_alloc (int n)
{
	return malloc (n);
}

void *
ana_lib_leak (int n)
{
	void *keep = lib_alloc (n);
	free (malloc (n * 2));
	return keep;
}
