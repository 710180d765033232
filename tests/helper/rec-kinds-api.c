/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* rec-kinds-api.c -- a pool allocator and a reference-counted object that
 * tell the recorder of themselves through mtrec.h (t2640).  The pool
 * carves objects out of one malloc'd arena, so malloc alone sees no leak
 * but the arena's; the program leaks 3 pool objects at LEAK-POOL and one
 * reference at LEAK-REF.  Two threads churn both meanwhile.
 *
 *   rec-kinds-api [ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtrec.h"

#define SLOTS 4096
#define OBJ 48

static char *arena;
static unsigned char used[SLOTS];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

static void *pool_get(void)
{
	void *p = NULL;

	pthread_mutex_lock(&pool_lock);
	for (int i = 0; i < SLOTS && !p; i++)
		if (!used[i]) {
			used[i] = 1;
			p = arena + (size_t)i * OBJ;
		}
	pthread_mutex_unlock(&pool_lock);
	if (p)
		mtrec_alloc("pool", p, OBJ);
	return p;
}

static void pool_put(void *p)
{
	mtrec_free("pool", p);
	pthread_mutex_lock(&pool_lock);
	used[((char *)p - arena) / OBJ] = 0;
	pthread_mutex_unlock(&pool_lock);
}

struct obj {
	int refs;
	char name[16];
};

static struct obj *obj_new(const char *name)
{
	struct obj *o = pool_get();

	o->refs = 1;
	snprintf(o->name, sizeof o->name, "%s", name);
	mtrec_ref("obj", o);
	return o;
}

static struct obj *obj_ref(struct obj *o)
{
	__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
	mtrec_ref("obj", o);
	return o;
}

static void obj_unref(struct obj *o)
{
	mtrec_unref("obj", o);
	if (__atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0)
		pool_put(o);
}

static void *churn(void *arg)
{
	long rounds = (long)arg;

	for (long i = 0; i < rounds; i++) {
		struct obj *o = obj_new("churn");
		obj_unref(obj_ref(o));
		obj_unref(o);
		pool_put(pool_get());
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;
	pthread_t t[2];
	struct obj *kept;

	arena = malloc((size_t)SLOTS * OBJ);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, (void *)rounds);
	for (int i = 0; i < 3; i++)
		(void)pool_get(); /* LEAK-POOL */
	kept = obj_new("kept");
	obj_ref(kept); /* LEAK-REF */
	obj_unref(kept);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free(arena);
	return 0;
}
