/* main.c -- mtanalyze: command line, dispatch, and the only place that
 * prints errors.
 *
 * `mtanalyze [OPTIONS] [BINARY] TRACE...` runs the default command (the
 * report of glibc's mtrace script).  Subcommands are looked up by the first
 * argument in `commands` below; each takes its arguments and returns the
 * exit status, or -1 with a GError that main prints once.  Exit status:
 * 0 no leaks, 1 leaks, 2 trouble -- unusable input, an I/O error, or a
 * usage error (a G_OPTION_ERROR_BAD_VALUE), which is one line naming what
 * is wrong and where to look, never the whole help.  A command with
 * options of its own (diff) names them in its entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "analysis.h"
#include "diff.h"
#include "growth.h"
#include "incomplete.h"
#include "lineage.h"
#include "mtrace-compat.h"
#include "oom.h"
#include "parts.h"
#include "session.h"
#include "shrink.h"
#include "symbolize.h"
#include "trace-input.h"
#include "trace-reader.h"

#define EXIT_TROUBLE 2
#define SHOWN_BAD_LINES 5

typedef int (*CommandFunc) (int argc, char **argv, GError **error);

typedef struct {
	const char *name;     /* NULL: the default command */
	CommandFunc func;
	const char *summary;
	/* Options, arguments and help of its own; NULL: the report's */
	const GOptionEntry *entries;
	const char *params;
	const char *description;
} Command;

static int cmd_report (int argc, char **argv, GError **error);
static int cmd_addr2line (int argc, char **argv, GError **error);
static int cmd_diff (int argc, char **argv, GError **error);
static int cmd_shrink (int argc, char **argv, GError **error);
static int cmd_session (int argc, char **argv, GError **error);

/* addr2line has no options but its help must not be the report's. */
static const GOptionEntry addr2line_entries[] = { { NULL } };
static const char addr2line_description[] =
	"Prints, one per line, the FILE:LINE the report uses for each hexadecimal\n"
	"ADDR of the object FILE, so that it can be checked against binutils'\n"
	"addr2line.\n"
	"\n"
	"Exit status: 0 printed, 2 trouble (a usage error).";

static const Command commands[] = {
	{ NULL, cmd_report, "print what glibc's mtrace prints for the trace", NULL, NULL, NULL },
	{ "addr2line", cmd_addr2line, "print what 'addr2line -e FILE ADDR...' would",
	  addr2line_entries, "FILE ADDR... - print what 'addr2line -e FILE ADDR...' prints",
	  addr2line_description },
	{ "diff", cmd_diff, "list the leaks that FEATURE has and BASE has not",
	  mta_diff_entries, mta_diff_params, mta_diff_description },
	{ "shrink", cmd_shrink, "write the trace without the blocks that were freed",
	  mta_shrink_entries, mta_shrink_params, mta_shrink_description },
	{ "session", cmd_session, "list the processes of a session, as a tree, with their leaks",
	  mta_session_entries, mta_session_params, mta_session_description },
};

static void warn_cb (const char *message, gpointer data);

/* ------------------------------------------------------------ session */

static int
cmd_session (int argc, char **argv, GError **error)
{
	int status = 0;
	return mta_session (argc, argv, warn_cb, &status, error) ? status : -1;
}

/* ------------------------------------------------------------ shrink */

static int
cmd_shrink (int argc, char **argv, GError **error)
{
	int status = 0;
	return mta_shrink (argc, argv, warn_cb, &status, error) ? status : -1;
}

/* ------------------------------------------------------------ diff */

static int
cmd_diff (int argc, char **argv, GError **error)
{
	int status = 0;
	return mta_diff (argc, argv, warn_cb, &status, error) ? status : -1;
}

/* ------------------------------------------------------------ addr2line */

/* The answers the report uses in place of binutils' addr2line, one per
 * line, so that they can be checked against the real program. */
