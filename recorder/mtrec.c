/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrec.c -- the launcher: run a program with the recorder preloaded, in
 * the manner of "heaptrack prog".
 *
 * It checks what it is given before the program runs: a bad option value,
 * a trace that cannot be written, a library the dynamic linker cannot
 * preload are its own trouble (exit 125, as env(1) and timeout(1) do).  It
 * sets LD_PRELOAD, MALLOC_TRACE and the recorder's variables, runs the
 * program, passes its exit status through, and then names the files the
 * run wrote -- every part, and those of the processes the program started
 * -- or says that nothing was recorded, and why.  It never says a trace
 * was written without having found the file. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mtrec-compact.h"
#include "mtrec-attach.h"
#include "mtrec-ctl.h"
#include "owner.h"
#include "words.h"

#define EXIT_LAUNCHER 125	/* mtrec's own trouble */
#define EXIT_CANNOT_RUN 126	/* the program exists but cannot be run */
#define EXIT_NOT_FOUND 127	/* no such program */

static const char *progname = "mtrec";
static volatile pid_t child;

/* --compact: the compactor started beside the program (mtrec-compact.c) */
static int opt_compact;
static char compact_analyzer[PATH_MAX], compact_log[PATH_MAX], compact_trace[PATH_MAX];
static char compact_pattern[PATH_MAX];
static pid_t compactor = -1;
static int compactor_status = -1;
static int compacted;		/* the compactor finished: the parts are in FILE.compact */

/* Signals meant to stop or steer the program reach it through us. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: %s [OPTION]... [--] PROGRAM [ARG]...\n"
		"  or:  %s ctl [--timeout=SECONDS] PID on|off|status|reach|mark LABEL\n"
		"  or:  %s attach [-o FILE] [--depth N] [--track SPEC] [--reach] PID\n"
		"  or:  %s detach PID\n"
		"Run PROGRAM with the mtrec malloc trace recorder preloaded and write a\n"
		"glibc MALLOC_TRACE-format trace of its allocations and frees.\n"
		"\n"
		"  -o, --output=FILE   write the trace to FILE ('%%p' is the process id)\n"
		"                      [mtrec.PROGRAM.PID.log]\n"
		"  -s, --scoped        record nothing until the program calls trace_on()\n"
		"                      or mtrace()\n"
		"  -d, --depth=N       record call stacks of up to N frames (1-64) [1]\n"
		"  -r, --rotate=SIZE   continue the trace in parts of SIZE bytes (256M, 1G),\n"
		"                      rounded up to a multiple of 4 MiB:\n"
		"                      FILE, FILE.part2, FILE.part3, ...\n"
		"      --compact       with --rotate: fold each completed part into\n"
		"                      FILE.compact while the program runs, and delete it\n"
		"                      ('mtanalyze compact --follow --delete'), so that\n"
		"                      the disk used follows the live blocks; analyze\n"
		"                      FILE.compact with the parts left ('FILE*')\n"
		"      --signal[=SIG]  start and stop recording each time the program gets\n"
		"                      SIG [SIGUSR2]; with --scoped it starts unrecorded.\n"
		"                      A program that blocks SIG in all its threads (to\n"
		"                      sigwait() it) or handles it never lets it reach the\n"
		"                      recorder: use '%s ctl' there\n"
		"      --no-freeres    do not let libc free its caches at exit\n"
		"      --reach         at exit, scan memory as valgrind's leak check does\n"
		"                      and write which live blocks are still reachable,\n"
		"                      possibly, indirectly or definitely lost (MTREC_REACH)\n"
		"      --track=SPEC    also record the calls of the functions SPEC names:\n"
		"                      FUNC:alloc|free|ref|unref[:ARG[:FAMILY]],... or a\n"
		"                      profile, @glusterfs, @dpdk or @glib; repeatable\n"
		"                      (MTREC_TRACK; see share/track.md)\n"
		"  -q, --quiet         no messages from mtrec and the recorder about the\n"
		"                      trace (the program's own output is untouched;\n"
		"                      errors, such as a malformed --track, are still said)\n"
		"  -h, --help          print this help and exit\n"
		"  -V, --version       print the version and exit\n"
		"\n"
		"After the run mtrec names every file it wrote: FILE and its parts, and\n"
		"FILE.PID for each other process of the program (forked or exec'd), or\n"
		"says why nothing was recorded (a static or set-user-ID program, ...).\n"
		"\n"
		"Exit status:\n"
		"  125  mtrec itself failed (bad option, trace not writable, ...);\n"
		"       the program was not run\n"
		"  126  PROGRAM was found but could not be run\n"
		"  127  PROGRAM was not found\n"
		"  128+N  PROGRAM was killed by signal N\n"
		"  otherwise the exit status of PROGRAM\n"
		"\n"
		"'%s ctl PID on|off|mark LABEL' starts, stops or marks the recording of a\n"
		"running process, without a signal; 'ctl PID reach' scans its memory now\n"
		"(started with --reach); see '%s ctl --help'.  '%s attach PID' starts\n"
		"recording in a process started without the recorder, '%s detach PID'\n"
		"stops it; see '%s attach --help'.\n"
		"\n"
		"Analyze the trace with: mtanalyze PROGRAM TRACE\n",
		progname, progname, progname, progname, progname, progname, progname, progname,
		progname, progname);
}

static int try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	return EXIT_LAUNCHER;
}

/* Levenshtein distance, for "did you mean"; option and command names only. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64];

	if (lb >= sizeof(row) / sizeof(row[0]) || la >= 64)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;

			row[j] = best < diag + (a[i - 1] != b[j - 1]) ? best : diag + (a[i - 1] != b[j - 1]);
			diag = up;
		}
	}
	return row[lb];
}

/* The name among NAMES nearest to WORD when it is near enough to be a
 * typo of it (at most a third of its letters off, at least one); or NULL. */
