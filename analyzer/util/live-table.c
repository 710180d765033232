/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* live-table.c -- open-addressing tables for live blocks and callers.
 *
 * Both tables probe linearly from a multiplicative hash.  Deletion shifts
 * the following entries of the cluster back (Knuth 6.4 algorithm R), so a
 * trace of billions of malloc/free pairs leaves no tombstones behind.
 */
#include "live-table.h"

#include <string.h>

static inline size_t
hash_addr (uint64_t a)
{
	/* Heap addresses differ in their low bits by multiples of 16. */
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ULL;
	a ^= a >> 32;
	return (size_t) a;
}

void
mta_live_init (MtaLiveTable *t)
{
	t->mask = 1023;
	t->count = 0;
	t->slots = g_new0 (MtaLiveEntry, t->mask + 1);
}

void
mta_live_release (MtaLiveTable *t)
{
	g_free (t->slots);
	t->slots = NULL;
	t->count = 0;
}

MtaLiveEntry *
mta_live_lookup (MtaLiveTable *t, uint64_t addr)
{
	size_t i = hash_addr (addr) & t->mask;
	for (;;) {
		MtaLiveEntry *e = &t->slots[i];
		if (!e->used)
			return NULL;
		if (e->addr == addr)
			return e;
		i = (i + 1) & t->mask;
	}
}

static void
grow (MtaLiveTable *t)
{
	MtaLiveEntry *old = t->slots;
	size_t oldcap = t->mask + 1;

	t->mask = oldcap * 2 - 1;
	t->slots = g_new0 (MtaLiveEntry, t->mask + 1);
	for (size_t k = 0; k < oldcap; k++) {
		if (!old[k].used)
			continue;
		size_t i = hash_addr (old[k].addr) & t->mask;
		while (t->slots[i].used)
			i = (i + 1) & t->mask;
		t->slots[i] = old[k];
	}
	g_free (old);
}

MtaLiveEntry *
mta_live_insert (MtaLiveTable *t, uint64_t addr)
{
	/* at most half full: at 3/4 the backward-shift deletions cost three
	 * times as much (callgrind, 450k-line trace: 9.0M -> 26.2M
	 * instructions), which the memory saved does not pay for */
	if ((t->count + 1) * 2 > t->mask + 1)
		grow (t);
	size_t i = hash_addr (addr) & t->mask;
	for (;;) {
		MtaLiveEntry *e = &t->slots[i];
		if (!e->used) {
			memset (e, 0, sizeof *e);
			e->used = 1;
			e->addr = addr;
			t->count++;
			return e;
		}
		if (e->addr == addr)
			return e;
		i = (i + 1) & t->mask;
	}
}

gboolean
mta_live_remove (MtaLiveTable *t, uint64_t addr)
{
	MtaLiveEntry *e = mta_live_lookup (t, addr);
	if (e == NULL)
		return FALSE;
	mta_live_remove_entry (t, e);
	return TRUE;
}

void
mta_live_remove_entry (MtaLiveTable *t, MtaLiveEntry *e)
{
	MtaLiveEntry *s = t->slots;
	const size_t mask = t->mask;
	size_t i = (size_t) (e - s), j = i;

	/* Shift back every later entry of the cluster that may move: the one
	 * at j may fill the hole at i unless its home k lies cyclically in
	 * (i, j], that is unless it is nearer to j than i is. */
	for (;;) {
		j = (j + 1) & mask;
		if (!s[j].used)
			break;
		size_t k = hash_addr (s[j].addr) & mask;
		if (((j - k) & mask) >= ((j - i) & mask)) {
			s[i] = s[j];
			i = j;
		}
	}
	s[i].used = 0;
	t->count--;
}

const MtaLiveEntry *
mta_live_pack (MtaLiveTable *t)
{
	size_t w = 0;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].used)
			t->slots[w++] = t->slots[i];
	t->slots = g_renew (MtaLiveEntry, t->slots, MAX (w, 1));
	t->mask = 0;
	return t->slots;
}

gboolean
mta_live_next (const MtaLiveTable *t, size_t *iter, const MtaLiveEntry **entry)
{
	while (*iter <= t->mask) {
		const MtaLiveEntry *e = &t->slots[(*iter)++];
		if (e->used) {
			*entry = e;
			return TRUE;
		}
	}
	return FALSE;
}

