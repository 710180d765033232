/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run.c -- a run of a trace, by call site: blocks, call paths, sites.
 *
 * The hot path (one event) is: intern the caller field, find the event's
 * call path in an array indexed by caller or stack id, one probe of the
 * block table, a few counters.  Symbolization happens once per call path,
 * when its stack is known: usually at its first event, since a thread
 * writes a stack's definition before its first use; when another thread
 * used the stack first (trace-format.md), the path waits for the "# stack"
 * line and is charged then (its site's peak then counts the path's live
 * bytes from that point).
 *
 * Over time (issue 7): every site's live blocks and bytes are sampled,
 * and "# time" lines put lines on the recorder's clock (timeline.c).  The
 * sites are put in report order by site-rank.c.  The run's peak is found
 * with a lazy snapshot: each
 * new peak starts an epoch, and a site saves its live bytes the first time
 * it changes in a later epoch, so the snapshot costs O(1) an event.
 */
#include "run-private.h"
#include "compact-sum.h"
#include "growth.h"
#include "kinds.h"
#include "live-table.h"
#include "timeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Bad frees kept one by one (all are counted). */
#define MAX_BAD_FREES (1u << 20)
/* Stack ids below this index an array, others a hash table. */
#define DENSE_STACK_IDS (1u << 24)

typedef struct {
	uint32_t n;
	uint64_t addrs[];
} StackDef;

#define ARENA_BLOCK (1u << 20)

/* N bytes at a multiple of ALIGN (a power of two) from the arena's last */
static void *
arena_alloc_aligned0 (Arena *a, size_t n, size_t align)
{
	n = (n + align - 1) & ~(align - 1);
	if (n > a->left) {
		size_t size = MAX (n, ARENA_BLOCK);
		a->cur = g_malloc (size);
		a->left = size;
		a->blocks = g_slist_prepend (a->blocks, a->cur);
	}
	void *p = a->cur;
	a->cur += n;
	a->left -= n;
	return memset (p, 0, n);
}

void *
mta_run_arena_alloc0 (Arena *a, size_t n)
{
	return arena_alloc_aligned0 (a, n, 8);
}

static void *
arena_dup (Arena *a, const void *p, size_t n)
{
	return n ? memcpy (mta_run_arena_alloc0 (a, n), p, n) : NULL;
}

const uint64_t mta_run_no_reach[2 * MTA_REACH_N];
/* the totals of a site no path was charged to */
static const MtaTotals no_totals;

typedef struct FieldSites {
	guint n;
	struct {
		uint32_t site;
		gboolean inlined;
	} f[];
} FieldSites;


/* ---- stack frames by address (MtaRun.field_by_addr): open addressing,
 * at most 3/4 full, 12 bytes a slot -- millions of callers are millions
 * of addresses, most of them a frame of one site */

/* a value: 1 + the site, or 1 + (ADDR_MULTI | index into addr_fields) */
#define ADDR_MULTI 0x80000000u

static inline size_t
addr_home (uint64_t a, size_t mask)
{
	/* heap and code addresses differ in their low bits by little */
	a ^= a >> 29;
	a *= 0xbf58476d1ce4e5b9ULL;
	a ^= a >> 32;
	return (size_t) a & mask;
}

static void
addr_sites_init (AddrSites *t)
{
	t->mask = 255;
	t->count = 0;
	t->addrs = g_new (uint64_t, t->mask + 1);
	t->vals = g_new0 (uint32_t, t->mask + 1);
}

static void
mta_run_addr_sites_release (AddrSites *t)
{
	g_clear_pointer (&t->addrs, g_free);
	g_clear_pointer (&t->vals, g_free);
	t->mask = t->count = 0;
}

/* The value stored for ADDR, 0: none. */
static uint32_t
addr_sites_find (const AddrSites *t, uint64_t addr)
{
	for (size_t i = addr_home (addr, t->mask);; i = (i + 1) & t->mask) {
		if (t->vals[i] == 0 || t->addrs[i] == addr)
			return t->vals[i];
	}
}

static void
addr_sites_put (uint64_t *addrs, uint32_t *vals, size_t mask, uint64_t addr, uint32_t val)
{
	size_t i = addr_home (addr, mask);
	while (vals[i] != 0)
		i = (i + 1) & mask;
	addrs[i] = addr;
	vals[i] = val;
}

/* Add ADDR (not there yet) with VAL. */
static void
addr_sites_add (AddrSites *t, uint64_t addr, uint32_t val)
{
	if ((t->count + 1) * 4 > (t->mask + 1) * 3) {
		size_t cap = (t->mask + 1) * 2;
		uint64_t *addrs = g_new (uint64_t, cap);
		uint32_t *vals = g_new0 (uint32_t, cap);
		for (size_t k = 0; k <= t->mask; k++)
			if (t->vals[k] != 0)
				addr_sites_put (addrs, vals, cap - 1, t->addrs[k], t->vals[k]);
		g_free (t->addrs);
		g_free (t->vals);
		t->addrs = addrs;
		t->vals = vals;
		t->mask = cap - 1;
	}
	addr_sites_put (t->addrs, t->vals, t->mask, addr, val);
	t->count++;
}

/* ------------------------------------------------------------ life cycle */