const char *mtrec_nearest(const char *word, const char *const *names)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (; *names; names++) {
		size_t d = distance(word, *names);

		if (d < best_d)
			best_d = d, best = *names;
	}
	return best && best_d > 0 && best_d <= (strlen(best) + 2) / 3 ? best : NULL;
}

/* One line naming the option and what it takes, as GNU tools do. */
static int bad_value(const char *option, const char *value, const char *expected)
{
	fprintf(stderr, "%s: invalid %s '%s': %s\n", progname, option, value, expected);
	return try_help();
}

/* ---- option values: checked here, before the program runs --------------
 * The recorder reads the same values from the environment and, given a bad
 * one, says so and goes on without the setting; the launcher refuses them
 * instead, so that a long run is not wasted.  The grammars are the
 * recorder's (file.c, rec-core.c): a value one accepts, both accept. */

static int valid_depth(const char *v)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	return !errno && *v && !*end && n >= 1 && n <= 64;
}

/* The step a trace file grows by (file.c GROW_STEP): a part's size is
 * rounded up to it. */
#define ROTATE_STEP (4ULL << 20)

/* MTREC_ROTATE (file.c rotate_size): digits, then K, M or G, not 0.
 * At most a pebibyte: the recorder rounds the size up, and must not wrap. */
static unsigned long long size_value(const char *v)
{
	unsigned long long n = strtoull(v, NULL, 10);

	switch (v[strspn(v, "0123456789")]) {
	case 'k': case 'K': return n << 10;
	case 'm': case 'M': return n << 20;
	case 'g': case 'G': return n << 30;
	}
	return n;
}

static int valid_size(const char *v)
{
	unsigned long long n = 0;
	const char *p;
	int shift = 0;

	for (p = v; *p >= '0' && *p <= '9'; p++) {
		if (n > (1ULL << 50))
			return 0;
		n = n * 10 + (unsigned)(*p - '0');
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	}
	return p > v && !*p && n > 0 && n <= (1ULL << 50) >> shift;
}

/* MTREC_SIGNAL (rec-core.c parse_signal): SIGUSR2, USR2, SIGRTMIN+N or a
 * number; but not SIGKILL nor SIGSTOP, which no handler can catch. */
static int valid_signal(const char *name)
{
	static const char *const known[] = { "USR1", "USR2", "HUP", "WINCH", "URG", "PWR" };
	char *end;
	long n;

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(name, known[i]) == 0)
			return 1;
	if (strncmp(name, "RTMIN", 5) == 0) {
		if (!name[5])
			return 1;
		n = strtol(name + 5, &end, 10);
		return !*end && n >= 0 && SIGRTMIN + n <= SIGRTMAX;
	}
	n = strtol(name, &end, 10);
	return *name && !*end && n > 0 && n < NSIG && n != SIGKILL && n != SIGSTOP;
}

/* name=old<sep>value, or name=value when name is unset; 0 or -1. */
static int append_env(const char *name, const char *value, const char *sep)
{
	const char *old = getenv(name);
	char *both;
	int ret;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&both, "%s%s%s", old, sep, value) < 0)
		return -1;
	ret = setenv(name, both, 1);
	free(both);
	return ret;
}

/* An option getopt did not take: unknown (with the nearest known one, as
 * mtanalyze says it), ambiguous, or missing its value. */