/* ------------------------------------------------------------ strtab */

static inline uint64_t
load64 (const char *p)
{
	uint64_t w;
	memcpy (&w, p, 8);
	return w;
}

static inline uint64_t
mix64 (uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return h;
}

static __attribute__ ((noinline)) uint64_t
hash_long (const char *p, size_t len)
{
	/* FNV-1a over 8-byte words */
	uint64_t h = 0xcbf29ce484222325ULL ^ len;
	while (len >= 8) {
		h = (h ^ load64 (p)) * 0x100000001b3ULL;
		h ^= h >> 31;
		p += 8;
		len -= 8;
	}
	uint64_t w = 0;
	for (size_t i = 0; i < len; i++)
		w |= (uint64_t) (unsigned char) p[i] << (8 * i);
	h = (h ^ w) * 0x100000001b3ULL;
	return mix64 (h);
}

static inline uint64_t
hash_bytes (const char *p, size_t len)
{
	/* 8 to 16 bytes, most callers: two overlapping words (the compiler
	 * folds the range test into one unsigned compare, len - 8 <= 8) */
	if (len >= 8 && len <= 16)
		return mix64 (((0xcbf29ce484222325ULL ^ len ^ load64 (p)) * 0x100000001b3ULL) ^
			      load64 (p + len - 8));
	return hash_long (p, len);
}

/* A and B both LEN bytes long. */
static inline gboolean
bytes_eq (const char *a, const char *b, size_t len)
{
	if (len >= 8 && len <= 16)
		return load64 (a) == load64 (b) && load64 (a + len - 8) == load64 (b + len - 8);
	return memcmp (a, b, len) == 0;
}

void
mta_strtab_init (MtaStrtab *s)
{
	s->mask = 255;
	s->slots = g_new0 (uint32_t, s->mask + 1);
	s->offsets = g_array_new (FALSE, FALSE, sizeof (size_t));
	s->lengths = g_array_new (FALSE, FALSE, sizeof (size_t));
	s->data = g_string_new (NULL);
	mta_strtab_intern (s, "", 0);
}

void
mta_strtab_release (MtaStrtab *s)
{
	g_free (s->slots);
	g_array_free (s->offsets, TRUE);
	g_array_free (s->lengths, TRUE);
	g_string_free (s->data, TRUE);
	memset (s, 0, sizeof *s);
}

static void
strtab_grow (MtaStrtab *s)
{
	size_t cap = (s->mask + 1) * 2;
	g_free (s->slots);
	s->mask = cap - 1;
	s->slots = g_new0 (uint32_t, cap);
	for (uint32_t id = 0; id < s->offsets->len; id++) {
		const char *p = mta_strtab_get (s, id);
		size_t len = g_array_index (s->lengths, size_t, id);
		size_t i = hash_bytes (p, len) & s->mask;
		while (s->slots[i])
			i = (i + 1) & s->mask;
		s->slots[i] = id + 1;
	}
}

/* Append P as a new id whose slot is I. */
static __attribute__ ((noinline)) uint32_t
strtab_add (MtaStrtab *s, const char *p, size_t len, size_t i)
{
	uint32_t id = s->offsets->len;
	size_t off = s->data->len;
	g_string_append_len (s->data, p, (gssize) len);
	g_string_append_c (s->data, '\0');
	g_array_append_val (s->offsets, off);
	g_array_append_val (s->lengths, len);
	s->slots[i] = id + 1;
	if ((size_t) s->offsets->len * 10 > (s->mask + 1) * 7)
		strtab_grow (s);
	return id;
}

uint32_t
mta_strtab_intern (MtaStrtab *s, const char *p, size_t len)
{
	const size_t *lens = (const size_t *) (void *) s->lengths->data;
	const size_t *offs = (const size_t *) (void *) s->offsets->data;
	size_t i = hash_bytes (p, len) & s->mask;

	for (;;) {
		uint32_t slot = s->slots[i];
		if (slot == 0)
			return strtab_add (s, p, len, i);
		if (lens[slot - 1] == len && bytes_eq (s->data->str + offs[slot - 1], p, len))
			return slot - 1;
		i = (i + 1) & s->mask;
	}
}