static void
site_free (gpointer p)
{
	MtaSite *s = p;
	mta_tl_points_release (&s->tl);     /* the rest is the arena's */
}

static guint
site_key_hash (const MtaSite *s)
{
	return g_str_hash (s->function) ^ (g_str_hash (s->file) * 31) ^ (s->line * 1000003u) ^
	       (g_str_hash (s->object) * 17);
}

/* MtaIndexEqual: whether site INDEX of run DATA is at KEY (an MtaSite) */
static gboolean
site_key_equal (uint32_t index, gconstpointer key, gpointer data)
{
	const MtaSite *x = site_at (data, index), *y = key;
	return x->line == y->line && strcmp (x->function, y->function) == 0 &&
	       strcmp (x->file, y->file) == 0 && strcmp (x->object, y->object) == 0;
}

/* A function, for MtaSite.func_id: its object and name ("" unnamed), or,
 * without a name, where its code starts (NAME NULL) when that is known. */
typedef struct {
	const char *object, *name;
	uint64_t code_lo;
} FuncKey;

static guint
func_key_hash (const FuncKey *k)
{
	guint h = k->name != NULL ? g_str_hash (k->name) : g_int64_hash (&k->code_lo) * 2654435761u;
	return h ^ (g_str_hash (k->object) * 31);
}

/* MtaIndexEqual: whether function KEY is that of site INDEX (of run DATA) */
static gboolean
func_key_equal (uint32_t index, gconstpointer key, gpointer data)
{
	const MtaSite *s = site_at (data, index);
	const FuncKey *k = key;
	if (strcmp (s->object, k->object) != 0)
		return FALSE;
	if (k->name == NULL)
		return s->code_size > 0 && s->code_lo == k->code_lo;
	return s->code_size == 0 && strcmp (s->named ? s->function : "", k->name) == 0;
}

MtaRun *
mta_run_new (MtaSymbolizer *sym, const MtaWrappers *wrappers, const char *binary)
{
	MtaRun *r = g_new0 (MtaRun, 1);

	r->sym = sym;
	r->wrappers = wrappers;
	r->info.traces = g_ptr_array_new_with_free_func (g_free);
	r->info.binary = g_strdup (binary);
	r->info.pid = r->info.ppid = -1;
	r->info.skip_wrappers = wrappers != NULL;
	r->info.auto_skip = wrappers != NULL;
	r->callers_of = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_hash_table_unref);
	mta_index_init (&r->funcs);
	mta_incomplete_init (&r->info.incomplete);
	mta_live_init (&r->blocks);
	mta_strtab_init (&r->callers);
	r->path_by_caller = g_array_new (FALSE, TRUE, sizeof (uint32_t));
	r->path_by_stack = g_array_new (FALSE, TRUE, sizeof (uint32_t));
	r->path_by_big_stack = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	r->stack_by_id = g_array_new (FALSE, TRUE, sizeof (gpointer));
	r->stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	r->paths = g_ptr_array_new ();
	r->scratch_frames = g_array_new (FALSE, FALSE, sizeof (uint32_t));
	r->scratch_addrs = g_array_new (FALSE, FALSE, sizeof (uint64_t));
	r->scratch_inlined = g_array_new (FALSE, FALSE, sizeof (uint8_t));
	r->sites = g_ptr_array_new_with_free_func (site_free);
	mta_index_init (&r->site_by_key);
	r->site_by_field = g_hash_table_new (g_str_hash, g_str_equal);
	addr_sites_init (&r->field_by_addr);
	r->addr_fields = g_ptr_array_new ();
	r->one_field = mta_run_arena_alloc0 (&r->arena, sizeof (FieldSites) + sizeof r->one_field->f[0]);
	r->strings = g_string_chunk_new (1 << 16);
	r->leaks = g_array_new (FALSE, FALSE, sizeof (MtaRecord));
	r->bad_frees = g_array_new (FALSE, FALSE, sizeof (MtaRecord));
	r->threads = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, g_free);
	mta_timeline_init (&r->timeline);
	r->thread_index = g_hash_table_new (g_direct_hash, g_direct_equal);
	r->thread_states = g_array_new (FALSE, TRUE, sizeof (ThreadState));
	g_array_set_size (r->thread_states, 1);
	r->cur_thread = &g_array_index (r->thread_states, ThreadState, 0);
	r->kinds = mta_kinds_new ();
	mta_live_init (&r->verdicts);
	mta_live_init (&r->scan);
	r->scan_notes = g_ptr_array_new_with_free_func (g_free);
	r->info.reach_notes = g_ptr_array_new_with_free_func (g_free);
	r->info.reach_refused = g_ptr_array_new_with_free_func (g_free);
	return r;
}

/* Once every path is resolved: the tables that find a path, a stack, a
 * field or a site go before the leak records are made -- with millions of
 * callers they are a tenth of the run's memory, the records another
 * (run-finish.c); at the latest when the run is freed. */
void
mta_run_drop_path_tables (MtaRun *r)
{
	if (r->path_by_stack != NULL) {
		g_array_unref (r->path_by_stack);
		r->path_by_stack = NULL;
	}
	if (r->stack_by_id != NULL) {
		g_array_unref (r->stack_by_id);
		r->stack_by_id = NULL;
	}
	if (r->site_by_field != NULL) {
		g_hash_table_destroy (r->site_by_field);
		r->site_by_field = NULL;
	}
	mta_run_addr_sites_release (&r->field_by_addr);
	if (r->addr_fields != NULL) {
		g_ptr_array_unref (r->addr_fields);
		r->addr_fields = NULL;
	}
	mta_index_release (&r->site_by_key);
	mta_index_release (&r->funcs);
}