void mtrec_bad_option(const char *cmd, const char *valued, const char *word,
		      const struct option *opts)
{
	const char *names[32], *near;
	size_t n = 0;
	const char *eq;
	char name[64], who[64];

	snprintf(who, sizeof(who), "%s%s%s", progname, cmd ? " " : "", cmd ? cmd : "");
	if (optopt && strncmp(word, "--", 2) != 0) {
		if (strchr(valued, optopt))
			fprintf(stderr, "%s: option '-%c' requires a value\n", who, optopt);
		else
			fprintf(stderr, "%s: unknown option '-%c'\n", who, optopt);
		return;
	}
	snprintf(name, sizeof(name), "%s", word + 2);
	if ((eq = strchr(name, '=')) != NULL)
		name[eq - name] = '\0';
	for (const struct option *o = opts; o->name; o++)
		if (*name && strncmp(o->name, name, strlen(name)) == 0 && strcmp(o->name, name) != 0)
			n++;
	if (n > 1) {
		fprintf(stderr, "%s: option '--%s' is ambiguous; possibilities:", who, name);
		for (const struct option *o = opts; o->name; o++)
			if (strncmp(o->name, name, strlen(name)) == 0)
				fprintf(stderr, " '--%s'", o->name);
		fputc('\n', stderr);
		return;
	}
	n = 0;
	for (; opts->name && n + 1 < sizeof(names) / sizeof(names[0]); opts++) {
		if (strcmp(opts->name, name) == 0) {
			fprintf(stderr, "%s: option '--%s' %s\n", who, name,
				opts->has_arg == no_argument ? "takes no value" : "requires a value");
			return;
		}
		names[n++] = opts->name;
	}
	names[n] = NULL;
	near = mtrec_nearest(name, names);
	if (near)
		fprintf(stderr, "%s: unknown option '%s': did you mean '--%s'?\n", who, word, near);
	else
		fprintf(stderr, "%s: unknown option '%s'\n", who, word);
}

static int bad_option(const char *word, const struct option *opts)
{
	mtrec_bad_option(NULL, "odr", word, opts);
	return try_help();
}

/* Options into the environment the program gets; 0, or an exit status
 * (help, version, a bad value).  *quiet is set by -q. */
