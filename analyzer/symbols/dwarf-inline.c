/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dwarf-inline.c -- the functions inlined at an address (DWARF).
 *
 * libdw's dwarf_getscopes answers the same question, but walks the whole
 * compilation unit for every address, and once more to find the abstract
 * origin of what it found; clang emits no DW_AT_sibling, so skipping an
 * entry means reading all its children: a large unit costs milliseconds
 * an address.  Here each unit's concrete functions (DW_TAG_subprogram
 * with addresses, also inside namespaces) are indexed by their ranges
 * once; the first address in a function indexes the ranges of its
 * DW_TAG_inlined_subroutine entries (through lexical blocks), each with
 * its nearest inlined ancestor; then an address costs two binary
 * searches and a short scan: ranges nest, so the innermost entry holding
 * it is the one starting last, and its ancestors are the chain.
 *
 * A call's file is named the way addr2line names a line's (symbolize.c
 * dwarf_row): the unit's file table entry, prefixed with DW_AT_comp_dir
 * when it is still relative; so that an inlined frame and a called frame
 * of the same line are one site.
 */
#include "dwarf-inline.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

/* Deeper than any real nesting of scopes; bounds a hostile file's. */
#define MAX_SCOPE_DEPTH 256

typedef struct {
	Dwarf_Addr lo, hi;
	Dwarf_Die die;
} FuncRange;

/* The inlined subroutines of one concrete function: a node each (with
 * its nearest inlined ancestor), an entry per range of a node. */
typedef struct {
	Dwarf_Die die;
	int parent;                /* node index, -1: inlined into the function itself */
} InlineNode;

typedef struct {
	Dwarf_Addr lo, hi;
	int node;
} ScopeRange;

typedef struct {
	GArray *nodes;             /* InlineNode */
	GArray *ranges;            /* ScopeRange, by lo */
	Dwarf_Addr max_len;        /* of the longest range */
} FuncScopes;

typedef struct {
	GArray *funcs;             /* FuncRange, by lo */
	Dwarf_Files *files;        /* NULL: no file table */
	size_t nfiles;
	const char *comp_dir;      /* NULL: none */
} Unit;

typedef struct {
	guint n;
	MtaInlineCall calls[];
} Chain;

/* A range of a compilation unit, for mta_dwarf_unit_at. */
typedef struct {
	Dwarf_Addr lo, hi;
	Dwarf_Die cu;
} UnitRange;

struct MtaDwarfInline {
	Dwfl_Module *mod;
	GArray *unit_ranges;       /* UnitRange by lo, once libdwfl found no unit */
	Dwarf_Addr unit_bias;
	GHashTable *units;         /* CU offset + 1 -> Unit */
	GHashTable *scopes;        /* concrete function's DIE offset + 1 -> FuncScopes */
	GHashTable *chains;        /* address -> Chain, NULL: none */
	GStringChunk *strings;     /* the file names built */
};

static void
scopes_free (gpointer p)
{
	FuncScopes *fs = p;
	g_array_free (fs->nodes, TRUE);
	g_array_free (fs->ranges, TRUE);
	g_free (fs);
}

static void
unit_free (gpointer p)
{
	Unit *u = p;
	g_array_free (u->funcs, TRUE);
	g_free (u);
}

MtaDwarfInline *
mta_dwarf_inline_new (Dwfl_Module *mod)
{
	MtaDwarfInline *d = g_new0 (MtaDwarfInline, 1);

	d->mod = mod;
	d->units = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, unit_free);
	d->scopes = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, scopes_free);
	d->chains = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, g_free);
	d->strings = g_string_chunk_new (4096);
	return d;
}

void
mta_dwarf_inline_free (MtaDwarfInline *d)
{
	if (d == NULL)
		return;
	g_hash_table_destroy (d->units);
	g_hash_table_destroy (d->scopes);
	g_hash_table_destroy (d->chains);
	if (d->unit_ranges != NULL)
		g_array_free (d->unit_ranges, TRUE);
	g_string_chunk_free (d->strings);
	g_free (d);
}

/* ------------------------------------------------------------ units */