void
mta_run_free (MtaRun *r)
{
	if (r == NULL)
		return;
	g_ptr_array_free (r->info.traces, TRUE);
	g_free (r->info.binary);
	g_free (r->info.exe);
	g_free (r->info.cmdline);
	g_free (r->info.start);
	mta_incomplete_release (&r->info.incomplete);
	mta_live_release (&r->blocks);
	mta_strtab_release (&r->callers);
	g_array_free (r->path_by_caller, TRUE);
	mta_run_drop_path_tables (r);
	g_hash_table_destroy (r->path_by_big_stack);
	g_hash_table_destroy (r->stacks);
	g_ptr_array_free (r->paths, TRUE);
	g_ptr_array_free (r->sites, TRUE);
	g_free (r->site_path_start);
	g_free (r->site_paths);
	g_hash_table_destroy (r->callers_of);
	g_string_chunk_free (r->strings);
	g_slist_free_full (r->arena.blocks, g_free);
	g_slist_free_full (r->arena4.blocks, g_free);
	g_array_free (r->scratch_frames, TRUE);
	g_array_free (r->scratch_addrs, TRUE);
	g_array_free (r->scratch_inlined, TRUE);
	g_array_free (r->leaks, TRUE);
	if (r->compact_shares != NULL)
		g_array_free (r->compact_shares, TRUE);
	g_array_free (r->bad_frees, TRUE);
	g_hash_table_destroy (r->threads);
	g_free (r->info.tl_lines);
	g_free (r->info.tl_times);
	mta_timeline_release (&r->timeline);
	g_hash_table_destroy (r->thread_index);
	g_array_free (r->thread_states, TRUE);
	mta_kinds_free (r->kinds);
	mta_live_release (&r->verdicts);
	mta_live_release (&r->scan);
	g_ptr_array_free (r->scan_notes, TRUE);
	g_ptr_array_free (r->info.reach_notes, TRUE);
	g_ptr_array_free (r->info.reach_refused, TRUE);
	g_free (r);
}

void
mta_run_set_leak_kinds (MtaRun *r, guint mask)
{
	r->info.leak_kinds = mask;
}

void
mta_run_set_auto_skip (MtaRun *r, gboolean on)
{
	r->info.auto_skip = on && r->info.skip_wrappers;
}

void
mta_run_add_trace (MtaRun *r, const char *path)
{
	g_ptr_array_add (r->info.traces, g_strdup (path));
}

void
mta_run_set_event_func (MtaRun *r, MtaRunEventFunc func, gpointer data)
{
	r->event_func = func;
	r->event_data = data;
}

const MtaRunInfo *mta_run_info (const MtaRun *r) { return &r->info; }
MtaSymbolizer *mta_run_symbolizer (const MtaRun *r) { return r->sym; }
GPtrArray *mta_run_sites (const MtaRun *r) { return r->sites; }
GPtrArray *mta_run_paths (const MtaRun *r) { return r->paths; }
GArray *mta_run_leaks (const MtaRun *r) { return r->leaks; }
GArray *mta_run_bad_frees (const MtaRun *r) { return r->bad_frees; }
GHashTable *mta_run_threads (const MtaRun *r) { return r->threads; }
const MtaKinds *mta_run_kinds (const MtaRun *r) { return r->kinds; }

/* ------------------------------------------------------------ sites */

/* The site of one frame (NULL: a field that names nothing). */
static uint32_t
site_for_frame (MtaRun *r, const MtaFrameInfo *fi)
{
	char offset[24];
	MtaSite key = { 0 };
	if (fi != NULL && fi->function != NULL)
		key.function = (char *) fi->function;
	else if (fi != NULL) {
		g_snprintf (offset, sizeof offset, "0x%" PRIx64, fi->offset);
		key.function = offset;
	} else
		key.function = (char *) "";
	key.file = (char *) (fi && fi->file ? fi->file : "");
	key.object = (char *) (fi && fi->object ? fi->object : "");
	key.line = fi ? fi->line : 0;
	guint hash = site_key_hash (&key);
	uint32_t idx;

	if (!mta_index_find (&r->site_by_key, hash, site_key_equal, &key, r, &idx)) {
		MtaSite *s = mta_run_arena_alloc0 (&r->arena, sizeof *s);
		s->reach = mta_run_no_reach;
		s->t = &no_totals;
		s->function = g_string_chunk_insert (r->strings, key.function);
		/* few files and objects for many sites */
		s->file = g_string_chunk_insert_const (r->strings, key.file);
		s->line = key.line;
		s->object = g_string_chunk_insert_const (r->strings, key.object);
		if (fi != NULL && fi->function == NULL && fi->code_hi > fi->code_lo) {
			s->code_size = (uint32_t) MIN (fi->code_hi - fi->code_lo, G_MAXUINT32);
			s->code_lo = fi->code_lo;
		}
		s->named = fi != NULL && fi->function != NULL;
		idx = r->sites->len;
		/* its function, one id for all its call sites: a caller that
		 * calls from several places (an unrolled loop) is one caller;
		 * the id is the function's first site */
		FuncKey fk = { s->object, s->code_size > 0 ? NULL : s->named ? s->function : "",
			       s->code_lo };
		guint fhash = func_key_hash (&fk);
		g_ptr_array_add (r->sites, s);
		if (!mta_index_find (&r->funcs, fhash, func_key_equal, &fk, r, &s->func_id)) {
			s->func_id = idx;
			mta_index_add (&r->funcs, fhash, idx);
		}
		/* by name, or by offset for code without symbols */
		s->wrapper = r->wrappers != NULL &&
			(mta_wrappers_match_frame (r->wrappers, s->function, s->object, fi ? fi->offset : 0,
						   fi != NULL && fi->main_exe) ||
			 /* a C++ name as the list may spell it, mangled */
			 (fi != NULL && fi->linkage != NULL &&
			  mta_wrappers_match (r->wrappers, fi->linkage)));
		mta_index_add (&r->site_by_key, hash, idx);
	}
	if (fi != NULL && fi->inlined)
		((MtaSite *) r->sites->pdata[idx])->inlined = TRUE;
	return idx;
}

