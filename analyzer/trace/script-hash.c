/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* script-hash.c -- glibc's mtrace script's view of a trace (script-hash.h).
 */
#include "script-hash.h"

#include <inttypes.h>
#include <stdio.h>

gboolean
mta_script_event (const MtaLine *l, MtaScriptEvent *ev)
{
	static const MtaSpan none = { "", 0 };
	int n = 0;

	ev->op = 0;
	ev->where = ev->key = ev->size = none;
	if (l->ncols == 0)
		return FALSE;
	if (mta_span_eq (l->cols[0], "@")) {
		if (l->ncols > 1)
			ev->where = l->cols[1];
		n = 2;
	}
	if (n >= l->ncols || l->cols[n].len != 1)
		return FALSE;
	ev->op = l->cols[n].p[0];
	if (n + 1 < l->ncols)
		ev->key = l->cols[n + 1];
	if (n + 2 < l->ncols)
		ev->size = l->cols[n + 2];
	if (l->kind == MTA_LINE_EVENT) {
		ev->canonical = l->addr_canonical;
		ev->value = l->addr;
	} else
		ev->canonical = mta_canonical_hex (ev->key, &ev->value);
	return TRUE;
}

void
mta_script_hash_init (MtaScriptHash *h)
{
	mta_live_init (&h->live);
	h->odd = g_hash_table_new_full (g_bytes_hash, g_bytes_equal, (GDestroyNotify) g_bytes_unref,
					g_free);
}

void
mta_script_hash_release (MtaScriptHash *h)
{
	mta_live_release (&h->live);
	if (h->odd != NULL)
		g_hash_table_destroy (h->odd);
	h->odd = NULL;
}

MtaLiveEntry *
mta_script_hash_lookup (MtaScriptHash *h, const MtaScriptEvent *ev)
{
	if (ev->canonical)
		return mta_live_lookup (&h->live, ev->value);
	if (g_hash_table_size (h->odd) == 0)
		return NULL;
	g_autoptr (GBytes) k = g_bytes_new_static (ev->key.p, ev->key.len);
	return g_hash_table_lookup (h->odd, k);
}

MtaLiveEntry *
mta_script_hash_insert (MtaScriptHash *h, const MtaScriptEvent *ev)
{
	if (ev->canonical)
		return mta_live_insert (&h->live, ev->value);
	MtaLiveEntry *e = g_new0 (MtaLiveEntry, 1);
	e->used = 1;
	g_hash_table_insert (h->odd, g_bytes_new (ev->key.p, ev->key.len), e);
	return e;
}

void
mta_script_hash_remove (MtaScriptHash *h, const MtaScriptEvent *ev, MtaLiveEntry *e)
{
	if (ev->canonical) {
		mta_live_remove_entry (&h->live, e);
		return;
	}
	g_autoptr (GBytes) k = g_bytes_new_static (ev->key.p, ev->key.len);
	g_hash_table_remove (h->odd, k);
}

void
mta_script_hash_foreach (const MtaScriptHash *h, MtaScriptHashFunc func, gpointer data)
{
	const MtaLiveEntry *e;
	GHashTableIter it;
	gpointer k, v;
	char key[24];

	for (size_t i = 0; mta_live_next (&h->live, &i, &e);) {
		int n = g_snprintf (key, sizeof key, "0x%" PRIx64, e->addr);
		func (key, (size_t) n, e, data);
	}
	g_hash_table_iter_init (&it, h->odd);
	while (g_hash_table_iter_next (&it, &k, &v)) {
		gsize len;
		const char *p = g_bytes_get_data (k, &len);
		func (len > 0 ? p : "", len, v, data);
	}
}
