/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* reader-test.c -- unit test of the analyzer's trace reader
 * (analyzer/trace/trace-reader.c), alone: linked with the trace layer's
 * objects only, no run, no symbols (Makefile.in, ANA_UNITS).
 *
 * Each line of the format (share/trace-format.md) is classified as the
 * format says: glibc's standard lines with their fields, the extension
 * lines, "# k" lines of tracked kinds, and what is damaged.  Then a trace
 * read in two parts from memory: line numbers continue across parts, a
 * last line without '\n' counts, damaged lines are counted.  With an
 * argument, the same trace read from that file (the test gzips it). */
#include <string.h>

#include "trace-reader.h"
#include "unit-check.h"

struct want {
	const char *text;
	MtaLineKind kind;
	char op;
	uint64_t addr;
	gboolean canonical;
	uint64_t size;
	const char *caller;
	int64_t stack_id;
	const char *family;
};

#define EV(t, o, a, c, s, who, id) { t, MTA_LINE_EVENT, o, a, c, s, who, id, "" }
#define KIND(t, k) { t, k, 0, 0, FALSE, 0, "", -1, "" }

static const struct want lines[] = {
	/* glibc's standard lines */
	EV("@ ./prog:[0x1139] + 0x55d0c07c52a0 0xa", '+', 0x55d0c07c52a0, TRUE, 10, "./prog:[0x1139]", -1),
	EV("@ ./prog:(main+0x1c)[0x1139] - 0x55d0c07c52a0", '-', 0x55d0c07c52a0, TRUE, 0,
	   "./prog:(main+0x1c)[0x1139]", -1),
	EV("@ [0x7f0012345678] < 0x10", '<', 0x10, TRUE, 0, "[0x7f0012345678]", -1),
	EV("@ [0x7f0012345678] > 0x20 0x100", '>', 0x20, TRUE, 0x100, "[0x7f0012345678]", -1),
	EV("@ [0x7f0012345678] ! 0x20 0x100", '!', 0x20, TRUE, 0x100, "[0x7f0012345678]", -1),
	/* no caller; a failed allocation; a size of zero */
	EV("+ 0x30 0x8", '+', 0x30, TRUE, 8, "", -1),
	EV("+ (nil) 0x8", '+', 0, FALSE, 8, "", -1),
	EV("+ 0x30 0", '+', 0x30, TRUE, 0, "", -1),
	/* not glibc's %p spelling: read, but said not canonical */
	EV("+ 0x0030 0x8", '+', 0x30, FALSE, 8, "", -1),
	EV("+ 0x3A 0x8", '+', 0x3a, FALSE, 8, "", -1),
	/* the stack of an event: "s=ID" after it; other KEY=VALUE ignored */
	EV("@ ./p:[0x1] + 0x40 0x10 s=7", '+', 0x40, TRUE, 16, "./p:[0x1]", 7),
	EV("@ ./p:[0x1] - 0x40 t=1 s=12", '-', 0x40, TRUE, 0, "./p:[0x1]", 12),
	/* columns split as perl's split(' '): any run of blanks */
	EV("  @\t./p:[0x1]   +  0x40\t0x10  ", '+', 0x40, TRUE, 16, "./p:[0x1]", -1),
	KIND("= Start", MTA_LINE_MARKER),
	KIND("= End", MTA_LINE_MARKER),
	KIND("# time 123456", MTA_LINE_EXT),
	KIND("# T 4242", MTA_LINE_EXT),
	KIND("# object 0x7f00 /lib/x86_64-linux-gnu/libc.so.6", MTA_LINE_EXT),
	KIND("", MTA_LINE_BLANK),
	KIND(" \t ", MTA_LINE_BLANK),
	/* damaged */
	KIND("@ ./p:[0x1] + 0x40", MTA_LINE_BAD),         /* no size */
	KIND("@ ./p:[0x1] ? 0x40 0x10", MTA_LINE_BAD),    /* no such operator */
	KIND("+ 0xzz 0x10", MTA_LINE_BAD),
	KIND("+ 0x40 ten", MTA_LINE_BAD),
	KIND("- 0x40 junk", MTA_LINE_BAD),                /* a trailing word not KEY=VALUE */
	KIND("- 0x40 s=x", MTA_LINE_BAD),
	KIND("@", MTA_LINE_BAD),
	KIND("hello world", MTA_LINE_BAD),
	KIND("# k bad/kind + 0x40 0x10", MTA_LINE_BAD),   /* KIND outside [A-Za-z0-9_.:-] */
	KIND("# k pool > 0x40 0x10", MTA_LINE_BAD),       /* no realloc among tracked events */
};