static gint
unit_range_cmp (gconstpointer a, gconstpointer b)
{
	const UnitRange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void
index_units (MtaDwarfInline *d)
{
	Dwarf *dw = dwfl_module_getdwarf (d->mod, &d->unit_bias);
	Dwarf_Off off = 0, next;
	size_t hsize;

	d->unit_ranges = g_array_new (FALSE, FALSE, sizeof (UnitRange));
	while (dw != NULL && dwarf_nextcu (dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		UnitRange r;
		Dwarf_Addr base;
		ptrdiff_t roff = 0;
		if (dwarf_offdie (dw, off + hsize, &r.cu) != NULL)
			while ((roff = dwarf_ranges (&r.cu, roff, &base, &r.lo, &r.hi)) > 0)
				if (r.hi > r.lo)
					g_array_append_val (d->unit_ranges, r);
		off = next;
	}
	g_array_sort (d->unit_ranges, unit_range_cmp);
}

Dwarf_Die *
mta_dwarf_unit_at (MtaDwarfInline *d, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie (d->mod, addr, bias);

	if (cu != NULL)
		return cu;
	if (d->unit_ranges == NULL)
		index_units (d);
	*bias = d->unit_bias;
	Dwarf_Addr pc = addr - d->unit_bias;
	guint lo = 0, hi = d->unit_ranges->len;
	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (g_array_index (d->unit_ranges, UnitRange, mid).lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of units may nest (a unit's low_pc/high_pc around another's
	 * code): the nearest below that holds PC */
	for (guint i = lo; i-- > 0 && lo - i <= 8;) {
		UnitRange *r = &g_array_index (d->unit_ranges, UnitRange, i);
		if (pc < r->hi)
			return &r->cu;
	}
	return NULL;
}

static void
add_ranges (Dwarf_Die *die, GArray *funcs)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges (die, off, &base, &lo, &hi)) > 0)
		if (hi > lo) {
			FuncRange f = { lo, hi, *die };
			g_array_append_val (funcs, f);
		}
}

/* The concrete functions among PARENT's children, and in its namespaces
 * (clang puts a namespace's functions there, gcc at the unit's level). */
static void
index_funcs (Dwarf_Die *parent, GArray *funcs, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child (parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag (&child);
		if (tag == DW_TAG_subprogram)
			add_ranges (&child, funcs);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_module)
			index_funcs (&child, funcs, depth + 1);
	} while (dwarf_siblingof (&child, &child) == 0);
}

static gint
func_cmp (gconstpointer a, gconstpointer b)
{
	const FuncRange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static Unit *
get_unit (MtaDwarfInline *d, Dwarf_Die *cu)
{
	gpointer key = GSIZE_TO_POINTER ((gsize) dwarf_dieoffset (cu) + 1);
	Unit *u = g_hash_table_lookup (d->units, key);
	Dwarf_Attribute attr;

	if (u != NULL)
		return u;
	u = g_new0 (Unit, 1);
	u->funcs = g_array_new (FALSE, FALSE, sizeof (FuncRange));
	index_funcs (cu, u->funcs, 0);
	g_array_sort (u->funcs, func_cmp);
	if (dwarf_getsrcfiles (cu, &u->files, &u->nfiles) != 0)
		u->files = NULL;
	if (dwarf_attr (cu, DW_AT_comp_dir, &attr) != NULL)
		u->comp_dir = dwarf_formstring (&attr);
	g_hash_table_insert (d->units, key, u);
	return u;
}

/* The concrete function of U holding PC, or NULL. */
static Dwarf_Die *
func_at (Unit *u, Dwarf_Addr pc)
{
	guint lo = 0, hi = u->funcs->len;

	while (lo < hi) {          /* the first range starting above PC */
		guint mid = lo + (hi - lo) / 2;
		if (g_array_index (u->funcs, FuncRange, mid).lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	FuncRange *f = &g_array_index (u->funcs, FuncRange, lo - 1);
	return pc < f->hi ? &f->die : NULL;
}

/* ------------------------------------------------------------ scopes */

/* Tags whose children may hold inlined code. */
static gboolean
is_scope (int tag)
{
	return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
		tag == DW_TAG_try_block || tag == DW_TAG_catch_block || tag == DW_TAG_with_stmt;
}

/* Index under SCOPE, whose nearest inlined ancestor is node PARENT (-1:
 * none): every inlined subroutine becomes a node, each of its ranges an
 * entry. */
static void
index_scopes (Dwarf_Die *scope, int parent, FuncScopes *fs, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child (scope, &child) != 0)
		return;
	do {
		int tag = dwarf_tag (&child);
		if (!is_scope (tag))
			continue;
		int node = parent;
		if (tag == DW_TAG_inlined_subroutine) {
			InlineNode n = { child, parent };
			node = (int) fs->nodes->len;
			g_array_append_val (fs->nodes, n);
			Dwarf_Addr base;
			ScopeRange r = { 0, 0, node };
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges (&child, off, &base, &r.lo, &r.hi)) > 0)
				if (r.hi > r.lo) {
					g_array_append_val (fs->ranges, r);
					fs->max_len = MAX (fs->max_len, r.hi - r.lo);
				}
		}
		index_scopes (&child, node, fs, depth + 1);
	} while (dwarf_siblingof (&child, &child) == 0);
}

