/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* report.c -- the default command: what glibc's mtrace script prints
 * for a trace, or the report by call site (--by-site, --json, --db,
 * --folded, --html), with the forks' lineage and the warnings about runs
 * the recorder did not record whole.  Options are parsed by main.c with
 * mta_report_entries; the lines flow reader -> lineage -> compat or
 * analysis. */
#include "report.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "options.h"
#include "outputs.h"
#include "escape.h"
#include "growth.h"
#include "incomplete.h"
#include "lineage.h"
#include "mtrace-compat.h"
#include "parts.h"
#include "symbolize.h"
#include "trace-input.h"
#include "trace-reader.h"

#define SHOWN_BAD_LINES 5

const char mta_report_params[] = "[BINARY] TRACE... - report the leaks of a malloc trace";

const char mta_report_description[] =
	"With no options, prints exactly what glibc's mtrace(1) script prints for\n"
	"BINARY and TRACE (frees of memory never allocated, memory not freed),\n"
	"resolving caller addresses the script cannot to file:line.  Several TRACE\n"
	"files are read as one run, in order; '-' is standard input.  With two or\n"
	"more arguments the first is the BINARY when it is an ELF file.  Traces\n"
	"compressed with gzip, zstd or xz are read as they are.  Each process's\n"
	"trace is read alone, as the script does, forks or not; the reports below\n"
	"follow the heap across forks (share/analyzer.md, \"Forks and daemons\").\n"
	"\n"
	"--by-site, --json and --db report by call site instead, skipping the\n"
	"allocation wrappers of share/wrappers.txt when the trace has stacks,\n"
	"with each leak's growth over the run (constant, bounded, logarithmic,\n"
	"linear, exponential, unknown: share/growth.md), the peak and the temporary\n"
	"allocations.  --growth linear,exponential reports (and exits 1 for) real\n"
	"leaks only.  In a trace recorded with 'mtrec --reach', each block not\n"
	"freed is definitely, indirectly or possibly lost or still reachable, as\n"
	"valgrind says (share/reach.md); --leaks definite,indirect reports (and\n"
	"exits 1 for) those kinds only.  Rotated parts (t.log, t.log.part2, ...) are read in the\n"
	"order of their '# part' headers, whatever the order given.\n"
	"\n"
	"mtanalyze shrink TRACE... -o OUT writes the trace without the blocks\n"
	"that were freed: see 'mtanalyze shrink --help'.\n"
	"\n"
	"mtanalyze compact TRACE folds the complete parts of a rotated trace\n"
	"(mtrec --rotate) into one while it is written, so that the disk holds\n"
	"the blocks still live, not the whole run: see 'mtanalyze compact --help'.\n"
	"\n"
	"mtanalyze diff BASE FEATURE lists the leaks a feature brought (the sites\n"
	"new or grown in the run FEATURE): see 'mtanalyze diff --help'.\n"
	"\n"
	"mtanalyze session TRACE... lists the processes of a session (a trace per\n"
	"process, NAME.PID) as a tree with their leaks: see 'mtanalyze session --help'.\n"
	"\n"
	"mtanalyze addr2line FILE ADDR... prints the FILE:LINE the report gives\n"
	"for each address of FILE, to check it against binutils' addr2line.\n"
	"\n"
	"Exit status: 0 no leaks, 1 leaks, 2 trouble (unusable input, a usage\n"
	"error, an I/O error).  See mtanalyze(1).";

static gboolean opt_exact;
static char *opt_parent;
static gboolean opt_no_inherit;
static gboolean opt_by_site;
static char *opt_db;
static char *opt_host;
static gboolean opt_all_events;
static gboolean opt_no_auto_skip;
static char **opt_debug_dirs;
static int opt_frames = 5;
static char *opt_growth;
static char *opt_folded;
static char *opt_folded_count;
static char *opt_pprof;

/* --folded[=WHAT]: a bare --folded is --folded=leaked.  (GOption's
 * optional arguments would take the next word, the trace, as WHAT.) */
void
mta_report_prepare_args (int argc, char **argv)
{
	static char folded_leaked[] = "--folded=leaked";

	for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
		if (strcmp (argv[i], "--folded") == 0)
			argv[i] = folded_leaked;
}

