/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* session.c -- `mtanalyze session TRACE...`: one line per program run of
 * a recording session, as a tree, with its leaks.
 *
 * A session (one `mtrec` run, or one MALLOC_TRACE name) leaves a file per
 * process and per program a process exec'd: NAME, NAME.PID, rotated parts
 * NAME.partN.  Each header says "# pid PID PPID" and "# start": files with
 * the same two are the parts of one program run (an image); images of the
 * same pid follow each other by exec; an image whose parent pid is in the
 * session hangs under the image of its parent that was running when it
 * started.  Each image is read as the report reads a run, through its own
 * MtaRun, so that its leaks are its own (share/session.md).
 */
#include "session.h"
#include "escape.h"
#include "parts.h"
#include "incomplete.h"
#include "json-out.h"
#include "lineage.h"
#include "run.h"
#include "symbolize.h"
#include "trace-reader.h"
#include "wrappers.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const MtaSharedSpec mta_session_shared = {
	.set = MTA_SHARED_JSON | MTA_SHARED_SYSROOT | MTA_SHARED_QUIET,
	.json_help = "Print the same facts as JSON (share/session.md)",
};

const char mta_session_params[] = "TRACE... - the processes of a session and their leaks";

const char mta_session_description[] =
	"TRACE... are the files of one recording session, in any order: the trace\n"
	"of the program started, those of its children (NAME.PID), of the programs\n"
	"they exec'd, and rotated parts (NAME.partN).  Prints one line per program\n"
	"run -- a process, or what it exec'd -- indented under the process that\n"
	"forked it, with its files and its leaks (the largest site by the report's\n"
	"rules: wrappers skipped).  Then the totals.\n"
	"\n"
	"Example:\n"
	"  mtrec -o t.log --depth 16 ./daemon\n"
	"  mtanalyze session t.log*\n"
	"  mtanalyze --by-site t.log.4242     # then one process in full\n"
	"\n"
	"Exit status: 0 no leaks, 1 a program run leaks, 2 trouble (unusable\n"
	"input, a usage error, an I/O error).";

typedef struct Image Image;
struct Image {
	char *key;                 /* "PID PPID\nSTART", or the path of a file without it */
	int64_t pid, ppid;         /* -1: not recorded */
	double start;              /* seconds since 1970; 0: unknown */
	GPtrArray *files;          /* char *, parts in order after mta_parts_order */
	char *program;             /* cmdline, else exe, else NULL */
	uint64_t leaked_blocks, leaked_bytes, bad_frees;
	char *largest;             /* the largest leak site's label, or NULL */
	uint64_t largest_blocks, largest_bytes;
	char *stopped;             /* why the recorder stopped, NULL: it did not */
	/* forks (lineage.h): the trace it started from, what it handed over */
	int64_t fork_parent;       /* "# parent PID": -1 none */
	uint64_t inherited_blocks, inherited_bytes;
	int64_t handed_to;         /* -1: nothing handed to a child */
	uint64_t handed_blocks, handed_bytes;
	gboolean exec_at_end;      /* its trace ends at an exec ("# exec"), traced after or not */
	Image *exec_of;            /* the image this pid ran before (exec) */
	Image *exec_next;          /* the image it exec'd, NULL: none */
	Image *parent;             /* the image that forked it (a root: NULL) */
	GPtrArray *children;       /* Image *, by start: execs and forks */
	int index;
};

static void
image_free (gpointer p)
{
	Image *im = p;
	g_free (im->key);
	g_ptr_array_unref (im->files);
	g_free (im->program);
	g_free (im->largest);
	g_free (im->stopped);
	g_ptr_array_unref (im->children);
	g_free (im);
}

/* Where warnings go: the command line's (main.c). */
static MtaWarnFunc warn_cb;

/* The lineage's notes are the report's business; its warnings are ours. */
static void
lineage_say (const char *message, gpointer data)
{
	(void) data;
	if (g_str_has_prefix (message, "note: "))
		return;
	g_autofree char *m = mta_escape_controls (message);
	fflush (stdout);
	fprintf (stderr, "mtanalyze: %s\n", m);
}

