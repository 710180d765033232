/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shrink.c -- `mtanalyze shrink`: drop every block that was freed.
 *
 * OUT has exactly as many lines as the input (the parts, concatenated),
 * and every line that matters to a report is at its own line number:
 * dropped lines become empty lines, which glibc's mtrace script and
 * mtanalyze both skip but count.  So "Free N was never alloc'd" names the
 * same N, and OUT stays a plain trace that /usr/bin/mtrace reads.
 *
 * Two streaming passes over the input, both following the script's own
 * bookkeeping (its %allocated hash, keyed by the address *string*: see
 * mtrace-compat.c), so that odd lines behave as the script sees them:
 *
 *   pass 1 finds the blocks that must stay: those never freed (the leaks)
 *          and those live when an allocation of the same address came
 *          ("Alloc N duplicate" names their caller and size); and the
 *          stack ids used by every line that will be kept;
 *   pass 2 writes: an allocation iff pass 1 kept its block, a free or
 *          realloc iff its block was kept or it frees nothing (a bad free),
 *          every duplicate; "=" lines, the header and object lines, the
 *          stacks of kept lines (once each), thread names and marks.
 *
 * "# T" and "# time" lines are written only where a kept event needs
 * them: in the place of a dropped line just before it (there is always
 * one, the "# T" line itself).  Memory follows the live blocks of the
 * run (twice) and the kept blocks, never the trace's length.
 */
#include "shrink.h"
#include "kind-shrink.h"
#include "script-hash.h"
#include "oom.h"
#include "trace-input.h"
#include "trace-reader.h"
#include "trace-output.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *opt_output;
static gboolean opt_quiet;

const GOptionEntry mta_shrink_entries[] = {
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output,
	  "Write the shrunk trace to FILE ('-': standard output)", "FILE" },
	{ "quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet,
	  "Do not print the sizes nor show the progress", NULL },
	{ NULL }
};

const char mta_shrink_params[] = "TRACE... -o OUT - drop the blocks that were freed";

const char mta_shrink_description[] =
	"Writes the trace (the parts of a rotated one, in the order of their\n"
	"headers) without the allocations that were freed later, nor their\n"
	"frees.  Analyzing OUT, with mtanalyze or /usr/bin/mtrace, gives the same\n"
	"leaks, the same frees of memory never allocated and the same duplicate\n"
	"allocations, at the same line numbers: dropped lines are left empty.\n"
	"Totals of allocations, the peak, temporary allocations and growth over\n"
	"time are the full trace's business: analyze the full trace for those.\n"
	"The input is read twice, so it must be files, not standard input.\n"
	"A new OUT is created 0600, as traces are; an existing one keeps its mode.\n"
	"OUT.gz, OUT.zst and OUT.xz are written compressed.\n"
	"\n"
	"Exit status: 0 written, 2 trouble (unusable input, a usage error, an\n"
	"I/O error).  See share/shrink.md.";

/* Flags of a block (MtaLiveEntry.flags). */
#define KEPT 1u            /* pass 1: a duplicate met it; pass 2: written */

typedef struct {
	int pass;
	FILE *out;
	MtaScriptHash allocated;   /* the script's: line, stack and flags */
	GArray *kept_lines;        /* pass 1: lines of the blocks kept; sorted for pass 2 */
	guint kept_next;           /* pass 2: next index in kept_lines */
	GHashTable *stacks;        /* stack ids needed (pass 1), -> 2 once written (pass 2) */
	/* pass 2 output */
	uint64_t pending;          /* dropped lines not yet written */
	uint32_t tid, out_tid;     /* thread of the lines read / of the lines written */
	gboolean have_tid;
	char *time_text, *out_time_text;
	uint64_t lines_out, bytes_out, events_in, events_out;
	uint64_t bytes_in;         /* of text read, decompressed */
	GHashTable *header_seen;   /* header lines already written (parts repeat them) */
	MtaKindShrink *kinds;      /* the "# k" lines' bookkeeping */
} Shrink;

/* ------------------------------------------------------------ the script's view */

static int64_t
stack_of (const MtaLine *l)
{
	return l->kind == MTA_LINE_EVENT || l->kind == MTA_LINE_TRACKED ? l->stack_id : -1;
}

/* $allocated{KEY} = the line and stack of the allocation */
static void
store (Shrink *s, const MtaScriptEvent *ev, const MtaLine *l, uint16_t flags)
{
	MtaLiveEntry *e = mta_script_hash_insert (&s->allocated, ev);
	e->seq = l->lineno;
	e->stack = stack_of (l);
	e->flags = flags;
}

static void
need_stack (Shrink *s, int64_t id)
{
	if (id >= 0)
		g_hash_table_add (s->stacks, g_memdup2 (&id, sizeof id));
}