const GOptionEntry mta_report_entries[] = {
	{ "mtrace-exact", 0, 0, G_OPTION_ARG_NONE, &opt_exact,
	  "Print locations exactly as mtrace does, even unresolved ones", NULL },
	{ "parent", 0, 0, G_OPTION_ARG_FILENAME, &opt_parent,
	  "In the reports by call site, a forked child's trace starts from the blocks live at "
	  "its fork in FILE, its parent's trace (default: the one its header names, if found)", "FILE" },
	{ "no-inherit", 0, 0, G_OPTION_ARG_NONE, &opt_no_inherit,
	  "Read the trace alone in the reports by call site too: no blocks inherited from a "
	  "parent, none handed to a child", NULL },
	{ "by-site", 0, 0, G_OPTION_ARG_NONE, &opt_by_site,
	  "Report leaks and bad frees by call site, largest first", NULL },
	{ "frames", 0, 0, G_OPTION_ARG_INT, &opt_frames,
	  "Show N callers of each site's stacks (default 5; 0: none)", "N" },
	{ "debug-dir", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_debug_dirs,
	  "Also look for separate debug files in DIR (repeatable)", "DIR" },
	{ "no-auto-skip", 0, 0, G_OPTION_ARG_NONE, &opt_no_auto_skip,
	  "Do not skip the allocation wrappers found in code without symbols", NULL },
	{ "folded", 0, 0, G_OPTION_ARG_STRING, &opt_folded,
	  "Print folded stacks for flame graphs: leaked (alone: --folded), allocated, peak, temporary",
	  "WHAT" },
	{ "folded-count", 0, 0, G_OPTION_ARG_STRING, &opt_folded_count,
	  "Count bytes (default) or blocks in --folded lines", "bytes|blocks" },
	{ "pprof", 0, 0, G_OPTION_ARG_FILENAME, &opt_pprof,
	  "Also write the run as a gzip-compressed pprof profile FILE (share/pprof.md)", "FILE" },
	{ "db", 0, 0, G_OPTION_ARG_FILENAME, &opt_db,
	  "Load the run into the SQLite database FILE (created if missing), or into the PostgreSQL "
	  "server of a postgresql:// URI", "FILE|URI" },
	{ "host", 0, 0, G_OPTION_ARG_STRING, &opt_host,
	  "With --db, the host the run is from (runs.host; default: this machine's name)", "NAME" },
	{ "all-events", 0, 0, G_OPTION_ARG_NONE, &opt_all_events,
	  "With --db, also store every event (large; see mtanalyze(1))", NULL },
	{ "growth", 0, 0, G_OPTION_ARG_STRING, &opt_growth,
	  "Report, and exit 1 for, only the leaks that grow as CLASSES (e.g. linear,exponential)",
	  "CLASSES" },
	{ NULL }
};

const MtaSharedSpec mta_report_shared = {
	.set = MTA_SHARED_SYSROOT | MTA_SHARED_QUIET | MTA_SHARED_SKIP | MTA_SHARED_JSON |
	       MTA_SHARED_HTML | MTA_SHARED_LEAKS,
	.json_help = "Print the report by call site as JSON (share/json-format.md)",
	.leaks_help = "Report, and exit 1 for, only the blocks not freed of KINDS: definite, indirect, "
		      "possible, reachable, unknown, all (a trace recorded with mtrec --reach)",
};

typedef struct {
	MtaLineFunc func;         /* the report's consumer of lines */
	gpointer data;
	uint64_t bad_shown;
	MtaIncomplete incomplete;  /* for the warning, in every mode */
	gboolean forked, child;    /* "# fork", "# parent" lines went by */
} ReportState;

/* Printable excerpt of a damaged line. */
static char *
excerpt (const char *p, size_t len)
{
	GString *s = g_string_new (NULL);
	for (size_t i = 0; i < len && s->len < 60; i++) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			g_string_append_c (s, (char) c);
		else
			g_string_append_printf (s, "\\x%02x", c);
	}
	if (s->len >= 60)
		g_string_append (s, "...");
	return g_string_free (s, FALSE);
}