static int
cmd_addr2line (int argc, char **argv, GError **error)
{
	if (argc < 2) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "addr2line takes an object FILE and addresses");
		return -1;
	}
	MtaSymbolizer *sym = mta_symbolizer_new (NULL, NULL, NULL);
	for (int i = 1; i < argc; i++) {
		const char *r = mta_symbolizer_addr2line (sym, argv[0],
							  g_ascii_strtoull (argv[i], NULL, 16));
		puts (r ? r : "??:0");
	}
	mta_symbolizer_free (sym);
	return 0;
}

/* ------------------------------------------------------------ report */

static char *opt_sysroot;
static gboolean opt_exact;
static gboolean opt_version;
static gboolean opt_quiet;
static char *opt_parent;
static gboolean opt_no_inherit;
static gboolean opt_by_site;
static gboolean opt_json;
static char *opt_db;
static gboolean opt_all_events;
static gboolean opt_no_skip;
static char **opt_skip;
static char **opt_debug_dirs;
static int opt_frames = 5;
static char *opt_growth;
static char *opt_folded;
static char *opt_folded_count;
static char *opt_html;

/* --folded[=WHAT]: a bare --folded is --folded=leaked.  (GOption's
 * optional arguments would take the next word, the trace, as WHAT.) */
static void
default_folded (int argc, char **argv)
{
	static char folded_leaked[] = "--folded=leaked";

	for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
		if (strcmp (argv[i], "--folded") == 0)
			argv[i] = folded_leaked;
}

static const GOptionEntry report_entries[] = {
	{ "sysroot", 0, 0, G_OPTION_ARG_FILENAME, &opt_sysroot,
	  "Find the trace's objects and debug files under DIR", "DIR" },
	{ "mtrace-exact", 0, 0, G_OPTION_ARG_NONE, &opt_exact,
	  "Print locations exactly as mtrace does, even unresolved ones", NULL },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet,
	  "Do not report unreadable lines nor show the progress", NULL },
	{ "parent", 0, 0, G_OPTION_ARG_FILENAME, &opt_parent,
	  "A forked child's trace starts from the blocks live at its fork in FILE, "
	  "its parent's trace (default: the one its header names, if found)", "FILE" },
	{ "no-inherit", 0, 0, G_OPTION_ARG_NONE, &opt_no_inherit,
	  "Read the trace alone: no blocks inherited from a parent, none handed to a child", NULL },
	{ NULL }
};

/* Every command's. */
static const GOptionEntry common_entries[] = {
	{ "version", 0, 0, G_OPTION_ARG_NONE, &opt_version,
	  "Print the version and exit", NULL },
	{ NULL }
};

static const GOptionEntry site_entries[] = {
	{ "by-site", 0, 0, G_OPTION_ARG_NONE, &opt_by_site,
	  "Report leaks and bad frees by call site, largest first", NULL },
	{ "frames", 0, 0, G_OPTION_ARG_INT, &opt_frames,
	  "Show N callers of each site's stacks (default 5; 0: none)", "N" },
	{ "skip", 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_skip,
	  "Also skip functions matching PATTERN (or OBJECT+0xOFF, 0xOFF) as allocation wrappers",
	  "PATTERN" },
	{ "debug-dir", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_debug_dirs,
	  "Also look for separate debug files in DIR (repeatable)", "DIR" },
	{ "no-skip", 0, 0, G_OPTION_ARG_NONE, &opt_no_skip,
	  "Charge leaks to wrappers too (no wrapper list)", NULL },
	{ "json", 0, 0, G_OPTION_ARG_NONE, &opt_json,
	  "Print the report by call site as JSON (share/json-format.md)", NULL },
	{ "folded", 0, 0, G_OPTION_ARG_STRING, &opt_folded,
	  "Print folded stacks for flame graphs: leaked (alone: --folded), allocated, peak, temporary",
	  "WHAT" },
	{ "folded-count", 0, 0, G_OPTION_ARG_STRING, &opt_folded_count,
	  "Count bytes (default) or blocks in --folded lines", "bytes|blocks" },
	{ "html", 0, 0, G_OPTION_ARG_FILENAME, &opt_html,
	  "Also write the report as one self-contained HTML FILE (share/pictures.md)", "FILE" },
	{ "db", 0, 0, G_OPTION_ARG_FILENAME, &opt_db,
	  "Load the run into the SQLite database FILE (created if missing)", "FILE" },
	{ "all-events", 0, 0, G_OPTION_ARG_NONE, &opt_all_events,
	  "With --db, also store every event (large; see mtanalyze(1))", NULL },
	{ "growth", 0, 0, G_OPTION_ARG_STRING, &opt_growth,
	  "Report, and exit 1 for, only the leaks that grow as CLASSES (e.g. linear,exponential)",
	  "CLASSES" },
	{ NULL }
};