/* The sites of a frame (a caller field or "[0xADDR]"): one, or one per
 * function when the call is in inlined code, innermost first. */
static FieldSites *
new_field_sites (MtaRun *r, const char *field, FieldSites *one)
{
	MtaFrameInfo *frame = field[0] ? mta_symbolizer_call_site (r->sym, field) : NULL;
	const MtaFrameInfo *fi = frame;
	guint n = 1;
	for (const MtaFrameInfo *f = fi; f != NULL && f->outer != NULL; f = f->outer)
		n++;
	FieldSites *fs = n == 1 && one != NULL && !(fi != NULL && fi->inlined)
		? one : mta_run_arena_alloc0 (&r->arena, sizeof *fs + n * sizeof fs->f[0]);
	fs->n = n;
	for (guint i = 0; i < n; i++, fi = fi ? fi->outer : NULL) {
		fs->f[i].site = site_for_frame (r, fi);
		fs->f[i].inlined = fi != NULL && fi->inlined;
	}
	mta_frame_info_free (frame);
	return fs;
}

static const FieldSites *
sites_for_field (MtaRun *r, const char *field)
{
	FieldSites *fs = g_hash_table_lookup (r->site_by_field, field);
	if (fs == NULL) {
		fs = new_field_sites (r, field, NULL);
		g_hash_table_insert (r->site_by_field, g_string_chunk_insert (r->strings, field), fs);
	}
	return fs;
}

/* The sites of stack frame ADDR, the field "[0xADDR]": by its address,
 * without writing the field and keeping it (most of a run's fields, with
 * millions of callers).  A frame of one site comes back in the run's
 * one_field, good until the next call. */
static const FieldSites *
sites_for_addr (MtaRun *r, uint64_t addr)
{
	uint32_t v = addr_sites_find (&r->field_by_addr, addr);
	if (v != 0 && !((v - 1) & ADDR_MULTI)) {
		r->one_field->n = 1;
		r->one_field->f[0].site = v - 1;
		r->one_field->f[0].inlined = FALSE;
		return r->one_field;
	}
	if (v != 0)
		return r->addr_fields->pdata[(v - 1) & ~ADDR_MULTI];
	char field[32];
	g_snprintf (field, sizeof field, "[0x%" PRIx64 "]", addr);
	FieldSites *fs = new_field_sites (r, field, r->one_field);
	if (fs == r->one_field) {
		g_assert (fs->f[0].site < ADDR_MULTI);
		addr_sites_add (&r->field_by_addr, addr, fs->f[0].site + 1);
	} else {
		g_assert (r->addr_fields->len < ADDR_MULTI - 1);
		addr_sites_add (&r->field_by_addr, addr, (r->addr_fields->len | ADDR_MULTI) + 1);
		g_ptr_array_add (r->addr_fields, fs);
	}
	return fs;
}


gboolean
mta_run_site_timeline (const MtaRun *r, const MtaSite *s, uint64_t *bytes, uint32_t *blocks)
{
	if (!s->charged)
		return FALSE;
	mta_timeline_expand (&r->timeline, &s->tl, s->live_bytes, s->live_blocks, bytes, blocks);
	return TRUE;
}

gboolean
mta_run_site_proven (const MtaRun *r, const MtaSite *s)
{
	const MtaIncomplete *x = &r->info.incomplete;
	return x->stopped_line == 0 && (x->lost_lines == 0 || s->t->leaked_blocks > x->lost_events);
}

char *
mta_location_label (const char *function, const char *file, unsigned line,
		    const char *object)
{
	GString *g = g_string_new (function[0] ? function : "??");
	if (file[0]) {
		g_string_append_printf (g, " at %s", file);
		if (line)
			g_string_append_printf (g, ":%u", line);
	}
	if (object[0])
		g_string_append_printf (g, " in %s", object);
	return g_string_free (g, FALSE);
}

char *
mta_site_label (const MtaSite *s)
{
	return mta_location_label (s->function, s->file, s->line, s->object);
}

/* ------------------------------------------------------------ paths */

