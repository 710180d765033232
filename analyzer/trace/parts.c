/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* parts.c -- the TRACE arguments of a run: checked to be traces, and the
 * parts of a rotated trace put in the order of their headers.
 *
 * Every file is probed first (mta_reader_probe): one whose first bytes say
 * it is something else (an ELF file, bzip2 data...) is an error, and so is
 * a run in which no file has a trace line (empty, NUL bytes, junk), before
 * anything is printed or stored.  A file without a trace line among parts
 * that have some (a part cut to nothing by a crash) is named in a warning
 * and read as the empty part it is.  Pipes cannot be read twice: the
 * reader checks them as it goes (trace-reader.h).
 *
 * Only the head of each file is read: part N >= 2 starts with "# mtrec 1",
 * "# part N" and the process header ("# pid", "# start") in its first 64
 * KiB; part 1 starts with "# mtrec 1" and has no "# part" line.  Files are
 * put in order only when every one is an mtrec trace of the same process
 * (same pid and start time): anything else is read as given, as before.
 */
#include "parts.h"
#include "trace-header.h"
#include "trace-input.h"
#include "trace-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The recorder's header zone of a part. */
#define HEAD_BYTES (64u << 10)

typedef struct {
	char *path;
	gboolean mtrec;            /* starts with "# mtrec " */
	uint64_t part;             /* 1 when there is no "# part" line */
	uint64_t last;             /* the last part it holds: PART, or a compacted file's LAST */
	gboolean compacted;        /* "# compacted FIRST LAST" (compact.c) */
	char *pid, *start;         /* "# pid" and "# start" values, NULL: none */
	int given;                 /* position on the command line */
	gboolean probed;           /* a regular file, probed */
	char *untraced;            /* no trace line in it: what it holds */
} PartHead;

/* Up to HEAD_BYTES of the content of PATH (decompressed), into BUF.
 * Compressed data that breaks off ends the head: the analysis that reads
 * the whole part says where, with the line reached. */
static gboolean
read_head_bytes (const char *path, char *buf, size_t *len, GError **error)
{
	g_autoptr (MtaInput) in = mta_input_open (path, error);
	gssize n;

	*len = 0;
	if (in == NULL)
		return FALSE;
	while (*len < HEAD_BYTES && (n = mta_input_read (in, buf + *len, HEAD_BYTES - *len, NULL)) > 0)
		*len += (size_t) n;
	return TRUE;
}

/* Read the header lines of PATH (up to its first event). */
static gboolean
read_head (PartHead *h, GError **error)
{
	char *buf = g_malloc (HEAD_BYTES);
	size_t len = 0;

	if (!read_head_bytes (h->path, buf, &len, error)) {
		g_free (buf);
		return FALSE;
	}
	h->part = 1;
	const char *p = buf, *end = buf + len;
	for (int lineno = 1; p < end; lineno++) {
		const char *nl = memchr (p, '\n', (size_t) (end - p));
		if (nl == NULL)
			break;
		size_t l = (size_t) (nl - p);
		MtaHeader hd;
		gboolean known = mta_header_parse (p, l, &hd);
		if (lineno == 1 && known && hd.kind == MTA_HEADER_MTREC)
			h->mtrec = TRUE;
		else if (!h->mtrec || (l > 0 && p[0] != '#' && p[0] != ' ' && p[0] != '\0'))
			break;
		else if (!known)
			;
		else if (hd.kind == MTA_HEADER_PART)
			h->part = hd.n;
		else if (hd.kind == MTA_HEADER_COMPACTED) {
			h->part = hd.n;
			h->last = hd.last;
			h->compacted = TRUE;
		} else if (hd.kind == MTA_HEADER_PID && h->pid == NULL)
			h->pid = mta_header_dup (hd.rest);
		else if (hd.kind == MTA_HEADER_START && h->start == NULL)
			h->start = mta_header_dup (hd.rest);
		p = nl + 1;
	}
	h->last = MAX (h->last, h->part);
	g_free (buf);
	return TRUE;
}

/* Probe a file and read its header.  Only a regular file can be a part,
 * and only it can be read twice: a pipe or FIFO is a trace read once, by
 * the analysis, and is left in its place (h->part stays 0: "not a part";
 * even opening a FIFO would let its writer go on and lose what it
 * writes). */
static gboolean
look_at (PartHead *h, GError **error)
{
	struct stat st;

	if (stat (h->path, &st) < 0) {
		int e = errno;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
			     "cannot read '%s': %s", h->path, g_strerror (e));
		return FALSE;
	}
	if (!S_ISREG (st.st_mode))
		return TRUE;
	h->probed = TRUE;
	return mta_reader_probe (h->path, &h->untraced, error) && read_head (h, error);
}

