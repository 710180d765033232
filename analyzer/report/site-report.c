/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* site-report.c -- "Memory not freed, by call site" and the frees of
 * memory never allocated, grouped the same way.
 *
 * Under each site, when the trace has stacks, the callers that led to it:
 * the frames after the site's own, up to --frames of them, one group per
 * distinct sequence (two stacks that differ only deeper down, or in the
 * wrappers skipped, are one group), largest first.
 *
 * Each leaking site ends with its growth class in brackets (growth.c);
 * --growth keeps only the sites of the classes named.  After the leaks
 * and the bad frees: the run's peak (when, and the sites holding most
 * then) and its temporary allocations.  A run the recorder did not record
 * whole (issue 18) starts with what it lost, and its leaks are named for
 * what they are: blocks not freed before the recording stopped.  None of these lines starts with a
 * digit, so that scripts reading the table rows ("^ *[0-9]") still do.
 *
 * In a trace recorded with mtrec --reach, the blocks not freed by
 * reachability at exit come first (valgrind's LEAK SUMMARY), and each
 * site's row is followed by its own; --leaks keeps only the kinds named.
 *
 * The report ends with what would make it better (issue 11): the
 * --skip a wrapper the list does not know would take, and the objects
 * shown as bare offsets for want of symbols, with the package or option
 * that brings them.
 */
#include "site-report.h"
#include "growth.h"
#include "kind-report.h"

#include <inttypes.h>
#include <string.h>

typedef MtaStackGroup Group;

static void
group_free (gpointer p)
{
	Group *g = p;
	g_array_unref (g->tail);
	g_free (g);
}

static int
group_cmp (gconstpointer a, gconstpointer b)
{
	const Group *x = *(Group *const *) a, *y = *(Group *const *) b;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->blocks != y->blocks)
		return x->blocks > y->blocks ? -1 : 1;
	return x->first_line < y->first_line ? -1 : x->first_line > y->first_line;
}

static guint
tail_hash (gconstpointer a)
{
	const GArray *t = a;
	guint h = t->len;
	for (guint i = 0; i < t->len; i++)
		h = h * 31 + g_array_index (t, uint32_t, i);
	return h;
}

static gboolean
tail_equal (gconstpointer a, gconstpointer b)
{
	const GArray *x = a, *y = b;
	return x->len == y->len && memcmp (x->data, y->data, x->len * sizeof (uint32_t)) == 0;
}

GPtrArray *
mta_site_groups (const MtaRun *run, uint32_t site, guint frames, gboolean leaks)
{
	GPtrArray *groups = g_ptr_array_new_with_free_func (group_free);
	GPtrArray *paths = mta_run_paths (run);
	guint np;
	const uint32_t *pi = mta_run_site_paths (run, site, &np);
	/* tail -> its group: a site may have many thousand stacks */
	g_autoptr (GHashTable) by_tail = g_hash_table_new (tail_hash, tail_equal);

	for (guint i = 0; i < np; i++) {
		const MtaPath *p = paths->pdata[pi[i]];
		uint64_t n = leaks ? p->leaked_blocks : p->bad_frees;
		if (n == 0 || p->addrs == NULL)
			continue;
		GArray *tail = mta_path_tail (p, frames);
		Group *g = g_hash_table_lookup (by_tail, tail);
		if (g == NULL) {
			g = g_new0 (Group, 1);
			g->tail = g_array_ref (tail);
			g->first_line = p->first_line;
			g_ptr_array_add (groups, g);
			g_hash_table_insert (by_tail, g->tail, g);
		}
		g_array_unref (tail);
		g->blocks += n;
		g->bytes += leaks ? p->leaked_bytes : 0;
		if (p->first_line < g->first_line)
			g->first_line = p->first_line;
	}
	g_ptr_array_sort (groups, group_cmp);
	return groups;
}

/* Whether SITE has a path with a stack. */
gboolean
mta_site_has_stacks (const MtaRun *run, uint32_t site)
{
	GPtrArray *paths = mta_run_paths (run);
	guint np;
	const uint32_t *pi = mta_run_site_paths (run, site, &np);
	for (guint i = 0; i < np; i++)
		if (((const MtaPath *) paths->pdata[pi[i]])->addrs != NULL)
			return TRUE;
	return FALSE;
}

