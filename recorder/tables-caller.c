/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tables-caller.c -- the "@ CALLER " prefix of event lines, made once per
 * distinct caller address.
 *
 * glibc calls dladdr() and formats the caller on every event, which is most
 * of its cost.  Here each caller is described once, exactly as glibc's
 * tr_where() would, and kept in a table that is read without locks: a slot
 * is published by storing its pointer last, and a full table is replaced
 * by a larger copy (the old one stays valid for readers still in it).  A miss
 * is the caller's to act on (a new caller may sit in an object loaded
 * since it last looked: it describes the objects before it adds one). */
#include "lock.h"
#include "symtab.h"
#include "tables.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_BLOCK (256u << 10)

/* A slot is one pointer, the caller's address inside what it points to:
 * a reader can never pair one caller's address with another's text, so
 * the table can be emptied in place after a dlclose. */
struct ctable {
	size_t mask;
	size_t used;
	const struct mtrec_caller *slots[];
};

static struct ctable *table;	/* read without a lock */
static struct ctable *made;	/* every caller string made, under the lock */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *arena;
static size_t arena_left;

static inline size_t hash(const void *addr)
{
	return (size_t)(((uintptr_t)addr * 0x9e3779b97f4a7c15ull) >> 32);
}

static struct ctable *table_new(size_t nslots)
{
	struct ctable *t = prim_map_anon(sizeof(*t) + nslots * sizeof(const void *));

	if (t)
		t->mask = nslots - 1;
	return t;
}

static const struct mtrec_caller *lookup(const struct ctable *t, const void *addr)
{
	for (size_t i = hash(addr) & t->mask;; i = (i + 1) & t->mask) {
		const struct mtrec_caller *c = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!c || c->addr == addr)
			return c;
	}
}

static void insert(struct ctable *t, const struct mtrec_caller *c)
{
	size_t i = hash(c->addr) & t->mask;

	while (t->slots[i])
		i = (i + 1) & t->mask;
	__atomic_store_n(&t->slots[i], c, __ATOMIC_RELEASE);
	t->used++;
}

/* A copy of t with room for one more entry, or t itself when it has room
 * (at most half full); NULL when memory runs out and t is full.  The old
 * table of *where stays mapped when PUBLISHED (readers may be in it). */
static struct ctable *with_room(struct ctable **where, int published)
{
	struct ctable *t = *where, *bigger;

	if (t && 2 * (t->used + 1) <= t->mask + 1)
		return t;
	bigger = table_new(t ? 4 * (t->mask + 1) : 4096);
	if (!bigger)
		return t && t->used < t->mask ? t : NULL;
	for (size_t i = 0; t && i <= t->mask; i++)
		if (t->slots[i])
			insert(bigger, t->slots[i]);
	__atomic_store_n(where, bigger, __ATOMIC_RELEASE);
	if (t && !published)
		munmap(t, sizeof(*t) + (t->mask + 1) * sizeof(const void *));
	return bigger;
}

/* The string made before for this very caller and text (a plugin loaded
 * again where it was), so that loading and unloading it does not grow
 * the arena. */
static const struct mtrec_caller *made_before(const struct mtrec_caller *n)
{
	const struct mtrec_caller *c;

	for (size_t i = hash(n->addr) & made->mask; (c = made->slots[i]) != NULL;
	     i = (i + 1) & made->mask)
		if (c->addr == n->addr && c->len == n->len && memcmp(c->text, n->text, n->len) == 0)
			return c;
	return NULL;
}

static void *arena_alloc(size_t len)
{
	void *p;

	len = (len + 15) & ~(size_t)15;
	if (len > arena_left) {
		size_t block = len > ARENA_BLOCK ? len : ARENA_BLOCK;
		if ((arena = prim_map_anon(block)) == NULL)
			return NULL;
		arena_left = block;
	}
	p = arena;
	arena += len;
	arena_left -= len;
	return p;
}

/* Undo the last arena_alloc() (its string was made before). */
static void arena_give_back(void *p, size_t len)
{
	len = (len + 15) & ~(size_t)15;
	if ((char *)p + len == arena) {
		arena = p;
		arena_left += len;
	}
}

/* What glibc 2.36's tr_where() prints for this caller. */
struct where {
	const char *fname;	/* NULL when dladdr failed */
	const char *sname;
	uintptr_t off, rel;
	char sign;
};

static size_t where_len(const struct where *w)
{
	size_t len = 2 + 3 + 16 + 2;	/* "@ " "[0x" hex "] " */

	if (w->fname) {
		len += strlen(w->fname) + 1;
		if (w->sname)
			len += strlen(w->sname) + 3 + 16;
	}
	return len;
}