static const struct want tracked[] = {
	{ "# k pool @ ./p:[0x2] + 0x50 0x20 s=3", MTA_LINE_TRACKED, '+', 0x50, TRUE, 0x20, "./p:[0x2]",
	  3, "pool" },
	{ "# k pool - 0x50", MTA_LINE_TRACKED, '-', 0x50, TRUE, 0, "", -1, "pool" },
	{ "# k obj.ref:count r 0x60", MTA_LINE_TRACKED, 'r', 0x60, TRUE, 0, "", -1, "obj.ref:count" },
	{ "# k obj u 0x60", MTA_LINE_TRACKED, 'u', 0x60, TRUE, 0, "", -1, "obj" },
};

/* The word of each extension line, classified once by the reader. */
static const struct {
	const char *text;
	MtaWord word;
	MtaLineKind kind;
} words[] = {
	{ "# time 123456", MTA_WORD_TIME, MTA_LINE_EXT },
	{ "# T 4242", MTA_WORD_T, MTA_LINE_EXT },
	{ "# thread 4242 worker", MTA_WORD_THREAD, MTA_LINE_EXT },
	{ "# at 17", MTA_WORD_AT, MTA_LINE_EXT },
	{ "# tstate 1 -", MTA_WORD_TSTATE, MTA_LINE_EXT },
	{ "# reach end 100 2", MTA_WORD_REACH, MTA_LINE_EXT },
	{ "# k pool - 0x50", MTA_WORD_K, MTA_LINE_TRACKED },
	{ "# k pool ? 0x50", MTA_WORD_K, MTA_LINE_BAD },
	{ "#      ", MTA_WORD_FILLER, MTA_LINE_EXT },
	{ "# timely 1", MTA_WORD_NONE, MTA_LINE_EXT },   /* a word no reader knows: skipped */
	{ "# Time 1", MTA_WORD_NONE, MTA_LINE_EXT },
	{ "#time 1", MTA_WORD_NONE, MTA_LINE_EXT },
	{ "+ 0x30 0x8", MTA_WORD_NONE, MTA_LINE_EVENT },
	{ "= Start", MTA_WORD_NONE, MTA_LINE_MARKER },
};

static void
check_words (void)
{
	MtaLine l;

	for (size_t i = 0; i < G_N_ELEMENTS (words); i++) {
		memset (&l, 0, sizeof l);
		mta_line_parse (&l, words[i].text, strlen (words[i].text));
		CHECK (l.word == words[i].word && l.kind == words[i].kind,
		       "'%s': word %d ('%s'), kind %d", words[i].text, l.word,
		       mta_trace_word_name (l.word), l.kind);
	}
	/* a line after NUL padding an older recorder left: its word counts */
	static const char padded[] = "\0\0# T 7";
	memset (&l, 0, sizeof l);
	mta_line_parse (&l, padded, sizeof padded - 1);
	CHECK (l.kind == MTA_LINE_EXT && l.word == MTA_WORD_T, "NULs, then '# T 7': word %d", l.word);
	CHECK (strcmp (mta_trace_word_name (MTA_WORD_TSTATE), "tstate") == 0 &&
	       strcmp (mta_trace_word_name (MTA_WORD_NONE), "") == 0, "word names");
}

