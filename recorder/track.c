/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* track.c -- allocators and reference counts tracked by function name
 * (MTREC_TRACK; share/track.md).
 *
 * MTREC_TRACK is parsed once, at start, into a static table (no malloc:
 * we are inside the program's start-up).  Each tracked function gets the
 * wrapper of its table index -- 64 of them are prebuilt below -- whose
 * address got.c puts in every call slot of the function, as for the
 * malloc family.  A wrapper takes six integer/pointer argument registers,
 * calls the real function with them, and records what the table says; the
 * real function ignores the registers it does not take.  That is why a
 * tracked function must take at most 6 integer or pointer arguments and
 * return an integer or a pointer (no float, no struct by value, not
 * variadic): share/track.md.
 *
 * As for malloc, a release or an unreference is recorded before the real
 * call and an allocation or a reference after it returns, so that another
 * thread's "+" of a reused address never lands before our "-".  A tracked
 * call made inside another tracked call of the same family in the same
 * thread and made from the library that defines it (mem_get0 calling
 * mem_get, dict_new calling dict_ref) is not recorded: the outer call says
 * it, charged to the program's line.  One made from elsewhere is the
 * program's own, called back from inside the library (an inode_link whose
 * table prune calls FUSE's invalidator, which takes a reference; an
 * inode_unref whose destruction calls a translator's forget, which drops
 * others): it is recorded. */
#include "track.h"
#include "got.h"
#include "rec.h"
#include "shim.h"
#include "events.h"
#include "prim.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#define NAME_LEN 128	/* a function name, with its NUL */
#define FAMILY_LEN 64	/* a family name, with its NUL (KIND: 1-63 bytes) */
#define SPEC_LEN 8192	/* one item, or the whole of a profile, as copied */

struct item {
	char name[NAME_LEN];
	char family[FAMILY_LEN];
	char op;		/* '+' alloc, '-' free, 'r' ref, 'u' unref */
	unsigned char arg;	/* 1-based argument; 0: the return value (ref) or no size (alloc) */
	unsigned char argm;	/* alloc N*M: M, else 0 */
	unsigned char deref;	/* alloc *N: the size is the word argument N points to */
	unsigned char fam;	/* family number, for the nesting guard */
	unsigned char told;	/* coverage: 0 not yet, 1 told without slots, 2 with slots */
	uintptr_t lib, lo, hi;	/* the mapping of the object that defines `lib' (the real function) */
};

static struct item items[MTREC_TRACK_MAX];
static int nitems;
static struct mtrec_got_func *table;	/* items[i]'s entry is table[i] */

/* Families this thread is inside a tracked call of (bit = family number),
 * and the program's line that made the innermost of those calls. */
static __thread uint64_t inside;
static __thread const void *outer_caller;

typedef uintptr_t (*track_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

#include "track-profiles.h"	/* generated from share/track (Makefile) */

/* ---- the wrappers ------------------------------------------------------- */

static uintptr_t size_of(const struct item *it, const uintptr_t *a)
{
	if (it->arg == 0)
		return 0;	/* not known: "SIZE 0" in the trace */
	/* A pool that holds its object size in its first word (GlusterFS's
	 * struct mem_pool): read once the allocation from it succeeded. */
	if (it->deref)
		return a[it->arg - 1] ? *(const unsigned long *)a[it->arg - 1] : 0;
	return it->argm ? a[it->arg - 1] * a[it->argm - 1] : a[it->arg - 1];
}

/* Whether CALLER lies in the object that defines REAL: a call the library
 * makes to itself.  _dl_find_object takes no lock; its answer is kept per
 * function (a store of three words: a reader that sees them torn looks
 * again, as a miss). */
static int from_own_library(struct item *it, uintptr_t real, const void *caller)
{
	uintptr_t lo = __atomic_load_n(&it->lo, __ATOMIC_ACQUIRE);
	uintptr_t hi = __atomic_load_n(&it->hi, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&it->lib, __ATOMIC_ACQUIRE) != real || hi == 0) {
		struct dl_find_object fo;

		if (_dl_find_object((void *)real, &fo) != 0)
			return 1;	/* not known: as before, the outer call says it */
		lo = (uintptr_t)fo.dlfo_map_start, hi = (uintptr_t)fo.dlfo_map_end;
		__atomic_store_n(&it->lo, lo, __ATOMIC_RELEASE);
		__atomic_store_n(&it->hi, hi, __ATOMIC_RELEASE);
		__atomic_store_n(&it->lib, real, __ATOMIC_RELEASE);
	}
	return (uintptr_t)caller - lo < hi - lo;
}

/* A caller in this library (prim_in_recorder): a tracked function that
 * ends in a tail call of another (fd_anonymous jumping to
 * fd_anonymous_with_flags) returns into our wrapper, so the inner one's
 * caller is ours and the outer call's line stands for it. */
