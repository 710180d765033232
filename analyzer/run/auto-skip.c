/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* auto-skip.c -- wrappers found without symbols (MtaRunInfo.auto_skip),
 * and the charging of a call path to its site, which they change. */
#include "run-private.h"

/* Wrappers found without symbols.  A function whose code has no name
 * (a stripped object without its debug file) cannot be on the wrapper
 * list, and Open vSwitch's xmalloc family then holds nearly every leak.
 * The stacks say what it is: a site charged with the blocks of
 * MTA_AUTO_WRAPPER_CALLERS distinct functions one frame up, whose function
 * (its bounds from .eh_frame, which strip keeps for the unwinder) is
 * small enough to do little else than allocate, is a wrapper; a function
 * that allocates for one caller, or two, is a leak site and stays one.
 * Found while reading: the paths charged to it so far go to their next
 * frame (their live blocks with them; every total is summed from the
 * paths at the end), so that the report, JSON, HTML, pprof, the database
 * and diff all see the same sites. */
static gboolean
auto_candidate (const MtaRun *r, const MtaSite *s)
{
	return r->info.auto_skip && !s->wrapper && s->code_size > 0 &&
		s->code_size <= MTA_AUTO_WRAPPER_MAX_CODE;
}

static void make_auto_wrapper (MtaRun *r, uint32_t site, guint callers);

/* Add function FUNC to the set KEY of callers: how many it has. */
static guint
add_caller (MtaRun *r, guint key, uint32_t func)
{
	GHashTable *set = g_hash_table_lookup (r->callers_of, GUINT_TO_POINTER (key));
	if (set == NULL) {
		set = g_hash_table_new (NULL, NULL);
		g_hash_table_insert (r->callers_of, GUINT_TO_POINTER (key), set);
	}
	g_hash_table_add (set, GUINT_TO_POINTER (func + 1));
	return g_hash_table_size (set);
}

static void
note_caller (MtaRun *r, const MtaPath *p)
{
	MtaSite *s = site_at (r, (uint32_t) p->site);

	if (!auto_candidate (r, s) || p->site_frame + 1 >= p->nframes)
		return;
	/* its callers one frame up; and through a thin one (xrealloc around
	 * xrealloc__, doing nothing else), the callers of that one, so that
	 * a wrapper called through such functions is found as well */
	uint32_t j = p->site_frame + 1;
	const MtaSite *c = site_at (r, p->frames[j]);
	guint n = add_caller (r, (guint) p->site + 1, c->func_id);
	if (c->code_size > 0 && c->code_size <= MTA_AUTO_WRAPPER_THIN_CODE && j + 1 < p->nframes)
		c = site_at (r, p->frames[j + 1]);
	n = MAX (n, add_caller (r, ((guint) p->site + 1) | 0x80000000u, c->func_id));
	if (n >= MTA_AUTO_WRAPPER_CALLERS)
		make_auto_wrapper (r, (uint32_t) p->site, n);
}

/* Charge resolved path P to the first of its frames that is not a
 * wrapper; the outermost when all are (a stack cut short by the depth).
 * Code inlined into a wrapper is the wrapper's: git's static do_xmalloc,
 * inlined into xmalloc, is skipped with it. */
void
mta_run_charge_path (MtaRun *r, MtaPath *p)
{
	uint32_t n = p->nframes;

	p->site_frame = n - 1;
	gboolean in_wrapper = FALSE;
	for (uint32_t i = n; i-- > 0;) {
		gboolean w = site_at (r, p->frames[i])->wrapper;
		in_wrapper = mta_path_inlined (p, i) ? in_wrapper || w : w;
		if (!in_wrapper)
			p->site_frame = i;
	}
	p->site = (int32_t) p->frames[p->site_frame];
	MtaSite *s = site_at (r, (uint32_t) p->site);
	site_touch (r, s);
	s->live_bytes += p->live_bytes;
	s->live_blocks += p->allocs - p->frees;
	if (s->live_bytes > s->peak_live_bytes)
		s->peak_live_bytes = s->live_bytes;
	note_caller (r, p);
}

/* At the end: each found wrapper's callers, all of them (it was found at
 * the MTA_AUTO_WRAPPER_CALLERS-th): those one frame up, and those counted
 * as it was found, through thin ones -- a wrapper called by one thin
 * wrapper alone would otherwise be said to have one caller, which the
 * rule keeps as a leak site. */
void
mta_run_count_auto_callers (MtaRun *r)
{
	g_hash_table_remove_all (r->callers_of);
	for (guint i = 0; i < r->paths->len; i++) {
		const MtaPath *p = r->paths->pdata[i];
		for (uint32_t k = 0; k < p->site_frame; k++) {
			if (!site_at (r, p->frames[k])->auto_wrapper)
				continue;
			const MtaSite *c = site_at (r, p->frames[k + 1]);
			(void) add_caller (r, p->frames[k] + 1, c->func_id);
			if (c->code_size > 0 && c->code_size <= MTA_AUTO_WRAPPER_THIN_CODE && k + 2 < p->nframes)
				c = site_at (r, p->frames[k + 2]);
			(void) add_caller (r, (p->frames[k] + 1) | 0x80000000u, c->func_id);
		}
	}
	GHashTableIter it;
	gpointer key, set;
	g_hash_table_iter_init (&it, r->callers_of);
	while (g_hash_table_iter_next (&it, &key, &set)) {
		guint k = GPOINTER_TO_UINT (key), n = g_hash_table_size (set);
		MtaSite *s = site_at (r, (k & ~0x80000000u) - 1);
		if (k & 0x80000000u)
			s->auto_callers_via = (uint16_t) MIN (n, G_MAXUINT16);
		else
			s->auto_callers = n;
	}
}

static void
make_auto_wrapper (MtaRun *r, uint32_t site, guint callers)
{
	MtaSite *s = site_at (r, site);

	s->wrapper = s->auto_wrapper = TRUE;
	s->auto_callers = callers;
	g_hash_table_remove (r->callers_of, GUINT_TO_POINTER (site + 1));
	g_hash_table_remove (r->callers_of, GUINT_TO_POINTER ((site + 1) | 0x80000000u));
	for (guint i = 0; i < r->paths->len; i++) {
		MtaPath *p = r->paths->pdata[i];
		if (p->site != (int32_t) site)
			continue;
		site_touch (r, s);
		s->live_bytes -= p->live_bytes;
		s->live_blocks -= p->allocs - p->frees;
		mta_run_charge_path (r, p);
	}
}