static gboolean
span_is (MtaSpan s, const char *want)
{
	return s.len == strlen (want) && memcmp (s.p, want, s.len) == 0;
}

static void
check_line (const struct want *w)
{
	MtaLine l;

	memset (&l, 0, sizeof l);
	mta_line_parse (&l, w->text, strlen (w->text));
	CHECK (l.kind == w->kind, "'%s': kind %d, want %d", w->text, l.kind, w->kind);
	if (w->kind != MTA_LINE_EVENT && w->kind != MTA_LINE_TRACKED)
		return;
	CHECK (l.op == w->op, "'%s': op '%c'", w->text, l.op);
	CHECK (l.addr == w->addr, "'%s': addr %#llx", w->text, (unsigned long long) l.addr);
	CHECK (l.addr_canonical == w->canonical, "'%s': canonical %d", w->text, l.addr_canonical);
	CHECK (l.size == w->size, "'%s': size %#llx", w->text, (unsigned long long) l.size);
	CHECK (span_is (l.caller, w->caller), "'%s': caller '%.*s'", w->text, (int) l.caller.len,
	       l.caller.p);
	CHECK (l.stack_id == w->stack_id, "'%s': stack %lld", w->text, (long long) l.stack_id);
	if (w->kind == MTA_LINE_TRACKED)
		CHECK (span_is (l.family, w->family), "'%s': kind '%.*s'", w->text,
		       (int) l.family.len, l.family.p);
}

static void
check_hex (void)
{
	static const struct { const char *s; gboolean ok; uint64_t v; } canon[] = {
		{ "0x0", TRUE, 0 }, { "0x1f", TRUE, 0x1f }, { "0xffffffffffffffff", TRUE, UINT64_MAX },
		{ "0x01", FALSE, 0 }, { "0x1F", FALSE, 0 }, { "0x", FALSE, 0 }, { "1f", FALSE, 0 },
		{ "0x1ffffffffffffffff", FALSE, 0 },
	};
	static const struct { const char *s; uint64_t v; } perl[] = {
		{ "0x1f", 0x1f }, { "x1f", 0x1f }, { "1f", 0x1f }, { "1_f", 0x1f }, { "1fz9", 0x1f },
		{ "", 0 }, { "0x1ffffffffffffffff", UINT64_MAX },
	};

	for (size_t i = 0; i < G_N_ELEMENTS (canon); i++) {
		MtaSpan s = { canon[i].s, strlen (canon[i].s) };
		uint64_t v = 0;
		gboolean ok = mta_canonical_hex (s, &v);
		CHECK (ok == canon[i].ok && (!ok || v == canon[i].v), "mta_canonical_hex (%s): %d %#llx",
		       canon[i].s, ok, (unsigned long long) v);
	}
	for (size_t i = 0; i < G_N_ELEMENTS (perl); i++) {
		MtaSpan s = { perl[i].s, strlen (perl[i].s) };
		uint64_t v = mta_perl_hex (s);
		CHECK (v == perl[i].v, "mta_perl_hex (%s): %#llx", perl[i].s, (unsigned long long) v);
	}
}

/* A trace in two parts; the second ends without a newline. */
static const char part1[] =
	"= Start\n"
	"@ ./p:[0x1] + 0x40 0x10\n"
	"garbage here\n"
	"# k pool + 0x50 0x20\n";
static const char part2[] =
	"@ ./p:[0x1] - 0x40\n"
	"\n"
	"= End";

struct seen {
	int n;
	uint64_t lineno[16], source_lineno[16];
	MtaLineKind kind[16];
	char source[16][32];
};

static gboolean
collect (const MtaLine *l, gpointer data, GError **error)
{
	struct seen *s = data;

	(void) error;
	if (s->n < 16) {
		s->lineno[s->n] = l->lineno;
		s->source_lineno[s->n] = l->source_lineno;
		s->kind[s->n] = l->kind;
		g_autofree char *base = g_path_get_basename (l->source);
		g_strlcpy (s->source[s->n], base, sizeof s->source[0]);
	}
	s->n++;
	return TRUE;
}

