/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kinds.c -- live blocks, leaks by site and reference counts per tracked
 * kind (kinds.h).
 *
 * Tracked events are rarer than malloc's and never on its path: the run
 * hands them over after finding their call path, and each kind keeps a
 * block table of its own (live-table.c), so a "-" of kind A never
 * releases a block of kind B at the same address (a pool object inside a
 * malloc'd arena has an address malloc also knows).
 */
#include "kinds.h"
#include "live-table.h"

#include <string.h>

/* Bad frees kept one by one per kind (all are counted). */
#define MAX_BAD_FREES (1u << 16)

typedef struct {
	MtaKind pub;
	MtaLiveTable blocks;       /* live blocks: line, size, path, tid */
	MtaRefTable *refs;         /* NULL until its first r or u */
} Kind;

struct MtaKinds {
	GPtrArray *kinds;          /* Kind * */
	Kind *last;                /* the kind of the previous event */
};

static void
kind_free (gpointer p)
{
	Kind *k = p;
	g_free (k->pub.name);
	mta_live_release (&k->blocks);
	mta_refs_free (k->refs);
	g_array_unref (k->pub.bad_free_records);
	if (k->pub.leak_sites != NULL)
		g_array_unref (k->pub.leak_sites);
	if (k->pub.bad_free_sites != NULL)
		g_array_unref (k->pub.bad_free_sites);
	if (k->pub.leaks != NULL)
		g_array_unref (k->pub.leaks);
	if (k->pub.ref_groups != NULL)
		g_ptr_array_unref (k->pub.ref_groups);
	g_free (k);
}

MtaKinds *
mta_kinds_new (void)
{
	MtaKinds *k = g_new0 (MtaKinds, 1);
	k->kinds = g_ptr_array_new_with_free_func (kind_free);
	return k;
}

void
mta_kinds_free (MtaKinds *k)
{
	if (k == NULL)
		return;
	g_ptr_array_free (k->kinds, TRUE);
	g_free (k);
}

guint mta_kinds_count (const MtaKinds *k) { return k->kinds->len; }
const MtaKind *mta_kinds_get (const MtaKinds *k, guint i) { return &((Kind *) k->kinds->pdata[i])->pub; }

/* A run has a handful of kinds, and consecutive events are mostly of one. */
static Kind *
kind_of (MtaKinds *ks, MtaSpan name)
{
	if (ks->last != NULL && strlen (ks->last->pub.name) == name.len &&
	    memcmp (ks->last->pub.name, name.p, name.len) == 0)
		return ks->last;
	for (guint i = 0; i < ks->kinds->len; i++) {
		Kind *k = ks->kinds->pdata[i];
		if (strlen (k->pub.name) == name.len && memcmp (k->pub.name, name.p, name.len) == 0)
			return ks->last = k;
	}
	Kind *k = g_new0 (Kind, 1);
	k->pub.name = g_strndup (name.p, name.len);
	k->pub.bad_free_records = g_array_new (FALSE, FALSE, sizeof (MtaRecord));
	mta_live_init (&k->blocks);
	g_ptr_array_add (ks->kinds, k);
	return ks->last = k;
}

static void
kind_alloc (Kind *k, const MtaLine *l, uint32_t path, uint32_t tid)
{
	/* a second "+" of a live block is a duplicate, as for malloc: the
	 * first one stays */
	if (mta_live_lookup (&k->blocks, l->addr) != NULL)
		return;
	MtaLiveEntry *b = mta_live_insert (&k->blocks, l->addr);
	b->size = l->size;
	b->seq = l->lineno;
	b->tid = tid;
	b->path = path;
	k->pub.allocs++;
	k->pub.bytes_allocated += l->size;
}

static void
kind_free_block (Kind *k, const MtaLine *l, uint32_t path, uint32_t tid)
{
	MtaLiveEntry *b = mta_live_lookup (&k->blocks, l->addr);

	if (b != NULL) {
		mta_live_remove_entry (&k->blocks, b);
		k->pub.frees++;
		return;
	}
	k->pub.bad_frees++;
	if (k->pub.bad_free_records->len < MAX_BAD_FREES) {
		MtaRecord rec = { l->addr, 0, l->lineno, path, tid, '-', 0 };
		g_array_append_val (k->pub.bad_free_records, rec);
	}
}

void
mta_kinds_event (MtaKinds *ks, const MtaLine *l, uint32_t path, uint32_t tid)
{
	Kind *k = kind_of (ks, l->family);
	const MtaLiveEntry *b;

	switch (l->op) {
	case '+':
		kind_alloc (k, l, path, tid);
		break;
	case '-':
		kind_free_block (k, l, path, tid);
		/* The memory went back -- a pool object put back (mem_put), of a
		 * kind other than its references' (dict_t's objects are
		 * gf_mem_pool's): the lives at the address end in every kind. */
		for (guint i = 0; i < ks->kinds->len; i++) {
			Kind *o = ks->kinds->pdata[i];
			if (o->refs != NULL)
				mta_refs_released (o->refs, l->addr);
		}
		break;
	case 'r':
	case 'u':
		if (l->op == 'r')
			k->pub.refs++;
		else
			k->pub.unrefs++;
		if (k->refs == NULL)
			k->refs = mta_refs_new ();
		b = mta_live_lookup (&k->blocks, l->addr);
		mta_refs_event (k->refs, l->op, l->addr, path, l->lineno, b != NULL, b ? b->path : 0);
		break;
	default:
		break;
	}
}

static int
record_by_addr (gconstpointer a, gconstpointer b)
{
	const MtaRecord *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int
kind_site_cmp (gconstpointer a, gconstpointer b)
{
	const MtaKindSite *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

/* RECORDS (MtaRecord) summed by the site of their path, largest first. */
static GArray *
sites_of (const GArray *records, const GPtrArray *paths)
{
	g_autoptr (GHashTable) index = g_hash_table_new (g_direct_hash, g_direct_equal);
	GArray *sites = g_array_new (FALSE, FALSE, sizeof (MtaKindSite));

	for (guint i = 0; i < records->len; i++) {
		const MtaRecord *r = &g_array_index (records, MtaRecord, i);
		const MtaPath *p = paths->pdata[r->path];
		uint32_t site = (uint32_t) MAX (p->site, 0);
		gpointer v = g_hash_table_lookup (index, GUINT_TO_POINTER (site + 1));
		MtaKindSite *s;
		if (v == NULL) {
			MtaKindSite n = { site, 0, 0, r->line, r->path };
			g_array_append_val (sites, n);
			g_hash_table_insert (index, GUINT_TO_POINTER (site + 1), GUINT_TO_POINTER (sites->len));
			s = &g_array_index (sites, MtaKindSite, sites->len - 1);
		} else
			s = &g_array_index (sites, MtaKindSite, GPOINTER_TO_UINT (v) - 1);
		s->blocks++;
		s->bytes += r->op == '+' ? r->size : 0;
		if (r->line < s->first_line) {
			s->first_line = r->line;
			s->path = r->path;
		}
	}
	g_array_sort (sites, kind_site_cmp);
	return sites;
}

void
mta_kinds_finish (MtaKinds *ks, const GPtrArray *paths)
{
	for (guint i = 0; i < ks->kinds->len; i++) {
		Kind *k = ks->kinds->pdata[i];
		const MtaLiveEntry *b;
		k->pub.leaks = g_array_new (FALSE, FALSE, sizeof (MtaRecord));
		for (size_t it = 0; mta_live_next (&k->blocks, &it, &b);) {
			MtaRecord rec = { b->addr, b->size, b->seq, b->path, (uint32_t) b->tid, '+', 0 };
			g_array_append_val (k->pub.leaks, rec);
			k->pub.leaked_blocks++;
			k->pub.leaked_bytes += b->size;
		}
		g_array_sort (k->pub.leaks, record_by_addr);
		k->pub.leak_sites = sites_of (k->pub.leaks, paths);
		k->pub.bad_free_sites = sites_of (k->pub.bad_free_records, paths);
		if (k->refs != NULL) {
			k->pub.ref_groups = mta_refs_groups (k->refs);
			k->pub.ref_objects = mta_refs_lives (k->refs);
			k->pub.ref_below_addresses = mta_refs_below_addresses (k->refs);
		}
	}
}

gboolean
mta_kinds_any_leak (const MtaKinds *ks)
{
	for (guint i = 0; i < ks->kinds->len; i++) {
		const MtaKind *k = mta_kinds_get (ks, i);
		if (k->leaked_blocks > 0)
			return TRUE;
		/* references dropped that no tracked call took are not a leak */
		for (guint j = 0; k->ref_groups != NULL && j < k->ref_groups->len; j++)
			if (!((const MtaRefGroup *) k->ref_groups->pdata[j])->negative)
				return TRUE;
	}
	return FALSE;
}
