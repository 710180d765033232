/* mtrec.c -- the launcher: run a program with the recorder preloaded, in
 * the manner of "heaptrack prog".  It sets LD_PRELOAD, MALLOC_TRACE and the
 * recorder's own variables, runs the program, passes its exit status
 * through, and says where the trace went. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *progname = "mtrec";
static volatile pid_t child;

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
		"Run PROGRAM with the mtrec malloc trace recorder preloaded and write a\n"
		"glibc MALLOC_TRACE-format trace of its allocations and frees.\n"
		"\n"
		"  -o, --output=FILE   write the trace to FILE ('%%p' is the process id)\n"
		"                      [mtrec.PROGRAM.PID.log]\n"
		"  -s, --scoped        record nothing until the program calls trace_on()\n"
		"                      or mtrace()\n"
		"  -d, --depth=N       record call stacks of up to N frames (1-64) [1]\n"
		"  -r, --rotate=SIZE   continue the trace in parts of SIZE bytes (256M, 1G):\n"
		"                      FILE, FILE.part2, FILE.part3, ...\n"
		"      --signal[=SIG]  start and stop recording each time the program gets\n"
		"                      SIG [SIGUSR2]; with --scoped it starts unrecorded\n"
		"      --no-freeres    do not let libc free its caches at exit\n"
		"  -h, --help          print this help and exit\n"
		"  -V, --version       print the version and exit\n"
		"\n"
		"The exit status is the program's (128+N when it was killed by signal N).\n"
		"Analyze the trace with: mtanalyze PROGRAM TRACE\n",
		progname);
}

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

static void prepend_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		size_t len = strlen(lib) + strlen(old) + 2;
		if ((val = malloc(len)) == NULL) {
			perror(progname);
			exit(125);
		}
		snprintf(val, len, "%s %s", lib, old);
		setenv("LD_PRELOAD", val, 1);
		free(val);
	} else {
		setenv("LD_PRELOAD", lib, 1);
	}
}

/* The file the recorder will open for pid, for the message at the end. */
static void trace_name(char *out, size_t cap, const char *pattern, pid_t pid)
{
	size_t o = 0;

	for (const char *s = pattern; *s && o + 1 < cap; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			o += (size_t)snprintf(out + o, cap - o, "%ld", (long)pid);
			s++;
		} else {
			out[o++] = *s;
		}
	}
	out[o < cap ? o : cap - 1] = '\0';
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "scoped", no_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "no-freeres", no_argument, NULL, 'F' },
		{ "signal", optional_argument, NULL, 'S' },
		{ "rotate", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *base;
	char lib[PATH_MAX], pattern[PATH_MAX], shown[PATH_MAX];
	int c, status;
	long depth = 1;
	char *end;

	while ((c = getopt_long(argc, argv, "+o:sd:r:hV", opts, NULL)) != -1) {
		const char *arg = optarg ? optarg : "";

		switch (c) {
		case 'o':
			output = arg;
			break;
		case 's':
			setenv("MTREC_SCOPED", "1", 1);
			break;
		case 'd':
			errno = 0;
			depth = strtol(arg, &end, 10);
			if (errno || *end || depth < 1 || depth > 64) {
				fprintf(stderr, "%s: --depth takes a number from 1 to 64, not '%s'\n",
					progname, arg);
				return 125;
			}
			setenv("MTREC_DEPTH", arg, 1);
			break;
		case 'F':
			setenv("MTREC_FREERES", "0", 1);
			break;
		case 'r':
			setenv("MTREC_ROTATE", arg, 1);
			break;
		case 'S':
			setenv("MTREC_SIGNAL", optarg ? optarg : "SIGUSR2", 1);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("mtrec %s\n", MTREC_VERSION);
			return 0;
		default:
			usage(stderr);
			return 125;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "%s: no program given\n", progname);
		usage(stderr);
		return 125;
	}
	if (find_library(lib, sizeof(lib)) < 0) {
		fprintf(stderr, "%s: cannot find libmtrec.so (looked for '%s'; set MTREC_LIB)\n",
			progname, lib);
		return 125;
	}
	base = strrchr(argv[optind], '/');
	base = base ? base + 1 : argv[optind];
	if (output)
		snprintf(pattern, sizeof(pattern), "%s", output);
	else
		snprintf(pattern, sizeof(pattern), "mtrec.%s.%%p.log", base);

	child = fork();
	if (child < 0) {
		fprintf(stderr, "%s: cannot fork: %s\n", progname, strerror(errno));
		return 125;
	}
	if (child == 0) {
		prepend_preload(lib);
		setenv("MALLOC_TRACE", pattern, 1);
		unsetenv("MTREC_SESSION");	/* the program is the first process */
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "%s: cannot run '%s': %s\n", progname, argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	/* The program gets the terminal's signals itself; we wait for its
	 * verdict.  Those sent to us alone are passed on. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	{
		static const int passed[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCONT };
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = forward;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
			sigaction(passed[i], &sa, NULL);
	}
	while (waitpid(child, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: waitpid: %s\n", progname, strerror(errno));
			return 125;
		}
	}
	trace_name(shown, sizeof(shown), pattern, child);
	if (WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127) &&
	    access(shown, F_OK) != 0)
		return WEXITSTATUS(status);
	fprintf(stderr, "%s: trace written to '%s'\n", progname, shown);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