static int parse_options(int argc, char **argv, const char **output, int *quiet)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "scoped", no_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "no-freeres", no_argument, NULL, 'F' },
		{ "reach", no_argument, NULL, 'R' },
		{ "signal", optional_argument, NULL, 'S' },
		{ "rotate", required_argument, NULL, 'r' },
		{ "compact", no_argument, NULL, 'C' },
		{ "track", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *rotate;
	int c;

	opterr = 0;	/* unknown options are said here, with a suggestion */
	while ((c = getopt_long(argc, argv, "+o:sd:r:qhV", opts, NULL)) != -1) {
		const char *arg = optarg ? optarg : "";

		switch (c) {
		case 'o':
			if (!*arg)
				return bad_value("--output", arg, "an empty file name");
			*output = arg;
			break;
		case 's':
			setenv("MTREC_SCOPED", "1", 1);
			break;
		case 'd':
			if (!valid_depth(arg))
				return bad_value("--depth", arg, "a number from 1 to 64 is expected");
			setenv("MTREC_DEPTH", arg, 1);
			break;
		case 'F':
			setenv("MTREC_FREERES", "0", 1);
			break;
		case 'R':
			setenv("MTREC_REACH", "1", 1);
			break;
		case 'r':
			if (!valid_size(arg))
				return bad_value("--rotate", arg,
						 "a size in bytes, with K, M or G (256M, 1G) is expected");
			setenv("MTREC_ROTATE", arg, 1);
			break;
		case 'C':
			opt_compact = 1;
			break;
		case 'S':
			if (optarg && !valid_signal(optarg))
				return bad_value("--signal", optarg, "a signal such as SIGUSR2, USR1, "
						 "SIGRTMIN+3 or 12 is expected (not KILL or STOP)");
			setenv("MTREC_SIGNAL", optarg ? optarg : "SIGUSR2", 1);
			break;
		case 'T':
			if (!*arg)
				return bad_value("--track", arg, "FUNC:KIND[:ARG[:FAMILY]],... or "
						 "@glusterfs, @dpdk, @glib is expected");
			/* Each --track is a group of its own (its own default
			 * family), after those of MTREC_TRACK. */
			if (append_env("MTREC_TRACK", arg, ";") < 0)
				return EXIT_LAUNCHER;
			break;
		case 'q':
			*quiet = 1;
			setenv("MTREC_QUIET", "1", 1);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("mtrec %s\n", MTREC_VERSION);
			exit(0);
		default:
			return bad_option(argv[optind - 1], opts);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no program given\n", progname);
		return try_help();
	}
	rotate = getenv("MTREC_ROTATE");
	if (!*quiet && rotate != NULL && valid_size(rotate) && size_value(rotate) % ROTATE_STEP) {
		unsigned long long n = size_value(rotate);

		fprintf(stderr, "%s: --rotate %s: parts are made in steps of 4 MiB; each will be "
			"%llu MiB\n", progname, rotate, (n + ROTATE_STEP - 1) / ROTATE_STEP * 4);
	}
	if (opt_compact && !getenv("MTREC_ROTATE")) {
		fprintf(stderr, "%s: --compact needs --rotate (or MTREC_ROTATE): it folds "
			"completed parts\n", progname);
		return try_help();
	}
	return 0;
}

/* ---- the library and LD_PRELOAD --------------------------------------- */

/* Where libmtrec.so is: $MTREC_LIB, beside this program (the build tree),
 * ../lib/mtrec beside it (an install), or the configured directory. */
static int find_library(char *out, size_t cap)
{
	const char *env = getenv("MTREC_LIB");
	char self[PATH_MAX - 64], *slash;
	const char *rel[] = { "/libmtrec.so", "/../lib/mtrec/libmtrec.so" };
	ssize_t n;

	if (env && *env) {
		snprintf(out, cap, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			snprintf(out, cap, "%s%s", self, rel[i]);
			if (access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, cap, "%s/libmtrec.so", MTREC_PKGLIBDIR);
	return access(out, R_OK) == 0 ? 0 : -1;
}

/* name=value, or name=value<sep>old when name is set; 0 or -1 (ENOMEM). */
static int prepend_env(const char *name, const char *value, const char *sep)
{
	const char *old = getenv(name);
	char *both;
	int ret;

	if (!old || !*old)
		return setenv(name, value, 1);
	if (asprintf(&both, "%s%s%s", value, sep, old) < 0)
		return -1;
	ret = setenv(name, both, 1);
	free(both);
	return ret;
}

/* ld.so expands these in LD_PRELOAD and LD_LIBRARY_PATH (glibc
 * elf/dl-load.c is_dst); any other '$' is taken as it is. */
static int has_dst(const char *s)
{
	static const char *const dst[] = { "$ORIGIN", "${ORIGIN}", "$LIB", "${LIB}",
					   "$PLATFORM", "${PLATFORM}" };

	for (size_t i = 0; i < sizeof(dst) / sizeof(dst[0]); i++)
		if (strstr(s, dst[i]))
			return 1;
	return 0;
}

/* Preload lib into the program.  glibc 2.36's ld.so splits LD_PRELOAD at
 * blanks and colons, with no escape, and LD_LIBRARY_PATH only at colons
 * and semicolons (checked on Debian 12: "/opt/my dir/libmtrec.so" in
 * LD_PRELOAD is "cannot be preloaded ... ignored").  So a library whose
 * path holds a blank or a colon is preloaded by its file name alone, which
 * ld.so looks up along LD_LIBRARY_PATH, given its directory first.  NULL,
 * or why it cannot be preloaded. */
static const char *set_preload(const char *lib)
{
	const char *slash = strrchr(lib, '/'), *name = slash ? slash + 1 : lib;
	char *dir;
	int ret;

	if (has_dst(lib))
		return "the dynamic linker would expand its $ORIGIN, $LIB or $PLATFORM";
	if (!strpbrk(lib, " :"))
		return prepend_env("LD_PRELOAD", lib, " ") < 0 ? strerror(errno) : NULL;
	if (!slash || strpbrk(name, " :"))
		return "its file name holds a blank or a ':', which LD_PRELOAD cannot take";
	if ((dir = strndup(lib, slash > lib ? (size_t)(slash - lib) : 1)) == NULL)
		return strerror(errno);
	if (strpbrk(dir, ":;")) {
		free(dir);
		return "its directory holds a ':' or ';', which neither LD_PRELOAD nor "
		       "LD_LIBRARY_PATH can take";
	}
	ret = prepend_env("LD_LIBRARY_PATH", dir, ":");
	free(dir);
	if (ret < 0 || prepend_env("LD_PRELOAD", name, " ") < 0)
		return strerror(errno);
	return NULL;
}

/* ---- names ------------------------------------------------------------ */

/* pattern with every "%p" replaced by pid, as the recorder names its
 * file (file.c make_name). */
static void expand_pid(char *out, size_t cap, const char *pattern, long pid)
{
	size_t o = 0;

	for (const char *s = pattern; *s && o + 1 < cap; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			o += (size_t)snprintf(out + o, cap - o, "%ld", pid);
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o < cap ? o : cap - 1] = '\0';
}

/* The directory part of path ("." when none, "/" for the root). */
static void dir_of(char *out, size_t cap, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, cap, ".");
	else
		snprintf(out, cap, "%.*s", slash > path ? (int)(slash - path) : 1, path);
}

/* Refuse before the run a trace the recorder could not write: its
 * directory must take a new file (unless it holds "%p", known only once
 * the program runs), and an existing file of that name must be a regular
 * file, not a symbolic link, nor one another user left in a sticky
 * directory (file.c opens none of them).  0, or -1 and the reason in
 * why. */
static int check_output(const char *pattern, char *why, size_t cap)
{
	char dir[PATH_MAX];
	struct stat st, dst;

	dir_of(dir, sizeof(dir), pattern);
	if (!strstr(dir, "%p") && access(dir, W_OK | X_OK) < 0) {
		snprintf(why, cap, "cannot write the trace in '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (strstr(pattern, "%p") || lstat(pattern, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		snprintf(why, cap, "'%s' is a symbolic link (trace files are never written "
			 "through one)", pattern);
	else if (!S_ISREG(st.st_mode))
		snprintf(why, cap, "'%s' is not a regular file", pattern);
	else if (stat(dir, &dst) == 0 && mtrec_planted(&dst, &st, geteuid()))
		snprintf(why, cap, "'%s' belongs to user %u, in a sticky directory others may "
			 "write in (whoever made it could read the trace; the recorder refuses it)",
			 pattern, (unsigned)st.st_uid);
	else if (stat(dir, &dst) == 0 && mtrec_linked(&dst, &st))
		snprintf(why, cap, "'%.3900s' " MTREC_LINKED_WHY " (" MTREC_LINKED_HARM "; the "
			 "recorder refuses it)", pattern);
	else
		return 0;
	return -1;
}

/* ---- running the program ---------------------------------------------- */

static void pass_signals(void)
{
	static const int passed[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCONT };
	struct sigaction sa;

	/* The program gets the terminal's signals itself; we wait for its
	 * verdict.  Those sent to us alone are passed on. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
		sigaction(passed[i], &sa, NULL);
}

/* Run argv; its wait status in *status, and 0.  When exec failed, its
 * errno in *exec_err: the child sends it through a close-on-exec pipe, so
 * that a program that exits 127 itself is not taken for one that was not
 * found, and the failure is reported once, by the caller.  -1 with errno
 * when we could not even try.  We are the "subreaper" of the program's
 * processes: one whose parent exits before it opens its trace names us as
 * its parent, which ties its file to this run (belongs_to_run). */
static int run_program(char **argv, int *status, int *exec_err)
{
	int pfd[2], err = 0;
	ssize_t n;
	pid_t pid;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	if (pipe2(pfd, O_CLOEXEC) < 0 || (child = fork()) < 0)
		return -1;
	if (child == 0) {
		close(pfd[0]);
		if (opt_compact) {	/* the recorder waits for the compactor (file.c) */
			char self[24];
			snprintf(self, sizeof(self), "%ld", (long)getpid());
			setenv("MTREC_COMPACT_PID", self, 1);
		}
		execvp(argv[0], argv);
		err = errno;
		n = write(pfd[1], &err, sizeof(err));	/* nothing to do if it fails */
		(void)n;
		_exit(EXIT_CANNOT_RUN);
	}
	close(pfd[1]);
	if (opt_compact)
		compactor = mtrec_compact_start(compact_analyzer, compact_pattern, child,
						compact_trace, compact_log, sizeof(compact_log));
	pass_signals();
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	*exec_err = n == sizeof(err) ? err : 0;
	/* Orphans handed to us are reaped on the way. */
	while ((pid = waitpid(-1, status, 0)) != child) {
		if (pid < 0 && errno != EINTR)
			return -1;
		if (pid > 0 && pid == compactor)	/* ours as the subreaper */
			compactor_status = *status;
	}
	return 0;
}

/* ---- the files of the run ---------------------------------------------
 * The recorder names them (file.c): the session's first process
 * writes the -o name with %p as its pid -- or, when another recording
 * holds that file, NAME.PID; every other process (forked, or a new image
 * after exec) NAME.PID, or the %p name with its own pid, then .1, .2 ...
 * when taken; part N of any of them is that name plus ".partN".  Each file
 * starts with "# mtrec 1" and a header: "# pid PID PPID", "# start SEC.NSEC".
 * A file is this run's when its name fits, it was started after we were,
 * and its process descends from the program. */

struct trace_file {
	char *path;		/* as the user would write it */
	long pid, ppid;
	struct timespec start;
	unsigned part;		/* 1, or N of NAME.partN */
	int ours;		/* a file of this run */
	int program;		/* written by the program's own pid */
};

struct file_list {
	struct trace_file *v;
	size_t n, cap;
};

struct run {
	const char *pattern;	/* -o as given, or the default */
	long launcher, program;	/* our pid, the program's */
	struct timespec started;
};

static void file_list_release(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
}

static struct trace_file *file_list_add(struct file_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct trace_file *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	return &l->v[l->n++];
}

/* Does name fit pattern: "%p" a run of digits, then ".PID" when the
 * pattern holds no %p (any process but the first), then ".SERIAL"? */
static int digits(const char **s)
{
	const char *p = *s;

	while (*p >= '0' && *p <= '9')
		p++;
	if (p == *s)
		return 0;
	*s = p;
	return 1;
}

static int name_fits(const char *pattern, const char *name)
{
	int had_pid = 0;

	while (*pattern) {
		if (pattern[0] == '%' && pattern[1] == 'p') {
			if (!digits(&name))
				return 0;
			pattern += 2;
			had_pid = 1;
		} else if (*pattern++ != *name++) {
			return 0;
		}
	}
	for (int suffixes = 2 - had_pid; suffixes > 0 && *name == '.'; suffixes--) {
		name++;
		if (!digits(&name))
			return 0;
	}
	return !*name;
}

/* In a trace's header BUF, what follows "# WORD " at the start of a
 * line (the line's value); NULL when no line has the word. */
static const char *header_line(const char *buf, enum mtrec_word w)
{
	const char *word = mtrec_word(w);
	size_t len = strlen(word);

	for (const char *p = buf; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, word, len) == 0)
			return p + len;
	}
	return NULL;
}

/* Read the header of a trace file (or part) into f; -1 when path is not
 * one of the recorder's files. */
static int read_header(const char *path, struct trace_file *f)
{
	char buf[16384];
	const char *p;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	if (strncmp(buf, mtrec_word(MTREC_W_MTREC), mtrec_word_len(MTREC_W_MTREC)) != 0 ||
	    strncmp(buf + mtrec_word_len(MTREC_W_MTREC), "1\n", 2) != 0)
		return -1;
	if (!(p = header_line(buf, MTREC_W_PART)) || sscanf(p, "%u\n", &f->part) != 1)
		f->part = 1;
	if (!(p = header_line(buf, MTREC_W_PID)) || sscanf(p, "%ld %ld", &f->pid, &f->ppid) != 2)
		return -1;
	if (!(p = header_line(buf, MTREC_W_START)) ||
	    sscanf(p, "%ld.%ld", &f->start.tv_sec, &f->start.tv_nsec) != 2)
		return -1;
	return 0;
}

static int later_or_same(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Add path when it is a trace file of part 1 started during the run. */
static void consider(struct file_list *l, const struct run *r, const char *path)
{
	struct trace_file f = { 0 }, *slot;

	if (read_header(path, &f) < 0 || f.part != 1 || !later_or_same(&f.start, &r->started))
		return;
	if ((f.path = strdup(path)) == NULL || (slot = file_list_add(l)) == NULL) {
		free(f.path);
		return;
	}
	*slot = f;
}

/* Every file in the pattern's directory whose name fits the pattern.  A
 * directory that holds "%p" differs from process to process: then only
 * the program's own name is looked at. */
static void find_candidates(struct file_list *l, const struct run *r)
{
	const char *slash = strrchr(r->pattern, '/'), *base = slash ? slash + 1 : r->pattern;
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	dir_of(dir, sizeof(dir), r->pattern);
	if (strstr(dir, "%p")) {
		expand_pid(path, sizeof(path), r->pattern, r->program);
		consider(l, r, path);
		return;
	}
	if ((d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (name_fits(base, e->d_name) &&
		    snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(base - r->pattern) : 0,
			     r->pattern, e->d_name) < (int)sizeof(path))
			consider(l, r, path);
	closedir(d);
}

/* Is the live process pid a descendant of ours?  1 yes, 0 no, -1 it is
 * gone (its ancestry cannot be told any more). */
static int descends_from(long pid, long ancestor)
{
	for (int hops = 0; pid > 1 && hops < 4096; hops++) {
		char path[64], buf[512], *close_paren;
		FILE *f;
		int ok;

		if (pid == ancestor)
			return 1;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "re")) == NULL)
			return hops ? 0 : -1;
		ok = fgets(buf, sizeof(buf), f) != NULL;
		fclose(f);
		/* "PID (COMM) STATE PPID ...": COMM may hold ')' */
		if (!ok || !(close_paren = strrchr(buf, ')')) ||
		    sscanf(close_paren + 1, " %*c %ld", &pid) != 1)
			return hops ? 0 : -1;
	}
	return 0;
}

static int known_pid(const struct file_list *l, const struct run *r, long pid)
{
	if (pid == r->launcher || pid == r->program)
		return 1;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].ours && l->v[i].pid == pid)
			return 1;
	return 0;
}