/* ------------------------------------------------------------ pass 1 */

static gboolean
pass1_line (const MtaLine *l, gpointer data, GError **error)
{
	Shrink *s = data;
	MtaScriptEvent ev;
	MtaLiveEntry *e;

	(void) error;
	if (G_UNLIKELY (l->kind == MTA_LINE_TRACKED)) {
		mta_kind_shrink_pass1 (s->kinds, l);
		return TRUE;
	}
	mta_script_event (l, &ev);
	switch (ev.op) {
	case '+':
	case '>':
		if ((e = mta_script_hash_lookup (&s->allocated, &ev)) != NULL) {
			/* a duplicate: its line and the block it names stay */
			if (!(e->flags & KEPT)) {
				e->flags |= KEPT;
				g_array_append_val (s->kept_lines, e->seq);
				need_stack (s, e->stack);
			}
			need_stack (s, stack_of (l));
		} else if (ev.op == '>' || (ev.key.len >= 2 && ev.key.p[0] == '0' && ev.key.p[1] == 'x'))
			store (s, &ev, l, 0);
		break;
	case '-':
	case '<':
		if ((e = mta_script_hash_lookup (&s->allocated, &ev)) != NULL) {
			if (e->flags & KEPT)
				need_stack (s, stack_of (l));
			mta_script_hash_remove (&s->allocated, &ev, e);
		} else
			need_stack (s, stack_of (l));   /* a bad free stays */
		break;
	default:
		break;
	}
	return TRUE;
}

static void
keep_leak (const char *key, size_t len, const MtaLiveEntry *e, gpointer data)
{
	Shrink *s = data;

	(void) key;
	(void) len;
	if (e->flags & KEPT)
		return;
	g_array_append_val (s->kept_lines, e->seq);
	need_stack (s, e->stack);
}

/* The blocks still live at the end are the leaks: they stay. */
static void
pass1_finish (Shrink *s)
{
	mta_script_hash_foreach (&s->allocated, keep_leak, s);
}

/* ------------------------------------------------------------ pass 2 */

static void
put_raw (Shrink *s, const char *p, size_t len)
{
	for (; s->pending > 0; s->pending--)
		fputc ('\n', s->out);
	fwrite (p, 1, len, s->out);
	fputc ('\n', s->out);
	s->bytes_out += len + 1;
	s->lines_out++;
}

/* Write a line that stays, in its place.  When the thread (or the clock)
 * changed since the last line written, its "# T" (and "# time") line goes
 * first, in the place of dropped lines: there is always one for "# T",
 * the "# T" line read, which was dropped. */
static void
put_text (Shrink *s, const char *p, size_t len)
{
	char buf[32];
	if (s->have_tid && s->tid != s->out_tid && s->pending > 0) {
		int n = g_snprintf (buf, sizeof buf, "# T %u", s->tid);
		s->pending--;
		s->bytes_out--;
		put_raw (s, buf, (size_t) n);
		s->out_tid = s->tid;
	}
	if (s->time_text != NULL && g_strcmp0 (s->time_text, s->out_time_text) != 0 && s->pending > 0) {
		s->pending--;
		s->bytes_out--;
		put_raw (s, s->time_text, strlen (s->time_text));
		g_free (s->out_time_text);
		s->out_time_text = g_strdup (s->time_text);
	}
	put_raw (s, p, len);
}

/* One dropped line: written as an empty line, later. */
static void
drop (Shrink *s)
{
	s->pending++;
	s->bytes_out++;
}

static void
put_event (Shrink *s, const MtaLine *l)
{
	put_text (s, l->text.p, l->text.len);
	s->events_out++;
}

static gboolean
starts (const MtaLine *l, const char *prefix)
{
	size_t n = strlen (prefix);
	return l->text.len >= n && memcmp (l->text.p, prefix, n) == 0;
}

/* An extension line: kept, dropped, or remembered for put_event. */
static void
pass2_ext (Shrink *s, const MtaLine *l)
{
	const char *p = l->text.p;
	size_t len = l->text.len;

	if (starts (l, "# T ")) {
		s->tid = (uint32_t) g_ascii_strtoull (p + 4, NULL, 10);
		s->have_tid = TRUE;
		drop (s);
	} else if (starts (l, "# time ")) {
		g_free (s->time_text);
		s->time_text = g_strndup (p, len);
		drop (s);
	} else if (starts (l, "# stack ")) {
		int64_t id = g_ascii_strtoll (p + 8, NULL, 10);
		gpointer v = g_hash_table_lookup (s->stacks, &id);
		if (v != NULL && GPOINTER_TO_INT (v) == 1) {
			g_hash_table_replace (s->stacks, g_memdup2 (&id, sizeof id), GINT_TO_POINTER (2));
			put_text (s, p, len);
		} else
			drop (s);
	} else if (starts (l, "# part ") || (starts (l, "# mtrec ") && l->lineno > 1)) {
		drop (s);
	} else if (starts (l, "# pid ") || starts (l, "# exe ") || starts (l, "# cmdline ") ||
		   starts (l, "# start ") || starts (l, "# depth ")) {
		/* the header again, at the top of every part */
		GBytes *b = g_bytes_new (p, len);
		if (g_hash_table_add (s->header_seen, b))
			put_text (s, p, len);
		else
			drop (s);
	} else {
		/* filler lines are '#' and spaces */
		size_t i = 1;
		while (i < len && (p[i] == ' ' || p[i] == '\r'))
			i++;
		if (i == len)
			drop (s);
		else
			put_text (s, p, len);
	}
}

