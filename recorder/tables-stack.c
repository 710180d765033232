/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tables-stack.c -- interned call stacks (MTREC_DEPTH > 1).
 *
 * Each distinct stack gets an id; its definition, "# stack ID IP...", is
 * written by events.c just before an event that uses it, once per part
 * of the trace (so that each part can be read alone).  Lookups take no
 * lock: entries are published by storing their pointer last, and a full
 * table is replaced by a larger copy.  A miss is the caller's to act on. */
#include "lock.h"
#include "tables.h"
#include "words.h"

#include <string.h>

#define ARENA_BLOCK (1u << 20)

struct mtrec_stack {
	uint64_t hash;
	unsigned long id;
	unsigned part;		/* the part its definition was last written in */
	int n;
	void *ips[];
};

struct stable {
	size_t mask, used;
	struct mtrec_stack *slots[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct stable *table;
static unsigned long next_id;
static char *arena;
static size_t arena_left;

/* Four lanes, so that a deep stack is not a chain of 64 dependent
 * multiplications (a third of the time of a depth-64 event). */
static uint64_t hash_ips(void *const *ips, int n)
{
	uint64_t h[4] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9e3779b97f4a7c15ull,
			  0xc2b2ae3d27d4eb4full };
	int i = 0;

	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			h[k] = (h[k] ^ (uintptr_t)ips[i + k]) * 0x100000001b3ull;
	for (; i < n; i++)
		h[0] = (h[0] ^ (uintptr_t)ips[i]) * 0x100000001b3ull;
	h[0] ^= (h[1] * 0x9e3779b97f4a7c15ull) ^ (h[2] * 0xc2b2ae3d27d4eb4full) ^ h[3] ^ (uint64_t)n;
	return h[0] ^ (h[0] >> 29);
}

/* The stacks this thread's last events used, by their innermost frame: a
 * loop's malloc and free find theirs with one comparison, no hash.  The
 * entries are immutable once published; a signal handler that replaces a
 * slot meanwhile only costs the lookup it makes. */
#define RECENT 8
static __thread struct mtrec_stack *recent[RECENT];

/* Call sites a few bytes apart (a loop's malloc and free) must not share
 * a slot: the low bits decide. */
static inline unsigned recent_slot(void *const *ips)
{
	uintptr_t a = (uintptr_t)ips[0];
	return (unsigned)((a ^ (a >> 3) ^ (a >> 6)) % RECENT);
}

static inline void remember(void *const *ips, int n, struct mtrec_stack *s)
{
	if (s && n > 0)
		recent[recent_slot(ips)] = s;
}

static int same(const struct mtrec_stack *s, uint64_t h, void *const *ips, int n)
{
	return s->hash == h && s->n == n && memcmp(s->ips, ips, (size_t)n * sizeof(void *)) == 0;
}

static struct mtrec_stack *lookup(const struct stable *t, uint64_t h, void *const *ips, int n)
{
	for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
		struct mtrec_stack *s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!s || same(s, h, ips, n))
			return s;
	}
}

static void insert(struct stable *t, struct mtrec_stack *s)
{
	size_t i = s->hash & t->mask;

	while (t->slots[i])
		i = (i + 1) & t->mask;
	__atomic_store_n(&t->slots[i], s, __ATOMIC_RELEASE);
	t->used++;
}

static struct stable *with_room(struct stable *t)
{
	size_t n = t ? 4 * (t->mask + 1) : 16384;
	struct stable *bigger;

	if (t && 2 * (t->used + 1) <= t->mask + 1)
		return t;
	bigger = prim_map_anon(sizeof(*bigger) + n * sizeof(struct mtrec_stack *));
	if (!bigger)
		return t && t->used < t->mask ? t : NULL;
	bigger->mask = n - 1;
	for (size_t i = 0; t && i <= t->mask; i++)
		if (t->slots[i])
			insert(bigger, t->slots[i]);
	__atomic_store_n(&table, bigger, __ATOMIC_RELEASE);
	return bigger;
}

static struct mtrec_stack *new_stack(uint64_t h, void *const *ips, int n)
{
	size_t len = (sizeof(struct mtrec_stack) + (size_t)n * sizeof(void *) + 15) & ~(size_t)15;
	struct mtrec_stack *s;

	if (len > arena_left) {
		if ((arena = prim_map_anon(ARENA_BLOCK)) == NULL)
			return NULL;
		arena_left = ARENA_BLOCK;
	}
	s = (struct mtrec_stack *)arena;
	arena += len;
	arena_left -= len;
	s->hash = h;
	s->n = n;
	s->id = ++next_id;
	s->part = 0;
	memcpy(s->ips, ips, (size_t)n * sizeof(void *));
	return s;
}

unsigned long mtrec_stack_id_of(const struct mtrec_stack *st)
{
	return st->id;
}

unsigned *mtrec_stack_part(struct mtrec_stack *st)
{
	return &st->part;
}

size_t mtrec_stack_def_room(const struct mtrec_stack *st)
{
	return mtrec_word_len(MTREC_W_STACK) + sizeof("18446744073709551615\n") +
	       (size_t)st->n * sizeof(" 0x0123456789abcdef");
}

char *mtrec_stack_put_def(char *o, const struct mtrec_stack *st)
{
	char *lim = o + mtrec_stack_def_room(st);

	o = prim_puts(o, lim, mtrec_word(MTREC_W_STACK));
	o = prim_putu(o, lim, st->id);
	for (int i = 0; i < st->n; i++) {
		o = prim_puts(o, lim, " 0x");
		o = prim_putx(o, lim, (uintptr_t)st->ips[i]);
	}
	*o++ = '\n';
	return o;
}

MTREC_COLD struct mtrec_stack *mtrec_stack_add(void *const *ips, int n)
{
	uint64_t h = hash_ips(ips, n);
	struct stable *t;
	struct mtrec_stack *s;

	/* Nested in this thread's own insertion (a signal handler): the
	 * event goes without its stack. */
	if (mtrec_lock(&lock, MTREC_LOCK_STACK) < 0)
		return NULL;
	t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (t && (s = lookup(t, h, ips, n)) != NULL)
		goto out;
	if ((t = with_room(t)) == NULL || (s = new_stack(h, ips, n)) == NULL) {
		s = NULL;
		goto out;
	}
	insert(t, s);
out:
	mtrec_unlock(&lock, MTREC_LOCK_STACK);
	remember(ips, n, s);
	return s;
}

struct mtrec_stack *mtrec_stack_find(void *const *ips, int n)
{
	const struct stable *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct mtrec_stack *s;

	if (unlikely(t == NULL))
		return NULL;
	if (unlikely(n <= 0))
		return lookup(t, hash_ips(ips, n), ips, n);
	s = recent[recent_slot(ips)];
	if (likely(s != NULL) && s->n == n && memcmp(s->ips, ips, (size_t)n * sizeof(void *)) == 0)
		return s;
	s = lookup(t, hash_ips(ips, n), ips, n);
	remember(ips, n, s);
	return s;
}

/* The child's table starts empty, and so do the forking thread's recent
 * stacks (the only thread there); the unwinder's tags, entries of the
 * parent's table, are forgotten beside it (life.c). */
void mtrec_stack_fork_child(void)
{
	pthread_mutex_init(&lock, NULL);
	table = NULL;
	next_id = 0;
	memset(recent, 0, sizeof(recent));
}
