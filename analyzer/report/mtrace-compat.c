/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* mtrace-compat.c -- glibc 2.36's mtrace perl script, line by line.
 *
 * Its %allocated hash, keyed by the address text, is script-hash.h's.
 */
#include "mtrace-compat.h"
#include "script-hash.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What is printed for one bracket address, the entry its own key (a
 * default report of millions of callers has one each). */
typedef struct {
	const char *addr;     /* ADDR_LEN bytes: KEY, or a lookup's */
	size_t addr_len;
	char *text;           /* its own, or KEY */
	size_t len;
	gboolean unresolved;  /* the script's fallback: an address */
	char key[];
} CacheEntry;

/* A caller field of 8 bytes or more lately interned: its first and
 * last 8 bytes (the whole field up to 16 bytes), its length and id. */
typedef struct {
	uint64_t head, tail;
	uint32_t len;           /* 0: none */
	uint32_t id;
} RecentCaller;

#define RECENT_CALLERS 256

struct MtaCompat {
	MtaSymbolizer *sym;
	char *binary;
	FILE *out;
	gboolean improve;
	MtaScriptHash allocated;
	MtaStrtab callers;
	GHashTable *cache;      /* CacheEntry, by its bracket address */
	/* half the lines intern a caller, mostly one of a few hundred call
	 * sites ("./prog:[0x11e5]", "/lib/libfoo.so:(f+0x1e)[0x7f...]"): a
	 * direct-mapped cache of those answers most without hashing the
	 * field into the table */
	RecentCaller recent[RECENT_CALLERS];
};

static void
cache_entry_free (gpointer p)
{
	CacheEntry *e = p;
	if (e->text != e->key)
		g_free (e->text);
	g_free (e);
}

static guint
cache_hash (gconstpointer p)
{
	const CacheEntry *e = p;
	guint h = 5381;
	for (size_t i = 0; i < e->addr_len; i++)
		h = h * 33 + (guchar) e->addr[i];
	return h;
}

static gboolean
cache_equal (gconstpointer a, gconstpointer b)
{
	const CacheEntry *x = a, *y = b;
	return x->addr_len == y->addr_len && memcmp (x->addr, y->addr, x->addr_len) == 0;
}

MtaCompat *
mta_compat_new (MtaSymbolizer *sym, const char *binary, FILE *out)
{
	MtaCompat *c = g_new0 (MtaCompat, 1);
	c->sym = sym;
	c->binary = binary ? g_strdup (binary) : NULL;
	c->out = out;
	c->improve = TRUE;
	mta_script_hash_init (&c->allocated);
	mta_strtab_init (&c->callers);
	c->cache = g_hash_table_new_full (cache_hash, cache_equal, cache_entry_free, NULL);
	return c;
}

void
mta_compat_free (MtaCompat *c)
{
	if (c == NULL)
		return;
	mta_script_hash_release (&c->allocated);
	mta_strtab_release (&c->callers);
	g_hash_table_destroy (c->cache);
	g_free (c->binary);
	g_free (c);
}

void
mta_compat_set_improve (MtaCompat *c, gboolean improve)
{
	c->improve = improve;
}

/* ------------------------------------------------------------ location */

/* What the shell and addr2line would make of a word: be conservative,
 * anything unusual gives no answer. */
static gboolean
shell_safe (const char *p, size_t len)
{
	if (len == 0)
		return FALSE;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = p[i];
		if (!(g_ascii_isalnum (ch) || strchr ("_./+,:@%=-", ch) != NULL) || ch == 0)
			return FALSE;
	}
	return TRUE;
}