static void
print_groups (const MtaRun *run, uint32_t site, guint frames, gboolean leaks, FILE *out)
{
	if (frames == 0)
		return;
	g_autoptr (GPtrArray) groups = mta_site_groups (run, site, frames, leaks);
	GPtrArray *sites = mta_run_sites (run);

	for (guint k = 0; k < groups->len; k++) {
		const Group *g = groups->pdata[k];
		if (g->tail->len == 0)
			continue;
		if (groups->len > 1) {
			if (leaks)
				fprintf (out, "%21s%" PRIu64 " block%s, %" PRIu64 " bytes from:\n", "",
					 g->blocks, g->blocks == 1 ? "" : "s", g->bytes);
			else
				fprintf (out, "%21s%" PRIu64 " from:\n", "", g->blocks);
		}
		for (guint i = 0; i < g->tail->len; i++) {
			g_autofree char *label = mta_site_label (sites->pdata[g_array_index (g->tail, uint32_t, i)]);
			fprintf (out, "%21scalled from %s\n", "", label);
		}
	}
}

#define TOP_SITES 5

/* "linear, exponential" */
char *
mta_growth_mask_text (guint mask)
{
	GString *g = g_string_new (NULL);
	for (int k = 1; k < MTA_GROWTH_N; k++)
		if (mask & (1u << k))
			g_string_append_printf (g, "%s%s", g->len ? ", " : "", mta_growth_name (k));
	return g_string_free (g, FALSE);
}

static void
print_position (const MtaRun *run, uint64_t line, FILE *out)
{
	const MtaRunInfo *info = mta_run_info (run);
	fprintf (out, "line %" PRIu64, line);
	if (info->time_axis)
		fprintf (out, ", %.3f s into the run", mta_run_position (run, line) / 1e9);
}

static void
print_peak_and_temporary (const MtaRun *run, FILE *out)
{
	const MtaRunInfo *info = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);

	if (info->peak_live_bytes > 0) {
		g_autoptr (GArray) top = mta_run_peak_sites (run, TOP_SITES);
		fprintf (out, "\nPeak: %" PRIu64 " bytes live at ", info->peak_live_bytes);
		print_position (run, info->peak_line, out);
		fputs (", held most by:\n", out);
		for (guint i = 0; i < top->len; i++) {
			const MtaSite *s = sites->pdata[g_array_index (top, uint32_t, i)];
			g_autofree char *label = mta_site_label (s);
			fprintf (out, "  - %" PRIu64 " bytes (%.1f%%) in %s\n", s->peak_share_bytes,
				 100.0 * (double) s->peak_share_bytes / (double) info->peak_live_bytes, label);
		}
	}
	if (info->allocs > 0) {
		fprintf (out, "\nTemporary allocations: %" PRIu64 " of %" PRIu64 " (%.1f%%) freed before"
			 " any other allocation in their thread", info->temporary, info->allocs,
			 100.0 * (double) info->temporary / (double) info->allocs);
		g_autoptr (GArray) top = mta_run_temporary_sites (run, TOP_SITES);
		fputs (top->len ? ", most at:\n" : "\n", out);
		for (guint i = 0; i < top->len; i++) {
			const MtaSite *s = sites->pdata[g_array_index (top, uint32_t, i)];
			g_autofree char *label = mta_site_label (s);
			fprintf (out, "  - %" PRIu64 " of %" PRIu64 " in %s\n", s->t->temporary, s->t->allocs, label);
		}
	}
}

/* What the recorder said it did not record, and what that makes of the
 * report (issue 18); nothing for a complete run. */