static void
check_seen (const char *how, const struct seen *s, const char *first, const char *second)
{
	static const MtaLineKind kinds[] = {
		MTA_LINE_MARKER, MTA_LINE_EVENT, MTA_LINE_BAD, MTA_LINE_TRACKED,
		MTA_LINE_EVENT, MTA_LINE_BLANK, MTA_LINE_MARKER,
	};

	CHECK (s->n == 7, "%s: %d lines, want 7", how, s->n);
	for (int i = 0; i < 7 && i < s->n; i++) {
		CHECK (s->kind[i] == kinds[i], "%s: line %d kind %d", how, i + 1, s->kind[i]);
		CHECK (s->lineno[i] == (uint64_t) i + 1, "%s: line %d numbered %llu", how, i + 1,
		       (unsigned long long) s->lineno[i]);
		CHECK (s->source_lineno[i] == (uint64_t) (i < 4 ? i + 1 : i - 3),
		       "%s: line %d is line %llu of its part", how, i + 1,
		       (unsigned long long) s->source_lineno[i]);
		CHECK (strcmp (s->source[i], i < 4 ? first : second) == 0, "%s: line %d from '%s'", how,
		       i + 1, s->source[i]);
	}
}

static void
check_buffers (void)
{
	struct seen s = { 0 };
	g_autoptr (GError) error = NULL;
	g_autoptr (MtaReader) r = mta_reader_new (collect, &s);

	CHECK (mta_reader_read_buffer (r, "one", part1, strlen (part1), &error), "part 1: %s",
	       error ? error->message : "");
	CHECK (mta_reader_read_buffer (r, "two", part2, strlen (part2), &error), "part 2: %s",
	       error ? error->message : "");
	check_seen ("buffers", &s, "one", "two");
	CHECK (mta_reader_lines (r) == 7, "%llu lines", (unsigned long long) mta_reader_lines (r));
	CHECK (mta_reader_bad_lines (r) == 1, "%llu bad lines",
	       (unsigned long long) mta_reader_bad_lines (r));
}

/* PATH1 and PATH2: the two parts as files, compressed or not. */
static void
check_files (const char *path1, const char *path2)
{
	struct seen s = { 0 };
	g_autoptr (GError) error = NULL;
	g_autoptr (MtaReader) r = mta_reader_new (collect, &s);
	g_autofree char *base1 = g_path_get_basename (path1);
	g_autofree char *base2 = g_path_get_basename (path2);

	CHECK (mta_reader_read_file (r, path1, &error), "%s: %s", path1, error ? error->message : "");
	CHECK (mta_reader_read_file (r, path2, &error), "%s: %s", path2, error ? error->message : "");
	check_seen (path1, &s, base1, base2);
}

/* Write the two parts where the test script asks (to compress them). */
static int
write_parts (const char *path1, const char *path2)
{
	return !g_file_set_contents (path1, part1, -1, NULL) ||
	       !g_file_set_contents (path2, part2, -1, NULL);
}

int
main (int argc, char **argv)
{
	if (argc == 4 && strcmp (argv[1], "--write") == 0)
		return write_parts (argv[2], argv[3]);
	for (size_t i = 0; i < G_N_ELEMENTS (lines); i++)
		check_line (&lines[i]);
	for (size_t i = 0; i < G_N_ELEMENTS (tracked); i++)
		check_line (&tracked[i]);
	check_hex ();
	check_words ();
	check_buffers ();
	if (argc == 3)
		check_files (argv[1], argv[2]);
	printf ("# %zu lines classified, %zu tracked, %zu words, two parts read%s\n",
		G_N_ELEMENTS (lines), G_N_ELEMENTS (tracked), G_N_ELEMENTS (words),
		argc == 3 ? " twice" : "");
	return verdict ();
}
