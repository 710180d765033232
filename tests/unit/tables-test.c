/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tables-test.c -- unit test of the recorder's tables: caller strings
 * (recorder/tables-caller.c), interned stacks (tables-stack.c) and loaded
 * objects (tables-objects.c), alone, without the chunk writer above them.
 *
 *   - a caller's string is exactly what glibc 2.36's tr_where() prints,
 *     from dladdr(); a miss is NULL until the entry is added; adds from
 *     several threads at once make one entry per address; the table grows;
 *     a reset forgets; a nested add (its lock held by its own thread, as
 *     under a signal handler) gets the lookup-free "@ [0xADDR] " form;
 *   - a stack gets one id, the same for the same frames; its definition
 *     line; the part it was last defined in starts at 0; a fork child
 *     starts the ids over;
 *   - objects: the first sync hands every loaded object to the sink, the
 *     next nothing; a dlopen'ed library gets an "# object" line with its
 *     path, its dlclose an "# unload" line with the same range and path;
 *     the text of the present objects follows.
 *
 * Usage: tables-test LIB (a shared library to dlopen).  Prints "# ..."
 * lines and a last line "PASS" or "FAIL N".
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "tables.h"
#include "unit-check.h"

#define NCALLERS 20000
#define NTHREADS 4


/* What glibc 2.36's tr_where() prints for addr. */
static void glibc_where(const void *addr, char *buf, size_t cap)
{
	Dl_info info;

	if (!dladdr(addr, &info) || !info.dli_fname) {
		snprintf(buf, cap, "@ [%p] ", addr);
	} else if (!info.dli_sname) {
		snprintf(buf, cap, "@ %s:[0x%lx] ", info.dli_fname,
			 (unsigned long)((const char *)addr - (const char *)info.dli_fbase));
	} else {
		int plus = (const char *)addr >= (const char *)info.dli_saddr;
		unsigned long off = plus ? (unsigned long)((const char *)addr - (const char *)info.dli_saddr)
					 : (unsigned long)((const char *)info.dli_saddr - (const char *)addr);
		snprintf(buf, cap, "@ %s:(%s%c0x%lx)[0x%lx] ", info.dli_fname, info.dli_sname,
			 plus ? '+' : '-', off,
			 (unsigned long)((const char *)addr - (const char *)info.dli_fbase));
	}
}

/* glibc prints "%s%c%#tx": the offset with "0x" ... and so do we. */
static int same_text(const struct mtrec_caller *c, const char *want)
{
	return c && c->len == strlen(want) && memcmp(c->text, want, c->len) == 0;
}

static const char *callers_base;

static void *add_callers(void *arg)
{
	long t = (long)arg;

	/* Every thread adds every caller, in its own order. */
	for (long i = 0; i < NCALLERS; i++) {
		long k = (i * (2 * t + 1)) % NCALLERS;
		const struct mtrec_caller *c = mtrec_caller_add(callers_base + k);
		CHECK(c && c->addr == callers_base + k, "add returned another caller");
	}
	return NULL;
}

