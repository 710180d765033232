/* parts.c -- the parts of a rotated trace, in the order of their headers.
 *
 * Only the head of each file is read: part N >= 2 starts with "# mtrec 1",
 * "# part N" and the process header ("# pid", "# start") in its first 64
 * KiB; part 1 starts with "# mtrec 1" and has no "# part" line.  Files are
 * put in order only when every one is an mtrec trace of the same process
 * (same pid and start time): anything else is read as given, as before.
 */
#include "parts.h"
#include "symbolize.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The recorder's header zone of a part. */
#define HEAD_BYTES (64u << 10)

typedef struct {
	char *path;
	gboolean mtrec;            /* starts with "# mtrec " */
	uint64_t part;             /* 1 when there is no "# part" line */
	char *pid, *start;         /* "# pid" and "# start" values, NULL: none */
	int given;                 /* position on the command line */
} PartHead;

static char *
line_value (const char *p, const char *end, size_t skip)
{
	while (end > p + skip && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	return g_strndup (p + skip, (gsize) (end - p - skip));
}

/* Read the header lines of PATH (up to its first event). */
static gboolean
read_head (PartHead *h, GError **error)
{
	/* Only a regular file can be a part, and only its header is read
	 * here: a pipe or FIFO is a trace read once, by the analysis, and is
	 * left in its place (h->part stays 0: "not a part"). */
	int fd = mta_open_regular (h->path);
	if (fd < 0) {
		int e = errno;
		if (e == EINVAL)
			return TRUE;
		g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e),
			     "cannot read '%s': %s", h->path, g_strerror (e));
		return FALSE;
	}
	char *buf = g_malloc (HEAD_BYTES);
	size_t len = 0;
	ssize_t n;
	while (len < HEAD_BYTES && (n = read (fd, buf + len, HEAD_BYTES - len)) > 0)
		len += (size_t) n;
	close (fd);

	h->part = 1;
	const char *p = buf, *end = buf + len;
	for (int lineno = 1; p < end; lineno++) {
		const char *nl = memchr (p, '\n', (size_t) (end - p));
		if (nl == NULL)
			break;
		size_t l = (size_t) (nl - p);
		if (lineno == 1 && l >= 8 && memcmp (p, "# mtrec ", 8) == 0)
			h->mtrec = TRUE;
		else if (!h->mtrec || (l > 0 && p[0] != '#' && p[0] != ' ' && p[0] != '\0'))
			break;
		else if (l > 7 && memcmp (p, "# part ", 7) == 0)
			h->part = g_ascii_strtoull (p + 7, NULL, 10);
		else if (l > 6 && memcmp (p, "# pid ", 6) == 0 && h->pid == NULL)
			h->pid = line_value (p, nl, 6);
		else if (l > 8 && memcmp (p, "# start ", 8) == 0 && h->start == NULL)
			h->start = line_value (p, nl, 8);
		p = nl + 1;
	}
	g_free (buf);
	return TRUE;
}

static int
part_cmp (const void *a, const void *b)
{
	const PartHead *x = a, *y = b;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return x->given - y->given;
}

gboolean
mta_parts_order (char **traces, int n, MtaPartsWarnFunc warn, gpointer data, GError **error)
{
	PartHead *h = g_new0 (PartHead, n > 0 ? n : 1);
	gboolean ok = TRUE, one_run = n > 0;

	for (int i = 0; i < n && ok; i++) {
		h[i].path = traces[i];
		h[i].given = i;
		if (strcmp (traces[i], "-") == 0) {
			one_run = FALSE;
			continue;
		}
		ok = read_head (&h[i], error);
		if (ok && (!h[i].mtrec || g_strcmp0 (h[i].pid, h[0].pid) != 0 ||
			   g_strcmp0 (h[i].start, h[0].start) != 0))
			one_run = FALSE;
	}
	if (ok && one_run) {
		qsort (h, (size_t) n, sizeof *h, part_cmp);
		for (int i = 0; i < n && ok; i++) {
			uint64_t expect = i == 0 ? 1 : h[i - 1].part + 1;
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
		/* A part that continues in a file not given. */
		if (ok && warn != NULL) {
			const PartHead *last = &h[n - 1];
			g_autofree char *base = NULL;
			if (last->part == 1)
				base = g_strdup (last->path);
			else {
				g_autofree char *suffix = g_strdup_printf (".part%" PRIu64, last->part);
				if (g_str_has_suffix (last->path, suffix))
					base = g_strndup (last->path, strlen (last->path) - strlen (suffix));
			}
			g_autofree char *next = base ? g_strdup_printf ("%s.part%" PRIu64, base,
								      last->part + 1) : NULL;
			gboolean given = FALSE;
			for (int i = 0; next != NULL && i < n; i++)
				given = given || strcmp (h[i].path, next) == 0;
			if (next != NULL && !given && access (next, F_OK) == 0) {
				g_autofree char *m = g_strdup_printf ("the run continues in '%s', not given: "
								      "name every part ('%s'*)", next, base);
				warn (m, data);
			}
		}
		for (int i = 0; i < n; i++)
			traces[i] = h[i].path;
	}
	for (int i = 0; i < n; i++) {
		g_free (h[i].pid);
		g_free (h[i].start);
	}
	g_free (h);
	return ok;
}
