/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* chunk-test.c -- unit test of recorder/chunk.c, the chunk writer, on a
 * real trace file (recorder/file.c) but without the shim, the events
 * or process life above it: this program plays process life (it opens the
 * file, sets the hooks, brackets every call with mtrec_enter/leave).
 *
 * Checked on the file as a reader sees it:
 *   - threads writing at once: every line is there once, whole, in its
 *     thread's order, under a "# T TID" line of its own thread;
 *   - every chunk starts with a newline and "# T", ends with a newline,
 *     and what a thread left unused is a '#' filler line;
 *   - a signal-nesting level writes into a chunk of its own;
 *   - a new epoch sends every thread to a chunk after the caller's line;
 *   - rotation: each part starts with its header zone ("# mtrec 1",
 *     "# part N", the process header, the objects) and no line spans two
 *     parts;
 *   - work put off with mtrec_defer() runs when the outermost call leaves;
 *   - after mtrec_give_up() no chunk is handed out and the trace says why;
 *   - the exit trim ends the file at the caller's last line.
 *
 * Usage: chunk-test DIR (scratch directory).  Prints "# ..." lines and a
 * last line "PASS" or "FAIL N".
 */
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk.h"
#include "file.h"
#include "tables.h"
#include "unit-check.h"

#define NTHREADS 4
#define NLINES 20000
#define NROTATE 1000000

static int deferred_runs;

static void no_new_process(void)
{
}

static int attached(void)
{
	return 0;
}

static void deferred(void)
{
	deferred_runs++;
}

static const struct mtrec_life_hooks hooks = { no_new_process, attached, deferred };

static const char header[] = "# pid 1 0\n# exe /unit\n# cmdline chunk-test\n# start 0.0\n# depth 1\n";

/* One line, as the layers above write theirs. */
static void line(const char *fmt, long a, long b)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), fmt, a, b);

	mtrec_enter();
	mtrec_chunk_line(buf, (size_t)n);
	mtrec_leave();
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Each thread's kernel id, known once it ran. */
static pid_t tids[NTHREADS];

/* Walk the lines of text: every "L t i" must come in order for its t,
 * under a "# T" of t's thread; returns how many L lines. */
static long check_lines(const char *text, size_t len, long *next)
{
	const char *p = text, *end = text + len;
	long count = 0;
	int cur = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char one[128];
		long t, i;
		int tid;

		/* sscanf on the text itself would measure all of it each time. */
		snprintf(one, sizeof(one), "%.*s", (int)(n < sizeof(one) ? n : sizeof(one) - 1), p);
		if (n >= 4 && memcmp(p, "# T ", 4) == 0 && sscanf(one + 4, "%d", &tid) == 1) {
			cur = tid;
		} else if (n >= 2 && p[0] == 'L' && sscanf(one, "L %ld %ld", &t, &i) == 2) {
			CHECK(t >= 0 && t < NTHREADS, "thread %ld", t);
			if (t >= 0 && t < NTHREADS) {
				CHECK(i == next[t], "thread %ld: line %ld where %ld was due", t, i, next[t]);
				CHECK(cur == tids[t], "thread %ld: its line under # T %d", t, cur);
				next[t] = i + 1;
			}
			count++;
		} else if (n > 0) {
			CHECK(p[0] == '#' || p[0] == '=', "stray line '%.*s'", (int)(n > 60 ? 60 : n), p);
			CHECK(memchr(p, '\0', n) == NULL, "a NUL byte in a line");
		}
		p += n + 1;
	}
	CHECK(len == 0 || end[-1] == '\n', "the file does not end with a newline");
	return count;
}

static void *writer(void *arg)
{
	long t = (long)arg;

	tids[t] = (pid_t)gettid();
	for (long i = 0; i < NLINES; i++)
		line("L %ld %ld", t, i);
	return NULL;
}

/* Open a fresh trace named name in dir, as process life would. */
static int open_trace(const char *dir, const char *name, char *path, size_t cap)
{
	struct mtrec_file_err e = { NULL, 0 };

	snprintf(path, cap, "%s/%s", dir, name);
	setenv("MALLOC_TRACE", path, 1);
	mtrec_file_init(NULL, sigaction);
	if (mtrec_file_open(1, &e) < 0 || mtrec_chunk_init() < 0) {
		printf("# cannot open '%s': %s\n", path, e.why ? e.why : "(said above)");
		failures++;
		return -1;
	}
	mtrec_chunk_set_hooks(&hooks);
	mtrec_chunk_begin(header, sizeof(header) - 1);
	mtrec_enter();
	mtrec_chunk_text(header, sizeof(header) - 1);
	mtrec_objects_sync(mtrec_chunk_line);
	mtrec_leave();
	return 0;
}