typedef struct {
	MtaLineFunc func;         /* the report's consumer of lines */
	gpointer data;
	uint64_t bad_shown;
	MtaIncomplete incomplete;  /* for the warning, in every mode */
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
	if (line->kind == MTA_LINE_BAD && !opt_quiet && st->bad_shown < SHOWN_BAD_LINES) {
		g_autofree char *ex = excerpt (line->text.p, line->text.len);
		/* stdout and stderr may share a terminal: keep their order */
		fflush (stdout);
		fprintf (stderr, "mtanalyze: %s:%" G_GUINT64_FORMAT ": unreadable line '%s'\n",
			 line->source, line->source_lineno, ex);
		st->bad_shown++;
	}
	if (line->kind == MTA_LINE_EXT)
		mta_incomplete_line (&st->incomplete, line);
	return st->func (line, st->data, error);
}

static void
warn_cb (const char *message, gpointer data)
{
	(void) data;
	fflush (stdout);
	fprintf (stderr, "mtanalyze: warning: %s\n", message);
}

/* What the fork lineage says (lineage.c): warnings always, notes unless -q. */
static void
note_cb (const char *message, gpointer data)
{
	(void) data;
	if (opt_quiet && g_str_has_prefix (message, "note: "))
		return;
	fflush (stdout);
	fprintf (stderr, "mtanalyze: %s\n", message);
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

/* --folded and --folded-count, checked before anything is read; one
 * output on stdout at a time. */
static gboolean
report_outputs (MtaFolded *folded, gboolean *blocks, GError **error)
{
	if (opt_folded_count != NULL && opt_folded == NULL) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--folded-count needs --folded");
		return FALSE;
	}
	if (opt_folded == NULL)
		return TRUE;
	if (opt_json || opt_by_site) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "--folded prints its own report: not with %s", opt_json ? "--json" : "--by-site");
		return FALSE;
	}
	return mta_folded_parse (opt_folded, folded, error) &&
	       mta_folded_parse_count (opt_folded_count, *folded, blocks, error);
}

