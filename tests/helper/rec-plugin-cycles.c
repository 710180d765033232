/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-plugin-cycles: a daemon that loads and unloads a plugin all day
 * (t2320).  CYCLES times: dlopen PLUGIN, call its plug_work() (which
 * allocates twice and frees once), free what it returned, dlclose.  Prints
 * "rss AT KB" after a tenth of the cycles and after the last, from
 * /proc/self/status.  It calls mtrace(), for glibc's tracer.
 *
 * usage: rec-plugin-cycles PLUGIN CYCLES */
#include <dlfcn.h>
#include <mcheck.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "VmRSS:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	int cycles = argc > 2 ? atoi(argv[2]) : 0;

	if (argc < 3 || cycles < 10)
		return 2;
	mtrace();
	for (int i = 0; i < cycles; i++) {
		void *h = dlopen(argv[1], RTLD_NOW);
		void *(*work)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 1;
		}
		*(void **)&work = dlsym(h, "plug_work");
		free(work(16 + i % 64));
		dlclose(h);
		if (i + 1 == cycles / 10 || i + 1 == cycles)
			printf("rss %d %ld\n", i + 1, rss_kb());
	}
	return 0;
}