/* Put each file in the image its header names. */
static gboolean
group_files (char **traces, int n, GPtrArray *images, GError **error)
{
	g_autoptr (GHashTable) by_key = g_hash_table_new (g_str_hash, g_str_equal);

	for (int i = 0; i < n; i++) {
		g_autofree char *pid = NULL, *start = NULL;
		if (strcmp (traces[i], "-") == 0) {
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "session reads files: standard input ('-') cannot be one of them");
			return FALSE;
		}
		if (!mta_parts_process (traces[i], &pid, &start, error))
			return FALSE;
		g_autofree char *key = pid && start ? g_strconcat (pid, "\n", start, NULL)
						    : g_strdup (traces[i]);
		Image *im = g_hash_table_lookup (by_key, key);
		if (im == NULL) {
			im = g_new0 (Image, 1);
			im->key = g_steal_pointer (&key);
			im->pid = im->ppid = im->fork_parent = im->handed_to = -1;
			im->files = g_ptr_array_new ();
			im->children = g_ptr_array_new ();
			g_ptr_array_add (images, im);
			g_hash_table_insert (by_key, im->key, im);
		}
		g_ptr_array_add (im->files, traces[i]);
	}
	return TRUE;
}

/* The largest leak site of RUN, by the report's order. */
static void
take_largest (Image *im, const MtaRun *run)
{
	g_autoptr (GArray) leaking = mta_run_leak_sites (run);
	if (leaking->len == 0)
		return;
	const MtaSite *s = g_ptr_array_index (mta_run_sites (run), g_array_index (leaking, uint32_t, 0));
	im->largest = mta_site_label (s);
	im->largest_blocks = s->t->leaked_blocks;
	im->largest_bytes = s->t->leaked_bytes;
}

/* Read the files of IM as one run, as the report does. */
static gboolean
read_image (Image *im, MtaSymbolizer *sym, const MtaWrappers *wrappers, GError **error)
{
	int n = (int) im->files->len;
	if (!mta_parts_order ((char **) im->files->pdata, &n, warn_cb, NULL, error))
		return FALSE;
	g_ptr_array_set_size (im->files, n);
	g_autoptr (MtaRun) run = mta_run_new (sym, wrappers, NULL);
	/* what a forked child inherited, what a parent handed over: as the
	 * report counts them */
	g_autoptr (MtaLineage) lineage = mta_lineage_new (mta_run_line, run, im->files->pdata[0],
							  lineage_say, NULL);
	g_autoptr (MtaReader) reader = mta_reader_new (mta_lineage_line, lineage);
	gboolean ok = TRUE;

	mta_lineage_set_traces (lineage, (char **) im->files->pdata, (int) im->files->len);
	mta_reader_set_progress (reader, mta_shared.quiet);
	for (guint i = 0; i < im->files->len; i++)
		mta_run_add_trace (run, im->files->pdata[i]);
	for (guint i = 0; i < im->files->len && ok; i++)
		ok = mta_reader_read_file (reader, im->files->pdata[i], error);
	ok = ok && mta_lineage_finish (lineage, error) && mta_reader_check_events (reader, error);
	if (ok) {
		const MtaLineageInfo *lg = mta_lineage_info (lineage);
		im->fork_parent = lg->parent_pid;
		im->inherited_blocks = lg->parent_trace ? lg->inherited_blocks : 0;
		im->inherited_bytes = lg->parent_trace ? lg->inherited_bytes : 0;
		im->handed_to = lg->handed_to_pid;
		im->handed_blocks = lg->handed_blocks;
		im->handed_bytes = lg->handed_bytes;
		im->exec_at_end = lg->exec_at_end;
		uint64_t bad = mta_reader_bad_lines (reader);
		mta_run_finish (run, mta_reader_lines (reader), bad);
		if (bad > 0 && !mta_shared.quiet) {
			g_autofree char *m = g_strdup_printf ("%s: %" PRIu64 " unreadable line%s",
							      (char *) im->files->pdata[0], bad,
							      bad == 1 ? "" : "s");
			warn_cb (m, NULL);
		}
		const MtaRunInfo *info = mta_run_info (run);
		im->pid = info->pid;
		im->ppid = info->ppid;
		im->start = info->start ? g_ascii_strtod (info->start, NULL) : 0;
		im->program = g_strdup (info->cmdline ? info->cmdline : info->exe);
		im->leaked_blocks = info->leaked_blocks;
		im->leaked_bytes = info->leaked_bytes;
		im->bad_frees = info->bad_frees;
		im->stopped = g_strdup (info->incomplete.stop_reason);
		take_largest (im, run);
	}
	return ok;
}

static int
by_start (gconstpointer a, gconstpointer b)
{
	const Image *x = *(Image *const *) a, *y = *(Image *const *) b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->index - y->index;
}

/* The latest image of PID that started no later than WHEN, other than
 * SELF; IMAGES sorted by start. */
static Image *
running_at (GPtrArray *images, int64_t pid, double when, const Image *self)
{
	Image *found = NULL;

	if (pid < 0)
		return NULL;
	for (guint i = 0; i < images->len; i++) {
		Image *im = images->pdata[i];
		if (im == self || im->start > when)
			break;
		if (im->pid == pid)
			found = im;
	}
	return found;
}