/* A file is the run's when its process or its parent is: the program, one
 * whose file is the run's, us (a process whose parent was gone when it
 * opened its file: we are its subreaper), or a live descendant of ours.
 * When both are gone and unknown (a parent that left no file), nothing
 * says it is another recording's: it is taken. */
static int belongs_to_run(const struct file_list *l, const struct run *r,
			  const struct trace_file *f)
{
	int d;

	if (known_pid(l, r, f->pid) || known_pid(l, r, f->ppid))
		return 1;
	if ((d = descends_from(f->ppid, r->launcher)) >= 0)
		return d;
	if ((d = descends_from(f->pid, r->launcher)) >= 0)
		return d;
	return 1;
}

/* The program's files first, then the others, each in the order they
 * were started; the others of no concern last. */
static int by_process_then_start(const void *pa, const void *pb)
{
	const struct trace_file *a = pa, *b = pb;

	if (a->ours != b->ours)
		return a->ours ? -1 : 1;
	if (a->program != b->program)
		return a->program ? -1 : 1;
	if (a->start.tv_sec != b->start.tv_sec)
		return a->start.tv_sec < b->start.tv_sec ? -1 : 1;
	if (a->start.tv_nsec != b->start.tv_nsec)
		return a->start.tv_nsec < b->start.tv_nsec ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* Mark the run's files, sorted first; how many there are. */
static size_t select_run_files(struct file_list *l, const struct run *r)
{
	size_t ours = 0;
	int changed = 1;

	while (changed) {
		changed = 0;
		for (size_t i = 0; i < l->n; i++)
			if (!l->v[i].ours && belongs_to_run(l, r, &l->v[i])) {
				l->v[i].ours = changed = 1;
				ours++;
			}
	}
	for (size_t i = 0; i < l->n; i++)
		l->v[i].program = l->v[i].pid == r->program;
	if (l->n)
		qsort(l->v, l->n, sizeof(l->v[0]), by_process_then_start);
	return ours;
}

/* Say where the run's trace went: one line per file, FILE first. */
static void report_files(const struct file_list *l, size_t ours)
{
	int first = 1;

	for (size_t i = 0; i < ours; i++) {
		const struct trace_file *f = &l->v[i];
		char path[PATH_MAX + 16];
		struct trace_file part;

		if (first)
			fprintf(stderr, "%s: trace written to '%s'\n", progname, f->path);
		else
			fprintf(stderr, "%s: trace written to '%s' (pid %ld)\n", progname, f->path, f->pid);
		/* Parts: while part N is there and written by the same process. */
		for (unsigned n = 2;; n++) {
			snprintf(path, sizeof(path), "%s.part%u", f->path, n);
			if (read_header(path, &part) < 0 || part.part != n || part.pid != f->pid ||
			    part.start.tv_sec != f->start.tv_sec || part.start.tv_nsec != f->start.tv_nsec)
				break;
			if (first)
				fprintf(stderr, "%s: trace written to '%s' (part %u)\n", progname, path, n);
			else
				fprintf(stderr, "%s: trace written to '%s' (pid %ld, part %u)\n",
					progname, path, f->pid, n);
		}
		first = 0;
	}
}

/* ---- nothing recorded: why -------------------------------------------- */

/* The file execvp() runs for name (its PATH search). */
static int resolve_program(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(name, '/')) {
		snprintf(out, cap, "%s", name);
		return 0;
	}
	for (p = path ? path : "/bin:/usr/bin";; p = end + 1) {
		struct stat st;

		end = strchrnul(p, ':');
		snprintf(out, cap, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		if (!*end)
			return -1;
	}
}

/* Does the ELF file ask for a dynamic linker (PT_INTERP)?  Without one (a
 * static or static-pie program) nothing reads LD_PRELOAD.  1 yes, 0 no,
 * -1 not an ELF file of this machine's byte order. */
static int elf_has_interp(const char *path)
{
	unsigned char ident[EI_NIDENT];
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;
	unsigned long long phoff = 0;
	unsigned phnum = 0, phentsize = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, ident, sizeof(ident), 0) != sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0 ||
	    ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
		goto out;
	if (ident[EI_CLASS] == ELFCLASS64 && pread(fd, &e64, sizeof(e64), 0) == sizeof(e64)) {
		phoff = e64.e_phoff, phnum = e64.e_phnum, phentsize = e64.e_phentsize;
	} else if (ident[EI_CLASS] == ELFCLASS32 && pread(fd, &e32, sizeof(e32), 0) == sizeof(e32)) {
		phoff = e32.e_phoff, phnum = e32.e_phnum, phentsize = e32.e_phentsize;
	} else {
		goto out;
	}
	ret = 0;
	/* p_type is the first 32-bit word of both Elf32_Phdr and Elf64_Phdr. */
	for (unsigned i = 0; i < phnum; i++) {
		uint32_t type;

		if (pread(fd, &type, sizeof(type), (off_t)(phoff + (unsigned long long)i * phentsize)) !=
		    sizeof(type))
			break;
		if (type == PT_INTERP) {
			ret = 1;
			break;
		}
	}
out:
	close(fd);
	return ret;
}