static int
cmd_report (int argc, char **argv, GError **error)
{
	const char *binary = NULL;
	int first = 0;
	ReportState st = { 0 };
	MtaCompat *compat = NULL;
	g_autoptr (MtaAnalysis) sites = NULL;
	gboolean by_site = opt_by_site || opt_json || opt_db != NULL || opt_growth != NULL ||
		opt_folded != NULL || opt_html != NULL;
	guint growth = 0;
	MtaFolded folded = MTA_FOLDED_NONE;
	gboolean folded_blocks = FALSE;
	int status;

	if (argc >= 2 && is_elf_file (argv[0])) {
		binary = argv[0];
		first = 1;
	}
	if (opt_growth != NULL && !mta_growth_parse (opt_growth, &growth, error))
		return -1;
	if (!report_outputs (&folded, &folded_blocks, error))
		return -1;
	for (int i = first; i < argc; i++)
		if (!mta_input_check_readable (argv[i], error))
			return -1;
	/* rotated parts in the order of their "# part" headers */
	if (!mta_parts_order (argv + first, argc - first, warn_cb, NULL, error))
		return -1;

	MtaSymbolizer *sym = mta_symbolizer_new (opt_sysroot, warn_cb, NULL);
	mta_symbolizer_set_binary (sym, binary);
	for (char **d = opt_debug_dirs; d && *d; d++)
		if (!mta_symbolizer_add_debug_dir (sym, *d, error)) {
			mta_symbolizer_free (sym);
			return -1;
		}
	if (by_site) {
		MtaAnalysisOptions o = {
			.by_site = opt_by_site || (opt_growth != NULL && !opt_json && opt_db == NULL &&
					       opt_html == NULL),
			.json = opt_json, .db = opt_db,
			.all_events = opt_all_events, .no_skip = opt_no_skip, .skip = opt_skip,
			.frames = MAX (opt_frames, 0), .growth = growth,
			.folded = folded, .folded_blocks = folded_blocks, .html = opt_html,
		};
		sites = mta_analysis_new (&o, sym, binary, argv + first, argc - first, error);
		if (sites == NULL) {
			mta_symbolizer_free (sym);
			return -1;
		}
		st.func = mta_analysis_line;
		st.data = sites;
	} else {
		compat = mta_compat_new (sym, binary, stdout);
		mta_compat_set_improve (compat, !opt_exact);
		st.func = mta_compat_line;
		st.data = compat;
	}
	/* forks: what a child inherited, what a parent handed over */
	g_autoptr (MtaLineage) lineage = NULL;
	if (!opt_no_inherit && argc > first) {
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
	mta_reader_set_progress (reader, opt_quiet);

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
		if (sites != NULL)
			status = mta_analysis_finish (sites, mta_reader_lines (reader), bad, stdout, error);
		else
			status = mta_compat_finish (compat);
		if (bad > st.bad_shown && !opt_quiet) {
			fflush (stdout);
			fprintf (stderr, "mtanalyze: %" G_GUINT64_FORMAT " unreadable lines in all, "
				 "%" G_GUINT64_FORMAT " shown\n", bad, st.bad_shown);
		}
		/* The recorder stopped or lost events: the report is about what
		 * it recorded (issue 18), stdout stays the script's. */
		g_autofree char *incomplete = mta_incomplete_warning (&st.incomplete);
		if (incomplete != NULL && status >= 0)
			warn_cb (incomplete, NULL);
	}
	mta_incomplete_release (&st.incomplete);
	mta_reader_free (reader);
	mta_compat_free (compat);
	mta_analysis_free (g_steal_pointer (&sites));
	mta_symbolizer_free (sym);
	return status;
}

/* ------------------------------------------------------------ main */

/* "mtanalyze" or "mtanalyze diff": as the user called the command. */
static char *
command_name (const Command *cmd)
{
	return g_strconcat ("mtanalyze", cmd->name ? " " : "", cmd->name ? cmd->name : "", NULL);
}

static int
usage_error (const Command *cmd, const char *message)
{
	g_autofree char *name = command_name (cmd);

	fflush (stdout);
	fprintf (stderr, "%s: %s\nTry '%s --help' for more information.\n", name, message, name);
	return EXIT_TROUBLE;
}

/* Levenshtein distance, for "did you mean"; small strings only. */
static guint
distance (const char *a, const char *b)
{
	size_t la = strlen (a), lb = strlen (b);
	g_autofree guint *row = g_new (guint, lb + 1);

	for (size_t j = 0; j <= lb; j++)
		row[j] = (guint) j;
	for (size_t i = 1; i <= la; i++) {
		guint diag = row[0];
		row[0] = (guint) i;
		for (size_t j = 1; j <= lb; j++) {
			guint up = row[j];
			guint best = MIN (row[j] + 1, row[j - 1] + 1);
			row[j] = MIN (best, diag + (a[i - 1] != b[j - 1]));
			diag = up;
		}
	}
	return row[lb];
}

/* The long option among ENTRIES nearest to WORD (without its dashes),
 * when it is near enough to be what was meant; NULL otherwise. */
static const char *
nearest_option (const GOptionEntry *const *lists, const char *word)
{
	const char *best = NULL;
	guint best_d = 3;

	for (; *lists != NULL; lists++)
		for (const GOptionEntry *e = *lists; e->long_name != NULL; e++) {
			guint d = distance (word, e->long_name);
			if (d < best_d) {
				best_d = d;
				best = e->long_name;
			}
		}
	return best;
}