/* Exec chains and the fork tree, from pids, parent pids and start times
 * (a pid is reused only after its process is gone, so the image of a
 * pid running when a child started is the child's parent).  The parent
 * a forked child's trace names ("# parent": the process whose heap it
 * inherited, the grandparent after a double fork) comes before its
 * parent pid at its first event, which may be a subreaper's. */
static void
link_images (GPtrArray *images)
{
	for (guint i = 0; i < images->len; i++)
		((Image *) images->pdata[i])->index = (int) i;
	g_ptr_array_sort (images, by_start);
	for (guint i = 0; i < images->len; i++) {
		Image *im = images->pdata[i];
		im->index = (int) i;
		if ((im->exec_of = running_at (images, im->pid, im->start, im)) != NULL)
			im->exec_of->exec_next = im;
		else if ((im->parent = running_at (images, im->fork_parent, im->start, im)) != NULL ||
			 (im->parent = running_at (images, im->ppid, im->start, im)) != NULL)
			g_ptr_array_add (im->parent->children, im);
	}
}

/* ------------------------------------------------------------ text */

/* "1,024 bytes in 3 blocks" */
static char *
amount (uint64_t bytes, uint64_t blocks)
{
	g_autofree char *by = mta_group_digits (bytes), *bl = mta_group_digits (blocks);
	return g_strdup_printf ("%s byte%s in %s block%s", by, bytes == 1 ? "" : "s", bl,
				blocks == 1 ? "" : "s");
}

/* The blocks a program run held when it exec'd went with its address
 * space: they are not leaks, and are said apart -- whether the program it
 * exec'd was traced after (the next image of its pid) or not (its trace
 * says "# exec" last: a program run with a clean environment, a static
 * one). */
static gboolean
exec_d (const Image *im)
{
	return im->exec_next != NULL || im->exec_at_end;
}

static gboolean
leaks (const Image *im)
{
	return im->leaked_blocks > 0 && !exec_d (im);
}

static void
print_leaks (const Image *im, FILE *out)
{
	g_autofree char *a = amount (im->leaked_bytes, im->leaked_blocks);

	if (im->leaked_blocks == 0)
		fputs ("no leaks", out);
	else if (exec_d (im))
		fprintf (out, "%s live at the exec (not leaks)", a);
	else
		fprintf (out, "%s not freed", a);
	if (im->bad_frees > 0)
		fprintf (out, ", %" PRIu64 " free%s of memory never allocated", im->bad_frees,
			 im->bad_frees == 1 ? "" : "s");
	if (im->inherited_blocks > 0) {
		g_autofree char *i = amount (im->inherited_bytes, im->inherited_blocks);
		fprintf (out, "; inherited %s", i);
	}
	if (im->handed_to >= 0 && im->handed_blocks > 0) {
		g_autofree char *h = amount (im->handed_bytes, im->handed_blocks);
		fprintf (out, "; handed %s to pid %" PRId64, h, im->handed_to);
	}
}

static void
print_image (const Image *im, int depth, FILE *out)
{
	fprintf (out, "%*s", depth * 2, "");
	if (im->pid >= 0)
		fprintf (out, "pid %" PRId64 "%s ", im->pid, im->exec_of ? ", after an exec:" : "");
	fprintf (out, "%s", im->program ? im->program : "(program not recorded)");
	if (im->exec_of == NULL && im->parent == NULL && im->ppid >= 0)
		fprintf (out, "  (parent %" PRId64 ")", im->ppid);
	fprintf (out, "\n%*s", depth * 2 + 4, "");
	for (guint i = 0; i < im->files->len; i++)
		fprintf (out, "%s%s", i ? ", " : "", (char *) im->files->pdata[i]);
	fputs (": ", out);
	print_leaks (im, out);
	fputc ('\n', out);
	if (im->largest != NULL && leaks (im)) {
		g_autofree char *a = amount (im->largest_bytes, im->largest_blocks);
		fprintf (out, "%*slargest: %s at %s\n", depth * 2 + 4, "", a, im->largest);
	}
	if (im->stopped != NULL)
		fprintf (out, "%*srecording stopped: %s\n", depth * 2 + 4, "", im->stopped);
	for (guint i = 0; i < im->children->len; i++)
		print_image (im->children->pdata[i], depth + 1, out);
	/* what the process exec'd continues it, at its depth */
	if (im->exec_next != NULL)
		print_image (im->exec_next, depth, out);
}

