/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* main.c -- mtanalyze: command line, dispatch, and the only place that
 * prints errors.
 *
 * `mtanalyze [OPTIONS] [BINARY] TRACE...` runs the default command (the
 * report of glibc's mtrace script, report.c).  Subcommands are looked up by
 * the first argument in `commands` below, one file each; main parses the
 * options each names, hands it the arguments and the warning printer, and
 * gets back its exit status, or FALSE with a GError it prints once.  Exit status:
 * 0 no leaks, 1 leaks, 2 trouble -- unusable input, an I/O error, or a
 * usage error (a G_OPTION_ERROR_BAD_VALUE), which is one line naming what
 * is wrong and where to look, never the whole help.
 */
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib.h>

#include "addr2line.h"
#include "diff.h"
#include "escape.h"
#include "oom.h"
#include "report.h"
#include "session.h"
#include "shrink.h"
#include "compact.h"
#include "db-conn.h"

#define EXIT_TROUBLE 2

/* Every subcommand's entry point: *STATUS is its exit status when it
 * returns TRUE; warnings go through WARN, errors come back in ERROR. */
typedef gboolean (*CommandFunc) (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error);

typedef struct {
	const char *name;     /* NULL: the default command */
	CommandFunc func;
	const char *summary;
	const GOptionEntry *entries;        /* its own options, or NULL */
	const MtaSharedSpec *shared;       /* those it shares with others (options.h), or NULL */
	const char *params;
	const char *description;
	/* Called with the arguments before they are parsed, or NULL. */
	void (*prepare_args) (int argc, char **argv);
} Command;

static const Command commands[] = {
	{ NULL, mta_report, "print what glibc's mtrace prints for the trace",
	  mta_report_entries, &mta_report_shared, mta_report_params, mta_report_description,
	  mta_report_prepare_args },
	{ "addr2line", mta_addr2line, "print what 'addr2line -e FILE ADDR...' would",
	  mta_addr2line_entries, NULL, mta_addr2line_params, mta_addr2line_description, NULL },
	{ "diff", mta_diff, "list the leaks that FEATURE has and BASE has not",
	  mta_diff_entries, &mta_diff_shared, mta_diff_params, mta_diff_description, NULL },
	{ "shrink", mta_shrink, "write the trace without the blocks that were freed",
	  mta_shrink_entries, NULL, mta_shrink_params, mta_shrink_description, NULL },
	{ "compact", mta_compact, "fold the complete parts of a rotated trace while it is written",
	  mta_compact_entries, NULL, mta_compact_params, mta_compact_description, NULL },
	{ "session", mta_session, "list the processes of a session, as a tree, with their leaks",
	  NULL, &mta_session_shared, mta_session_params, mta_session_description, NULL },
};

/* ------------------------------------------------------------ main */

static gboolean opt_version;

/* Every command's. */
static const GOptionEntry common_entries[] = {
	{ "version", 0, 0, G_OPTION_ARG_NONE, &opt_version,
	  "Print the version and exit", NULL },
	{ NULL }
};

/* Where every subcommand's warnings go: after what it printed so far. */
static void
warn_cb (const char *message, gpointer data)
{
	g_autofree char *shown = mta_conn_redact_in (message);
	g_autofree char *m = mta_escape_controls (shown);

	(void) data;
	fflush (stdout);
	fprintf (stderr, "mtanalyze: warning: %s\n", m);
}

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
	g_autofree char *shown = mta_conn_redact_in (message);

	fflush (stdout);
	fprintf (stderr, "%s: %s\nTry '%s --help' for more information.\n", name, shown, name);
	return EXIT_TROUBLE;
}

/* Levenshtein distance, for "did you mean"; small strings only. */
static guint
distance (const char *a, const char *b)
{
	size_t la = strlen (a), lb = strlen (b);
	guint *row = g_new (guint, lb + 1), d;

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
	d = row[lb];
	g_free (row);
	return d;
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

int
main (int argc, char **argv)
{
	g_autoptr (GError) error = NULL;
	g_autoptr (GOptionContext) ctx = NULL;
	const Command *cmd, *near;
	const GOptionEntry *lists[4] = { NULL };
	int nlists = 0;
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
	ctx = g_option_context_new (cmd->params);
	g_option_context_set_description (ctx, cmd->description);
	if (cmd->name != NULL) {
		g_autofree char *prgname = command_name (cmd);
		g_set_prgname (prgname);
	}
	if (cmd->shared != NULL)
		lists[nlists++] = mta_shared_entries (cmd->shared);
	if (cmd->entries != NULL)
		lists[nlists++] = cmd->entries;
	lists[nlists++] = common_entries;
	for (int i = 0; lists[i] != NULL; i++)
		g_option_context_add_main_entries (ctx, lists[i], NULL);
	if (cmd->prepare_args != NULL)
		cmd->prepare_args (argc, argv);
	if (!g_option_context_parse (ctx, &argc, &argv, &error))
		return option_error (cmd, lists, error);
	if (opt_version) {
		printf ("mtanalyze %s\n", MTA_VERSION);
		return 0;
	}
	/* GOption keeps "--" when a lone "-" follows; drop it. */
	if (argc > 1 && strcmp (argv[1], "--") == 0) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	if (!cmd->func (argc - 1, argv + 1, warn_cb, &status, &error))
		status = -1;
	if (fflush (stdout) != 0 && status >= 0) {
		fprintf (stderr, "mtanalyze: cannot write the report: %s\n", g_strerror (errno));
		return EXIT_TROUBLE;
	}
	if (status < 0 && g_error_matches (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE))
		return usage_error (cmd, error->message);
	if (status < 0) {
		/* a URI's password is never printed, whoever made the message */
		g_autofree char *shown = mta_conn_redact_in (error ? error->message : "failed");
		g_autofree char *m = mta_escape_controls (shown);
		fprintf (stderr, "mtanalyze: %s\n", m);
		return EXIT_TROUBLE;
	}
	return status;
}
