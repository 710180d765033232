/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* oom.c -- the end of a run that ran out of memory (issue 18 point 10).
 *
 * A g_malloc that fails calls g_error (), which reaches us either through
 * the log handler of the "GLib" domain (g_log; with the recursion flag
 * when formatting the message itself failed) or through the structured
 * log writer: both are taken.  From there nothing may allocate much: a
 * reserve made at start is given back first, so that SQLite can roll a
 * load back; the message is formatted on the stack and written with
 * write(2), and the process leaves with _exit(2) (stdio buffers are not
 * flushed: half a report is never printed from them).
 */
#include "oom.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_CLEANUPS 8
#define RESERVE (1u << 20)
#define EXIT_TROUBLE 2

static struct {
	MtaOomCleanup func;
	gpointer data;
} cleanups[MAX_CLEANUPS];
static void *reserve;
static off_t stdout_start = -1;   /* size of a regular stdout at start */
static volatile sig_atomic_t dying;

guint
mta_oom_add (MtaOomCleanup func, gpointer data)
{
	for (guint i = 0; i < MAX_CLEANUPS; i++)
		if (cleanups[i].func == NULL) {
			cleanups[i].data = data;
			cleanups[i].func = func;
			return i + 1;
		}
	return 0;
}

void
mta_oom_remove (guint handle)
{
	if (handle > 0 && handle <= MAX_CLEANUPS) {
		cleanups[handle - 1].func = NULL;
		cleanups[handle - 1].data = NULL;
	}
}

void
mta_oom_unlink (gpointer path)
{
	(void) unlink (path);
}

/* "mtanalyze: out of memory (failed to allocate N bytes)", from GLib's
 * "gmem.c:NNN: failed to allocate N bytes"; any other fatal error as it
 * is. */
static void
say (const char *message)
{
	char buf[512];
	const char *what = message ? strstr (message, "failed to allocate") : NULL;
	int n;

	if (what != NULL)
		n = g_snprintf (buf, sizeof buf, "mtanalyze: out of memory (%s)\n", what);
	else if (message != NULL && strstr (message, "memory") != NULL)
		n = g_snprintf (buf, sizeof buf, "mtanalyze: out of memory (%s)\n", message);
	else
		n = g_snprintf (buf, sizeof buf, "mtanalyze: fatal error: %s\n", message ? message : "?");
	if (n > (int) sizeof buf - 1) {
		n = (int) sizeof buf - 1;
		buf[n - 1] = '\n';
	}
	(void) !write (2, buf, (size_t) n);
}

G_NORETURN static void
die (const char *message)
{
	struct stat st;

	if (dying)
		_exit (EXIT_TROUBLE);
	dying = 1;
	free (reserve);
	reserve = NULL;
	for (guint i = MAX_CLEANUPS; i-- > 0;)
		if (cleanups[i].func != NULL)
			cleanups[i].func (cleanups[i].data);
	if (stdout_start >= 0 && fstat (1, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > stdout_start)
		(void) !ftruncate (1, stdout_start);
	say (message);
	_exit (EXIT_TROUBLE);
}

static void
log_handler (const char *domain, GLogLevelFlags level, const char *message, gpointer data)
{
	(void) domain;
	(void) data;
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL))
		die (message);
	g_log_default_handler (domain, level, message, NULL);
}

static GLogWriterOutput
log_writer (GLogLevelFlags level, const GLogField *fields, gsize n_fields, gpointer data)
{
	if (level & (G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL)) {
		const char *message = NULL;
		for (gsize i = 0; i < n_fields; i++)
			if (strcmp (fields[i].key, "MESSAGE") == 0 && fields[i].length < 0)
				message = fields[i].value;
		die (message);
	}
	return g_log_writer_default (level, fields, n_fields, data);
}

void
mta_oom_init (void)
{
	struct stat st;
	const GLogLevelFlags fatal = G_LOG_LEVEL_ERROR | G_LOG_FLAG_FATAL | G_LOG_FLAG_RECURSION;

	reserve = malloc (RESERVE);
	/* Output redirected into a file (not appended to: others may write
	 * there too) is cut back to its start. */
	if (fstat (1, &st) == 0 && S_ISREG (st.st_mode) && !(fcntl (1, F_GETFL) & O_APPEND))
		stdout_start = st.st_size;
	g_log_set_handler ("GLib", fatal, log_handler, NULL);
	g_log_set_handler (NULL, fatal, log_handler, NULL);
	g_log_set_writer_func (log_writer, NULL, NULL);
}