static void test_callers(void)
{
	const void *here = (const void *)test_callers;
	const void *libc_fn = (const void *)strlen;
	const struct mtrec_caller *c, *again;
	pthread_t th[NTHREADS];
	char want[4096];

	CHECK(mtrec_caller_find(here) == NULL, "an entry before any add");
	c = mtrec_caller_add(here);
	glibc_where(here, want, sizeof(want));
	CHECK(same_text(c, want), "'%.*s' where glibc says '%s'", c ? c->len : 0, c ? c->text : "", want);
	CHECK(mtrec_caller_find(here) == c, "the entry added is not found");
	again = mtrec_caller_add(libc_fn);
	glibc_where(libc_fn, want, sizeof(want));
	CHECK(same_text(again, want), "'%.*s' where glibc says '%s'", again->len, again->text, want);

	/* Many callers from several threads: one entry each, all found. */
	callers_base = (const char *)test_callers;
	for (long t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, add_callers, (void *)t);
	for (long t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	for (long k = 0; k < NCALLERS; k++) {
		c = mtrec_caller_find(callers_base + k);
		if (!c || c->addr != callers_base + k || c != mtrec_caller_add(callers_base + k)) {
			CHECK(0, "caller %ld: not one entry", k);
			break;
		}
	}

	/* Under a signal handler nested in its own thread's add. */
	mtrec_held |= MTREC_LOCK_CALLER;
	c = mtrec_caller_add((const char *)here + 1 + NCALLERS);
	mtrec_held &= ~MTREC_LOCK_CALLER;
	snprintf(want, sizeof(want), "@ [%p] ", (const void *)((const char *)here + 1 + NCALLERS));
	CHECK(same_text(c, want), "nested: '%.*s' where '%s' was due", c->len, c->text, want);
	CHECK(mtrec_caller_find((const char *)here + 1 + NCALLERS) == NULL, "nested: an entry was made");

	mtrec_caller_reset();
	CHECK(mtrec_caller_find(here) == NULL, "an entry after the reset");
}

static void test_stacks(void)
{
	void *a[3] = { (void *)0x1000, (void *)0x2000, (void *)0x3000 };
	void *b[2] = { (void *)0x1000, (void *)0x2000 };
	struct mtrec_stack *sa, *sb;
	char buf[256], *end;

	CHECK(mtrec_stack_find(a, 3) == NULL, "a stack before any add");
	sa = mtrec_stack_add(a, 3);
	CHECK(sa && mtrec_stack_id_of(sa) == 1, "the first stack's id is not 1");
	CHECK(mtrec_stack_find(a, 3) == sa && mtrec_stack_add(a, 3) == sa, "the same frames, another stack");
	CHECK(mtrec_stack_find(b, 2) == NULL, "a prefix found as the stack");
	sb = mtrec_stack_add(b, 2);
	CHECK(sb && mtrec_stack_id_of(sb) == 2, "the second stack's id is not 2");
	CHECK(sa && *mtrec_stack_part(sa) == 0, "a new stack already defined in a part");
	if (!sa)
		return;
	CHECK(mtrec_stack_def_room(sa) < sizeof(buf), "room for a definition");
	end = mtrec_stack_put_def(buf, sa);
	*end = '\0';
	CHECK(strcmp(buf, "# stack 1 0x1000 0x2000 0x3000\n") == 0, "definition '%s'", buf);

	/* Growth: many stacks, all found again with their own ids. */
	for (unsigned long i = 0; i < 50000; i++) {
		void *ips[2] = { (void *)(0x10000 + i), (void *)i };
		struct mtrec_stack *s = mtrec_stack_add(ips, 2);
		if (!s || mtrec_stack_id_of(s) != i + 3) {
			CHECK(0, "stack %lu: id %lu", i, s ? mtrec_stack_id_of(s) : 0);
			break;
		}
	}
	for (unsigned long i = 0; i < 50000; i += 997) {
		void *ips[2] = { (void *)(0x10000 + i), (void *)i };
		CHECK(mtrec_stack_find(ips, 2) != NULL, "stack %lu lost in the growth", i);
	}

	mtrec_held |= MTREC_LOCK_STACK;
	CHECK(mtrec_stack_add((void *[]){ (void *)1 }, 1) == NULL, "a nested add made an entry");
	mtrec_held &= ~MTREC_LOCK_STACK;

	mtrec_stack_fork_child();
	CHECK(mtrec_stack_find(a, 3) == NULL, "a stack kept in the child");
	sb = mtrec_stack_add(b, 2);
	CHECK(sb && mtrec_stack_id_of(sb) == 1, "the child's ids do not start over");
}

/* The sink: lines collected into one text. */
static char sunk[1 << 20];
static size_t sunk_len;

static void sink(const char *line, size_t len)
{
	if (sunk_len + len + 1 < sizeof(sunk)) {
		memcpy(sunk + sunk_len, line, len);
		sunk_len += len;
		sunk[sunk_len++] = '\n';
		sunk[sunk_len] = '\0';
	}
}

/* "# object BIAS LOW-HIGH BUILDID PATH" for path in sunk: BIAS LOW-HIGH. */
static int object_range(const char *path, char *range, size_t cap)
{
	char want[4200], *p;

	snprintf(want, sizeof(want), " %s\n", path);
	for (p = sunk; (p = strstr(p, "# object ")) != NULL; p++) {
		char *nl = strchr(p, '\n');
		if (nl && nl - p > (long)strlen(want) - 1 &&
		    memcmp(nl - strlen(want) + 1, want, strlen(want)) == 0) {
			char *sp = strchr(p + 9, ' ');
			sp = sp ? strchr(sp + 1, ' ') : NULL;
			if (!sp || (size_t)(sp - (p + 9)) >= cap)
				return 0;
			memcpy(range, p + 9, (size_t)(sp - (p + 9)));
			range[sp - (p + 9)] = '\0';
			return 1;
		}
	}
	return 0;
}

/* The objects' text as a part zone gets it. */
static char zone[1 << 20];

static const char *objects_text(size_t *len)
{
	*len = (size_t)(mtrec_objects_put(zone, zone + sizeof(zone)) - zone);
	return zone;
}

static void test_objects(const char *lib)
{
	char range[128], want[4400];
	size_t text_len;
	const char *text;
	void *h;

	mtrec_objects_sync(sink);
	CHECK(strstr(sunk, "# object ") == sunk, "the first sync wrote no object first");
	CHECK(strstr(sunk, "libc.so") != NULL, "libc is not described");
	text = objects_text(&text_len);
	CHECK(text_len == sunk_len && memcmp(text, sunk, text_len) == 0, "the text is not the lines written");
	sunk_len = 0;
	sunk[0] = '\0';
	mtrec_objects_sync(sink);
	CHECK(sunk_len == 0, "a second sync wrote '%s'", sunk);

	h = dlopen(lib, RTLD_NOW);
	CHECK(h != NULL, "dlopen '%s': %s", lib, dlerror());
	if (!h)
		return;
	mtrec_objects_sync(sink);
	CHECK(object_range(lib, range, sizeof(range)), "no object line for '%s' in '%s'", lib, sunk);
	text = objects_text(&text_len);
	CHECK(memmem(text, text_len, lib, strlen(lib)) != NULL, "the text lacks the new object");
	sunk_len = 0;
	dlclose(h);
	mtrec_objects_sync(sink);
	snprintf(want, sizeof(want), "# unload %s %s\n", range, lib);
	CHECK(strcmp(sunk, want) == 0, "'%s' where '%s' was due", sunk, want);
	text = objects_text(&text_len);
	CHECK(memmem(text, text_len, lib, strlen(lib)) == NULL, "the text keeps the unloaded object");

	/* A fork child describes every object again. */
	sunk_len = 0;
	mtrec_objects_fork_child();
	mtrec_objects_sync(sink);
	CHECK(strstr(sunk, "libc.so") != NULL, "the child does not describe libc again");
}

int main(int argc, char **argv)
{
	const char *lib = argc > 1 ? argv[1] : "./libtables-obj.so";

	prim_loader_init(dl_iterate_phdr);	/* what the shim's bootstrap does */

	test_callers();
	test_stacks();
	test_objects(lib);
	return verdict();
}