static void
print_incomplete (const MtaRun *run, guint growth, FILE *out)
{
	const MtaIncomplete *x = &mta_run_info (run)->incomplete;

	if (x->stopped_line > 0) {
		fprintf (out, "Incomplete run: the recorder stopped at line %" PRIu64 " (%s)", x->stopped_line,
			 x->stop_reason[0] ? x->stop_reason : "no reason given");
		if (x->lost_lines > 0) {
			g_autofree char *n = mta_group_digits (x->lost_events);
			fprintf (out, "; %s event%s not recorded", n, x->lost_events == 1 ? " was" : "s were");
		}
		fprintf (out, ".\nBlocks not freed are those still live when it stopped, not proven leaks%s.\n",
			 growth ? "; growth classes cover only the recorded window,\nand the --growth gate "
			 "does not fail on them" : "");
	} else if (x->lost_lines > 0) {
		g_autofree char *n = mta_group_digits (x->lost_events);
		fprintf (out, "Incomplete run: %s event%s not recorded (%s).\nFrees of memory never "
			 "allocated, and leaks of no more blocks than that, may be artefacts%s.\n", n,
			 x->lost_events == 1 ? " was" : "s were",
			 x->lost_reason[0] ? x->lost_reason : "no reason given",
			 growth ? ";\nthe --growth gate does not fail on those leaks" : "");
	}
	if (mta_run_info (run)->attaches > 0) {
		const MtaRunInfo *i = mta_run_info (run);
		g_autofree char *n = mta_group_digits (i->frees_before_attach);
		fprintf (out, "Attached run (mtrec attach): the process ran without the recorder before "
			 "it;\nblocks not freed are those of the recorded window%s, and %s free%s of blocks "
			 "from before\nthe attach %s not errors.\n\n", i->attaches > 1 ? "s" : "", n,
			 i->frees_before_attach == 1 ? "" : "s", i->frees_before_attach == 1 ? "is" : "are");
	}
	if (mta_incomplete_freeres_skipped (x))
		fprintf (out, "libc's caches were not released at exit (__libc_freeres %s):\nblocks "
			 "allocated inside libc's own functions are expected among the leaks.\n", x->freeres);
	if (mta_incomplete_is (x) || mta_incomplete_freeres_skipped (x))
		fputc ('\n', out);
}

/* The categories of the blocks not freed (mtrec --reach), as valgrind's
 * LEAK SUMMARY, and what the recorder could not scan; nothing for a trace
 * without verdicts. */
static void
print_reach (const MtaRun *run, FILE *out)
{
	const MtaRunInfo *info = mta_run_info (run);

	for (guint k = 0; k < info->reach_refused->len; k++)
		fprintf (out, "The recorder did not make a reachability scan it was asked for: %s.\n",
			 (const char *) info->reach_refused->pdata[k]);
	if (!info->reach) {
		if (info->reach_refused->len > 0)
			fputc ('\n', out);
		return;
	}
	fputs ("Blocks not freed, by reachability (share/reach.md):\n", out);
	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (r == MTA_REACH_UNKNOWN && info->reach_blocks[r] == 0)
			continue;
		fprintf (out, "  %15s: %" PRIu64 " bytes in %" PRIu64 " block%s\n", mta_reach_words (r),
			 info->reach_bytes[r], info->reach_blocks[r], info->reach_blocks[r] == 1 ? "" : "s");
	}
	if (info->reach_scans > 1 || (info->reach_finished && info->reach_unfinished > 0))
		fprintf (out, "Verdicts of the recorder's scan at line %" PRIu64 ", the last of %" PRIu64
			 " that finished; blocks allocated after it are not scanned.\n", info->reach_line,
			 info->reach_scans);
	for (guint k = 0; k < info->reach_notes->len; k++)
		fprintf (out, "The recorder could not scan %s.\n", (const char *) info->reach_notes->pdata[k]);
	if (info->reach_verdicts != info->reach_announced)
		fprintf (out, "The scan at line %" PRIu64 " announced %" PRIu64 " verdicts; the trace holds %"
			 PRIu64 ".\n", info->reach_line, info->reach_announced, info->reach_verdicts);
	if (!info->reach_finished)
		fprintf (out, "The recorder's scan at line %" PRIu64 " did not finish (the trace ends "
			 "first): blocks without a verdict are not scanned.\n", info->reach_line);
	if (info->reach_bad_lines > 0)
		fprintf (out, "%" PRIu64 " '# reach' line%s could not be read, the first at line %" PRIu64 ".\n",
			 info->reach_bad_lines, info->reach_bad_lines == 1 ? "" : "s",
			 info->reach_first_bad_line);
	if (info->leak_kinds != 0) {
		g_autofree char *kinds = mta_reach_mask_text (info->leak_kinds);
		fprintf (out, "Leaks here are only the blocks %s (--leaks): %" PRIu64 " of %" PRIu64 ".\n",
			 kinds, info->leaked_blocks, info->all_leaked_blocks);
	}
	fputc ('\n', out);
}