/* The per-run rule: a run with no trace line in any file is unusable;
 * otherwise a file without one is named in a warning. */
static gboolean
check_usable (const PartHead *h, int n, MtaWarnFunc warn, gpointer data, GError **error)
{
	int untraced = 0;

	for (int i = 0; i < n; i++)
		if (h[i].probed && h[i].untraced != NULL)
			untraced++;
		else if (!h[i].probed)
			return TRUE;    /* a pipe: the reader decides */
	if (untraced == n) {
		g_autoptr (GString) m = g_string_new (NULL);
		for (int i = 0; i < n; i++)
			g_string_append_printf (m, "%s%s: %s", i ? "; " : "", h[i].path, h[i].untraced);
		g_set_error_literal (error, G_FILE_ERROR, G_FILE_ERROR_INVAL, m->str);
		return FALSE;
	}
	for (int i = 0; i < n && warn != NULL; i++)
		if (h[i].untraced != NULL) {
			g_autofree char *m = g_strdup_printf ("%s: %s: no trace line in this part of the run",
							      h[i].path, h[i].untraced);
			warn (m, data);
		}
	return TRUE;
}

/* The last part given continues in a file not given: say so.  Parts
 * compressed after the run keep their compressor's suffix
 * (t.log.part2.zst), and so does the next one looked for. */
static void
warn_continuation (const PartHead *h, int n, MtaWarnFunc warn, gpointer data)
{
	static const char *const zext[] = { ".gz", ".zst", ".xz" };
	const PartHead *last = &h[n - 1];
	const char *ext = "";
	g_autofree char *base = NULL;

	for (size_t i = 0; i < G_N_ELEMENTS (zext); i++)
		if (g_str_has_suffix (last->path, zext[i]))
			ext = zext[i];
	g_autofree char *name = g_strndup (last->path, strlen (last->path) - strlen (ext));
	if (last->compacted) {
		if (g_str_has_suffix (name, ".compact"))
			base = g_strndup (name, strlen (name) - strlen (".compact"));
	} else if (last->part == 1)
		base = g_strdup (name);
	else {
		g_autofree char *suffix = g_strdup_printf (".part%" PRIu64, last->part);
		if (g_str_has_suffix (name, suffix))
			base = g_strndup (name, strlen (name) - strlen (suffix));
	}
	if (base == NULL)
		return;
	g_autofree char *next = g_strdup_printf ("%s.part%" PRIu64 "%s", base, last->last + 1, ext);
	for (int i = 0; i < n; i++)
		if (strcmp (h[i].path, next) == 0)
			return;
	if (access (next, F_OK) == 0) {
		g_autofree char *m = g_strdup_printf ("the run continues in '%s', not given: "
						      "name every part ('%s'*)", next, base);
		warn (m, data);
	}
}

/* "12345" of a "# pid 12345 12000" value. */
static char *
pid_of (const PartHead *h)
{
	return g_strndup (h->pid, strcspn (h->pid, " "));
}

/* A run is one process: two mtrec traces whose headers name different
 * processes (or programs one process exec'd: same pid, another start)
 * cannot be added up into one without nonsense -- the blocks of one are
 * "never allocated" frees in the other, and their leaks are summed. */
static gboolean
check_one_process (const PartHead *h, int n, GError **error)
{
	const PartHead *first = NULL;

	for (int i = 0; i < n; i++) {
		if (!h[i].mtrec || h[i].pid == NULL || h[i].start == NULL)
			continue;
		if (first == NULL) {
			first = &h[i];
			continue;
		}
		if (strcmp (h[i].pid, first->pid) == 0 && strcmp (h[i].start, first->start) == 0)
			continue;
		g_autofree char *a = pid_of (first), *b = pid_of (&h[i]);
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			     "'%s' (pid %s) and '%s' (pid %s%s) are traces of different processes: "
			     "a run is one process (the parts of one rotated trace); analyze each "
			     "trace alone, or all with 'mtanalyze session'", first->path, a, h[i].path, b,
			     strcmp (a, b) == 0 ? ", another program after an exec" : "");
		return FALSE;
	}
	return TRUE;
}

gboolean
mta_parts_process (const char *path, char **pid, char **start, GError **error)
{
	PartHead h = { .path = (char *) path };

	*pid = *start = NULL;
	if (!read_head (&h, error))
		return FALSE;
	if (h.mtrec) {
		*pid = g_steal_pointer (&h.pid);
		*start = g_steal_pointer (&h.start);
	}
	g_free (h.pid);
	g_free (h.start);
	return TRUE;
}