/* Why a run left no trace file, as far as can be told from outside. */
static void why_nothing(char *why, size_t cap, const char *prog, const char *pattern)
{
	const char *scoped = getenv("MTREC_SCOPED");
	char path[PATH_MAX], dir[PATH_MAX];
	struct stat st;

	dir_of(dir, sizeof(dir), pattern);
	if (resolve_program(prog, path, sizeof(path)) == 0 && elf_has_interp(path) == 0)
		snprintf(why, cap, "'%s' is statically linked: the recorder is preloaded only "
			 "into dynamically linked programs", path);
	else if (stat(path, &st) == 0 && (st.st_mode & S_ISUID) && st.st_uid != getuid())
		snprintf(why, cap, "'%s' is set-user-ID: the dynamic linker ignores LD_PRELOAD "
			 "for it", path);
	else if (stat(path, &st) == 0 && (st.st_mode & S_ISGID) && st.st_gid != getgid())
		snprintf(why, cap, "'%s' is set-group-ID: the dynamic linker ignores LD_PRELOAD "
			 "for it", path);
	else if (!strstr(dir, "%p") && access(dir, W_OK | X_OK) < 0)
		snprintf(why, cap, "cannot write in '%s': %s", dir, strerror(errno));
	else if (scoped && *scoped && strcmp(scoped, "0") != 0)
		snprintf(why, cap, "recording never started (scoped: no trace_on(), mtrace() "
			 "or --signal)");
	else
		snprintf(why, cap, "no trace file is there: the recorder made none, or it was "
			 "removed (see its messages above, if any)");
}

