/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-dlopen-many.c -- loads N copies of a small plugin (DIR/libplug-I.so,
 * made by tests/bench/dlopen.sh), finds and calls plug_work in each, and
 * prints how long that took: the recorder's cost of noticing new objects
 * and redirecting their call slots (issue 10.7).
 * Usage: rec-dlopen-many DIR N [deepbind] */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *(*plug_work_fn)(int n);

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	int n, mode = RTLD_NOW | RTLD_LOCAL;
	char path[4096];
	double t0;

	if (argc < 3) {
		fprintf(stderr, "usage: rec-dlopen-many DIR N [deepbind]\n");
		return 2;
	}
	n = atoi(argv[2]);
	if (argc > 3 && strcmp(argv[3], "deepbind") == 0)
		mode |= RTLD_DEEPBIND;
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		void *h;
		plug_work_fn work;

		snprintf(path, sizeof(path), "%s/libplug-%d.so", argv[1], i);
		if ((h = dlopen(path, mode)) == NULL) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		if ((work = (plug_work_fn)dlsym(h, "plug_work")) == NULL) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return 1;
		}
		free(work(16));
	}
	printf("loaded %d in %.3f ms\n", n, now_ms() - t0);
	return 0;
}