/* Under a site's row: its leaks by category, in valgrind's order. */
static void
print_site_reach (const MtaRun *run, const MtaSite *s, FILE *out)
{
	gboolean first = TRUE;

	if (!mta_run_info (run)->reach)
		return;
	fprintf (out, "%21s", "");
	for (int k = 0; k < MTA_REACH_N; k++) {
		MtaReach r = mta_reach_nth (k);
		if (mta_site_reach_blocks (s)[r] == 0)
			continue;
		fprintf (out, "%s%" PRIu64 " %s (%" PRIu64 " bytes)", first ? "" : ", ", mta_site_reach_blocks (s)[r],
			 mta_reach_words (r), mta_site_reach_bytes (s)[r]);
		first = FALSE;
	}
	fputc ('\n', out);
}

/* The leak site holding most blocks, or -1. */
static int64_t
largest_leak_site (const MtaRun *run)
{
	GPtrArray *sites = mta_run_sites (run);
	int64_t best = -1;

	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (s->t->leaked_blocks > 0 &&
		    (best < 0 || s->t->leaked_blocks > ((MtaSite *) sites->pdata[best])->t->leaked_blocks))
			best = i;
	}
	return best;
}

/* How many distinct sites call SITE one frame up, in the stacks that
 * leaked there. */
static guint
distinct_callers (const MtaRun *run, uint32_t site)
{
	GPtrArray *paths = mta_run_paths (run);
	g_autoptr (GHashTable) seen = g_hash_table_new (NULL, NULL);
	guint np;
	const uint32_t *pi = mta_run_site_paths (run, site, &np);

	for (guint i = 0; i < np; i++) {
		const MtaPath *p = paths->pdata[pi[i]];
		if (p->leaked_blocks == 0 || p->site_frame + 1 >= p->nframes)
			continue;
		g_hash_table_add (seen, GUINT_TO_POINTER (p->frames[p->site_frame + 1] + 1));
	}
	return g_hash_table_size (seen);
}

/* What names SITE for --skip: its function, or OBJECT+0xOFF (by file
 * name) when it has no symbol. */
char *
mta_skip_argument (const MtaSite *s)
{
	if (g_str_has_prefix (s->function, "0x") && s->object[0] != '\0') {
		const char *slash = strrchr (s->object, '/');
		return g_strdup_printf ("%s+%s", slash ? slash + 1 : s->object, s->function);
	}
	return g_strdup (s->function);
}

gboolean
mta_skip_hint (const MtaRun *run, MtaSkipHint *hint)
{
	const MtaRunInfo *info = mta_run_info (run);
	int64_t best = largest_leak_site (run);

	memset (hint, 0, sizeof *hint);
	/* --no-skip asked for the wrappers themselves */
	if (!info->skip_wrappers || best < 0)
		return FALSE;
	const MtaSite *s = mta_run_sites (run)->pdata[best];
	if (s->wrapper || s->function[0] == '\0' || s->t->leaked_blocks * 2 <= info->leaked_blocks)
		return FALSE;
	guint callers = distinct_callers (run, (uint32_t) best);
	if (callers < MTA_SKIP_HINT_CALLERS)
		return FALSE;
	hint->site = s;
	hint->skip = mta_skip_argument (s);
	hint->blocks = s->t->leaked_blocks;
	hint->callers = callers;
	return TRUE;
}

uint64_t
mta_depth_hint (const MtaRun *run, char **names)
{
	const MtaRunInfo *info = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GString) g = g_string_new (NULL);
	uint64_t blocks = 0;
	guint n = 0;

	*names = NULL;
	if (!info->skip_wrappers || info->depth > 1)
		return 0;
	g_autoptr (GArray) leak_sites = mta_run_leak_sites (run);
	for (guint i = 0; i < leak_sites->len; i++) {
		const MtaSite *s = sites->pdata[g_array_index (leak_sites, uint32_t, i)];
		if (!s->wrapper)
			continue;
		blocks += s->t->leaked_blocks;
		if (n++ < 4)
			g_string_append_printf (g, "%s%s", n > 1 ? ", " : "", s->function);
	}
	if (n > 4)
		g_string_append_printf (g, " and %u more", n - 4);
	if (blocks > 0)
		*names = g_strdup (g->str);
	return blocks;
}