/* ---- main ------------------------------------------------------------- */

static int exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Name the run's files, or say why there are none. */
static void report(const struct run *r, const char *prog)
{
	struct file_list files = { 0 };
	char why[PATH_MAX + 128];

	size_t ours;

	find_candidates(&files, r);
	ours = select_run_files(&files, r);
	if (ours) {
		report_files(&files, ours);
	} else if (!compacted) {
		why_nothing(why, sizeof(why), prog, r->pattern);
		fprintf(stderr, "%s: nothing was recorded: %s\n", progname, why);
	}
	file_list_release(&files);
}

/* The compactor finishes the parts the program left: wait for it, so
 * that the files named after the run are those that stay. */
static void wait_compactor(int quiet)
{
	int st = compactor_status;
	struct stat sb;

	if (compactor <= 0)
		return;
	if (st < 0) {
		pid_t r;
		while ((r = waitpid(compactor, &st, 0)) < 0 && errno == EINTR)
			;
		if (r < 0)
			return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		if (stat(compact_log, &sb) == 0 && sb.st_size == 0)
			unlink(compact_log);
		compacted = 1;
		if (!quiet)
			fprintf(stderr, "%s: trace written to '%s.compact' (its parts, compacted)\n",
				progname, compact_trace);
		return;
	}
	fprintf(stderr, "%s: the compaction failed: see '%s'\n", progname, compact_log);
}

