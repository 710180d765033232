/* rec-stack.c -- interned call stacks (MTREC_DEPTH > 1).
 *
 * Each distinct stack is written once, as "# stack ID IP...", and events
 * refer to it by id.  Lookups take no lock: entries are published by
 * storing their pointer last, and a full table is replaced by a larger
 * copy.  A definition may land in the file after another thread's event
 * that uses it (share/trace-format.md says readers resolve ids at the end). */
#include "rec.h"

#include <string.h>

#define ARENA_BLOCK (1u << 20)

struct stack {
	uint64_t hash;
	unsigned long id;
	int n;
	void *ips[];
};

struct stable {
	size_t mask, used;
	struct stack *slots[];
};

pthread_mutex_t mtrec_stack_lock = PTHREAD_MUTEX_INITIALIZER;
static struct stable *table;
static unsigned long next_id;
static char *arena;
static size_t arena_left;

static uint64_t hash_ips(void *const *ips, int n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < n; i++)
		h = (h ^ (uintptr_t)ips[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int same(const struct stack *s, uint64_t h, void *const *ips, int n)
{
	return s->hash == h && s->n == n && memcmp(s->ips, ips, (size_t)n * sizeof(void *)) == 0;
}

static struct stack *lookup(const struct stable *t, uint64_t h, void *const *ips, int n)
{
	for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
		struct stack *s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!s || same(s, h, ips, n))
			return s;
	}
}

static void insert(struct stable *t, struct stack *s)
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
	bigger = prim_map_anon(sizeof(*bigger) + n * sizeof(struct stack *));
	if (!bigger)
		return t && t->used < t->mask ? t : NULL;
	bigger->mask = n - 1;
	for (size_t i = 0; t && i <= t->mask; i++)
		if (t->slots[i])
			insert(bigger, t->slots[i]);
	__atomic_store_n(&table, bigger, __ATOMIC_RELEASE);
	return bigger;
}

static struct stack *new_stack(uint64_t h, void *const *ips, int n)
{
	size_t len = (sizeof(struct stack) + (size_t)n * sizeof(void *) + 15) & ~(size_t)15;
	struct stack *s;

	if (len > arena_left) {
		if ((arena = prim_map_anon(ARENA_BLOCK)) == NULL)
			return NULL;
		arena_left = ARENA_BLOCK;
	}
	s = (struct stack *)arena;
	arena += len;
	arena_left -= len;
	s->hash = h;
	s->n = n;
	s->id = ++next_id;
	memcpy(s->ips, ips, (size_t)n * sizeof(void *));
	return s;
}

static void write_stack(const struct stack *s)
{
	char buf[64 * 20 + 48], *o = buf, *lim = buf + sizeof(buf);

	o = prim_puts(o, lim, "# stack ");
	o = prim_putu(o, lim, s->id);
	for (int i = 0; i < s->n; i++) {
		o = prim_puts(o, lim, " 0x");
		o = prim_putx(o, lim, (uintptr_t)s->ips[i]);
	}
	mtrec_write_line(buf, (size_t)(o - buf));
}

static MTREC_COLD unsigned long miss(uint64_t h, void *const *ips, int n)
{
	struct stable *t;
	struct stack *s;
	unsigned long id = 0;

	mtrec_objects_sync();	/* frames may lie in a newly loaded object */
	pthread_mutex_lock(&mtrec_stack_lock);
	t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	if (t && (s = lookup(t, h, ips, n)) != NULL) {
		id = s->id;
		goto out;
	}
	if ((t = with_room(t)) == NULL || (s = new_stack(h, ips, n)) == NULL)
		goto out;
	write_stack(s);
	insert(t, s);
	id = s->id;
out:
	pthread_mutex_unlock(&mtrec_stack_lock);
	return id;
}

unsigned long mtrec_stack_id(void *const *ips, int n)
{
	uint64_t h = hash_ips(ips, n);
	const struct stable *t = __atomic_load_n(&table, __ATOMIC_ACQUIRE);
	struct stack *s;

	if (likely(t != NULL) && (s = lookup(t, h, ips, n)) != NULL)
		return s->id;
	return miss(h, ips, n);
}

/* A new file (fork child) has none of the definitions: start over. */
void mtrec_stack_reset(void)
{
	table = NULL;
	next_id = 0;
}