static const StackDef *
stack_def (MtaRun *r, int64_t id)
{
	if ((uint64_t) id >= DENSE_STACK_IDS)
		return g_hash_table_lookup (r->stacks, &id);
	if ((guint) id >= r->stack_by_id->len)
		return NULL;
	return g_array_index (r->stack_by_id, StackDef *, id);
}


/* Whether caller field FIELD is "[0xADDR]", all it says of the frame. */
static gboolean
caller_is_addr (const char *field, uint64_t addr)
{
	char buf[32];
	g_snprintf (buf, sizeof buf, "[0x%" PRIx64 "]", addr);
	return strcmp (field, buf) == 0;
}

/* Find the frames and the site of path P, once its stack is known (or
 * never will be: FORCE). */
void
mta_run_resolve_path (MtaRun *r, MtaPath *p, gboolean force)
{
	const StackDef *st = p->trace_id >= 0 ? stack_def (r, p->trace_id) : NULL;
	uint32_t n = st && st->n > 0 ? st->n : 1;
	gboolean stack = st != NULL && st->n > 0;

	if (p->site >= 0 || (p->trace_id >= 0 && st == NULL && !force))
		return;
	/* one frame per function: an address in inlined code is several */
	GArray *frames = r->scratch_frames, *addrs = stack ? r->scratch_addrs : NULL;
	GArray *inlined = r->scratch_inlined;
	g_array_set_size (frames, 0);
	g_array_set_size (r->scratch_addrs, 0);
	g_array_set_size (inlined, 0);
	gboolean any_inlined = FALSE;
	for (uint32_t i = 0; i < n; i++) {
		/* the first frame by the caller field, which may name more
		 * than its address; the others by address */
		const FieldSites *fs =
			!stack || (i == 0 && p->caller[0] && !caller_is_addr (p->caller, st->addrs[0]))
			? sites_for_field (r, p->caller)
			: sites_for_addr (r, st->addrs[i]);
		for (guint k = 0; k < fs->n; k++) {
			uint8_t in = fs->f[k].inlined;
			g_array_append_val (frames, fs->f[k].site);
			g_array_append_val (inlined, in);
			if (addrs != NULL)
				g_array_append_val (addrs, st->addrs[i]);
			any_inlined |= in;
		}
	}
	n = p->nframes = frames->len;
	/* the frames' flags after them, when any: no pointer a path for the few */
	p->frames = arena_alloc_aligned0 (&r->arena4, n * sizeof (uint32_t) + (any_inlined ? n : 0), 4);
	memcpy (p->frames, frames->data, n * sizeof (uint32_t));
	if (any_inlined)
		memcpy (p->frames + n, inlined->data, n);
	p->any_inlined = any_inlined;
	/* a frame a stack address (no inlined code): the stack's own array,
	 * which lives as long as the run */
	if (addrs != NULL && n == st->n)
		p->addrs = (uint64_t *) st->addrs;
	else
		p->addrs = addrs ? arena_dup (&r->arena, addrs->data, n * sizeof (uint64_t)) : NULL;
	mta_run_charge_path (r, p);
}


static uint32_t
new_path (MtaRun *r, int64_t trace_id, const MtaLine *l)
{
	MtaPath *p = mta_run_arena_alloc0 (&r->arena, sizeof *p);
	p->trace_id = trace_id;
	p->caller = g_string_chunk_insert_len (r->strings, l->caller.p, (gssize) l->caller.len);
	p->site = -1;
	p->first_line = l->lineno;
	g_ptr_array_add (r->paths, p);
	mta_run_resolve_path (r, p, FALSE);
	return r->paths->len - 1;
}

static uint32_t
path_of (MtaRun *r, const MtaLine *l)
{
	uint32_t *slot;

	if (l->stack_id >= 0 && (uint64_t) l->stack_id < DENSE_STACK_IDS) {
		guint id = (guint) l->stack_id;
		if (id >= r->path_by_stack->len)
			g_array_set_size (r->path_by_stack, MAX (id + 1, r->path_by_stack->len * 2));
		slot = &g_array_index (r->path_by_stack, uint32_t, id);
	} else if (l->stack_id >= 0) {
		gpointer v = g_hash_table_lookup (r->path_by_big_stack, &l->stack_id);
		if (v != NULL)
			return GPOINTER_TO_UINT (v) - 1;
		uint32_t idx = new_path (r, l->stack_id, l);
		g_hash_table_insert (r->path_by_big_stack, g_memdup2 (&l->stack_id, sizeof (int64_t)),
				     GUINT_TO_POINTER (idx + 1));
		return idx;
	} else {
		uint32_t c = mta_strtab_intern (&r->callers, l->caller.p, l->caller.len);
		if (c >= r->path_by_caller->len)
			g_array_set_size (r->path_by_caller, MAX (c + 1, r->path_by_caller->len * 2));
		slot = &g_array_index (r->path_by_caller, uint32_t, c);
	}
	if (*slot == 0)
		*slot = new_path (r, l->stack_id, l) + 1;
	return *slot - 1;
}

