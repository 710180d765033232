/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* refcount.c -- reference counts per object, grouped by call path at the
 * end (refcount.h).
 *
 * The GlusterFS SystemTap script users ran before prints every pointer
 * with its count and every reference trace; a leak made a million times
 * is a million entries there.  Here the objects left unbalanced are
 * grouped by (end count, below zero or not, the set of paths that took or
 * dropped references), and the counts of each path are summed: one entry
 * for the million.
 */
#include "refcount.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	int64_t count;
	uint64_t first_line;
	guint n, cap;
	MtaRefPath *paths;
} RefObject;

/* The unreferences of one path that found no reference to drop. */
typedef struct {
	uint64_t unrefs, first_line, example;
} Outside;

struct MtaRefTable {
	GHashTable *objects;       /* address -> RefObject *, the lives going on */
	GHashTable *outside;       /* path + 1 -> Outside * */
	GHashTable *outside_at;    /* the addresses of those drops (a set) */
	uint64_t taken, dropped, lives;
};

static void
object_free (gpointer p)
{
	RefObject *o = p;
	g_free (o->paths);
	g_free (o);
}

MtaRefTable *
mta_refs_new (void)
{
	MtaRefTable *t = g_new0 (MtaRefTable, 1);
	/* addresses are 64-bit, like pointers on the hosts we build on */
	G_STATIC_ASSERT (sizeof (gpointer) >= sizeof (uint64_t));
	t->objects = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, object_free);
	t->outside = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
	t->outside_at = g_hash_table_new (g_direct_hash, g_direct_equal);
	return t;
}

void
mta_refs_free (MtaRefTable *t)
{
	if (t == NULL)
		return;
	g_hash_table_destroy (t->objects);
	g_hash_table_destroy (t->outside);
	g_hash_table_destroy (t->outside_at);
	g_free (t);
}

uint64_t mta_refs_taken (const MtaRefTable *t) { return t->taken; }
uint64_t mta_refs_dropped (const MtaRefTable *t) { return t->dropped; }
uint64_t mta_refs_lives (const MtaRefTable *t) { return t->lives; }
uint64_t mta_refs_below_addresses (const MtaRefTable *t) { return g_hash_table_size (t->outside_at); }

static MtaRefPath *
object_path (RefObject *o, uint32_t path)
{
	for (guint i = 0; i < o->n; i++)
		if (o->paths[i].path == path)
			return &o->paths[i];
	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 2;
		o->paths = g_renew (MtaRefPath, o->paths, o->cap);
	}
	MtaRefPath *p = &o->paths[o->n++];
	p->path = path;
	p->refs = p->unrefs = 0;
	return p;
}

/* An unreference of ADDR with no reference to drop: taken before the
 * recording began or by a call not tracked.  Counted by its path alone. */
static void
outside_event (MtaRefTable *t, uint64_t addr, uint32_t path, uint64_t line)
{
	gpointer key = GUINT_TO_POINTER (path + 1);
	Outside *x = g_hash_table_lookup (t->outside, key);

	if (x == NULL) {
		x = g_new0 (Outside, 1);
		x->first_line = line;
		x->example = addr;
		g_hash_table_insert (t->outside, key, x);
	}
	x->unrefs++;
	/* how many objects those drops were of: GlusterFS's root inode,
	 * whose references are never taken where a call is seen, is one
	 * address however many drops and paths */
	g_hash_table_add (t->outside_at, (gpointer) (uintptr_t) addr);
}

void
mta_refs_event (MtaRefTable *t, char op, uint64_t addr, uint32_t path, uint64_t line,
		gboolean allocated, uint32_t alloc_path)
{
	gpointer key = (gpointer) (uintptr_t) addr;
	RefObject *o = g_hash_table_lookup (t->objects, key);

	if (op == 'r')
		t->taken++;
	else
		t->dropped++;
	if (op != 'r' && (o == NULL ? !allocated : o->count == 0)) {
		outside_event (t, addr, path, line);
		return;
	}
	if (o == NULL) {
		o = g_new0 (RefObject, 1);
		o->first_line = line;
		t->lives++;
		if (allocated) {
			/* its creator holds the first reference */
			o->count = 1;
			object_path (o, alloc_path)->refs++;
		}
		g_hash_table_insert (t->objects, key, o);
	}
	if (op == 'r') {
		o->count++;
		object_path (o, path)->refs++;
	} else {
		o->count--;
		object_path (o, path)->unrefs++;
	}
	/* the last reference dropped: this life is over, the next reference
	 * to the address is a new object (unless its kind still holds it
	 * allocated: then it lives on until released) */
	if (o->count == 0 && !allocated)
		g_hash_table_remove (t->objects, key);
}

void
mta_refs_released (MtaRefTable *t, uint64_t addr)
{
	/* the memory went back (the kind's free, a pool's put): whatever the
	 * count, this life is over */
	g_hash_table_remove (t->objects, (gpointer) (uintptr_t) addr);
}

static int
path_cmp (const void *a, const void *b)
{
	const MtaRefPath *x = a, *y = b;
	return x->path < y->path ? -1 : x->path > y->path;
}

static int
path_by_events (gconstpointer a, gconstpointer b)
{
	const MtaRefPath *x = a, *y = b;
	uint64_t nx = x->refs + x->unrefs, ny = y->refs + y->unrefs;
	if (nx != ny)
		return nx > ny ? -1 : 1;
	return x->path < y->path ? -1 : x->path > y->path;
}

