/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ana-stripped.c -- a program whose wrapper has no name once stripped
 * (t4005): xzalloc_cacheline, a static copy of Open vSwitch's (on the
 * default wrapper list), is called from new_port, new_flow and new_bridge,
 * which leak 3, 2 and 1 blocks (LEAK-x comments).  The test strips a copy
 * (no .symtab, as Debian ships ovs-vswitchd) and keeps the debug file
 * apart, so that the wrapper shows as an offset until --skip names it or
 * the debug file is found.
 */
#include <stdlib.h>
#include <string.h>

static void *volatile sink[16];
static int nsink;

__attribute__((noinline)) static void *
xzalloc_cacheline (size_t size)
{
	void *p = malloc ((size + 63) & ~(size_t) 63);  /* CACHELINE-CALL */
	if (p == NULL)
		abort ();
	return memset (p, 0, size);
}

__attribute__((noinline)) static void
new_port (void)
{
	sink[nsink++] = xzalloc_cacheline (100);  /* LEAK-PORT */
}

__attribute__((noinline)) static void
new_flow (void)
{
	sink[nsink++] = xzalloc_cacheline (200);  /* LEAK-FLOW */
}

__attribute__((noinline)) static void
new_bridge (void)
{
	sink[nsink++] = xzalloc_cacheline (300);  /* LEAK-BRIDGE */
}

int
main (void)
{
	for (int i = 0; i < 3; i++)
		new_port ();
	for (int i = 0; i < 2; i++)
		new_flow ();
	new_bridge ();
	return 0;
}