static gboolean
pass2_line (const MtaLine *l, gpointer data, GError **error)
{
	Shrink *s = data;
	MtaScriptEvent ev;
	MtaLiveEntry *e;
	gboolean keep = FALSE;

	(void) error;
	if (G_UNLIKELY (l->kind == MTA_LINE_TRACKED)) {
		s->events_in++;
		if (mta_kind_shrink_keep (s->kinds, l))
			put_event (s, l);
		else
			drop (s);
		return TRUE;
	}
	mta_script_event (l, &ev);
	switch (ev.op) {
	case '+':
	case '>':
		s->events_in++;
		if (mta_script_hash_lookup (&s->allocated, &ev) != NULL)
			keep = TRUE;         /* a duplicate */
		else if (ev.op == '>' || (ev.key.len >= 2 && ev.key.p[0] == '0' && ev.key.p[1] == 'x')) {
			GArray *k = s->kept_lines;
			while (s->kept_next < k->len && g_array_index (k, uint64_t, s->kept_next) < l->lineno)
				s->kept_next++;
			keep = s->kept_next < k->len && g_array_index (k, uint64_t, s->kept_next) == l->lineno;
			store (s, &ev, l, keep ? KEPT : 0);
		}
		break;
	case '-':
	case '<':
		s->events_in++;
		if ((e = mta_script_hash_lookup (&s->allocated, &ev)) != NULL) {
			keep = (e->flags & KEPT) != 0;
			mta_script_hash_remove (&s->allocated, &ev, e);
		} else
			keep = TRUE;         /* never allocated */
		break;
	default:
		if (l->kind == MTA_LINE_EXT) {
			pass2_ext (s, l);
			return TRUE;
		}
		if (l->kind == MTA_LINE_MARKER) {
			put_text (s, l->text.p, l->text.len);
			return TRUE;
		}
		if (l->kind == MTA_LINE_EVENT)
			s->events_in++;     /* '!' */
		break;
	}
	if (keep)
		put_event (s, l);
	else
		drop (s);
	return TRUE;
}

/* ------------------------------------------------------------ command */

static int
line_cmp (const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
	return x < y ? -1 : x > y;
}

static void
shrink_reset (Shrink *s)
{
	mta_script_hash_release (&s->allocated);
	mta_script_hash_init (&s->allocated);
}

static gboolean
read_all (MtaLineFunc func, Shrink *s, char **traces, int n, GError **error)
{
	MtaReader *reader = mta_reader_new (func, s);
	gboolean ok = TRUE;
	mta_reader_set_progress (reader, opt_quiet);
	for (int i = 0; i < n && ok; i++)
		ok = mta_reader_read_file (reader, traces[i], error);
	ok = ok && mta_reader_check_events (reader, error);
	s->bytes_in = mta_reader_bytes (reader);
	mta_reader_free (reader);
	return ok;
}

/* The descriptor OUT is written to.  A regular OUT is written as OUT.tmp,
 * renamed over OUT at the end (*TMP says so), so that a failed run leaves
 * the old OUT whole.  A new OUT is 0600: a trace tells what a program
 * did, and the recorder writes them 0600; an OUT that exists keeps its
 * mode, as the user set it.  Anything else (a FIFO, a device,
 * /dev/stdout) is written in place: a rename would replace it. */
static int
open_output (const char *path, char **tmp, GError **error)
{
	struct stat st;
	mode_t mode = 0600;
	const char *name = path;
	gboolean exists = stat (path, &st) == 0;
	int fd;

	*tmp = NULL;
	if (exists && !S_ISREG (st.st_mode))
		fd = open (path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	else {
		if (exists)
			mode = st.st_mode & 07777;
		name = *tmp = g_strconcat (path, ".tmp", NULL);
		/* A stale OUT.tmp (a killed run) is not reused: its mode, or
		 * a symbolic link, would be kept by O_CREAT. */
		unlink (*tmp);
		fd = open (*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 && mode != 0600 && fchmod (fd, mode) != 0) {
			close (fd);
			fd = -1;
		}
	}
	if (fd < 0) {
		int e = errno;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
			     "cannot write '%s': %s", name, g_strerror (e));
	}
	return fd;
}

