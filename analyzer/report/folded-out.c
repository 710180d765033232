/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* folded-out.c -- `--folded`: one line per stack, frames from the
 * outermost to the site charged, ';'-separated, then a space and a count
 * (Brendan Gregg's stackcollapse format, which flamegraph.pl, inferno and
 * speedscope read).
 *
 * The stacks are the run's call paths as --by-site charges them: the
 * allocation wrappers under the site are left out, so a flame graph's
 * leaves are the lines that leak, not xmalloc.  A frame is named by its
 * function and file:line, so that two leaks in one function are two
 * boxes.  Paths that end up with the same names (they differed only in
 * the wrappers skipped) are summed into one line.
 *
 * The peak is known by site only (run.c keeps what each site held at the
 * peak, not each stack), so --folded=peak prints one frame a line.
 */
#include "folded-out.h"
#include "growth.h"

#include <inttypes.h>

gboolean
mta_folded_parse (const char *what, MtaFolded *kind, GError **error)
{
	static const char *const names[] = { "leaked", "allocated", "peak", "temporary" };

	if (what == NULL) {
		*kind = MTA_FOLDED_LEAKED;
		return TRUE;
	}
	for (guint i = 0; i < G_N_ELEMENTS (names); i++)
		if (strcmp (what, names[i]) == 0) {
			*kind = (MtaFolded) (MTA_FOLDED_LEAKED + i);
			return TRUE;
		}
	g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		     "--folded takes leaked, allocated, peak or temporary, not '%s'", what);
	return FALSE;
}

gboolean
mta_folded_parse_count (const char *count, MtaFolded kind, gboolean *blocks, GError **error)
{
	/* what the run counts: temporary allocations are counted, not sized;
	 * the peak is in bytes */
	*blocks = kind == MTA_FOLDED_TEMPORARY;
	if (count == NULL)
		return TRUE;
	if (strcmp (count, "bytes") != 0 && strcmp (count, "blocks") != 0) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "--folded-count takes bytes or blocks, not '%s'", count);
		return FALSE;
	}
	*blocks = strcmp (count, "blocks") == 0;
	if ((kind == MTA_FOLDED_TEMPORARY && !*blocks) || (kind == MTA_FOLDED_PEAK && *blocks)) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "--folded=%s counts %s only", kind == MTA_FOLDED_PEAK ? "peak" : "temporary",
			     kind == MTA_FOLDED_PEAK ? "bytes" : "blocks");
		return FALSE;
	}
	return TRUE;
}

static const char *
base_name (const char *path)
{
	const char *s = strrchr (path, '/');
	return s ? s + 1 : path;
}

char *
mta_folded_frame_name (const MtaSite *s)
{
	GString *n = g_string_new (s->function[0] ? s->function : "??");

	if (s->file[0] && s->line)
		g_string_append_printf (n, " (%s:%u)", base_name (s->file), s->line);
	else if (s->file[0])
		g_string_append_printf (n, " (%s)", base_name (s->file));
	else if (s->object[0])
		g_string_append_printf (n, " [%s]", base_name (s->object));
	/* ';' separates frames and a line ends the stack: neither may be in
	 * a name (C++ names can hold neither, but an object path could) */
	for (gsize i = 0; i < n->len; i++)
		if (n->str[i] == ';' || n->str[i] == '\n' || n->str[i] == '\r')
			n->str[i] = '_';
	return g_string_free (n, FALSE);
}

/* The count of path P (or of site S, for the peak). */
static uint64_t
path_count (const MtaPath *p, MtaFolded kind, gboolean blocks)
{
	switch (kind) {
	case MTA_FOLDED_LEAKED:
		return blocks ? p->leaked_blocks : p->leaked_bytes;
	case MTA_FOLDED_ALLOCATED:
		return blocks ? p->allocs : p->bytes_allocated;
	case MTA_FOLDED_TEMPORARY:
		return p->temporary;
	default:
		return 0;
	}
}

/* "outer;...;site", the frames of P from the outermost to its site. */
static char *
path_line (const MtaPath *p, GPtrArray *names)
{
	GString *line = g_string_new (NULL);

	for (uint32_t i = p->nframes; i-- > p->site_frame;) {
		if (line->len)
			g_string_append_c (line, ';');
		g_string_append (line, names->pdata[p->frames[i]]);
	}
	return g_string_free (line, FALSE);
}

typedef struct {
	char *stack;
	uint64_t count;
} Folded;

static int
folded_cmp (gconstpointer a, gconstpointer b)
{
	const Folded *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp (x->stack, y->stack);
}

static void
add_count (GHashTable *lines, char *stack, uint64_t n)
{
	uint64_t *v = g_hash_table_lookup (lines, stack);
	if (v == NULL) {
		v = g_new0 (uint64_t, 1);
		g_hash_table_insert (lines, stack, v);
	} else
		g_free (stack);
	*v += n;
}

/* Site index -> TRUE when its leaks are of the GROWTH classes. */
static gboolean *
growth_gate (const MtaRun *run, guint growth)
{
	GPtrArray *sites = mta_run_sites (run);
	gboolean *keep = g_new0 (gboolean, sites->len + 1);
	g_autoptr (GArray) kept = mta_run_leak_sites_filtered (run, growth);

	for (guint i = 0; i < kept->len; i++)
		keep[g_array_index (kept, uint32_t, i)] = TRUE;
	return keep;
}

void
mta_folded_write (const MtaRun *run, MtaFolded kind, gboolean blocks, guint growth, FILE *out)
{
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);
	g_autoptr (GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
	g_autoptr (GHashTable) lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
	/* freed by hand: clang-analyzer does not follow g_autofree */
	gboolean *keep = growth && kind == MTA_FOLDED_LEAKED ? growth_gate (run, growth) : NULL;
	g_autoptr (GArray) sorted = g_array_new (FALSE, FALSE, sizeof (Folded));
	GHashTableIter it;
	gpointer k, v;

	for (guint i = 0; i < sites->len; i++)
		g_ptr_array_add (names, mta_folded_frame_name (sites->pdata[i]));
	if (kind == MTA_FOLDED_PEAK) {
		for (guint i = 0; i < sites->len; i++) {
			const MtaSite *s = sites->pdata[i];
			if (s->peak_share_bytes > 0)
				add_count (lines, g_strdup (names->pdata[i]), s->peak_share_bytes);
		}
	} else {
		for (guint i = 0; i < paths->len; i++) {
			const MtaPath *p = paths->pdata[i];
			uint64_t n = path_count (p, kind, blocks);
			if (n == 0 || p->site < 0 || (keep != NULL && !keep[p->site]))
				continue;
			add_count (lines, path_line (p, names), n);
		}
	}
	g_free (keep);
	g_hash_table_iter_init (&it, lines);
	while (g_hash_table_iter_next (&it, &k, &v)) {
		Folded f = { k, *(uint64_t *) v };
		g_array_append_val (sorted, f);
	}
	g_array_sort (sorted, folded_cmp);
	for (guint i = 0; i < sorted->len; i++) {
		const Folded *f = &g_array_index (sorted, Folded, i);
		fprintf (out, "%s %" PRIu64 "\n", f->stack, f->count);
	}
}