static void
print_text (GPtrArray *images, FILE *out)
{
	uint64_t blocks = 0, bytes = 0, bad = 0;
	guint leaking = 0, processes = 0;

	for (guint i = 0; i < images->len; i++) {
		const Image *im = images->pdata[i];
		if (leaks (im)) {
			blocks += im->leaked_blocks;
			bytes += im->leaked_bytes;
			leaking++;
		}
		bad += im->bad_frees;
		processes += im->exec_of == NULL;
	}
	for (guint i = 0; i < images->len; i++) {
		const Image *im = images->pdata[i];
		if (im->parent == NULL && im->exec_of == NULL)
			print_image (im, 0, out);
	}
	fprintf (out, "\n%u process%s, %u program run%s: ", processes, processes == 1 ? "" : "es",
		 images->len, images->len == 1 ? "" : "s");
	g_autofree char *a = amount (bytes, blocks);
	if (blocks == 0)
		fputs ("no leaks", out);
	else
		fprintf (out, "%s not freed, in %u of them", a, leaking);
	if (bad > 0)
		fprintf (out, "; %" PRIu64 " free%s of memory never allocated", bad, bad == 1 ? "" : "s");
	fputc ('\n', out);
}

/* ------------------------------------------------------------ JSON */

static void
put_index (FILE *out, const char *key, const Image *im)
{
	if (im != NULL)
		fprintf (out, ", \"%s\": %d", key, im->index);
	else
		fprintf (out, ", \"%s\": null", key);
}

static void
print_json (GPtrArray *images, FILE *out)
{
	fputs ("{\"images\": [", out);
	for (guint i = 0; i < images->len; i++) {
		const Image *im = images->pdata[i];
		fprintf (out, "%s\n  {\"index\": %d, \"pid\": ", i ? "," : "", im->index);
		if (im->pid >= 0)
			fprintf (out, "%" PRId64 ", \"ppid\": ", im->pid);
		else
			fputs ("null, \"ppid\": ", out);
		if (im->ppid >= 0)
			fprintf (out, "%" PRId64, im->ppid);
		else
			fputs ("null", out);
		fprintf (out, ", \"start\": %.9f", im->start);
		fputs (", \"program\": ", out);
		mta_json_put_string (out, im->program);
		put_index (out, "exec_of", im->exec_of);
		put_index (out, "exec_next", im->exec_next);
		put_index (out, "parent", im->parent);
		fputs (", \"files\": [", out);
		for (guint f = 0; f < im->files->len; f++) {
			fputs (f ? ", " : "", out);
			mta_json_put_string (out, im->files->pdata[f]);
		}
		fprintf (out, "], \"leaked_blocks\": %" PRIu64 ", \"leaked_bytes\": %" PRIu64
			 ", \"leaks\": %s, \"bad_frees\": %" PRIu64 ", \"largest_site\": ",
			 im->leaked_blocks, im->leaked_bytes, leaks (im) ? "true" : "false", im->bad_frees);
		if (im->largest != NULL) {
			fputs ("{\"label\": ", out);
			mta_json_put_string (out, im->largest);
			fprintf (out, ", \"blocks\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
				 im->largest_blocks, im->largest_bytes);
		} else
			fputs ("null", out);
		fputs (", \"stopped\": ", out);
		mta_json_put_string (out, im->stopped);
		fprintf (out, ", \"inherited_blocks\": %" PRIu64 ", \"inherited_bytes\": %" PRIu64
			 ", \"handed_blocks\": %" PRIu64 ", \"handed_bytes\": %" PRIu64,
			 im->inherited_blocks, im->inherited_bytes, im->handed_blocks, im->handed_bytes);
		fputc ('}', out);
	}
	fputs ("\n]}\n", out);
}

gboolean
mta_session (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error)
{
	warn_cb = warn;
	/* the runs read hold the symbolizer and the wrappers: freed last */
	g_autoptr (MtaSymbolizer) sym = mta_symbolizer_new (mta_shared.sysroot, warn_cb, NULL);
	g_autoptr (MtaWrappers) wrappers = mta_wrappers_new ();
	g_autoptr (GPtrArray) images = g_ptr_array_new_with_free_func (image_free);

	if (argc < 1) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "session takes the trace files of a session");
		return FALSE;
	}
	if (!mta_wrappers_load_default (wrappers, error) || !group_files (argv, argc, images, error))
		return FALSE;
	for (guint i = 0; i < images->len; i++)
		if (!read_image (images->pdata[i], sym, wrappers, error))
			return FALSE;
	link_images (images);
	if (mta_shared.json)
		print_json (images, stdout);
	else {
		FILE *text = mta_text_out ();
		print_text (images, text);
		mta_text_out_close (text);
	}
	*status = 0;
	for (guint i = 0; i < images->len; i++)
		if (leaks (images->pdata[i]))
			*status = 1;
	return TRUE;
}