gboolean
mta_shrink (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error)
{
	Shrink s = { 0 };
	gboolean ok = FALSE;
	g_autofree char *tmp = NULL;
	guint oom = 0;             /* removes tmp if memory runs out */

	*status = 0;
	if (argc < 1 || opt_output == NULL) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     argc < 1 ? "shrink needs a trace" : "shrink needs -o OUT");
		return FALSE;
	}
	for (int i = 0; i < argc; i++) {
		if (strcmp (argv[i], "-") == 0) {
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "shrink reads its input twice: give files, not standard input");
			return FALSE;
		}
		if (strcmp (argv[i], opt_output) == 0) {
			g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
				     "'%s' is both a trace and the output", argv[i]);
			return FALSE;
		}
		if (!mta_input_check_readable (argv[i], error))
			return FALSE;
	}
	if (!mta_parts_order (argv, &argc, warn, NULL, error))
		return FALSE;

	mta_script_hash_init (&s.allocated);
	s.kept_lines = g_array_new (FALSE, FALSE, sizeof (uint64_t));
	s.stacks = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
	s.header_seen = g_hash_table_new_full (g_bytes_hash, g_bytes_equal,
					       (GDestroyNotify) g_bytes_unref, NULL);
	s.kinds = mta_kind_shrink_new (s.stacks);

	s.pass = 1;
	if (!read_all (pass1_line, &s, argv, argc, error))
		goto out;
	pass1_finish (&s);
	mta_kind_shrink_pass1_end (s.kinds);
	g_array_sort (s.kept_lines, line_cmp);
	/* every needed stack: 1 until written */
	GHashTableIter it;
	gpointer k;
	g_hash_table_iter_init (&it, s.stacks);
	while (g_hash_table_iter_next (&it, &k, NULL))
		g_hash_table_iter_replace (&it, GINT_TO_POINTER (1));
	shrink_reset (&s);

	s.pass = 2;
	gboolean to_stdout = strcmp (opt_output, "-") == 0;
	if (to_stdout)
		s.out = stdout;
	else {
		int fd = open_output (opt_output, &tmp, error);
		if (tmp != NULL)
			oom = mta_oom_add (mta_oom_unlink, tmp);
		if (fd < 0)
			goto out;
		if ((s.out = fdopen (fd, "we")) == NULL) {
			int e = errno;
			close (fd);
			g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
				     "cannot write '%s': %s", opt_output, g_strerror (e));
			goto out;
		}
		/* OUT.zst, OUT.gz, OUT.xz: compressed as the name says */
		if ((s.out = mta_output_compress (s.out, opt_output, error)) == NULL)
			goto out;
	}
	if (!read_all (pass2_line, &s, argv, argc, error))
		goto out;
	for (; s.pending > 0; s.pending--)
		fputc ('\n', s.out);
	if (!to_stdout) {
		int e = 0;
		/* the last write's errno (ENOSPC) says more than EIO */
		if (fflush (s.out) != 0)
			e = errno;
		else if (ferror (s.out))
			e = EIO;
		if (fclose (s.out) != 0 && e == 0)
			e = errno;
		s.out = NULL;
		if (e == 0 && tmp != NULL && rename (tmp, opt_output) != 0)
			e = errno;
		if (e != 0) {
			g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
				     "cannot write '%s': %s", opt_output, g_strerror (e));
			goto out;
		}
		mta_oom_remove (oom);
		oom = 0;
		g_clear_pointer (&tmp, g_free);
	}
	if (!opt_quiet) {
		uint64_t in = s.bytes_in;	/* compressed input is compared as text */
		FILE *msg = to_stdout ? stderr : stdout;
		fprintf (msg, "%s: %" PRIu64 " of %" PRIu64 " events kept, %" PRIu64 " of %" PRIu64
			 " bytes (%.1fx smaller)\n", opt_output, s.events_out, s.events_in,
			 s.bytes_out, in, s.bytes_out ? (double) in / (double) s.bytes_out : 0.0);
	}
	ok = TRUE;
out:
	if (s.out != NULL && s.out != stdout)
		fclose (s.out);
	if (tmp != NULL)
		unlink (tmp);
	mta_oom_remove (oom);
	mta_script_hash_release (&s.allocated);
	g_array_free (s.kept_lines, TRUE);
	g_hash_table_destroy (s.stacks);
	g_hash_table_destroy (s.header_seen);
	mta_kind_shrink_free (s.kinds);
	g_free (s.time_text);
	g_free (s.out_time_text);
	return ok;
}
