/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-watch.c -- the rule that says a part is complete
 * (compact-watch.h).  A part the recorder still maps may still receive
 * lines from a thread writing into its chunk, even after the next part
 * was opened; once it is unmapped (or the process is gone) nothing can
 * write it.  The mapping is matched by device and inode, not by name: the
 * name in /proc/PID/maps is the path the recorder opened, which need not
 * be the one we were given.
 */
#include "compact-watch.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

char *
mta_compact_part_path (const char *trace, uint64_t n)
{
	return n == 1 ? g_strdup (trace) : g_strdup_printf ("%s.part%" PRIu64, trace, n);
}

/* The boot time, in seconds of CLOCK_REALTIME ("btime" of /proc/stat);
 * 0: not known. */
static double
boot_time (void)
{
	g_autofree char *text = NULL;
	const char *b;

	if (!g_file_get_contents ("/proc/stat", &text, NULL, NULL) ||
	    (b = strstr (text, "\nbtime ")) == NULL)
		return 0;
	return g_ascii_strtod (b + 7, NULL);
}

/* Whether the process whose /proc/PID/stat is STAT (from the ')' that
 * ends its name) started after the trace was opened at START.  The
 * recorder opens the trace after its process starts, so a process that
 * started later is another one.  The boot time is whole seconds and can
 * drift with the clock: only a start well after the trace's counts. */
static gboolean
started_after (const char *stat, const char *start)
{
	double opened, boot = boot_time ();
	long tick = sysconf (_SC_CLK_TCK);
	const char *p = stat + 1;

	if (start == NULL || boot <= 0 || tick <= 0)
		return FALSE;
	opened = g_ascii_strtod (start, NULL);
	if (opened <= 0)
		return FALSE;
	/* starttime is field 22: the 20th after the name's ')' */
	for (int field = 3; field < 22 && p != NULL; field++)
		p = strchr (p + 1, ' ');
	if (p == NULL)
		return FALSE;
	return boot + (double) g_ascii_strtoull (p + 1, NULL, 10) / (double) tick > opened + 5;
}

gboolean
mta_compact_process_exited (int64_t pid, const char *start)
{
	if (pid <= 0)
		return TRUE;       /* no writer known: nothing is being written */
	if (kill ((pid_t) pid, 0) != 0 && errno == ESRCH)
		return TRUE;
	g_autofree char *path = g_strdup_printf ("/proc/%" PRId64 "/stat", pid);
	g_autofree char *text = NULL;
	if (!g_file_get_contents (path, &text, NULL, NULL))
		return FALSE;
	const char *p = strrchr (text, ')');
	if (p == NULL || p[1] != ' ')
		return FALSE;
	/* a zombie has exited; its parent has not reaped it yet */
	return p[2] == 'Z' || p[2] == 'X' || started_after (p, start);
}

/* Whether process PID maps the file ST; TRUE when its maps cannot be
 * read (we cannot tell: the part is not taken). */
static gboolean
is_mapped (int64_t pid, const struct stat *st)
{
	g_autofree char *path = g_strdup_printf ("/proc/%" PRId64 "/maps", pid);
	FILE *f = fopen (path, "re");
	char line[4096];
	gboolean found = FALSE;

	if (f == NULL)
		return TRUE;
	while (!found && fgets (line, sizeof line, f) != NULL) {
		unsigned maj, min;
		unsigned long long ino;
		/* START-END PERMS OFFSET MAJ:MIN INODE PATH */
		if (sscanf (line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 && ino != 0 &&
		    (ino_t) ino == st->st_ino && makedev (maj, min) == st->st_dev)
			found = TRUE;
	}
	fclose (f);
	return found;
}

uint64_t
mta_compact_complete_upto (const char *trace, uint64_t first, int64_t pid, gboolean exited)
{
	uint64_t n = first;

	for (;; n++) {
		g_autofree char *path = mta_compact_part_path (trace, n);
		g_autofree char *next = mta_compact_part_path (trace, n + 1);
		struct stat st;
		if (stat (path, &st) != 0)
			break;
		if (exited)
			continue;
		if (access (next, F_OK) != 0 || is_mapped (pid, &st))
			break;
	}
	return n - 1;
}