static gboolean
report_line (const MtaLine *line, gpointer data, GError **error)
{
	ReportState *st = data;
	if (line->kind == MTA_LINE_BAD && !mta_shared.quiet && st->bad_shown < SHOWN_BAD_LINES) {
		g_autofree char *ex = excerpt (line->text.p, line->text.len);
		/* stdout and stderr may share a terminal: keep their order */
		fflush (stdout);
		fprintf (stderr, "mtanalyze: %s:%" G_GUINT64_FORMAT ": unreadable line '%s'\n",
			 line->source, line->source_lineno, ex);
		st->bad_shown++;
	}
	if (line->kind == MTA_LINE_EXT) {
		mta_incomplete_line (&st->incomplete, line);
		if (line->ncols >= 3 && mta_span_eq (line->cols[0], "#")) {
			st->forked |= mta_span_eq (line->cols[1], "fork");
			st->child |= mta_span_eq (line->cols[1], "parent");
		}
	}
	return st->func (line, st->data, error);
}

/* What the fork lineage says (lineage.c): warnings always, notes unless -q. */
static void
note_cb (const char *message, gpointer data)
{
	(void) data;
	if (mta_shared.quiet && g_str_has_prefix (message, "note: "))
		return;
	g_autofree char *m = mta_escape_controls (message);
	fflush (stdout);
	fprintf (stderr, "mtanalyze: %s\n", m);
}

/* The plain report is the script's, trace by trace, forks or not (the
 * other reports follow the heap across them): say so where it matters. */
static void
note_plain_forks (const ReportState *st, const char *trace)
{
	if (mta_shared.quiet || opt_no_inherit || (!st->forked && !st->child && opt_parent == NULL))
		return;
	fflush (stdout);
	fprintf (stderr, "mtanalyze: note: '%s' is the trace of %s: this report is the script's, "
		 "which reads each trace alone (%s); --by-site, --json, --db and --html follow the "
		 "heap across forks (share/analyzer.md, \"Forks and daemons\")\n", trace,
		 st->child ? "a forked child" : st->forked ? "a process that forked" : "no forked child",
		 st->child ? "the child's frees of the blocks it inherited show as frees of memory "
		 "never allocated, and --parent is not used" : st->forked ?
		 "the blocks a daemonizing parent left to its child show as its leaks" :
		 "--parent is not used");
}

/* TRUE when PATH is a regular file starting with the ELF magic. */
static gboolean
is_elf_file (const char *path)
{
	char magic[4];
	int fd = mta_open_regular (path);	/* a FIFO or a device never blocks us */
	gboolean r = FALSE;

	if (fd < 0)
		return FALSE;
	if (read (fd, magic, 4) == 4 && memcmp (magic, "\177ELF", 4) == 0)
		r = TRUE;
	close (fd);
	return r;
}

/* What the options ask for (outputs.c decides what it means). */
static MtaOutputRequest
report_request (void)
{
	return (MtaOutputRequest) {
		.fallback = MTA_OUT_SCRIPT, .by_site = opt_by_site, .json = mta_shared.json,
		.folded = opt_folded, .folded_count = opt_folded_count,
		.db = opt_db, .host = opt_host, .all_events = opt_all_events,
		.files = { [MTA_FILE_HTML] = mta_shared.html, [MTA_FILE_PPROF] = opt_pprof },
		.gate = opt_growth != NULL || mta_shared.leaks != NULL,
	};
}