static uintptr_t track_call(int i, const void *caller, uintptr_t a1, uintptr_t a2, uintptr_t a3,
			    uintptr_t a4, uintptr_t a5, uintptr_t a6)
{
	struct item *it = &items[i];
	track_fn real = (track_fn)__atomic_load_n(&table[i].real, __ATOMIC_ACQUIRE);
	const uintptr_t a[6] = { a1, a2, a3, a4, a5, a6 };
	uint64_t bit = 1ull << it->fam, was = inside;
	const void *was_caller = outer_caller;
	const void *was_wrapper = mtrec_wrapper_caller;
	uintptr_t ret, p;
	int own;

	if ((own = inside && prim_in_recorder(caller)) != 0)
		caller = outer_caller;	/* a tail call: the outer call's line */
	else if (was_wrapper && prim_in_recorder(caller))
		caller = was_wrapper;	/* the same, the outer call not recorded */
	mtrec_wrapper_caller = caller;
	if (((inside & bit) && (own || from_own_library(it, (uintptr_t)real, caller))) ||
	    !mtrec_wants()) {
		ret = real(a1, a2, a3, a4, a5, a6);
		mtrec_wrapper_caller = was_wrapper;
		return ret;
	}
	inside |= bit;
	outer_caller = caller;
	if (it->op == '-' || it->op == 'u') {
		if ((p = a[it->arg - 1]) != 0)
			mtrec_record_kind(caller, it->family, it->op, (const void *)p, 0, 0);
		ret = real(a1, a2, a3, a4, a5, a6);
	} else {
		ret = real(a1, a2, a3, a4, a5, a6);
		p = it->op == '+' || it->arg == 0 ? ret : a[it->arg - 1];
		/* A failed allocation (NULL) is not an event of the family. */
		if (p != 0)
			mtrec_record_kind(caller, it->family, it->op, (const void *)p, it->op == '+',
					  it->op == '+' ? size_of(it, a) : 0);
	}
	inside = was;	/* a call back from the library leaves its caller inside */
	outer_caller = was_caller;
	mtrec_wrapper_caller = was_wrapper;
	return ret;
}

#define WRAP(i) \
	static uintptr_t wrap_##i(uintptr_t a1, uintptr_t a2, uintptr_t a3, uintptr_t a4, \
				  uintptr_t a5, uintptr_t a6) \
	{ \
		return track_call(i, __builtin_return_address(0), a1, a2, a3, a4, a5, a6); \
	}
#define WRAP8(a, b, c, d, e, f, g, h) WRAP(a) WRAP(b) WRAP(c) WRAP(d) WRAP(e) WRAP(f) WRAP(g) WRAP(h)
WRAP8(0, 1, 2, 3, 4, 5, 6, 7)
WRAP8(8, 9, 10, 11, 12, 13, 14, 15)
WRAP8(16, 17, 18, 19, 20, 21, 22, 23)
WRAP8(24, 25, 26, 27, 28, 29, 30, 31)
WRAP8(32, 33, 34, 35, 36, 37, 38, 39)
WRAP8(40, 41, 42, 43, 44, 45, 46, 47)
WRAP8(48, 49, 50, 51, 52, 53, 54, 55)
WRAP8(56, 57, 58, 59, 60, 61, 62, 63)

#define W8(a, b, c, d, e, f, g, h) wrap_##a, wrap_##b, wrap_##c, wrap_##d, wrap_##e, wrap_##f, \
	wrap_##g, wrap_##h
static const track_fn wrappers[MTREC_TRACK_MAX] = {
	W8(0, 1, 2, 3, 4, 5, 6, 7), W8(8, 9, 10, 11, 12, 13, 14, 15),
	W8(16, 17, 18, 19, 20, 21, 22, 23), W8(24, 25, 26, 27, 28, 29, 30, 31),
	W8(32, 33, 34, 35, 36, 37, 38, 39), W8(40, 41, 42, 43, 44, 45, 46, 47),
	W8(48, 49, 50, 51, 52, 53, 54, 55), W8(56, 57, 58, 59, 60, 61, 62, 63),
};

/* ---- parsing -------------------------------------------------------------
 * MTREC_TRACK = GROUP[;GROUP...], GROUP = ITEM[,ITEM...],
 * ITEM = FUNC:KIND[:ARG[:FAMILY]] | @PROFILE.  An item without FAMILY
 * belongs to the family named after the first function written in its
 * group; a profile's items name their own. */

/* The functions the recorder already interposes: their slots are the
 * malloc family's, never a tracked wrapper's. */