/* GOption's "Unknown option --bysite" may be translated: the option is
 * the word of the message that starts with a dash. */
static char *
unknown_option_word (const char *msg)
{
	for (const char *p = msg; (p = strchr (p, '-')) != NULL; p++)
		if (p == msg || g_ascii_isspace (p[-1]))
			return g_strndup (p, strcspn (p, " ="));
	return NULL;
}

/* GOption names "-qz" whole: the letter that is not an option. */
static char *
unknown_short_option (const GOptionEntry *const *lists, const char *word)
{
	for (const char *c = word + 1; *c != '\0'; c++) {
		const GOptionEntry *found = NULL;
		for (const GOptionEntry *const *l = lists; *l != NULL && found == NULL; l++)
			for (const GOptionEntry *e = *l; e->long_name != NULL; e++)
				if (e->short_name == *c)
					found = e;
		if (found == NULL && *c != 'h' && *c != '?')
			return g_strdup_printf ("-%c", *c);
		if (found != NULL && found->arg != G_OPTION_ARG_NONE)
			break;	/* the rest is its value */
	}
	return g_strdup (word);
}

/* GLib's other messages in our style: lowercase, 'quoted', no full stop. */
static char *
shape_glib_message (const char *msg)
{
	GString *s = g_string_new (msg);

	g_string_replace (s, "\u201c", "'", 0);
	g_string_replace (s, "\u201d", "'", 0);
	if (g_ascii_isupper (s->str[0]) && g_ascii_islower (s->str[1]))
		s->str[0] = g_ascii_tolower (s->str[0]);
	if (s->len > 0 && s->str[s->len - 1] == '.')
		g_string_truncate (s, s->len - 1);
	return g_string_free (s, FALSE);
}

/* A failed g_option_context_parse as one usage line; an unknown long
 * option comes with the one probably meant (--bysite: --by-site). */
static int
option_error (const Command *cmd, const GOptionEntry *const *lists, const GError *error)
{
	g_autofree char *word = NULL;
	g_autofree char *m = NULL;
	const char *near = NULL;

	if (g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_UNKNOWN_OPTION))
		word = unknown_option_word (error->message);
	if (word == NULL) {
		m = shape_glib_message (error->message);
		return usage_error (cmd, m);
	}
	if (g_str_has_prefix (word, "--"))
		near = nearest_option (lists, word + 2);
	else {
		char *letter = unknown_short_option (lists, word);
		g_free (word);
		word = letter;
	}
	m = near ? g_strdup_printf ("unknown option '%s': did you mean '--%s'?", word, near)
		 : g_strdup_printf ("unknown option '%s'", word);
	return usage_error (cmd, m);
}

/* A first argument that is not a file but looks like a mistyped
 * subcommand ("dif", "shrnk"): the subcommand it is nearest to. */
static const Command *
nearest_command (const char *arg)
{
	const Command *best = NULL;
	guint best_d = 3;

	if (arg[0] == '-' || strpbrk (arg, "/.") != NULL || access (arg, F_OK) == 0)
		return NULL;
	for (size_t i = 0; i < G_N_ELEMENTS (commands); i++) {
		if (commands[i].name == NULL)
			continue;
		guint d = distance (arg, commands[i].name);
		if (d < best_d && d < strlen (commands[i].name)) {
			best_d = d;
			best = &commands[i];
		}
	}
	return best;
}

static const Command *
find_command (int *argc, char ***argv)
{
	for (size_t i = 0; *argc > 1 && i < G_N_ELEMENTS (commands); i++)
		if (commands[i].name && strcmp ((*argv)[1], commands[i].name) == 0) {
			(*argv)[1] = (*argv)[0];
			(*argv)++;
			(*argc)--;
			return &commands[i];
		}
	return &commands[0];
}