/* Add the object of SITE to OBJECTS when the report shows it as a bare
 * offset ("0xOFF in OBJECT"). */
static void
add_bare_object (GPtrArray *objects, const MtaSite *site)
{
	if (!g_str_has_prefix (site->function, "0x") || site->object[0] == '\0')
		return;
	for (guint i = 0; i < objects->len; i++)
		if (strcmp (objects->pdata[i], site->object) == 0)
			return;
	g_ptr_array_add (objects, site->object);
}

/* The objects shown as bare offsets among the sites of LIST and the
 * frames printed under them. */
static void
add_bare_objects (const MtaRun *run, const GArray *list, guint frames, GPtrArray *objects)
{
	GPtrArray *sites = mta_run_sites (run), *paths = mta_run_paths (run);

	for (guint i = 0; i < list->len; i++) {
		uint32_t si = g_array_index (list, uint32_t, i);
		guint np;
		const uint32_t *pi = mta_run_site_paths (run, si, &np);
		add_bare_object (objects, sites->pdata[si]);
		for (guint k = 0; k < np; k++) {
			const MtaPath *p = paths->pdata[pi[k]];
			if (p->addrs == NULL)
				continue;
			g_autoptr (GArray) tail = mta_path_tail (p, frames);
			for (guint f = 0; f < tail->len; f++)
				add_bare_object (objects, sites->pdata[g_array_index (tail, uint32_t, f)]);
		}
	}
}

/* Once, at the end: which objects had no symbols, and what brings them. */
static void
print_no_symbols (const MtaRun *run, const GArray *leak_sites, const GArray *bad_sites,
		  guint frames, FILE *out)
{
	g_autoptr (GPtrArray) objects = g_ptr_array_new ();
	gboolean first = TRUE;

	add_bare_objects (run, leak_sites, frames, objects);
	add_bare_objects (run, bad_sites, frames, objects);
	for (guint i = 0; i < objects->len; i++) {
		g_autofree char *note = mta_symbolizer_no_symbols_note (mta_run_symbolizer (run),
									 objects->pdata[i]);
		if (note == NULL)
			continue;
		fprintf (out, "%s%c%s.\n", first ? "\n" : "", g_ascii_toupper (note[0]), note + 1);
		first = FALSE;
	}
}

static char *
auto_wrapper_text (const MtaSite *s)
{
	g_autofree char *label = mta_site_label (s);
	uint32_t n = s->auto_callers;
	/* found through thin callers (xre__ called by xre alone): those are
	 * what made it a wrapper, said beside its own few */
	g_autofree char *via = n < MTA_AUTO_WRAPPER_CALLERS && s->auto_callers_via > n
		? g_strdup_printf (", and through %s from %u", n == 1 ? "that thin one" :
				   "the thin ones among them", s->auto_callers_via)
		: NULL;

	return g_strdup_printf ("%s: %" PRIu64 " bytes of code, called from %u function%s%s", label,
				(uint64_t) s->code_size, n, n == 1 ? "" : "s", via ? via : "");
}

GPtrArray *
mta_auto_wrappers (const MtaRun *run)
{
	GPtrArray *sites = mta_run_sites (run), *out = g_ptr_array_new_with_free_func (g_free);

	for (guint i = 0; i < sites->len; i++) {
		const MtaSite *s = sites->pdata[i];
		if (s->auto_wrapper)
			g_ptr_array_add (out, auto_wrapper_text (s));
	}
	return out;
}

/* The wrappers found without symbols (run.h), one line each, once. */
static void
print_auto_skipped (const MtaRun *run, FILE *out)
{
	g_autoptr (GPtrArray) wrappers = mta_auto_wrappers (run);

	if (wrappers->len > 0)
		fputs ("\nAllocation wrappers found in code without symbols, skipped (--no-auto-skip keeps"
		       " them; --skip names more):\n", out);
	for (guint i = 0; i < wrappers->len; i++)
		fprintf (out, "  - %s\n", (const char *) wrappers->pdata[i]);
}

static void
print_skip_hint (const MtaRun *run, FILE *out)
{
	MtaSkipHint h;

	if (!mta_skip_hint (run, &h))
		return;
	fprintf (out, "\nMost leaked blocks (%" PRIu64 " of %" PRIu64 ") are charged to %s, called from %u"
		 " places: if it is an allocation wrapper, '--skip %s' charges them to its callers.\n",
		 h.blocks, mta_run_info (run)->leaked_blocks, h.site->function, h.callers, h.skip);
	g_free (h.skip);
}