static int interposed(const char *name)
{
#define NAME(name, ret, params) #name,
	static const char *const names[] = { MTREC_MALLOC_FAMILY(NAME) };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

static void bad(const char *item, const char *why)
{
	prim_say_error("MTREC_TRACK: '", item, "': ", why, "; ignored", SAY_END);
}

/* "N", "N*M" or "*N" (1..6; N alone may be 0): 0, or -1. */
static int parse_arg(const char *s, int op, unsigned char *arg, unsigned char *argm,
		     unsigned char *deref)
{
	*arg = 0, *argm = 0, *deref = 0;
	if (op == '+' && s[0] == '*' && s[1] >= '1' && s[1] <= '6' && s[2] == '\0')
		*arg = (unsigned char)(s[1] - '0'), *deref = 1;
	else if (!*s)
		*arg = op == '+' ? 0 : 1;	/* the defaults: size unknown; argument 1 */
	else if (s[0] >= '0' && s[0] <= '6' && s[1] == '\0')
		*arg = (unsigned char)(s[0] - '0');
	else if (op == '+' && s[0] >= '1' && s[0] <= '6' && s[1] == '*' && s[2] >= '1' &&
		 s[2] <= '6' && s[3] == '\0')
		*arg = (unsigned char)(s[0] - '0'), *argm = (unsigned char)(s[2] - '0');
	else
		return -1;
	/* A release or an unreference names the object it takes. */
	return (op == '-' || op == 'u') && *arg == 0 ? -1 : 0;
}

static int valid_name(const char *s, size_t max)
{
	size_t n = 0;

	for (; s[n]; n++) {
		char c = s[n];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == ':' || c == '-' || c == '$' || c == '@'))
			return 0;
	}
	return n > 0 && n < max;
}

static int family_number(const char *family)
{
	for (int i = 0; i < nitems; i++)
		if (strcmp(items[i].family, family) == 0)
			return items[i].fam;
	return nitems;	/* a new family: numbers stay below MTREC_TRACK_MAX */
}

/* Split at the first sep: the rest, or NULL (s ends there). */
static char *cut(char *s, char sep)
{
	char *p = strchr(s, sep);

	if (!p)
		return NULL;
	*p = '\0';
	return p + 1;
}

/* One FUNC:KIND[:ARG[:FAMILY]] item (in buf, cut up here); group: the
 * group's default family, set from the first function when empty. */
static void add_item(char *buf, const char *text, char *group)
{
	char *kind = cut(buf, ':'), *arg = kind ? cut(kind, ':') : NULL;
	char *family = arg ? cut(arg, ':') : NULL;
	struct item *it = &items[nitems];
	int op;

	if (!kind || !valid_name(buf, NAME_LEN))
		return bad(text, "FUNC:KIND[:ARG[:FAMILY]] is expected");
	op = strcmp(kind, "alloc") == 0 ? '+' : strcmp(kind, "free") == 0 ? '-'
	   : strcmp(kind, "ref") == 0 ? 'r' : strcmp(kind, "unref") == 0 ? 'u' : 0;
	if (!op)
		return bad(text, "KIND is one of alloc, free, ref, unref");
	if (parse_arg(arg ? arg : "", op, &it->arg, &it->argm, &it->deref) < 0)
		return bad(text, op == '+' ? "ARG is 0 (size unknown), N, N*M or *N, N and M from 1 to 6"
			   : op == 'r' ? "ARG is 0 (the return value) or an argument from 1 to 6"
			   : "ARG is an argument from 1 to 6");
	if (family && !valid_name(family, FAMILY_LEN))
		return bad(text, "FAMILY is 1 to 63 of [A-Za-z0-9_.:-]");
	if (interposed(buf))
		return bad(text, "the malloc family is recorded already");
	for (int i = 0; i < nitems; i++)
		if (strcmp(items[i].name, buf) == 0)
			return bad(text, "this function is tracked already");
	if (nitems == MTREC_TRACK_MAX)
		return bad(text, "too many tracked functions (at most 64)");
	if (!*group)
		memcpy(group, buf, strnlen(buf, FAMILY_LEN - 1));	/* cut as the trace cuts KIND */
	memcpy(it->name, buf, strlen(buf) + 1);
	memcpy(it->family, family ? family : group, strnlen(family ? family : group, FAMILY_LEN - 1));
	it->op = (char)op;
	it->fam = (unsigned char)family_number(it->family);
	nitems++;
}

static void add_list(const char *list, char *group, int depth);

/* @NAME: a compiled-in list (share/track/NAME.txt). */
static void add_profile(const char *text, int depth)
{
	char group[FAMILY_LEN] = "";

	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (strcmp(text + 1, profiles[i].name) == 0) {
			if (depth == 0)
				add_list(profiles[i].items, group, depth + 1);
			return;
		}
	bad(text, "no such profile (@glusterfs, @dpdk, @glib)");
}