/* A "# stack" line: define it, and charge a path that was waiting for it. */
static void
define_stack (MtaRun *r, const char *p, const char *end)
{
	char *e;
	int64_t id = g_ascii_strtoll (p, &e, 10);
	if (e == p || id < 0 || stack_def (r, id) != NULL)
		return;
	GArray *a = r->scratch_addrs;
	g_array_set_size (a, 0);
	for (p = e; p < end;) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			break;
		uint64_t v = g_ascii_strtoull (p, &e, 16);
		if (e == p)
			break;
		g_array_append_val (a, v);
		p = e;
	}
	/* in the arena: a stack is defined once, and its paths share it */
	StackDef *d = mta_run_arena_alloc0 (&r->arena, sizeof *d + a->len * sizeof (uint64_t));
	d->n = a->len;
	if (a->len > 0)	/* "# stack 1" with no frames: a->data is NULL */
		memcpy (d->addrs, a->data, a->len * sizeof (uint64_t));
	if ((uint64_t) id < DENSE_STACK_IDS) {
		if ((guint) id >= r->stack_by_id->len)
			g_array_set_size (r->stack_by_id, MAX ((guint) id + 1, r->stack_by_id->len * 2));
		g_array_index (r->stack_by_id, StackDef *, id) = d;
	} else
		g_hash_table_insert (r->stacks, g_memdup2 (&id, sizeof id), d);

	uint32_t idx = 0;
	if ((uint64_t) id < DENSE_STACK_IDS) {
		if ((guint) id < r->path_by_stack->len)
			idx = g_array_index (r->path_by_stack, uint32_t, id);
	} else
		idx = GPOINTER_TO_UINT (g_hash_table_lookup (r->path_by_big_stack, &id));
	if (idx != 0)
		mta_run_resolve_path (r, r->paths->pdata[idx - 1], FALSE);
}

/* ------------------------------------------------------------ lines */

static void
set_thread (MtaRun *r)
{
	gpointer v = g_hash_table_lookup (r->thread_index, GUINT_TO_POINTER (r->tid));
	guint i;
	if (v != NULL)
		i = GPOINTER_TO_UINT (v) - 1;
	else {
		i = r->thread_states->len;
		g_array_set_size (r->thread_states, i + 1);
		g_hash_table_insert (r->thread_index, GUINT_TO_POINTER (r->tid), GUINT_TO_POINTER (i + 1));
	}
	r->cur_thread = &g_array_index (r->thread_states, ThreadState, i);
}

/* The process header and the objects (trace-header.c): what the run
 * reports of the process, and the symbolizer's objects. */
static void
header_line (MtaRun *r, const char *t, size_t len)
{
	MtaHeader h;

	if (!mta_header_parse (t, len, &h))
		return;
	mta_symbolizer_header (r->sym, &h);
	switch (h.kind) {
	case MTA_HEADER_PID:
		r->info.pid = h.pid;
		r->info.ppid = h.ppid;
		break;
	case MTA_HEADER_EXE:
		g_free (r->info.exe);
		r->info.exe = mta_header_dup (h.rest);
		break;
	case MTA_HEADER_CMDLINE:
		g_free (r->info.cmdline);
		r->info.cmdline = mta_header_dup (h.rest);
		break;
	case MTA_HEADER_START:
		if (r->info.start == NULL)
			r->info.start = mta_header_dup (h.rest);
		break;
	case MTA_HEADER_DEPTH:
		r->info.depth = (int) MIN (h.n, (uint64_t) G_MAXINT);
		break;
	case MTA_HEADER_THREAD:
		g_hash_table_insert (r->threads, GUINT_TO_POINTER ((guint) h.n), mta_header_dup (h.rest));
		break;
	default:
		break;
	}
}

/* A scan's verdicts become the run's: the latest finished scan judges
 * the blocks live at the end that it saw (share/reach.md). */
static void
reach_commit (MtaRun *r, gboolean finished)
{
	MtaRunInfo *i = &r->info;
	MtaLiveTable t = r->verdicts;

	r->verdicts = r->scan;
	r->scan = t;
	mta_live_release (&r->scan);
	mta_live_init (&r->scan);
	g_ptr_array_set_size (i->reach_notes, 0);
	for (guint k = 0; k < r->scan_notes->len; k++)
		g_ptr_array_add (i->reach_notes, g_strdup (r->scan_notes->pdata[k]));
	i->reach_announced = r->scan_announced;
	i->reach_verdicts = r->scan_verdicts;
	i->reach = TRUE;
	i->reach_finished = finished;
	i->reach_line = r->scan_line;
	i->reach_scans++;
	r->in_scan = FALSE;
}

/* The recorder's reachability lines (reach.h); FALSE: not one. */
static gboolean
reach_line (MtaRun *r, const char *t, size_t len)
{
	MtaReachValue v = { 0 };
	MtaRunInfo *i = &r->info;

	switch (mta_reach_line (t, len, &v)) {
	case MTA_REACH_LINE_BEGIN:
		if (r->in_scan)
			i->reach_unfinished++;
		mta_live_release (&r->scan);
		mta_live_init (&r->scan);
		g_ptr_array_set_size (r->scan_notes, 0);
		r->in_scan = TRUE;
		r->scan_line = r->cur_line;
		r->scan_announced = v.n;
		r->scan_verdicts = 0;
		return TRUE;
	case MTA_REACH_LINE_VERDICT:
		if (!r->in_scan)
			break;
		mta_live_insert (&r->scan, v.addr)->flags = (uint16_t) v.kind;
		r->scan_verdicts++;
		return TRUE;
	case MTA_REACH_LINE_UNSCANNED:
		if (!r->in_scan)
			break;
		g_ptr_array_add (r->scan_notes, g_strndup (v.rest, v.rest_len));
		return TRUE;
	case MTA_REACH_LINE_END:
		if (!r->in_scan)
			break;
		i->reach_read_bytes = v.n;
		i->reach_ms = v.ms;
		reach_commit (r, TRUE);
		return TRUE;
	case MTA_REACH_LINE_REFUSED:
		g_ptr_array_add (i->reach_refused, g_strndup (v.rest, v.rest_len));
		return TRUE;
	case MTA_REACH_LINE_BAD:
		break;
	case MTA_REACH_LINE_NOT:
		return FALSE;
	}
	if (i->reach_bad_lines++ == 0)
		i->reach_first_bad_line = r->cur_line;
	return TRUE;
}