gboolean
mta_report (int argc, char **argv, MtaWarnFunc warn, int *exit_status, GError **error)
{
	const char *binary = NULL;
	int first = 0;
	ReportState st = { 0 };
	MtaCompat *compat = NULL;
	g_autoptr (MtaAnalysis) sites = NULL;
	MtaOutputRequest request = report_request ();
	MtaOutputs outputs;
	guint growth = 0, leak_kinds = 0;
	int status;

	if (!mta_outputs_resolve (&request, &outputs, error))
		return FALSE;
	if (argc < 1) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "no trace given");
		return FALSE;
	}
	if (argc >= 2 && is_elf_file (argv[0])) {
		binary = argv[0];
		first = 1;
	}
	if (opt_growth != NULL && !mta_growth_parse (opt_growth, &growth, error))
		return FALSE;
	if (!mta_shared_leak_kinds (&leak_kinds, error))
		return FALSE;
	for (int i = first; i < argc; i++)
		if (!mta_input_check_readable (argv[i], error))
			return FALSE;
	/* rotated parts in the order of their "# part" headers */
	int ntraces = argc - first;
	if (!mta_parts_order (argv + first, &ntraces, warn, NULL, error))
		return FALSE;
	argc = first + ntraces;    /* parts a compacted trace holds are left out */

	MtaSymbolizer *sym = mta_symbolizer_new (mta_shared.sysroot, warn, NULL);
	mta_symbolizer_set_binary (sym, binary);
	for (char **d = opt_debug_dirs; d && *d; d++)
		if (!mta_symbolizer_add_debug_dir (sym, *d, error)) {
			mta_symbolizer_free (sym);
			return FALSE;
		}
	if (mta_outputs_by_site (&outputs)) {
		MtaAnalysisOptions o = {
			.outputs = outputs, .db = opt_db, .host = opt_host,
			.all_events = opt_all_events, .no_auto_skip = opt_no_auto_skip,
			.frames = MAX (opt_frames, 0), .growth = growth, .leak_kinds = leak_kinds,
		};
		if (mta_shared_wrappers (&o.wrappers, error))
			sites = mta_analysis_new (&o, sym, binary, argv + first, argc - first, error);
		if (sites == NULL) {
			mta_symbolizer_free (sym);
			return FALSE;
		}
		st.func = mta_analysis_line;
		st.data = sites;
	} else {
		/* addr2line, whose answers the plain report gives, asks no
		 * debuginfod server: neither does it */
		mta_symbolizer_set_fetch (sym, FALSE);
		compat = mta_compat_new (sym, binary, stdout);
		mta_compat_set_improve (compat, !opt_exact);
		st.func = mta_compat_line;
		st.data = compat;
	}
	/* forks: what a child inherited, what a parent handed over -- in the
	 * reports by call site; the plain one is the script's, trace by trace */
	g_autoptr (MtaLineage) lineage = NULL;
	if (!opt_no_inherit && argc > first && sites != NULL) {
		lineage = mta_lineage_new (st.func, st.data, argv[first], note_cb, NULL);
		mta_lineage_set_parent (lineage, opt_parent);
		mta_lineage_set_traces (lineage, argv + first, argc - first);
		if (sites != NULL)
			mta_analysis_set_lineage (sites, mta_lineage_info (lineage));
		st.func = mta_lineage_line;
		st.data = lineage;
	}
	mta_incomplete_init (&st.incomplete);
	MtaReader *reader = mta_reader_new (report_line, &st);
	mta_reader_set_progress (reader, mta_shared.quiet);
	/* report_line has nothing to do with a plain event */
	if (compat != NULL && lineage == NULL)
		mta_reader_set_events (reader, mta_compat_events, compat);

	status = 0;
	for (int i = first; i < argc; i++) {
		if (!mta_reader_read_file (reader, argv[i], error)) {
			status = -1;
			break;
		}
	}
	if (status == 0 && lineage != NULL && !mta_lineage_finish (lineage, error))
		status = -1;
	if (status == 0) {
		uint64_t bad = mta_reader_bad_lines (reader);
		/* A run of unreadable lines only is unusable in every mode
		 * (SPEC): the reports by site say so before any output; the
		 * script's report is printed as the script prints it, and
		 * the status says it could not be read. */
		if (sites != NULL && !mta_reader_check_events (reader, error))
			status = -1;
		else if (sites != NULL) {
			FILE *out = mta_outputs_stream (outputs.out);
			status = mta_analysis_finish (sites, mta_reader_lines (reader), bad, out, error);
			mta_text_out_close (out);
		} else {
			status = mta_compat_finish (compat);
			if (!mta_reader_check_events (reader, error))
				status = -1;
		}
		if (compat != NULL && status >= 0 && argc > first)
			note_plain_forks (&st, argv[first]);
		if (bad > st.bad_shown && !mta_shared.quiet) {
			fflush (stdout);
			fprintf (stderr, "mtanalyze: %" G_GUINT64_FORMAT " unreadable lines in all, "
				 "%" G_GUINT64_FORMAT " shown\n", bad, st.bad_shown);
		}
		/* The recorder stopped or lost events: the report is about what
		 * it recorded (issue 18), stdout stays the script's. */
		g_autofree char *incomplete = mta_incomplete_warning (&st.incomplete);
		if (incomplete != NULL && status >= 0)
			warn (incomplete, NULL);
	}
	mta_incomplete_release (&st.incomplete);
	mta_reader_free (reader);
	mta_compat_free (compat);
	mta_analysis_free (g_steal_pointer (&sites));
	mta_symbolizer_free (sym);
	*exit_status = status;
	return status >= 0;
}