/* The comma-separated items of one group. */
static void add_list(const char *list, char *group, int depth)
{
	char buf[SPEC_LEN];

	while (*list) {
		size_t n = strcspn(list, ",");

		while (n > 0 && (*list == ' ' || *list == '\t'))
			list++, n--;
		if (n >= sizeof(buf)) {
			prim_say_error("MTREC_TRACK: an item of more than 8191 bytes; ignored", SAY_END);
		} else if (n > 0) {
			char text[SPEC_LEN];

			memcpy(buf, list, n);
			buf[n] = '\0';
			while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t'))
				buf[--n] = '\0';
			memcpy(text, buf, n + 1);
			if (buf[0] == '@')
				add_profile(text, depth);
			else if (n > 0)
				add_item(buf, text, group);
		}
		list += n;
		while (*list == ',' || *list == ' ' || *list == '\t')
			list++;
	}
}

int mtrec_track_init(const char *spec, struct mtrec_got_func *funcs, int max)
{
	char group_text[SPEC_LEN];

	while (spec && *spec) {
		size_t n = strcspn(spec, ";");
		char family[FAMILY_LEN] = "";

		if (n >= sizeof(group_text))
			prim_say_error("MTREC_TRACK: a group of more than 8191 bytes; ignored", SAY_END);
		else {
			memcpy(group_text, spec, n);
			group_text[n] = '\0';
			add_list(group_text, family, 0);
		}
		spec += n + (spec[n] == ';');
	}
	if (nitems > max)
		nitems = max;
	for (int i = 0; i < nitems; i++)
		funcs[i] = (struct mtrec_got_func){ items[i].name, (void *)wrappers[i], NULL,
						    MTREC_GOT_LAZY | MTREC_GOT_OWN | MTREC_GOT_FIND, 0 };
	table = funcs;
	return nitems;
}

/* ---- coverage ------------------------------------------------------------ */

/* "NAME N, NAME N, ..." in lines of up to ~900 bytes. */
static void say_summary(void)
{
	char line[1024], *o = line, *lim = line + 900;

	for (int i = 0; i < nitems; i++) {
		unsigned long n = __atomic_load_n(&table[i].slots, __ATOMIC_RELAXED);

		if (n == 0)
			continue;
		if (o == line)
			o = prim_puts(o, lim, "track: call slots patched: ");
		else
			o = prim_puts(o, lim, ", ");
		o = prim_puts(o, lim, items[i].name);
		o = prim_puts(o, lim, " ");
		o = prim_putu(o, lim, n);
		items[i].told = 2;
		if (o >= lim - NAME_LEN - 24) {
			*o = '\0';
			prim_say(line, SAY_END);
			o = line;
		}
	}
	if (o != line) {
		*o = '\0';
		prim_say(line, SAY_END);
	}
}

/* A program that defines none of the functions (one that the traced
 * program exec'd, with MTREC_TRACK inherited) gets one line, not one per
 * function; those that appear in a later dlopen() are still told. */
static int none_here(void)
{
	char n[24];

	for (int i = 0; i < nitems; i++)
		if (__atomic_load_n(&table[i].real, __ATOMIC_RELAXED))
			return 0;
	*prim_putu(n, n + sizeof(n) - 1, (unsigned long)nitems) = '\0';
	prim_say("track: none of the ", n, nitems == 1 ? " function named" : " functions named",
		 " is in a loaded object; nothing is tracked until one is loaded", SAY_END);
	for (int i = 0; i < nitems; i++)
		items[i].told = 1;
	return 1;
}

void mtrec_track_coverage(int first)
{
	char n[24];

	static int started;

	if (!table || nitems == 0 || (!first && !__atomic_load_n(&started, __ATOMIC_ACQUIRE)))
		return;
	if (first) {
		say_summary();
		__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
		if (none_here())
			return;
	}
	for (int i = 0; i < nitems; i++) {
		unsigned long slots = __atomic_load_n(&table[i].slots, __ATOMIC_RELAXED);

		if (items[i].told == 2 || (items[i].told == 1 && slots == 0))
			continue;
		if (slots > 0) {
			*prim_putu(n, n + sizeof(n) - 1, slots) = '\0';
			prim_say("track: ", items[i].name, ": ", n,
				 slots == 1 ? " call slot patched" : " call slots patched",
				 " (an object loaded later)", SAY_END);
			items[i].told = 2;
		} else if (first) {
			prim_say("track: ", items[i].name, ": ",
				 __atomic_load_n(&table[i].real, __ATOMIC_RELAXED)
					 ? "no call slot to patch (not called from another object nor "
					   "through its own PLT: static, inlined, or not called)"
					 : "not found in any loaded object",
				 "; its calls are not recorded", SAY_END);
			items[i].told = 1;
		}
	}
}