/* The end of the run: a scan the trace ends in is used only when no
 * earlier one finished. */
void
mta_run_reach_finish (MtaRun *r)
{
	if (!r->in_scan)
		return;
	if (r->info.reach_finished) {
		r->info.reach_unfinished++;
		return;
	}
	reach_commit (r, FALSE);
}

static void
ext_line (MtaRun *r, const MtaLine *l)
{
	const char *t = l->text.p, *end = t + l->text.len;
	size_t len = l->text.len;

	switch (l->word) {
	case MTA_WORD_T:
		if (len > 4 && memcmp (t, "# T ", 4) == 0) {
			r->tid = (uint32_t) g_ascii_strtoull (t + 4, NULL, 10);
			set_thread (r);
			return;
		}
		break;
	case MTA_WORD_TIME:
		if (len > 7 && memcmp (t, "# time ", 7) == 0) {
			mta_timeline_clock (&r->timeline, r->cur_line, g_ascii_strtoull (t + 7, NULL, 10));
			return;
		}
		break;
	case MTA_WORD_STACK:
		if (len > 8 && memcmp (t, "# stack ", 8) == 0) {
			while (end > t && (end[-1] == '\r' || end[-1] == ' '))
				end--;
			define_stack (r, t + 8, end);
			return;
		}
		break;
	case MTA_WORD_REACH:
		if (len > 8 && reach_line (r, t, len))
			return;
		break;
	case MTA_WORD_ATTACHED:
		if (len > 11 && memcmp (t, "# attached ", 11) == 0) {
			uint64_t n = g_ascii_strtoull (t + 11, NULL, 10);
			r->info.attaches = MAX (r->info.attaches, MAX (n, 1));
			return;
		}
		break;
	default:
		break;
	}
	header_line (r, t, len);
}

static void
add_live (MtaRun *r, MtaPath *p, uint64_t size)
{
	p->live_bytes += size;
	if (p->site >= 0) {
		MtaSite *s = site_at (r, (uint32_t) p->site);
		site_touch (r, s);
		s->live_bytes += size;
		s->live_blocks++;
		if (s->live_bytes > s->peak_live_bytes)
			s->peak_live_bytes = s->live_bytes;
	}
	r->info.live_bytes += size;
	if (r->info.live_bytes > r->info.peak_live_bytes) {
		r->info.peak_live_bytes = r->info.live_bytes;
		r->info.peak_line = r->cur_line;
		r->peak_epoch++;
	}
}

static void
free_block (MtaRun *r, MtaLiveEntry *b)
{
	MtaPath *p = r->paths->pdata[b->path];
	p->frees++;
	p->last_free_line = r->cur_line;
	p->last_freed_born = MAX (p->last_freed_born, b->seq);
	p->live_bytes -= b->size;
	if (p->site >= 0) {
		MtaSite *s = site_at (r, (uint32_t) p->site);
		site_touch (r, s);
		s->live_bytes -= b->size;
		s->live_blocks--;
	}
	/* heaptrack's temporary allocation: nothing allocated in between, in
	 * this thread */
	if (r->cur_thread->valid && r->cur_thread->last_addr == b->addr) {
		p->temporary++;
		r->info.temporary++;
		r->cur_thread->valid = FALSE;
	}
	r->info.live_bytes -= b->size;
	r->info.frees++;
	/* a verdict judged the block freed here, not one allocated later at
	 * its address */
	if (r->verdicts.count > 0)
		mta_live_remove (&r->verdicts, b->addr);
	mta_live_remove_entry (&r->blocks, b);
}

/* A compacted trace's sums (compact-sum.h): the counters of the events
 * it dropped, added to the run's, so that it and the parts after it give
 * the full trace's totals, peak and growth evidence. */