int main(int argc, char **argv)
{
	const char *output = NULL, *base, *err;
	char lib[PATH_MAX], pattern[PATH_MAX], why[PATH_MAX + 128];
	struct run run;
	int status, quiet = 0, ret, exec_err;

	/* "mtrec ctl ...": a program named ctl runs as "mtrec -- ctl". */
	if (argc > 1 && strcmp(argv[1], "ctl") == 0) {
		argv[1] = (char *)"mtrec ctl";
		return mtrec_ctl_main(argc - 1, argv + 1);
	}
	if (argc > 1 && (strcmp(argv[1], "attach") == 0 || strcmp(argv[1], "detach") == 0)) {
		if (strcmp(argv[1], "attach") == 0 && find_library(lib, sizeof(lib)) < 0) {
			fprintf(stderr, "%s: cannot find libmtrec.so (looked for '%s'; set MTREC_LIB)\n",
				progname, lib);
			return EXIT_LAUNCHER;
		}
		return mtrec_attach_main(argc - 1, argv + 1, lib);
	}
	argv[0] = (char *)progname;	/* getopt's messages start with it */
	if ((ret = parse_options(argc, argv, &output, &quiet)) != 0)
		return ret;
	if (find_library(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "%s: cannot find libmtrec.so (looked for '%s'; set MTREC_LIB)\n",
			progname, lib);
		return EXIT_LAUNCHER;
	}
	if ((err = set_preload(lib)) != NULL) {
		fprintf(stderr, "%s: cannot preload '%s': %s; set MTREC_LIB to a copy "
			"elsewhere\n", progname, lib, err);
		return EXIT_LAUNCHER;
	}
	base = strrchr(argv[optind], '/');
	base = base ? base + 1 : argv[optind];
	if (output)
		snprintf(pattern, sizeof(pattern), "%s", output);
	else
		snprintf(pattern, sizeof(pattern), "mtrec.%s.%%p.log", base);
	if (check_output(pattern, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: %s; not running '%s'\n", progname, why, argv[optind]);
		return EXIT_LAUNCHER;
	}
	setenv("MALLOC_TRACE", pattern, 1);
	unsetenv("MTREC_SESSION");	/* the program is the first process */
	snprintf(compact_pattern, sizeof(compact_pattern), "%s", pattern);
	if (opt_compact && mtrec_compact_find(compact_analyzer, sizeof(compact_analyzer)) < 0) {
		fprintf(stderr, "%s: --compact: mtanalyze is not installed beside mtrec (looked for "
			"'%s'): running without compaction\n", progname, compact_analyzer);
		opt_compact = 0;
	}

	run.pattern = pattern;
	run.launcher = getpid();
	clock_gettime(CLOCK_REALTIME, &run.started);
	if (run_program(argv + optind, &status, &exec_err) < 0) {
		fprintf(stderr, "%s: cannot run '%s': %s\n", progname, argv[optind], strerror(errno));
		return EXIT_LAUNCHER;
	}
	if (exec_err) {
		static const char *const commands[] = { "ctl", "attach", "detach", NULL };
		const char *near = exec_err == ENOENT && !strchr(argv[optind], '/')
			? mtrec_nearest(argv[optind], commands) : NULL;

		if (near)
			fprintf(stderr, "%s: cannot run '%s': %s (did you mean '%s %s'?)\n", progname,
				argv[optind], strerror(exec_err), progname, near);
		else
			fprintf(stderr, "%s: cannot run '%s': %s\n", progname, argv[optind],
				strerror(exec_err));
		return exec_err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
	}
	run.program = child;
	wait_compactor(quiet);
	if (!quiet)
		report(&run, argv[optind]);
	return exit_status(status);
}
