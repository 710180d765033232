/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kind-shrink.c -- the "# k" lines in `mtanalyze shrink` (kind-shrink.h).
 *
 * Both passes follow kinds.c's bookkeeping, one block table per kind (a
 * second "+" of a live block changes nothing).  Pass 1 finds the
 * allocations that stay: the blocks live at the end, and those that had
 * a reference event while allocated; pass 2 writes those, the releases
 * of blocks kept and of blocks never allocated, and every r and u line.
 */
#include "kind-shrink.h"
#include "live-table.h"

#include <stdlib.h>

#define KEPT 1u

struct MtaKindShrink {
	GHashTable *kinds;         /* name -> MtaLiveTable * (seq, stack, flags) */
	GHashTable *stacks;        /* shrink's */
	GArray *kept_lines;        /* pass 1: allocations kept; sorted for pass 2 */
	guint kept_next;
};

static void
table_free (gpointer p)
{
	mta_live_release (p);
	g_free (p);
}

MtaKindShrink *
mta_kind_shrink_new (GHashTable *stacks)
{
	MtaKindShrink *ks = g_new0 (MtaKindShrink, 1);
	ks->kinds = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, table_free);
	ks->stacks = stacks;
	ks->kept_lines = g_array_new (FALSE, FALSE, sizeof (uint64_t));
	return ks;
}

void
mta_kind_shrink_free (MtaKindShrink *ks)
{
	if (ks == NULL)
		return;
	g_hash_table_destroy (ks->kinds);
	g_array_free (ks->kept_lines, TRUE);
	g_free (ks);
}

static MtaLiveTable *
table_of (MtaKindShrink *ks, const MtaLine *l)
{
	g_autofree char *name = g_strndup (l->family.p, l->family.len);
	MtaLiveTable *t = g_hash_table_lookup (ks->kinds, name);
	if (t == NULL) {
		t = g_new0 (MtaLiveTable, 1);
		mta_live_init (t);
		g_hash_table_insert (ks->kinds, g_steal_pointer (&name), t);
	}
	return t;
}

static void
need_stack (MtaKindShrink *ks, int64_t id)
{
	if (id >= 0)
		g_hash_table_add (ks->stacks, g_memdup2 (&id, sizeof id));
}

static void
keep_block (MtaKindShrink *ks, MtaLiveEntry *e)
{
	if (e->flags & KEPT)
		return;
	e->flags |= KEPT;
	g_array_append_val (ks->kept_lines, e->seq);
	need_stack (ks, e->stack);
}

void
mta_kind_shrink_pass1 (MtaKindShrink *ks, const MtaLine *l)
{
	MtaLiveTable *t = table_of (ks, l);
	MtaLiveEntry *e = mta_live_lookup (t, l->addr);

	switch (l->op) {
	case '+':
		if (e == NULL) {
			e = mta_live_insert (t, l->addr);
			e->seq = l->lineno;
			e->stack = l->stack_id;
		}
		break;
	case '-':
		if (e == NULL || (e->flags & KEPT))
			need_stack (ks, l->stack_id);
		if (e != NULL)
			mta_live_remove_entry (t, e);
		break;
	default:       /* r, u: kept, and so is the life of their block */
		need_stack (ks, l->stack_id);
		if (e != NULL)
			keep_block (ks, e);
		break;
	}
}

static int
line_cmp (const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

void
mta_kind_shrink_pass1_end (MtaKindShrink *ks)
{
	GHashTableIter it;
	gpointer v;

	g_hash_table_iter_init (&it, ks->kinds);
	while (g_hash_table_iter_next (&it, NULL, &v)) {
		MtaLiveTable *t = v;
		const MtaLiveEntry *c;
		for (size_t i = 0; mta_live_next (t, &i, &c);)
			keep_block (ks, (MtaLiveEntry *) c);
		mta_live_release (t);
		mta_live_init (t);
	}
	g_array_sort (ks->kept_lines, line_cmp);
}

gboolean
mta_kind_shrink_keep (MtaKindShrink *ks, const MtaLine *l)
{
	MtaLiveTable *t = table_of (ks, l);
	MtaLiveEntry *e = mta_live_lookup (t, l->addr);
	GArray *k = ks->kept_lines;
	gboolean keep;

	switch (l->op) {
	case '+':
		if (e != NULL)
			return FALSE;    /* changes nothing */
		while (ks->kept_next < k->len && g_array_index (k, uint64_t, ks->kept_next) < l->lineno)
			ks->kept_next++;
		keep = ks->kept_next < k->len && g_array_index (k, uint64_t, ks->kept_next) == l->lineno;
		e = mta_live_insert (t, l->addr);
		e->flags = keep ? KEPT : 0;
		return keep;
	case '-':
		if (e == NULL)
			return TRUE;     /* never allocated */
		keep = (e->flags & KEPT) != 0;
		mta_live_remove_entry (t, e);
		return keep;
	default:
		return TRUE;
	}
}