void
mta_site_report_growth (const MtaRun *run, guint frames, guint growth, FILE *out)
{
	const MtaRunInfo *info = mta_run_info (run);
	GPtrArray *sites = mta_run_sites (run);
	g_autoptr (GArray) all_leak_sites = mta_run_leak_sites (run);
	g_autoptr (GArray) leak_sites = mta_run_leak_sites_filtered (run, growth);
	g_autofree char *classes = growth ? mta_growth_mask_text (growth) : NULL;
	g_autoptr (GArray) bad_sites = mta_run_bad_free_sites (run);
	gboolean stopped = info->incomplete.stopped_line > 0;

	print_incomplete (run, growth, out);
	print_reach (run, out);
	if (all_leak_sites->len == 0 && info->leak_kinds != 0 && info->all_leaked_blocks > 0) {
		g_autofree char *kinds = mta_reach_mask_text (info->leak_kinds);
		fprintf (out, "No blocks %s (--leaks).\n", kinds);
	} else if (all_leak_sites->len == 0)
		fputs ("No memory leaks.\n", out);
	else if (leak_sites->len == 0)
		fprintf (out, "No leaks that grow as %s (%u site%s leak otherwise: --growth).\n",
			 classes, all_leak_sites->len, all_leak_sites->len == 1 ? "" : "s");
	else {
		fprintf (out, "Memory not freed%s, by call site: %" PRIu64 " block%s, %" PRIu64
			 " bytes, %u site%s\n", stopped ? " before the recording stopped" : "",
			 info->leaked_blocks, info->leaked_blocks == 1 ? "" : "s",
			 info->leaked_bytes, all_leak_sites->len, all_leak_sites->len == 1 ? "" : "s");
		if (growth)
			fprintf (out, "Only the leaks that grow as %s: %u of the %u sites (--growth)\n",
				 classes, leak_sites->len, all_leak_sites->len);
		fputs ("\n   Blocks        Bytes  Site [growth]\n", out);
		for (guint i = 0; i < leak_sites->len; i++) {
			uint32_t si = g_array_index (leak_sites, uint32_t, i);
			const MtaSite *s = sites->pdata[si];
			g_autofree char *label = mta_site_label (s);
			fprintf (out, "%9" PRIu64 " %12" PRIu64 "  %s  [%s]\n", s->t->leaked_blocks, s->t->leaked_bytes,
				 label, mta_growth_name (s->growth));
			print_site_reach (run, s, out);
			print_groups (run, si, frames, TRUE, out);
		}
	}
	if (bad_sites->len > 0) {
		fprintf (out, "\nFrees of memory never allocated, by call site: %" PRIu64
			 " free%s, %u site%s\n\n", info->bad_frees, info->bad_frees == 1 ? "" : "s",
			 bad_sites->len, bad_sites->len == 1 ? "" : "s");
		fputs ("    Frees  Site\n", out);
		for (guint i = 0; i < bad_sites->len; i++) {
			uint32_t si = g_array_index (bad_sites, uint32_t, i);
			const MtaSite *s = sites->pdata[si];
			g_autofree char *label = mta_site_label (s);
			fprintf (out, "%9" PRIu64 "  %s\n", s->t->bad_frees, label);
			print_groups (run, si, frames, FALSE, out);
		}
	}
	mta_kind_report (run, frames, out);
	print_peak_and_temporary (run, out);
	if (!info->skip_wrappers)
		fputs ("\n(wrappers not skipped: --no-skip)\n", out);
	else {
		g_autofree char *names = NULL;
		uint64_t blocks = mta_depth_hint (run, &names);
		if (blocks > 0)
			fprintf (out, "\n%" PRIu64 " of the %" PRIu64 " leaked blocks are charged to allocation"
				 " wrappers (%s): the trace has no stacks\nto find their callers (record with"
				 " 'mtrec --depth 16' or MTREC_DEPTH=16).\n", blocks, info->leaked_blocks, names);
	}
	print_auto_skipped (run, out);
	print_no_symbols (run, leak_sites, bad_sites, frames, out);
	print_skip_hint (run, out);
}