static gboolean
compact_line (MtaRun *r, const MtaLine *l, gboolean *done, GError **error)
{
	MtaCompactSum c;

	if (!mta_compact_sum_parse (l, &c, error))
		return FALSE;
	*done = c.kind != MTA_COMPACT_NOT;
	if (c.kind == MTA_COMPACT_RUN) {
		MtaRunInfo *i = &r->info;
		i->events += c.run.events;
		i->allocs += c.run.allocs;
		i->frees += c.run.frees;
		i->reallocs += c.run.reallocs;
		i->failed_allocs += c.run.failed_allocs;
		i->duplicates += c.run.duplicates;
		i->bytes_allocated += c.run.bytes_allocated;
		i->temporary += c.run.temporary;
		i->bad_frees += c.run.bad_frees;
		if (c.run.peak_live_bytes > i->peak_live_bytes ||
		    (c.run.peak_live_bytes == i->peak_live_bytes && c.run.peak_line < i->peak_line)) {
			i->peak_live_bytes = c.run.peak_live_bytes;
			i->peak_line = c.run.peak_line;
			r->compact_peak_epoch = ++r->peak_epoch;
		}
	} else if (c.kind == MTA_COMPACT_PATH) {
		MtaLine key = { .caller = c.path.caller, .stack_id = c.path.stack_id, .lineno = c.path.first_line };
		uint32_t pi = path_of (r, &key);    /* may grow r->paths */
		MtaPath *p = r->paths->pdata[pi];
		p->first_line = MIN (p->first_line, c.path.first_line);
		p->allocs += c.path.allocs;
		p->frees += c.path.frees;
		p->bytes_allocated += c.path.bytes_allocated;
		p->temporary += c.path.temporary;
		p->bad_frees += c.path.bad_frees;
		p->last_free_line = MAX (p->last_free_line, c.path.last_free_line);
		p->last_freed_born = MAX (p->last_freed_born, c.path.last_freed_born);
		if (r->compact_shares == NULL)
			r->compact_shares = g_array_new (FALSE, TRUE, sizeof (uint64_t));
		if (pi >= r->compact_shares->len)
			g_array_set_size (r->compact_shares, pi + 1);
		g_array_index (r->compact_shares, uint64_t, pi) = c.path.peak_share;
	} else if (c.kind == MTA_COMPACT_THREAD) {
		uint32_t tid = r->tid;
		r->tid = c.thread.tid;
		set_thread (r);
		r->cur_thread->valid = c.thread.valid;
		r->cur_thread->last_addr = c.thread.last_addr;
		r->tid = tid;
		set_thread (r);
	}
	return TRUE;
}

gboolean
mta_run_line (const MtaLine *l, gpointer data, GError **error)
{
	MtaRun *r = data;
	MtaLiveEntry *b;

	r->cur_line = l->lineno;
	if (l->kind == MTA_LINE_EXT) {
		gboolean done = FALSE;
		if (G_UNLIKELY (l->word == MTA_WORD_RUNSUM || l->word == MTA_WORD_PATHSUM ||
				l->word == MTA_WORD_TSTATE)) {
			if (!compact_line (r, l, &done, error))
				return FALSE;
			if (done)
				return TRUE;
		}
		if (!mta_incomplete_line (&r->info.incomplete, l))
			ext_line (r, l);
		return TRUE;
	}
	if (G_UNLIKELY (l->kind == MTA_LINE_TRACKED)) {
		mta_kinds_event (r->kinds, l, path_of (r, l), r->tid);
		return TRUE;
	}
	if (l->kind != MTA_LINE_EVENT)
		return TRUE;
	if (G_UNLIKELY (mta_timeline_due (&r->timeline, l->lineno)))
		mta_timeline_sample (&r->timeline, l->lineno);
	r->info.events++;
	uint32_t pi = path_of (r, l);
	MtaPath *p = r->paths->pdata[pi];
	/* "(nil)": a failed allocation, never stored (the script's keys start
	 * with "0x") */
	gboolean nil = l->addr == 0 && !l->addr_canonical;

	switch (l->op) {
	case '+':
	case '>':
		if (l->op == '>')
			r->info.reallocs++;
		if (nil) {
			r->info.failed_allocs++;
			break;
		}
		if ((b = mta_live_lookup (&r->blocks, l->addr)) != NULL) {
			/* attached again: the block of that address was freed
			 * while the program ran detached, unseen */
			if (r->info.attaches > 1) {
				free_block (r, b);
			} else {
				r->info.duplicates++;
				break;
			}
		}
		b = mta_live_insert (&r->blocks, l->addr);
		b->size = l->size;
		b->seq = l->lineno;
		b->tid = r->tid;
		b->path = pi;
		p->allocs++;
		p->bytes_allocated += l->size;
		r->info.allocs++;
		r->info.bytes_allocated += l->size;
		add_live (r, p, l->size);
		r->cur_thread->last_addr = l->addr;
		r->cur_thread->valid = TRUE;
		break;
	case '-':
	case '<':
		if ((b = mta_live_lookup (&r->blocks, l->addr)) != NULL) {
			free_block (r, b);
			break;
		}
		/* a block of the time before mtrec attach: not an error */
		if (r->info.attaches > 0) {
			r->info.frees_before_attach++;
			break;
		}
		if (p->bad_frees++ == 0)
			p->first_bad_line = l->lineno;
		r->info.bad_frees++;
		if (r->bad_frees->len < MAX_BAD_FREES) {
			MtaRecord rec = { l->addr, 0, l->lineno, pi, r->tid, l->op, 0 };
			g_array_append_val (r->bad_frees, rec);
		}
		break;
	case '!':
		r->info.failed_allocs++;
		break;
	default:
		break;
	}
	if (r->event_func != NULL) {
		MtaRunEvent ev = { l->lineno, l->op, l->addr, l->size, pi, r->tid };
		return r->event_func (&ev, r->event_data, error);
	}
	return TRUE;
}
