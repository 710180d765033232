/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-deepbind-main.c -- a program that loads a plugin with RTLD_DEEPBIND,
 * as nfs-ganesha loads its FSALs (tests/t2330): the plugin finds libc's
 * malloc in its own scope before the preloaded recorder's.  Blocks cross
 * the boundary both ways: the plugin frees three of ours, we free one of
 * its.  Usage: rec-deepbind-main PLUGIN [now|lazy]; PLUGIN may start with
 * $ORIGIN, which only works when dlopen sees this program as its caller. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *(*plug_run_fn)(void **blocks, int n);

int main(int argc, char **argv)
{
	void *blocks[3];
	int mode = RTLD_LOCAL | RTLD_DEEPBIND;
	Dl_info info;
	void *handle, *handed, *next;
	plug_run_fn run;

	if (argc < 2) {
		fprintf(stderr, "usage: rec-deepbind-main PLUGIN [now|lazy]\n");
		return 2;
	}
	mode |= argc > 2 && strcmp(argv[2], "lazy") == 0 ? RTLD_LAZY : RTLD_NOW;
	for (int i = 0; i < 3; i++)
		blocks[i] = malloc(100 + (size_t)i);
	handle = dlopen(argv[1], mode);
	if (!handle) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	run = (plug_run_fn)dlsym(handle, "plug_run");
	if (!run) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	handed = run(blocks, 3);
	free(handed);
	dlclose(handle);
	/* Where RTLD_NEXT leads from here: the object after this program. */
	next = dlsym(RTLD_NEXT, "malloc");
	if (next && dladdr(next, &info) && info.dli_fname)
		printf("next malloc in %s\n", info.dli_fname);
	printf("ok\n");
	return 0;
}