static int
group_cmp (gconstpointer a, gconstpointer b)
{
	const MtaRefGroup *x = *(MtaRefGroup *const *) a, *y = *(MtaRefGroup *const *) b;
	if (x->negative != y->negative)
		return x->negative ? 1 : -1;
	if (x->objects != y->objects)
		return x->objects > y->objects ? -1 : 1;
	return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

static void
group_free (gpointer p)
{
	MtaRefGroup *g = p;
	g_array_unref (g->paths);
	g_free (g);
}

/* What makes two objects one entry: end count, fate, the paths and
 * whether each took or dropped references (not how many times).  Hashed
 * (PATHS sorted by path), then compared: no key is built per object. */
static uint64_t
group_hash (const RefObject *o)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t) o->count;
	for (guint i = 0; i < o->n; i++) {
		uint64_t roles = (uint64_t) (o->paths[i].refs > 0) | (uint64_t) (o->paths[i].unrefs > 0) << 1;
		h = (h ^ ((uint64_t) o->paths[i].path << 2 | roles)) * 0x100000001b3ULL;
	}
	return h;
}

static gboolean
group_matches (const MtaRefGroup *g, const RefObject *o)
{
	if (g->net != o->count || g->negative || g->paths->len != o->n)
		return FALSE;
	for (guint i = 0; i < o->n; i++) {
		const MtaRefPath *p = &g_array_index (g->paths, MtaRefPath, i);
		if (p->path != o->paths[i].path || (p->refs > 0) != (o->paths[i].refs > 0) ||
		    (p->unrefs > 0) != (o->paths[i].unrefs > 0))
			return FALSE;
	}
	return TRUE;
}

static MtaRefGroup *
group_new (const RefObject *o)
{
	MtaRefGroup *g = g_new0 (MtaRefGroup, 1);
	g->net = g->lowest = o->count;
	g->paths = g_array_sized_new (FALSE, TRUE, sizeof (MtaRefPath), o->n);
	for (guint i = 0; i < o->n; i++) {
		MtaRefPath p = { o->paths[i].path, 0, 0 };
		g_array_append_val (g->paths, p);
	}
	return g;
}

static void
group_add (MtaRefGroup *g, const RefObject *o, uint64_t addr)
{
	if (g->objects++ == 0 || o->first_line < g->first_line) {
		g->first_line = o->first_line;
		g->example = addr;
	}
	/* same paths in the same order (both sorted by path) */
	for (guint i = 0; i < o->n; i++) {
		MtaRefPath *p = &g_array_index (g->paths, MtaRefPath, i);
		p->refs += o->paths[i].refs;
		p->unrefs += o->paths[i].unrefs;
	}
}

/* One entry per path that dropped references it found none of: below
 * zero, its "objects" the unreferences, whatever objects they were of. */
static void
add_outside (MtaRefTable *t, GPtrArray *groups)
{
	GHashTableIter it;
	gpointer key, value;

	g_hash_table_iter_init (&it, t->outside);
	while (g_hash_table_iter_next (&it, &key, &value)) {
		const Outside *x = value;
		MtaRefGroup *g = g_new0 (MtaRefGroup, 1);
		MtaRefPath p = { GPOINTER_TO_UINT (key) - 1, 0, x->unrefs };
		g->net = g->lowest = -1;
		g->negative = TRUE;
		g->objects = x->unrefs;
		g->first_line = x->first_line;
		g->example = x->example;
		g->paths = g_array_sized_new (FALSE, TRUE, sizeof (MtaRefPath), 1);
		g_array_append_val (g->paths, p);
		g_ptr_array_add (groups, g);
	}
}

static void
unref_candidates (gpointer a)
{
	g_ptr_array_unref (a);
}

GPtrArray *
mta_refs_groups (MtaRefTable *t)
{
	GPtrArray *groups = g_ptr_array_new_with_free_func (group_free);
	/* hash -> the groups with it (GPtrArray, not owning) */
	g_autoptr (GHashTable) by_hash = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
								  unref_candidates);
	GHashTableIter it;
	gpointer key, value;

	g_hash_table_iter_init (&it, t->objects);
	while (g_hash_table_iter_next (&it, &key, &value)) {
		RefObject *o = value;
		if (o->count == 0)
			continue;
		qsort (o->paths, o->n, sizeof *o->paths, path_cmp);
		uint64_t h = group_hash (o);
		GPtrArray *cands = g_hash_table_lookup (by_hash, &h);
		MtaRefGroup *g = NULL;
		for (guint i = 0; cands != NULL && i < cands->len && g == NULL; i++)
			if (group_matches (cands->pdata[i], o))
				g = cands->pdata[i];
		if (g == NULL) {
			g = group_new (o);
			g_ptr_array_add (groups, g);
			if (cands == NULL) {
				cands = g_ptr_array_new ();
				g_hash_table_insert (by_hash, g_memdup2 (&h, sizeof h), cands);
			}
			g_ptr_array_add (cands, g);
		}
		group_add (g, o, (uint64_t) (uintptr_t) key);
	}
	for (guint i = 0; i < groups->len; i++) {
		MtaRefGroup *g = groups->pdata[i];
		g_array_sort (g->paths, path_by_events);
	}
	add_outside (t, groups);
	g_ptr_array_sort (groups, group_cmp);
	return groups;
}
