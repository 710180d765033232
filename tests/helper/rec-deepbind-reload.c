/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-deepbind-reload.c -- one plugin loaded, used and unloaded four
 * times, with RTLD_DEEPBIND every other time (tests/t2330): it comes back
 * at the same address with the same name, its slots bound to the
 * recorder one time and past it the next; each time its calls must be
 * recorded.  usage: rec-deepbind-reload PLUGIN */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	for (int k = 0; k < 4; k++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | (k % 2 ? RTLD_DEEPBIND : 0));
		void *(*work)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		*(void **)&work = dlsym(h, "plug_work");
		free(work(10 + k));
		dlclose(h);
	}
	printf("ok\n");
	return 0;
}
