/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gf-planted.c -- a planted reference leak against the real
 * libglusterfs.so.0, as in GlusterFS's own write-up: dict_new, three
 * dict_ref at PLANT-REF (named after dht_rmdir_opendir_cbk), two
 * dict_unref at PLANT-UNREF: one reference is never dropped.  Around it,
 * BALANCED dictionaries made and dropped properly.  Built by t2648 and
 * t2650 themselves, not by make (the Makefile leaves gf-*.c out): it
 * links against Debian's libglusterfs0, which may not be installed.
 *
 * Usage: gf-planted [--attached] [N]
 *   N balanced dictionaries before and after the plant (default 100).
 *   --attached: for a recorder attached from outside (t2650): a
 *   dictionary referenced twice before, then "ready PID", asleep until
 *   the file "go" exists; after the work "done PTR", asleep until
 *   "exit", a drop after the detach, and "bye".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Declared here rather than from libglusterfs-dev's headers, whose
 * structures depend on the build's config.h: only pointers cross. */
typedef struct _dict dict_t;
dict_t *dict_new(void);
dict_t *dict_ref(dict_t *dict);
void dict_unref(dict_t *dict);
int dict_set_int32(dict_t *dict, char *key, int32_t val);
void *glfs_new(const char *volname);	/* a ctx with its pools, THIS->ctx set */

static dict_t *planted, *older;

/* Asleep until FILE exists; a test that failed half-way leaves no
 * program waiting for ever: it gives up after 5 minutes. */
static void wait_for(const char *file)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	for (int i = 0; access(file, F_OK) != 0; i++) {
		if (i == 15000)
			exit(3);
		nanosleep(&ts, NULL);
	}
}

static __attribute__((noinline)) void dht_rmdir_opendir_cbk(dict_t *d)
{
	dict_ref(d);	/* PLANT-REF */
	dict_ref(d);	/* PLANT-REF */
	dict_ref(d);	/* PLANT-REF */
}

static __attribute__((noinline)) void dht_rmdir_done(dict_t *d)
{
	dict_unref(d);	/* PLANT-UNREF */
	dict_unref(d);	/* PLANT-UNREF */
}

static __attribute__((noinline)) void balanced(int n)
{
	for (int i = 0; i < n; i++) {
		dict_t *d = dict_new();	/* BALANCED-NEW */

		dict_set_int32(d, "k", i);
		dict_ref(d);	/* BALANCED-REF */
		dict_unref(d);
		dict_unref(d);	/* BALANCED-UNREF */
	}
}

int main(int argc, char **argv)
{
	int attached = argc > 1 && strcmp(argv[1], "--attached") == 0;
	int n = argc > 1 + attached ? atoi(argv[1 + attached]) : 100;

	if (!glfs_new(attached ? "attached" : "planted"))
		return 2;
	if (attached) {
		older = dict_ref(dict_new());	/* two references, before the attach */
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		wait_for("go");
	}
	balanced(n);
	planted = dict_new();	/* PLANT-NEW */
	dht_rmdir_opendir_cbk(planted);
	dht_rmdir_done(planted);
	balanced(n);
	if (!attached)
		printf("%p\n", (void *)planted);
	dict_unref(planted);	/* PLANT-LAST: the creator's reference */
	if (!attached)
		return 0;
	dict_unref(older);	/* OLDER-UNREF */
	printf("done %p\n", (void *)planted);	/* the recorder may go now */
	fflush(stdout);
	wait_for("exit");
	dict_unref(older);	/* after the detach: not seen */
	balanced(n);
	printf("bye\n");
	return 0;
}