static gint
scope_range_cmp (gconstpointer a, gconstpointer b)
{
	const ScopeRange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static FuncScopes *
get_scopes (MtaDwarfInline *d, Dwarf_Die *fn)
{
	gpointer key = GSIZE_TO_POINTER ((gsize) dwarf_dieoffset (fn) + 1);
	FuncScopes *fs = g_hash_table_lookup (d->scopes, key);

	if (fs != NULL)
		return fs;
	fs = g_new0 (FuncScopes, 1);
	fs->nodes = g_array_new (FALSE, FALSE, sizeof (InlineNode));
	fs->ranges = g_array_new (FALSE, FALSE, sizeof (ScopeRange));
	index_scopes (fn, -1, fs, 0);
	g_array_sort (fs->ranges, scope_range_cmp);
	g_hash_table_insert (d->scopes, key, fs);
	return fs;
}

/* The innermost inlined node of FS holding PC, or -1.  Ranges nest, so
 * the innermost is the one starting last among those that hold PC; none
 * starts more than max_len below PC. */
static int
innermost_node (const FuncScopes *fs, Dwarf_Addr pc)
{
	const ScopeRange *r = (const ScopeRange *) (void *) fs->ranges->data;
	guint lo = 0, hi = fs->ranges->len;

	while (lo < hi) {
		guint mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (guint i = lo; i-- > 0 && pc - r[i].lo < fs->max_len;)
		if (pc < r[i].hi)
			return r[i].node;
	return -1;
}

static const char *
die_function (Dwarf_Die *die)
{
	static const int names[] = { DW_AT_linkage_name, DW_AT_name };
	Dwarf_Attribute attr;

	for (guint i = 0; i < G_N_ELEMENTS (names); i++) {
		const char *s = dwarf_attr_integrate (die, names[i], &attr) ? dwarf_formstring (&attr) : NULL;
		if (s != NULL && s[0] != '\0')
			return s;
	}
	return "";
}

static const char *
call_file (MtaDwarfInline *d, const Unit *u, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;

	if (u->files == NULL || dwarf_formudata (dwarf_attr (die, DW_AT_call_file, &attr), &idx) != 0 ||
	    idx >= u->nfiles)
		return "";
	const char *f = dwarf_filesrc (u->files, idx, NULL, NULL);
	if (f == NULL)
		return "";
	if (f[0] == '/' || u->comp_dir == NULL || u->comp_dir[0] == '\0')
		return g_string_chunk_insert_const (d->strings, f);
	g_autofree char *full = g_strdup_printf ("%s/%s", u->comp_dir, f);
	return g_string_chunk_insert_const (d->strings, full);
}

static Chain *
chain_uncached (MtaDwarfInline *d, Dwarf_Addr addr)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = mta_dwarf_unit_at (d, addr, &bias);

	if (cu == NULL)
		return NULL;
	Unit *u = get_unit (d, cu);
	Dwarf_Addr pc = addr - bias;
	Dwarf_Die *fn = func_at (u, pc);
	if (fn == NULL)
		return NULL;
	FuncScopes *fs = get_scopes (d, fn);
	int node = innermost_node (fs, pc);
	if (node < 0)
		return NULL;
	guint n = 0;
	for (int k = node; k >= 0 && n <= MAX_SCOPE_DEPTH; k = g_array_index (fs->nodes, InlineNode, k).parent)
		n++;
	Chain *c = g_malloc (sizeof *c + n * sizeof (MtaInlineCall));
	c->n = n;
	for (guint i = 0; i < n; i++, node = g_array_index (fs->nodes, InlineNode, node).parent) {
		Dwarf_Die *die = &g_array_index (fs->nodes, InlineNode, node).die;
		Dwarf_Attribute attr;
		Dwarf_Word line = 0;
		c->calls[i].function = die_function (die);
		c->calls[i].call_file = call_file (d, u, die);
		if (dwarf_formudata (dwarf_attr (die, DW_AT_call_line, &attr), &line) != 0 || line > G_MAXUINT)
			line = 0;
		c->calls[i].call_line = (unsigned) line;
	}
	return c;
}

const MtaInlineCall *
mta_dwarf_inline_at (MtaDwarfInline *d, Dwarf_Addr addr, guint *n)
{
	gint64 key = (gint64) addr;
	gpointer v;
	Chain *c;

	if (g_hash_table_lookup_extended (d->chains, &key, NULL, &v))
		c = v;
	else {
		c = chain_uncached (d, addr);
		g_hash_table_insert (d->chains, g_memdup2 (&key, sizeof key), c);
	}
	*n = c ? c->n : 0;
	return c ? c->calls : NULL;
}