/* The file as the exit trim leaves it; NULL (a failure) without one. */
static char *finish(const char *path, size_t *len)
{
	char *text;

	mtrec_enter();
	mtrec_chunk_finish();
	mtrec_leave();
	text = slurp(path, len);
	CHECK(text != NULL, "no trace '%s'", path);
	return text;
}

/* Threads writing at once: every line once, whole, in its thread's order,
 * in chunks that start as readers expect. */
static void test_threads(const char *dir)
{
	char path[4096], *text, *p;
	pthread_t th[NTHREADS];
	long next[NTHREADS] = { 0 }, n;
	size_t len, chunks = 0;

	if (open_trace(dir, "threads.log", path, sizeof(path)) < 0)
		return;
	for (long t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, writer, (void *)t);
	for (long t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	if ((text = finish(path, &len)) == NULL)
		return;
	CHECK(strncmp(text, "# mtrec 1\n", 10) == 0, "the first line is not '# mtrec 1'");
	n = check_lines(text, len, next);
	CHECK(n == NTHREADS * NLINES, "%ld lines of %d", n, NTHREADS * NLINES);
	/* Each chunk starts "\n# T " right after the newline ending the last. */
	for (p = text; (p = strstr(p, "# T ")) != NULL; p++) {
		CHECK(p - text >= 2 && p[-1] == '\n' && p[-2] == '\n', "a '# T' line not after an empty line");
		chunks++;
	}
	/* Every byte after the first line's 64 is in a chunk; the last one
	 * was cut at its last line. */
	CHECK(chunks == (len - 64 + 2047) / 2048, "%zu chunks in %zu bytes", chunks, len);
	printf("# threads: %ld lines in %zu chunks, %zu bytes\n", n, chunks, len);
	free(text);
}

static void *other_first(void *arg)
{
	(void)arg;
	line("other first", 0, 0);
	return NULL;
}

static void *other_second(void *arg)
{
	(void)arg;
	line("other second", 0, 0);
	return NULL;
}

/* What lies between a and b (a < b) holds a "# T" line. */
static int new_chunk_between(const char *a, const char *b)
{
	return memmem(a, (size_t)(b - a), "\n# T ", 5) != NULL;
}

/* A signal handler's lines go into a chunk of their own; work put off
 * runs when the outermost call leaves; an epoch sends every thread to a
 * chunk after the line written with it. */
static void test_nesting(const char *dir)
{
	char path[4096], *text, *a, *b, *c, *m;
	size_t len;
	pthread_t th;

	if (open_trace(dir, "nesting.log", path, sizeof(path)) < 0)
		return;
	mtrec_enter();
	mtrec_chunk_line("outer before", 12);
	mtrec_enter();			/* as a signal handler's record call */
	mtrec_chunk_line("nested", 6);
	mtrec_defer();
	mtrec_leave();
	CHECK(deferred_runs == 0, "deferred work ran inside the recorder");
	mtrec_chunk_line("outer after", 11);
	mtrec_leave();
	CHECK(deferred_runs == 1, "deferred work ran %d times on leaving", deferred_runs);

	/* The other thread keeps its chunk; the epoch must still put the
	 * mark before what it writes next. */
	pthread_create(&th, NULL, other_first, NULL);
	pthread_join(th, NULL);
	mtrec_enter();
	mtrec_new_epoch();
	mtrec_chunk_keyed(MTREC_W_MARK, "epoch\nline", 10);
	mtrec_leave();
	pthread_create(&th, NULL, other_second, NULL);
	pthread_join(th, NULL);

	if ((text = finish(path, &len)) == NULL)
		return;
	a = strstr(text, "outer before\n");
	b = strstr(text, "nested\n");
	c = strstr(text, "outer after\n");
	CHECK(a && b && c && a < c && !new_chunk_between(a, c), "the outer lines are not in one chunk");
	CHECK(b && b > text && memmem(text, (size_t)(b - text), "\n# T ", 5), "no '# T' line before the nested one");
	CHECK(a && b && c && !(a < b && b < c), "the nested line went into the outer chunk");
	m = strstr(text, "# mark epoch line\n");
	a = strstr(text, "other first\n");
	c = strstr(text, "other second\n");
	CHECK(m && a && c && a < m && m < c, "the mark is not between the other thread's lines");
	free(text);
}

/* With MTREC_ROTATE, each part starts with its header zone and no line
 * spans two parts; the part of a byte is what mtrec_part_of says. */
static void test_rotation(const char *dir)
{
	char path[4096], part[4200], *text;
	long next[NTHREADS] = { 0 }, total = 0;
	size_t len;
	unsigned parts = 0;

	setenv("MTREC_ROTATE", "4M", 1);
	if (open_trace(dir, "rotate.log", path, sizeof(path)) < 0)
		return;
	tids[0] = (pid_t)gettid();
	for (long i = 0; i < NROTATE; i++)
		line("L 0 %ld %ld", i, 0);
	mtrec_enter();
	CHECK(mtrec_part_of(mtrec_self[0]->pos) == mtrec_file.part_no,
	      "the last line is in part %u, the file in part %u",
	      mtrec_part_of(mtrec_self[0]->pos), mtrec_file.part_no);
	mtrec_leave();
	unsetenv("MTREC_ROTATE");
	finish(path, &len);
	for (unsigned k = 1;; k++) {
		char want[64];

		if (k == 1)
			snprintf(part, sizeof(part), "%s", path);
		else
			snprintf(part, sizeof(part), "%s.part%u", path, k);
		if ((text = slurp(part, &len)) == NULL)
			break;
		parts++;
		snprintf(want, sizeof(want), "# mtrec 1\n# part %u\n", k);
		if (k > 1) {
			CHECK(strncmp(text, want, strlen(want)) == 0, "part %u does not start with its zone", k);
			CHECK(strstr(text, header) == text + strlen(want), "part %u lacks the header", k);
			CHECK(strstr(text, "# object ") != NULL, "part %u lacks the objects", k);
		}
		CHECK(len > 0 && text[len - 1] == '\n', "part %u ends inside a line", k);
		total += check_lines(text, len, next);
		free(text);
	}
	CHECK(parts >= 3, "%u parts", parts);
	CHECK(total == NROTATE, "%ld lines of %d in %u parts", total, NROTATE, parts);
	printf("# rotation: %ld lines in %u parts\n", total, parts);
}

/* After mtrec_give_up no chunk is handed out, and the trace says why. */
static void test_give_up(const char *dir)
{
	char path[4096], *text;
	size_t len;

	if (open_trace(dir, "stop.log", path, sizeof(path)) < 0)
		return;
	line("before", 0, 0);
	mtrec_enter();
	mtrec_give_up("the unit test said so", 0);
	mtrec_give_up("a second reason", 0);
	CHECK(mtrec_failed, "not stopped");
	CHECK(mtrec_chunk_new(mtrec_me(), 10) == NULL, "a chunk after the stop");
	mtrec_leave();
	line("after", 0, 0);
	if ((text = finish(path, &len)) == NULL)
		return;
	/* The file holds the NULs of chunks reserved but never written. */
	CHECK(memmem(text, len, "before\n", 7) != NULL, "the line before the stop is gone");
	CHECK(memmem(text, len, "\n# stopped the unit test said so\n", 32) != NULL, "no '# stopped' line");
	CHECK(memmem(text, len, "a second reason", 15) == NULL, "stopped twice");
	CHECK(memmem(text, len, "after\n", 6) == NULL, "a line after the stop");
	free(text);
}

/* The exit trim ends the file at the last line when its chunk is last. */
static void test_trim(const char *dir)
{
	char path[4096], *text;
	size_t len;

	if (open_trace(dir, "trim.log", path, sizeof(path)) < 0)
		return;
	line("the last line", 0, 0);
	if ((text = finish(path, &len)) == NULL)
		return;
	CHECK(len > 14 && strcmp(text + len - 14, "the last line\n") == 0, "the file does not end at the last line");
	free(text);
}

/* Each test in a process of its own: the file is one per process. */
static void run(const char *name, void (*test)(const char *), const char *dir)
{
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		failures = 0;
		test(dir);
		printf("# %s: %s\n", name, failures ? "failed" : "ok");
		fflush(stdout);
		_exit(failures > 100 ? 100 : failures);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
		printf("# %s: died\n", name);
		failures++;
	} else {
		failures += WEXITSTATUS(status);
	}
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";

	prim_loader_init(dl_iterate_phdr);	/* what the shim's bootstrap does */

	run("threads", test_threads, dir);
	run("nesting", test_nesting, dir);
	run("rotation", test_rotation, dir);
	run("give_up", test_give_up, dir);
	run("trim", test_trim, dir);
	return verdict();
}