static char *put_where(char *o, char *lim, const struct where *w)
{
	o = prim_puts(o, lim, "@ ");
	if (w->fname) {
		o = prim_puts(o, lim, w->fname);
		o = prim_puts(o, lim, ":");
		if (w->sname) {
			o = prim_puts(o, lim, "(");
			o = prim_puts(o, lim, w->sname);
			o = prim_puts(o, lim, w->sign == '+' ? "+" : "-");
			o = prim_putx(o, lim, w->off);
			o = prim_puts(o, lim, ")");
		}
	}
	o = prim_puts(o, lim, "[0x");
	o = prim_putx(o, lim, w->rel);
	return prim_puts(o, lim, "] ");
}

static void describe(const void *addr, struct where *w)
{
	Dl_info info;

	memset(w, 0, sizeof(*w));
	w->rel = (uintptr_t)addr;
	/* dladdr()'s answer, by binary search (symtab.c): glibc's walks
	 * the whole symbol table, 29,000 symbols per caller in cc1. */
	if (!mtrec_symtab_addr(addr, &info))
		return;
	w->fname = info.dli_fname ? info.dli_fname : "";
	w->rel = (uintptr_t)addr - (uintptr_t)info.dli_fbase;
	if (info.dli_sname) {
		w->sname = info.dli_sname;
		if ((uintptr_t)addr >= (uintptr_t)info.dli_saddr) {
			w->sign = '+';
			w->off = (uintptr_t)addr - (uintptr_t)info.dli_saddr;
		} else {
			w->sign = '-';
			w->off = (uintptr_t)info.dli_saddr - (uintptr_t)addr;
		}
	}
}

/* The fallback when memory for the table runs out: glibc's "@ [0x...] "
 * form needs no lookup, kept in one static entry per thread. */
const struct mtrec_caller *mtrec_caller_unlisted(const void *addr)
{
	/* The text is the entry's own flexible array, so the storage is one
	 * block with room behind it (a member after the entry would start
	 * past its padding, not where c.text does). */
	static __thread union {
		struct mtrec_caller c;
		char bytes[sizeof(struct mtrec_caller) + 40];
	} one;
	char *lim = one.bytes + sizeof(one.bytes);
	char *o = prim_puts(one.c.text, lim, "@ [0x");

	o = prim_putx(o, lim, (uintptr_t)addr);
	o = prim_puts(o, lim, "] ");
	one.c.addr = addr;
	one.c.len = (unsigned short)(o - one.c.text);
	return &one.c;
}

MTREC_COLD const struct mtrec_caller *mtrec_caller_add(const void *addr)
{
	const struct mtrec_caller *c = NULL, *same;
	struct mtrec_caller *fresh;
	struct ctable *t;
	struct where w;
	size_t cap;

	/* dladdr takes the loader's lock: never call it holding ours. */
	describe(addr, &w);
	cap = where_len(&w);
	if (cap > 65000)
		w.sname = NULL;
	/* A signal handler nested in this thread's own insertion cannot
	 * wait for it: it gets the lookup-free form. */
	if (mtrec_lock(&lock, MTREC_LOCK_CALLER) < 0)
		return mtrec_caller_unlisted(addr);
	t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (t && (c = lookup(t, addr)) != NULL)
		goto out;
	if (!(t = with_room(&table, 1)) || !with_room(&made, 0) ||
	    (fresh = arena_alloc(sizeof(*fresh) + cap)) == NULL)
		goto out;
	fresh->addr = addr;
	fresh->len = (unsigned short)(put_where(fresh->text, fresh->text + cap, &w) - fresh->text);
	if ((same = made_before(fresh)) != NULL) {
		arena_give_back(fresh, sizeof(*fresh) + cap);
		c = same;
	} else {
		insert(made, fresh);
		c = fresh;
	}
	insert(t, c);
out:
	mtrec_unlock(&lock, MTREC_LOCK_CALLER);
	return c ? c : mtrec_caller_unlisted(addr);
}

const struct mtrec_caller *mtrec_caller_find(const void *addr)
{
	const struct ctable *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);

	return likely(t != NULL) ? lookup(t, addr) : NULL;
}

/* After dlclose: the table is emptied in place (a reader still in it
 * finds a caller with its own text or nothing); the strings stay. */
void mtrec_caller_reset(void)
{
	struct ctable *t;

	mtrec_symtab_reset();
	if (mtrec_lock(&lock, MTREC_LOCK_CALLER) < 0)
		return;
	if ((t = __atomic_load_n(&table, __ATOMIC_ACQUIRE)) != NULL) {
		for (size_t i = 0; i <= t->mask; i++)
			__atomic_store_n(&t->slots[i], NULL, __ATOMIC_RELEASE);
		t->used = 0;
	}
	mtrec_unlock(&lock, MTREC_LOCK_CALLER);
}

/* The strings stay true in a child (same objects at the same addresses);
 * only the lock, which a vanished thread may hold, is made anew. */
void mtrec_caller_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
}
