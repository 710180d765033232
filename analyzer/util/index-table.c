/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* index-table.c -- open addressing over indexes, hashed by the caller.
 *
 * The hash is kept in the slot: growing needs no key, and a probe
 * compares an element only when its hash is the one sought.
 */
#include "index-table.h"

/* The caller's hash (g_str_hash, sums of them) mixed, so that linear
 * probing sees its high bits as well. */
static inline size_t
home (guint hash, size_t mask)
{
	uint32_t h = hash;
	h ^= h >> 16;
	h *= 0x7feb352dU;
	h ^= h >> 15;
	h *= 0x846ca68bU;
	h ^= h >> 16;
	return h & mask;
}

void
mta_index_init (MtaIndexTable *t)
{
	t->mask = 255;
	t->count = 0;
	t->slots = g_new0 (uint64_t, t->mask + 1);
}

void
mta_index_release (MtaIndexTable *t)
{
	g_free (t->slots);
	t->slots = NULL;
	t->mask = t->count = 0;
}

gboolean
mta_index_find (const MtaIndexTable *t, guint hash, MtaIndexEqual equal, gconstpointer key,
		gpointer data, uint32_t *index)
{
	for (size_t i = home (hash, t->mask);; i = (i + 1) & t->mask) {
		uint64_t s = t->slots[i];
		if (s == 0)
			return FALSE;
		if ((guint) (s >> 32) == hash && equal ((uint32_t) s - 1, key, data)) {
			*index = (uint32_t) s - 1;
			return TRUE;
		}
	}
}

static void
put (uint64_t *slots, size_t mask, uint64_t s)
{
	size_t i = home ((guint) (s >> 32), mask);
	while (slots[i] != 0)
		i = (i + 1) & mask;
	slots[i] = s;
}

void
mta_index_add (MtaIndexTable *t, guint hash, uint32_t index)
{
	g_assert (index < UINT32_MAX);
	if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
		size_t oldcap = t->mask + 1;
		uint64_t *old = t->slots;
		t->mask = oldcap * 2 - 1;
		t->slots = g_new0 (uint64_t, t->mask + 1);
		for (size_t k = 0; k < oldcap; k++)
			if (old[k] != 0)
				put (t->slots, t->mask, old[k]);
		g_free (old);
	}
	put (t->slots, t->mask, (uint64_t) hash << 32 | (index + 1));
	t->count++;
}