/* binutils bfd_scan_vma (s, NULL, 16). */
static uint64_t
bfd_scan_vma16 (const char *p, size_t len)
{
	uint64_t v = 0;
	size_t i = 0;
	if (len >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		i = 2;
	for (; i < len; i++) {
		int d = g_ascii_xdigit_value (p[i]);
		if (d < 0)
			break;
		v = v * 16 + (uint64_t) d;
	}
	return v;
}

/* &addr2line($prog, $addr) and its "%#x" variant; NULL when it fails. */
static const char *
script_addr2line (MtaCompat *c, const char *prog, size_t prog_len,
		  const char *addr, size_t addr_len, gboolean try_hex_first)
{
	if (c->sym == NULL || !shell_safe (prog, prog_len) || !shell_safe (addr, addr_len))
		return NULL;
	g_autofree char *path = g_strndup (prog, prog_len);
	MtaSpan a = { addr, addr_len };
	uint64_t v1 = mta_perl_hex (a), v2 = bfd_scan_vma16 (addr, addr_len);
	const char *r = NULL;
	if (try_hex_first)
		r = mta_symbolizer_addr2line (c->sym, path, v1);
	if (r == NULL && (!try_hex_first || v2 != v1))
		r = mta_symbolizer_addr2line (c->sym, path, v2);
	return r;
}

/* TEXT (taken; NULL: the address itself) for ADDR. */
static const CacheEntry *
cache_put (MtaCompat *c, const char *addr, size_t addr_len, char *text, size_t len, gboolean unresolved)
{
	CacheEntry *e = g_malloc0 (sizeof *e + addr_len + 1);
	if (addr_len > 0)
		memcpy (e->key, addr, addr_len);
	e->addr = e->key;
	e->addr_len = addr_len;
	e->text = text != NULL ? text : e->key;
	e->len = text != NULL ? len : addr_len;
	e->unresolved = unresolved;
	g_hash_table_add (c->cache, e);
	return e;
}

static const CacheEntry *
cache_get (MtaCompat *c, const char *addr, size_t addr_len)
{
	CacheEntry k = { .addr = addr, .addr_len = addr_len };
	return g_hash_table_lookup (c->cache, &k);
}

static char *
dup_bytes (const char *p, size_t len)
{
	char *r = g_malloc (len + 1);
	if (len > 0)   /* an empty GBytes has no data pointer */
		memcpy (r, p, len);
	r[len] = '\0';
	return r;
}

/* The script's &location($str), then our correction of its failures. */
static void
print_location (MtaCompat *c, const char *s, size_t len)
{
	const CacheEntry *e = NULL;
	ssize_t p;

	if (len == 0)
		return;
	/* (1) /.*[[](0x[^]]*)]:(.)* /: rightmost "[0x...]:" */
	for (p = (ssize_t) len - 1; p >= 0; p--) {
		if (s[p] != '[' || (size_t) p + 2 >= len || s[p + 1] != '0' || s[p + 2] != 'x')
			continue;
		const char *q = memchr (s + p + 3, ']', len - (size_t) p - 3);
		if (q == NULL || (size_t) (q - s) + 1 >= len || q[1] != ':')
			continue;
		const char *addr = s + p + 1;
		size_t alen = (size_t) (q - addr);
		if ((e = cache_get (c, addr, alen)) != NULL)
			goto out;
		if (c->binary != NULL) {
			const char *line = script_addr2line (c, c->binary, strlen (c->binary),
							     addr, alen, FALSE);
			if (line) {
				e = cache_put (c, addr, alen, g_strdup (line), strlen (line), FALSE);
				goto out;
			}
		}
		/* "$fct @ $addr", $fct being the last character matched by (.)* */
		GString *t = g_string_new (NULL);
		if ((size_t) (q - s) + 2 < len)
			g_string_append_c (t, s[len - 1]);
		g_string_append (t, " @ ");
		g_string_append_len (t, addr, (gssize) alen);
		size_t tl = t->len;
		e = cache_put (c, addr, alen, g_string_free (t, FALSE), tl, TRUE);
		goto out;
	}
	/* (2) /^(.*):.*[[](0x[^]]*)]$/ and (3) /^.*[[](0x[^]]*)]$/ */
	if (s[len - 1] == ']') {
		ssize_t pmax = -1;
		for (p = (ssize_t) len - 2; p >= 0; p--) {
			if (s[p] == ']')
				break;
			if (s[p] == '[' && (size_t) p + 2 < len - 1 && s[p + 1] == '0' && s[p + 2] == 'x') {
				pmax = p;
				break;
			}
		}
		if (pmax >= 0) {
			const char *addr = s + pmax + 1;
			size_t alen = len - 1 - (size_t) pmax - 1;
			ssize_t colon = -1;
			for (p = pmax - 1; p >= 0; p--)
				if (s[p] == ':') {
					colon = p;
					break;
				}
			if ((e = cache_get (c, addr, alen)) != NULL)
				goto out;
			if (c->binary != NULL) {
				const char *line;
				if (colon >= 0)
					line = script_addr2line (c, s, (size_t) colon, addr, alen, TRUE);
				else
					line = script_addr2line (c, c->binary, strlen (c->binary),
								 addr, alen, FALSE);
				if (line) {
					e = cache_put (c, addr, alen, g_strdup (line), strlen (line), FALSE);
					goto out;
				}
			}
			e = cache_put (c, addr, alen, NULL, 0, TRUE);
			goto out;
		}
	}
	/* No form matched: the string itself. */
	fwrite (s, 1, len, c->out);
	return;
out:
	if (e->unresolved && c->improve && c->sym != NULL && memchr (s, '\0', len) == NULL) {
		char *field = dup_bytes (s, len);   /* the lookup wants a C string */
		const MtaLocation *l = mta_symbolizer_resolve (c->sym, field);
		g_free (field);
		if (l->file_line != NULL) {
			fputs (l->file_line, c->out);
			return;
		}
	}
	fwrite (e->text, 1, e->len, c->out);
}

static void
print_caller_location (MtaCompat *c, uint32_t caller)
{
	print_location (c, mta_strtab_get (&c->callers, caller),
			mta_strtab_len (&c->callers, caller));
}

/* ------------------------------------------------------------ lines */

/* The id of the caller field P (LEN bytes) in c->callers. */
static inline uint32_t
caller_id (MtaCompat *c, const char *p, size_t len)
{
	if (len < 8 || len > UINT32_MAX)
		return mta_strtab_intern (&c->callers, p, len);
	uint64_t head, tail;
	memcpy (&head, p, 8);
	memcpy (&tail, p + len - 8, 8);
	RecentCaller *r = &c->recent[((head ^ tail ^ len) * 0x9e3779b97f4a7c15ULL) >> 56];
	G_STATIC_ASSERT (RECENT_CALLERS == 256);
	/* beyond 16 bytes the middle too: the table's copy */
	if (G_LIKELY (r->len == len && r->head == head && r->tail == tail) &&
	    (len <= 16 || memcmp (mta_strtab_get (&c->callers, r->id) + 8, p + 8, len - 16) == 0))
		return r->id;
	r->head = head;
	r->tail = tail;
	r->len = (uint32_t) len;
	r->id = mta_strtab_intern (&c->callers, p, len);
	return r->id;
}

/* $allocated{KEY} = [size, caller, line] */
static void
store (MtaCompat *c, const MtaScriptEvent *ev, uint64_t size, uint64_t lineno)
{
	MtaLiveEntry *e = mta_script_hash_insert (&c->allocated, ev);
	e->size = size;
	e->caller = caller_id (c, ev->where.p, ev->where.len);
	e->seq = lineno;
}

static void
print_addr (MtaCompat *c, char sign, MtaSpan key)
{
	fprintf (c->out, "%c %#018" PRIx64, sign, mta_perl_hex (key));
}

/* Everything but mta_compat_line's common case. */
static __attribute__ ((noinline)) gboolean
compat_line_slow (MtaCompat *c, const MtaLine *l)
{
	MtaScriptEvent ev;
	MtaLiveEntry *e;

	MtaHeader h;
	if (l->kind == MTA_LINE_EXT && c->sym != NULL && mta_header_parse (l->text.p, l->text.len, &h))
		mta_symbolizer_header (c->sym, &h);
	if (!mta_script_event (l, &ev))
		return TRUE;
	switch (ev.op) {
	case '+':
		if ((e = mta_script_hash_lookup (&c->allocated, &ev)) != NULL) {
			print_addr (c, '+', ev.key);
			fprintf (c->out, " Alloc %" PRIu64 " duplicate: ", l->lineno);
			print_caller_location (c, e->caller);
			fputc (' ', c->out);
			fwrite (ev.where.p, 1, ev.where.len, c->out);
			fputc ('\n', c->out);
		} else if (ev.key.len >= 2 && ev.key.p[0] == '0' && ev.key.p[1] == 'x')
			/* a well-formed size is plain hex: hex() is its value */
			store (c, &ev, l->kind == MTA_LINE_EVENT ? l->size : mta_perl_hex (ev.size),
			       l->lineno);
		break;
	case '-':
	case '<':
		if ((e = mta_script_hash_lookup (&c->allocated, &ev)) != NULL)
			mta_script_hash_remove (&c->allocated, &ev, e);
		else {
			print_addr (c, '-', ev.key);
			fprintf (c->out, " %s %" PRIu64 " was never alloc'd ",
				 ev.op == '-' ? "Free" : "Realloc", l->lineno);
			print_location (c, ev.where.p, ev.where.len);
			fputc ('\n', c->out);
		}
		break;
	case '>':
		if ((e = mta_script_hash_lookup (&c->allocated, &ev)) != NULL) {
			print_addr (c, '+', ev.key);
			fprintf (c->out, " Realloc %" PRIu64 " duplicate: %#010" PRIx64 " ", l->lineno,
				 e->size);
			print_caller_location (c, e->caller);
			fputc (' ', c->out);
			print_location (c, ev.where.p, ev.where.len);
			fputc ('\n', c->out);
		} else
			store (c, &ev, mta_perl_hex (ev.size), l->lineno);
		break;
	default:
		break;
	}
	return TRUE;
}

gboolean
mta_compat_line (const MtaLine *l, gpointer data, GError **error)
{
	MtaCompat *c = data;

	/* The common case first: a well-formed event whose address is spelled
	 * as %p spells it, so that its value stands for its string.  A new
	 * block, or the end of a known one, needs nothing more; anything the
	 * script would print goes the general way below. */
	if (G_LIKELY (l->kind == MTA_LINE_EVENT && l->addr_canonical)) {
		MtaLiveEntry *e;
		size_t before;

		switch (l->op) {
		case '+':
		case '>':
			/* hex() of a well-formed size is its value */
			before = c->allocated.live.count;
			e = mta_live_insert (&c->allocated.live, l->addr);
			if (G_LIKELY (c->allocated.live.count != before)) {
				e->size = l->size;
				e->caller = caller_id (c, l->caller.p, l->caller.len);
				e->seq = l->lineno;
				return TRUE;
			}
			break;
		case '-':
		case '<':
			e = mta_live_lookup (&c->allocated.live, l->addr);
			if (G_LIKELY (e != NULL)) {
				mta_live_remove_entry (&c->allocated.live, e);
				return TRUE;
			}
			break;
		default:
			return TRUE;
		}
	}
	(void) error;
	return compat_line_slow (c, l);
}

size_t
mta_compat_events (MtaEvent *ev, size_t n, uint64_t lineno, gpointer data)
{
	MtaCompat *c = data;
	MtaLiveTable *live = &c->allocated.live;

	/* mta_compat_line's common case, event after event: what it would
	 * print stops the run, and goes to it as a line */
	for (size_t i = 0; i < n; i++) {
		MtaLiveEntry *e;
		size_t before;

		switch (ev[i].op) {
		case '+':
		case '>':
			/* freed before any other event on it: a new block is
			 * stored then dropped, which leaves nothing; on a live
			 * one the script prints, its end taking it as usual */
			if (ev[i].pair != 0) {
				if (G_UNLIKELY (mta_live_lookup (live, ev[i].addr) != NULL))
					return i;
				ev[i + ev[i].pair].op = 0;
				break;
			}
			before = live->count;
			e = mta_live_insert (live, ev[i].addr);
			if (G_UNLIKELY (live->count == before))
				return i;
			e->size = ev[i].size;
			e->caller = caller_id (c, ev[i].caller.p, ev[i].caller.len);
			e->seq = lineno + i;
			break;
		case '-':
		case '<':
			e = mta_live_lookup (live, ev[i].addr);
			if (G_UNLIKELY (e == NULL))
				return i;
			mta_live_remove_entry (live, e);
			break;
		default:
			break;
		}
	}
	return n;
}

/* ------------------------------------------------------------ report */

typedef struct {
	char *key;      /* address string as the script sorts it */
	size_t len;
	uint64_t size;
	uint32_t caller;
} Leak;

static int
leak_cmp (const void *a, const void *b)
{
	const Leak *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = memcmp (x->key, y->key, n);
	if (r != 0)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void
add_leak (const char *key, size_t len, const MtaLiveEntry *e, gpointer data)
{
	GArray *leaks = data;
	Leak l = { dup_bytes (key, len), len, e->size, e->caller };
	g_array_append_val (leaks, l);
}

int
mta_compat_finish (MtaCompat *c)
{
	g_autoptr (GArray) all = g_array_sized_new (FALSE, FALSE, sizeof (Leak),
						    (guint) mta_script_hash_count (&c->allocated));

	mta_script_hash_foreach (&c->allocated, add_leak, all);
	g_array_sort (all, leak_cmp);   /* the script's "sort keys" */
	size_t n = all->len;
	const Leak *leaks = (const Leak *) (void *) all->data;
	if (n > 0) {
		fputs ("\nMemory not freed:\n-----------------\n", c->out);
		fputs ("           Address     Size     Caller\n", c->out);
	}
	for (size_t i = 0; i < n; i++) {
		MtaSpan key = { leaks[i].key, leaks[i].len };
		fprintf (c->out, "%#018" PRIx64 " %#8" PRIx64 "  at ", mta_perl_hex (key), leaks[i].size);
		print_caller_location (c, leaks[i].caller);
		fputc ('\n', c->out);
		g_free (leaks[i].key);
	}
	if (n == 0)
		fputs ("No memory leaks.\n", c->out);
	return n != 0;
}
