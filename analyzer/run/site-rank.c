/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* site-rank.c -- the sites of a run in the order the reports list them:
 * leaks by bytes, bad frees by count, the peak's and the temporary
 * allocations' holders by their share; ties in order of appearance, so
 * that two runs of one trace list them alike.  (Declared in run.h.) */
#include "run.h"

typedef uint64_t (*SiteKey) (const MtaSite *s);

/* What a comparison of two site indices needs. */
typedef struct {
	const GPtrArray *sites;
	SiteKey key;
} Ranking;

static uint64_t key_bad_frees (const MtaSite *s) { return s->t->bad_frees; }
static uint64_t key_peak_share (const MtaSite *s) { return s->peak_share_bytes; }
static uint64_t key_temporary (const MtaSite *s) { return s->t->temporary; }

static int
first_seen_cmp (const MtaSite *x, const MtaSite *y)
{
	return x->t->first_line < y->t->first_line ? -1 : x->t->first_line > y->t->first_line;
}

/* Largest key first, ties in order of first appearance. */
static int
key_cmp (const void *a, const void *b, void *data)
{
	const Ranking *rk = data;
	const MtaSite *x = rk->sites->pdata[*(const uint32_t *) a];
	const MtaSite *y = rk->sites->pdata[*(const uint32_t *) b];
	uint64_t kx = rk->key (x), ky = rk->key (y);

	if (kx != ky)
		return kx > ky ? -1 : 1;
	return first_seen_cmp (x, y);
}

/* A leaking site's sort key, copied out of its totals: millions of
 * comparisons read these, not two pointers each. */
typedef struct {
	uint64_t bytes, blocks, first;
	uint32_t site;
} LeakKey;

/* Leaks: most bytes first, then most blocks, then the first leaked block. */
static int
leak_key_cmp (const void *a, const void *b)
{
	const LeakKey *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Bad frees: most first, then the first bad free. */
static int
bad_site_cmp (const void *a, const void *b, void *data)
{
	const Ranking *rk = data;
	const MtaSite *x = rk->sites->pdata[*(const uint32_t *) a];
	const MtaSite *y = rk->sites->pdata[*(const uint32_t *) b];
	if (x->t->bad_frees != y->t->bad_frees)
		return x->t->bad_frees > y->t->bad_frees ? -1 : 1;
	return x->t->first_bad_line < y->t->first_bad_line ? -1 : x->t->first_bad_line > y->t->first_bad_line;
}

/* The indexes of the sites whose KEY is not zero, sorted by CMP, at most
 * MAX of them (0: all). */
static GArray *
sites_where (const MtaRun *r, SiteKey key, GCompareDataFunc cmp, guint max)
{
	Ranking rk = { mta_run_sites (r), key };
	GArray *a = g_array_new (FALSE, FALSE, sizeof (uint32_t));
	for (guint i = 0; i < rk.sites->len; i++)
		if (key (rk.sites->pdata[i]) > 0)
			g_array_append_val (a, i);
	g_array_sort_with_data (a, cmp, &rk);
	if (max > 0 && a->len > max)
		g_array_set_size (a, max);
	return a;
}

GArray *
mta_run_leak_sites (const MtaRun *r)
{
	const GPtrArray *sites = mta_run_sites (r);
	GArray *keys = g_array_new (FALSE, FALSE, sizeof (LeakKey));
	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (s->t->leaked_blocks == 0)
			continue;
		LeakKey k = { s->t->leaked_bytes, s->t->leaked_blocks, s->t->first_leak_line, i };
		g_array_append_val (keys, k);
	}
	g_array_sort (keys, leak_key_cmp);
	GArray *a = g_array_sized_new (FALSE, FALSE, sizeof (uint32_t), keys->len);
	for (guint i = 0; i < keys->len; i++)
		g_array_append_val (a, g_array_index (keys, LeakKey, i).site);
	g_array_free (keys, TRUE);
	return a;
}

GArray *
mta_run_bad_free_sites (const MtaRun *r)
{
	return sites_where (r, key_bad_frees, bad_site_cmp, 0);
}

GArray *
mta_run_leak_sites_filtered (const MtaRun *r, guint mask)
{
	GArray *a = mta_run_leak_sites (r);
	if (mask == 0)
		return a;
	guint k = 0;
	for (guint i = 0; i < a->len; i++) {
		uint32_t si = g_array_index (a, uint32_t, i);
		const MtaSite *s = mta_run_sites (r)->pdata[si];
		if (mask & (1u << s->growth))
			g_array_index (a, uint32_t, k++) = si;
	}
	g_array_set_size (a, k);
	return a;
}

GArray *
mta_run_peak_sites (const MtaRun *r, guint max)
{
	return sites_where (r, key_peak_share, key_cmp, max);
}

GArray *
mta_run_temporary_sites (const MtaRun *r, guint max)
{
	return sites_where (r, key_temporary, key_cmp, max);
}
