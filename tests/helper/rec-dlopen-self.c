/* rec-dlopen-self: a program that was not started with the recorder
 * preloaded loads it with dlopen() (issue 24, point 7;
 * tests/t2365-recorder-refusals.sh).
 *
 *   rec-dlopen-self LIBMTREC
 *        dlopen()s LIBMTREC (RTLD_NOW | RTLD_GLOBAL), then makes 1000
 *        malloc/free pairs and frees a block allocated before; "done"
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

int main(int argc, char **argv)
{
	void *before = malloc(100);

	if (argc != 2) {
		fprintf(stderr, "usage: rec-dlopen-self LIBMTREC\n");
		return 2;
	}
	if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "rec-dlopen-self: %s\n", dlerror());
		return 2;
	}
	for (int i = 0; i < 1000; i++) {
		void *p = malloc(16 + (size_t)i);

		sink = p;
		free(p);
	}
	free(before);
	printf("done\n");
	return 0;
}
