/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-phdr-alloc: one thread loads and unloads a plugin that allocates
 * (each load makes the recorder look at the object list again), while
 * another walks the object list with dl_iterate_phdr and allocates from
 * inside its callback, from call sites it has not used before -- the
 * order of locks a recorder must survive (t2340).
 *
 * usage: rec-phdr-alloc PLUGIN SECONDS */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void *volatile sink;
static volatile int stop;
static const char *plugin;

/* 256 call sites of malloc, each a caller the recorder has not seen */
#define S(n) case n: sink = malloc(n + 1); break;
#define S8(n) S(n) S(n + 1) S(n + 2) S(n + 3) S(n + 4) S(n + 5) S(n + 6) S(n + 7)
#define S64(n) S8(n) S8(n + 8) S8(n + 16) S8(n + 24) S8(n + 32) S8(n + 40) S8(n + 48) S8(n + 56)

static void alloc_at(unsigned site)
{
	switch (site % 256) {
	S64(0) S64(64) S64(128) S64(192)
	}
	free(sink);
}

static int walk(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned *site = data;

	(void)info;
	(void)size;
	alloc_at((*site)++);
	return 0;
}

static void *walker(void *arg)
{
	unsigned site = 0;

	(void)arg;
	while (!stop)
		dl_iterate_phdr(walk, &site);
	return NULL;
}

static void *loader(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen(plugin, RTLD_NOW);
		void *(*work)(int) = h ? (void *(*)(int))dlsym(h, "plug_work") : NULL;
		if (work == NULL) {
			fprintf(stderr, "rec-phdr-alloc: %s\n", dlerror());
			exit(2);
		}
		free(work(16));
		dlclose(h);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct timespec t = { argc > 2 ? atoi(argv[2]) : 2, 0 };

	plugin = argv[1];
	pthread_create(&a, NULL, loader, NULL);
	pthread_create(&b, NULL, walker, NULL);
	nanosleep(&t, NULL);
	stop = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts("done");
	return 0;
}