static int
part_cmp (const void *a, const void *b)
{
	const PartHead *x = a, *y = b;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->compacted != y->compacted)
		return x->compacted ? -1 : 1;
	return x->given - y->given;
}

/* A compacted file (compact.c) stands for the parts it folded: those
 * still present (not deleted yet, or named by 'TRACE*') are left out of
 * the run (into DROPPED).  Two compacted files of one run cannot both be
 * read. */
static gboolean
drop_compacted_parts (PartHead *h, int *n, GPtrArray *dropped, GError **error)
{
	uint64_t covered = 0;
	const PartHead *by = NULL;
	int k = 0;

	for (int i = 0; i < *n; i++) {
		if (h[i].compacted && by != NULL) {
			g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
				     "'%s' and '%s' are both compacted traces of the run: give one",
				     by->path, h[i].path);
			return FALSE;
		}
		if (h[i].compacted) {
			by = &h[i];
			covered = h[i].last;
		} else if (by != NULL && h[i].part <= covered) {
			g_ptr_array_add (dropped, h[i].path);
			g_free (h[i].pid);
			g_free (h[i].start);
			g_free (h[i].untraced);
			continue;
		}
		h[k++] = h[i];
		if (by == &h[i])
			by = &h[k - 1];
	}
	*n = k;
	return TRUE;
}

static gboolean
order_parts (char **traces, int *count, gboolean prefix, MtaWarnFunc warn, gpointer data,
	     GError **error)
{
	int n = *count;
	PartHead *h = g_new0 (PartHead, n > 0 ? n : 1);
	g_autoptr (GPtrArray) dropped = g_ptr_array_new ();
	gboolean ok = TRUE, one_run = n > 0;

	for (int i = 0; i < n && ok; i++) {
		h[i].path = traces[i];
		h[i].given = i;
		if (strcmp (traces[i], "-") == 0) {
			one_run = FALSE;
			continue;
		}
		ok = look_at (&h[i], error);
		if (ok && (!h[i].mtrec || g_strcmp0 (h[i].pid, h[0].pid) != 0 ||
			   g_strcmp0 (h[i].start, h[0].start) != 0))
			one_run = FALSE;
	}
	if (ok && n > 0)
		ok = check_usable (h, n, warn, data, error);
	if (ok)
		ok = check_one_process (h, n, error);
	if (ok && one_run) {
		qsort (h, (size_t) n, sizeof *h, part_cmp);
		ok = drop_compacted_parts (h, &n, dropped, error);
		for (int i = 0; i < n && ok; i++) {
			uint64_t expect = i == 0 ? 1 : h[i - 1].last + 1;
			if (i > 0 && h[i].part == h[i - 1].part) {
				g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
					     "'%s' and '%s' are both part %" PRIu64 " of the run: "
					     "give each part once", h[i - 1].path, h[i].path, h[i].part);
				ok = FALSE;
			} else if (h[i].part != expect && warn != NULL) {
				g_autofree char *m = NULL;
				if (h[i].part == expect + 1)
					m = g_strdup_printf ("part %" PRIu64 " of the run is missing (before "
							     "'%s'): its blocks are not counted, so their frees "
							     "show as never allocated", expect, h[i].path);
				else
					m = g_strdup_printf ("parts %" PRIu64 " to %" PRIu64 " of the run are "
							     "missing (before '%s'): their blocks are not "
							     "counted, so their frees show as never allocated",
							     expect, h[i].part - 1, h[i].path);
				warn (m, data);
			}
		}
		if (ok && warn != NULL && !prefix)
			warn_continuation (h, n, warn, data);
		for (int i = 0; i < n; i++)
			traces[i] = h[i].path;
		/* the parts left out after those kept: TRACES stays a permutation */
		for (guint i = 0; i < dropped->len; i++)
			traces[n + (int) i] = dropped->pdata[i];
		if (ok)
			*count = n;
	}
	for (int i = 0; i < n; i++) {
		g_free (h[i].pid);
		g_free (h[i].start);
		g_free (h[i].untraced);
	}
	g_free (h);
	return ok;
}

gboolean
mta_parts_order (char **traces, int *count, MtaWarnFunc warn, gpointer data, GError **error)
{
	return order_parts (traces, count, FALSE, warn, data, error);
}

gboolean
mta_parts_order_prefix (char **traces, int *count, MtaWarnFunc warn, gpointer data,
			GError **error)
{
	return order_parts (traces, count, TRUE, warn, data, error);
}
