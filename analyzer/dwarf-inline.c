/* dwarf-inline.c -- the functions inlined at an address (DWARF).
 *
 * libdw's dwarf_getscopes answers the same question, but walks the whole
 * compilation unit for every address, and once more to find the abstract
 * origin of what it found; clang emits no DW_AT_sibling, so skipping an
 * entry means reading all its children: a large unit costs milliseconds
 * an address.  Here each unit's concrete functions (DW_TAG_subprogram
 * with addresses, also inside namespaces) are indexed by their ranges
 * once, and an address walks down only the function that holds it,
 * keeping the DW_TAG_inlined_subroutine entries (and the lexical blocks
 * around them) whose ranges hold it.
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
	GHashTable *chains;        /* address -> Chain, NULL: none */
	GStringChunk *strings;     /* the file names built */
};

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

static gboolean
has_pc_attrs (Dwarf_Die *die)
{
	return dwarf_hasattr (die, DW_AT_low_pc) || dwarf_hasattr (die, DW_AT_ranges);
}

/* Collect in CHAIN (outermost first) the inlined subroutines under SCOPE
 * that hold PC.  A lexical block without addresses of its own (compilers
 * leave some) is looked into as well. */
static gboolean
walk_scopes (Dwarf_Die *scope, Dwarf_Addr pc, GArray *chain, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child (scope, &child) != 0)
		return FALSE;
	do {
		int tag = dwarf_tag (&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block && tag != DW_TAG_with_stmt)
			continue;
		if (dwarf_haspc (&child, pc) == 1) {
			if (tag == DW_TAG_inlined_subroutine)
				g_array_append_val (chain, child);
			walk_scopes (&child, pc, chain, depth + 1);
			return TRUE;
		}
		if (tag == DW_TAG_lexical_block && !has_pc_attrs (&child) &&
		    walk_scopes (&child, pc, chain, depth + 1))
			return TRUE;
	} while (dwarf_siblingof (&child, &child) == 0);
	return FALSE;
}

static const char *
die_function (Dwarf_Die *die)
{
	static const int names[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
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
	g_autoptr (GArray) dies = g_array_new (FALSE, FALSE, sizeof (Dwarf_Die));
	walk_scopes (fn, pc, dies, 0);
	if (dies->len == 0)
		return NULL;
	Chain *c = g_malloc (sizeof *c + dies->len * sizeof (MtaInlineCall));
	c->n = dies->len;
	for (guint i = 0; i < dies->len; i++) {
		Dwarf_Die *die = &g_array_index (dies, Dwarf_Die, dies->len - 1 - i);
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
