/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-deepbind-threads.c -- threads that load, use and unload a plugin
 * with RTLD_DEEPBIND at once, while another allocates (tests/t2330): the
 * recorder redirects the plugin's call slots while other threads relocate
 * or unmap it.  Each loader thread, CYCLES times: dlopen, dlsym, call
 * plug_work (two allocations, one free), free what it returned, dlclose.
 * usage: rec-deepbind-threads PLUGIN CYCLES */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *plugin;
static int cycles;
static volatile int done;

static void *loader(void *arg)
{
	for (int i = 0; i < cycles; i++) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
		void *(*work)(int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			exit(1);
		}
		*(void **)&work = dlsym(h, "plug_work");
		free(work(16 + i % 64));
		dlclose(h);
	}
	return arg;
}

static void *churn(void *arg)
{
	while (!done) {
		void *volatile p = malloc(32);

		free(p);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[3];

	if (argc < 3)
		return 2;
	plugin = argv[1];
	cycles = atoi(argv[2]);
	pthread_create(&t[2], NULL, churn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, loader, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	done = 1;
	pthread_join(t[2], NULL);
	printf("ok\n");
	return 0;
}