static const char report_description[] =
	"With no options, prints exactly what glibc's mtrace(1) script prints for\n"
	"BINARY and TRACE (frees of memory never allocated, memory not freed),\n"
	"resolving caller addresses the script cannot to file:line.  Several TRACE\n"
	"files are read as one run, in order; '-' is standard input.  With two or\n"
	"more arguments the first is the BINARY when it is an ELF file.  Traces\n"
	"compressed with gzip, zstd or xz are read as they are.  A forked child's\n"
	"trace starts from the blocks its parent had at the fork, and a parent\n"
	"that forked and exited does not leak what it handed to its child\n"
	"(share/analyzer.md, \"Forks and daemons\"; --no-inherit: as the script).\n"
	"\n"
	"--by-site, --json and --db report by call site instead, skipping the\n"
	"allocation wrappers of share/wrappers.txt when the trace has stacks,\n"
	"with each leak's growth over the run (constant, logarithmic, linear,\n"
	"exponential, unknown: share/growth.md), the peak and the temporary\n"
	"allocations.  --growth linear,exponential reports (and exits 1 for) real\n"
	"leaks only.  Rotated parts (t.log, t.log.part2, ...) are read in the\n"
	"order of their '# part' headers, whatever the order given.\n"
	"\n"
	"mtanalyze shrink TRACE... -o OUT writes the trace without the blocks\n"
	"that were freed: see 'mtanalyze shrink --help'.\n"
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

int
main (int argc, char **argv)
{
	g_autoptr (GError) error = NULL;
	g_autoptr (GOptionContext) ctx = NULL;
	const Command *cmd, *near;
	const GOptionEntry *lists[4] = { NULL };
	int status;

	setlocale (LC_ALL, "");
	mta_oom_init ();
	static char outbuf[1 << 16];
	setvbuf (stdout, outbuf, _IOFBF, sizeof outbuf);

	cmd = find_command (&argc, &argv);
	if (cmd == &commands[0] && argc > 1 && (near = nearest_command (argv[1])) != NULL) {
		g_autofree char *m = g_strdup_printf ("'%s' is neither a file nor a subcommand: "
						      "did you mean 'mtanalyze %s'?", argv[1], near->name);
		return usage_error (cmd, m);
	}
	if (cmd->entries != NULL) {
		ctx = g_option_context_new (cmd->params);
		lists[0] = cmd->entries;
		g_option_context_set_description (ctx, cmd->description);
		g_autofree char *prgname = command_name (cmd);
		g_set_prgname (prgname);
	} else {
		ctx = g_option_context_new ("[BINARY] TRACE... - report the leaks of a malloc trace");
		lists[0] = report_entries;
		lists[1] = site_entries;
		g_option_context_set_description (ctx, report_description);
	}
	lists[cmd->entries != NULL ? 1 : 2] = common_entries;
	for (int i = 0; lists[i] != NULL; i++)
		g_option_context_add_main_entries (ctx, lists[i], NULL);
	if (cmd->entries == NULL)
		default_folded (argc, argv);
	if (!g_option_context_parse (ctx, &argc, &argv, &error))
		return option_error (cmd, lists, error);
	if (opt_version) {
		printf ("mtanalyze %s\n", MTA_VERSION);
		return 0;
	}
	if (opt_all_events && opt_db == NULL)
		return usage_error (cmd, "--all-events needs --db");
	/* GOption keeps "--" when a lone "-" follows; drop it. */
	if (argc > 1 && strcmp (argv[1], "--") == 0) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (argc < 2 && cmd->entries == NULL)
		return usage_error (cmd, "no trace given");
	status = cmd->func (argc - 1, argv + 1, &error);
	if (fflush (stdout) != 0 && status >= 0) {
		fprintf (stderr, "mtanalyze: cannot write the report: %s\n", g_strerror (errno));
		return EXIT_TROUBLE;
	}
	if (status < 0 && g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE))
		return usage_error (cmd, error->message);
	if (status < 0) {
		fprintf (stderr, "mtanalyze: %s\n", error ? error->message : "failed");
		return EXIT_TROUBLE;
	}
	return status;
}
