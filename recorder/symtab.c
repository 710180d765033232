/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symtab.c -- dladdr() in O(log n), for caller strings.
 *
 * glibc's dladdr (_dl_addr, elf/dl-addr.c) walks the whole dynamic symbol
 * table of the object on every call: each new caller in cc1 costs 29,000
 * symbol checks, 76% of its run time under the recorder (issue 18).  Here
 * an object's table is read once into a list of address ranges, each with
 * the symbol _dl_addr would pick anywhere in it, and an address costs two
 * binary searches: its object, then its range.
 *
 * The answer must be glibc 2.36's to the byte, so walk_symbols() follows
 * determine_info() rule by rule: the same symbols (those reached through
 * the GNU hash buckets and chains, so none below symoffset; or the first
 * nchain of DT_HASH, with its binding and visibility filters), the same
 * exclusions (STT_TLS, SHN_ABS, undefined at 0, st_name past DT_STRSZ),
 * the same containment (DL_ADDR_SYM_MATCH: a symbol of size 0, or an
 * undefined one, matches its own address only) and the same choice (the
 * highest st_value; among equals, the first in iteration order).
 * dli_fname and dli_fbase (l_name or _dl_argv[0], l_map_start) come from
 * one dladdr() call per object, whose whole answer is also checked against
 * the index.  Anything unusual (no dynamic table, tables outside the
 * object's segments, objects whose extents overlap, addresses in a gap) is
 * left to dladdr() itself.
 *
 * No locks, so nothing here waits: the list of objects is rebuilt when the
 * loader's counters (dlpi_adds, dlpi_subs) move, an object's index by the
 * first thread that needs it (others ask dladdr() meanwhile), and both are
 * published with a compare-and-swap.  Published memory is never unmapped,
 * since a reader may be in it; a dlclose drops every index.  So that a
 * daemon that loads and unloads plugins all day keeps bounded memory, the
 * index is given up for dladdr() itself after MAX_UNLOADS unloads. */
#include "symtab.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The native ELF types, ElfW() spelt once. */
typedef ElfW(Sym) elf_sym;
typedef ElfW(Phdr) elf_phdr;
typedef ElfW(Dyn) elf_dyn;
typedef ElfW(Addr) elf_addr;

/* One object's symbols: from seg_start[i] up to the next start, dladdr
 * names symbol seg_sym[i] - 1 of symtab, or none when seg_sym[i] is 0. */
struct sym_index {
	uintptr_t bias;
	const elf_sym *symtab;
	const char *strtab;
	const char *fname;
	void *fbase;
	size_t nseg;
	uintptr_t *seg_start;
	uint32_t *seg_sym;
};

/* Not an index: being built by process pid (odd values, so that a fork
 * child can tell a build its parent left unfinished), or cannot be built. */
#define INDEX_BUILDING(pid) ((struct sym_index *)(((uintptr_t)(pid) << 1) | 1))
#define INDEX_IS_BUILDING(ix) (((uintptr_t)(ix) & 1) != 0)
#define INDEX_NONE ((struct sym_index *)2)	/* ask dladdr */

struct object {
	uintptr_t lo, hi;	/* its PT_LOAD segments, rounded out to pages */
	uintptr_t bias;		/* l_addr */
	const elf_phdr *phdr;
	int phnum;
	int overlaps;		/* another object's extent meets this one's */
	const char *name;	/* l_name */
	struct sym_index *index;	/* NULL until built, or a marker (atomic) */
};

/* The objects loaded when the loader's counters were adds and subs. */
struct object_set {
	size_t maplen;
	unsigned long long adds, subs;
	size_t n;
	struct object objs[];	/* by address */
};

#define MAX_UNLOADS 32

static struct object_set *objects;
static unsigned long long first_subs = ~0ull;	/* the loader's unloads at our first list */
static int given_up;			/* MAX_UNLOADS reached */

static uintptr_t page_down(uintptr_t a)
{
	return a & ~((uintptr_t)getpagesize() - 1);
}

static uintptr_t page_up(uintptr_t a)
{
	return page_down(a + (uintptr_t)getpagesize() - 1);
}

/* Heapsort (qsort may allocate): no recursion, O(n log n) at worst, for
 * elements of up to 64 bytes.  Inlined into each caller, so that the size
 * and the comparison are constants there: through a function pointer and a
 * memcpy of unknown size, 30,000 symbols took twice as long to index. */
#define SORT_INLINE static inline __attribute__((always_inline))
typedef int before_fn(const void *x, const void *y);

SORT_INLINE void swap_elems(char *a, char *b, size_t size)
{
	char t[64];

	memcpy(t, a, size);
	memcpy(a, b, size);
	memcpy(b, t, size);
}

SORT_INLINE void sift(char *base, size_t size, before_fn *before, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && before(base + child * size, base + (child + 1) * size))
			child++;
		if (!before(base + root * size, base + child * size))
			return;
		swap_elems(base + root * size, base + child * size, size);
		root = child;
	}
}

SORT_INLINE void heap_sort(void *base, size_t n, size_t size, before_fn *before)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(base, size, before, i, n);
	for (size_t i = n; i-- > 1;) {
		swap_elems(base, (char *)base + i * size, size);
		sift(base, size, before, 0, i);
	}
}

/* ---- the list of objects ---- */

struct counters {
	unsigned long long adds, subs;
};

static int read_counters(struct dl_phdr_info *info, size_t size, void *data)
{
	struct counters *c = data;

	(void)size;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;		/* the first object is enough */
}

static int count_objects(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	++*(size_t *)data;
	return 0;
}

static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
	struct object_set *set = data;
	struct object o = {
		.lo = UINTPTR_MAX, .bias = info->dlpi_addr, .phdr = info->dlpi_phdr,
		.phnum = info->dlpi_phnum, .name = info->dlpi_name ? info->dlpi_name : "",
	};

	(void)size;
	if (set->n == 0) {
		/* The loader holds its lock over the whole walk: these counters
		 * go with exactly this list. */
		set->adds = info->dlpi_adds;
		set->subs = info->dlpi_subs;
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const elf_phdr *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		if (page_down(o.bias + ph->p_vaddr) < o.lo)
			o.lo = page_down(o.bias + ph->p_vaddr);
		if (page_up(o.bias + ph->p_vaddr + ph->p_memsz) > o.hi)
			o.hi = page_up(o.bias + ph->p_vaddr + ph->p_memsz);
	}
	if (o.hi <= o.lo)
		return 0;
	if (sizeof(*set) + (set->n + 1) * sizeof(struct object) > set->maplen) {
		set->n = 0;	/* more objects than counted: try again later */
		return 1;
	}
	set->objs[set->n++] = o;
	return 0;
}

static int object_before(const void *x, const void *y)
{
	return ((const struct object *)x)->lo < ((const struct object *)y)->lo;
}

/* The object whose extent holds a, or NULL. */
static struct object *object_of(struct object_set *set, uintptr_t a)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (set->objs[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < set->objs[lo - 1].hi ? &set->objs[lo - 1] : NULL;
}

/* A new list, keeping the indexes of objects that old (built with no
 * unload since) already had. */
static struct object_set *new_set(struct object_set *old)
{
	struct object_set *set;
	size_t n = 0, len;
	uintptr_t maxhi = 0;
	size_t maxi = 0;

	prim_dl_iterate_phdr(count_objects, &n);
	len = page_up(sizeof(*set) + (n + 16) * sizeof(struct object));
	if ((set = prim_map_anon(len)) == NULL)
		return NULL;
	set->maplen = len;
	prim_dl_iterate_phdr(collect, set);
	if (set->n == 0) {
		munmap(set, len);
		return NULL;
	}
	heap_sort(set->objs, set->n, sizeof(struct object), object_before);
	/* _dl_addr takes the first object, in load order, whose extent holds
	 * the address: where two extents meet, let it choose. */
	for (size_t i = 0; i < set->n; i++) {
		if (i > 0 && set->objs[i].lo < maxhi) {
			set->objs[i].overlaps = 1;
			set->objs[maxi].overlaps = 1;
		}
		if (set->objs[i].hi > maxhi) {
			maxhi = set->objs[i].hi;
			maxi = i;
		}
	}
	if (old && old->subs == set->subs) {
		for (size_t i = 0; i < set->n; i++) {
			struct object *o = &set->objs[i];
			const struct object *was = object_of(old, o->lo);
			struct sym_index *ix;
			if (!was || was->lo != o->lo || was->hi != o->hi || was->bias != o->bias ||
			    was->phdr != o->phdr || was->name != o->name)
				continue;
			ix = __atomic_load_n(&was->index, __ATOMIC_ACQUIRE);
			if (!INDEX_IS_BUILDING(ix))
				o->index = ix;
		}
	}
	return set;
}

/* The list for the objects loaded now, or NULL (then ask dladdr). */
static struct object_set *current_set(void)
{
	struct counters now = { 0, 0 };
	struct object_set *set, *fresh;

	prim_dl_iterate_phdr(read_counters, &now);
	set = __atomic_load_n(&objects, __ATOMIC_ACQUIRE);
	if (set && set->adds == now.adds && set->subs == now.subs)
		return set;
	if ((__atomic_load_n(&first_subs, __ATOMIC_RELAXED) != ~0ull &&
	     now.subs > MAX_UNLOADS + __atomic_load_n(&first_subs, __ATOMIC_RELAXED)) ||
	    __atomic_load_n(&given_up, __ATOMIC_RELAXED)) {
		__atomic_store_n(&given_up, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	if ((fresh = new_set(set)) == NULL)
		return NULL;
	if (!__atomic_compare_exchange_n(&objects, &set, fresh, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread was quicker: nobody has seen ours. */
		munmap(fresh, fresh->maplen);
		return NULL;
	}
	if (__atomic_load_n(&first_subs, __ATOMIC_RELAXED) == ~0ull)
		__atomic_store_n(&first_subs, fresh->subs, __ATOMIC_RELAXED);
	return fresh;
}

/* The PT_LOAD segment of o that holds [p, p + len), or NULL. */
static const elf_phdr *segment_of(const struct object *o, const void *p, size_t len)
{
	uintptr_t rel = (uintptr_t)p - o->bias;

	for (int i = 0; i < o->phnum; i++) {
		const elf_phdr *ph = &o->phdr[i];
		if (ph->p_type == PT_LOAD && rel - ph->p_vaddr < ph->p_memsz &&
		    len <= ph->p_memsz - (rel - ph->p_vaddr))
			return ph;
	}
	return NULL;
}

/* Where a segment ends, as an address. */
static uintptr_t segment_end(const struct object *o, const elf_phdr *ph)
{
	return o->bias + ph->p_vaddr + ph->p_memsz;
}

/* ---- one object's index ---- */

struct dyn {
	const elf_sym *symtab;
	const char *strtab;
	size_t strsz;
	const Elf32_Word *gnu_hash, *hash;
	int have_strsz;
};

/* A d_ptr of the dynamic section: the loader relocates them in place,
 * but not where the section is read-only (the vDSO, some ports), so take
 * whichever reading lands inside the object; 0 when unsure. */
static uintptr_t dyn_ptr(const struct object *o, elf_addr v)
{
	int as_is = v >= o->lo && v < o->hi;
	int biased = v + o->bias >= o->lo && v + o->bias < o->hi;

	if (o->bias == 0 || as_is != biased)
		return as_is ? v : biased ? v + o->bias : 0;
	return 0;
}

static int read_dynamic(const struct object *o, struct dyn *d)
{
	const elf_dyn *dyn = NULL;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < o->phnum; i++)
		if (o->phdr[i].p_type == PT_DYNAMIC)
			dyn = (const elf_dyn *)(o->bias + o->phdr[i].p_vaddr);
	if (!dyn || !segment_of(o, dyn, sizeof(*dyn)))
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const elf_sym *)dyn_ptr(o, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const char *)dyn_ptr(o, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			d->have_strsz = 1;
			break;
		case DT_GNU_HASH:
			if ((d->gnu_hash = (const Elf32_Word *)dyn_ptr(o, dyn->d_un.d_ptr)) == NULL)
				return -1;
			break;
		case DT_HASH:
			if ((d->hash = (const Elf32_Word *)dyn_ptr(o, dyn->d_un.d_ptr)) == NULL)
				return -1;
			break;
		}
	}
	if (!d->symtab || !d->strtab || !d->have_strsz ||
	    !segment_of(o, d->strtab, d->strsz) || !segment_of(o, d->symtab, sizeof(elf_sym)))
		return -1;
	return 0;
}

/* A symbol _dl_addr could pick: it matches addresses in [start, end). */
struct ent {
	uintptr_t start, end;
	uint32_t order;		/* in _dl_addr's walk: the first wins a tie */
	uint32_t sym;		/* symtab index + 1 */
};
_Static_assert(sizeof(struct ent) <= 64 && sizeof(struct object) <= 64,
	       "heap_sort swaps through 64 bytes");

/* determine_info()'s test of one symbol, but for the address: 1 when the
 * symbol could be picked (*e filled), 0 when never, -1 when odd. */
static int consider(const struct object *o, const struct dyn *d, const elf_sym *sym,
		    int sysv, struct ent *e)
{
	int undef_or_empty = sym->st_shndx == SHN_UNDEF || sym->st_size == 0;

	if (sysv) {
		/* Only the DT_HASH walk tests binding and visibility: the GNU
		 * hash table never holds local symbols (dl-addr.c). */
		int bind = ELF64_ST_BIND(sym->st_info);
		int vis = ELF64_ST_VISIBILITY(sym->st_other);
		if ((bind != STB_GLOBAL && bind != STB_WEAK) || vis == STV_HIDDEN ||
		    vis == STV_INTERNAL)
			return 0;
	}
	if (ELF64_ST_TYPE(sym->st_info) == STT_TLS ||
	    (sym->st_shndx == SHN_UNDEF && sym->st_value == 0) ||
	    sym->st_shndx == SHN_ABS || sym->st_name >= d->strsz)
		return 0;
	/* DL_ADDR_SYM_MATCH: addr >= start && ((undef_or_empty && addr ==
	 * start) || addr < start + st_size), in wrapping arithmetic. */
	e->start = o->bias + sym->st_value;
	if (e->start < o->bias)
		return -1;	/* l_addr + st_value wraps: order by value breaks */
	e->end = e->start + sym->st_size;
	if (sym->st_size == 0 || e->end < e->start)
		e->end = undef_or_empty ? e->start + 1 : e->start;
	if (e->end <= e->start)
		return e->end == e->start ? 0 : -1;
	e->sym = (uint32_t)(sym - d->symtab) + 1;
	return 1;
}

/* Every symbol determine_info() looks at, in its order; those it could
 * pick go to out (when not NULL).  Returns their number, or -1 when the
 * tables look wrong. */
static long walk_symbols(const struct object *o, const struct dyn *d, struct ent *out)
{
	const elf_phdr *ph = segment_of(o, d->symtab, sizeof(elf_sym));
	const elf_sym *symend = d->symtab + (segment_end(o, ph) - (uintptr_t)d->symtab) /
					      sizeof(elf_sym);
	uint32_t order = 0;
	long n = 0;
	struct ent e;
	int r;

	if (d->gnu_hash) {
		/* _dl_setup_hash: nbuckets, symoffset, bloom words, shift;
		 * the bloom filter; the buckets; the chains from symoffset. */
		const Elf32_Word *h = d->gnu_hash, *buckets, *chain, *hend;
		uint32_t nbuckets, symbias;

		if (!(ph = segment_of(o, h, 4 * sizeof(*h))))
			return -1;
		hend = (const Elf32_Word *)segment_end(o, ph);
		nbuckets = h[0];
		symbias = h[1];
		buckets = h + 4 + (size_t)h[2] * (sizeof(elf_addr) / 4);
		chain = buckets + nbuckets;
		if (buckets > hend || chain > hend || chain < buckets)
			return -1;
		for (uint32_t b = 0; b < nbuckets; b++) {
			uint32_t symndx = buckets[b];
			const Elf32_Word *p;
			if (symndx == 0)
				continue;
			if (symndx < symbias)
				return -1;
			p = chain + (symndx - symbias);
			do {
				if (p >= hend || d->symtab + symndx >= symend)
					return -1;
				r = consider(o, d, &d->symtab[symndx], 0, &e);
				if (r < 0)
					return -1;
				if (r > 0) {
					e.order = order;
					if (out)
						out[n] = e;
					n++;
				}
				order++;
				symndx++;
			} while ((*p++ & 1u) == 0);
		}
		return n;
	}
	{
		/* DT_HASH's nchain; without it, glibc stops where the string
		 * table starts. */
		size_t count;
		if (d->hash) {
			if (!segment_of(o, d->hash, 2 * sizeof(*d->hash)))
				return -1;
			count = d->hash[1];
		} else {
			count = (const char *)d->strtab > (const char *)d->symtab ?
				(size_t)((const elf_sym *)(const void *)d->strtab - d->symtab) : 0;
		}
		if (count > (size_t)(symend - d->symtab))
			return -1;
		for (size_t i = 0; i < count; i++) {
			r = consider(o, d, &d->symtab[i], 1, &e);
			if (r < 0)
				return -1;
			if (r > 0) {
				e.order = (uint32_t)i;
				if (out)
					out[n] = e;
				n++;
			}
		}
		return n;
	}
}

/* By address; among equal addresses the first in _dl_addr's walk last,
 * so that it is the most recent start when the ranges are swept. */
static int ent_before(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->start < y->start || (x->start == y->start && x->order > y->order);
}

/* Cut the address space at every start and end: between two cuts the set
 * of symbols that match does not change, nor the one _dl_addr picks, the
 * match with the highest start (the first in its walk among equals), that
 * is the last one pushed and still open.  Ends of symbols below the top
 * are only looked at when they come to the top.  At most 2n ranges. */
static size_t sweep(const struct ent *e, size_t n, uint32_t *stack,
		    uintptr_t *seg_start, uint32_t *seg_sym)
{
	size_t i = 0, sp = 0, nseg = 0;
	uintptr_t x;

	if (n == 0)
		return 0;
	x = e[0].start;
	for (;;) {
		uintptr_t next;
		uint32_t sym;
		while (i < n && e[i].start <= x)
			stack[sp++] = (uint32_t)i++;
		while (sp > 0 && e[stack[sp - 1]].end <= x)
			sp--;
		sym = sp > 0 ? e[stack[sp - 1]].sym : 0;
		if (nseg == 0 || seg_sym[nseg - 1] != sym) {
			seg_start[nseg] = x;
			seg_sym[nseg++] = sym;
		}
		if (i == n && sp == 0)
			return nseg;
		next = i < n ? e[i].start : UINTPTR_MAX;
		if (sp > 0 && e[stack[sp - 1]].end < next)
			next = e[stack[sp - 1]].end;
		x = next;
	}
}

static void answer(const struct sym_index *ix, uintptr_t a, Dl_info *info)
{
	size_t lo = 0, hi = ix->nseg;
	uint32_t sym;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->seg_start[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	sym = lo > 0 ? ix->seg_sym[lo - 1] : 0;
	info->dli_fname = ix->fname;
	info->dli_fbase = ix->fbase;
	if (sym) {
		info->dli_sname = ix->strtab + ix->symtab[sym - 1].st_name;
		info->dli_saddr = (void *)(ix->bias + ix->symtab[sym - 1].st_value);
	} else {
		info->dli_sname = NULL;
		info->dli_saddr = NULL;
	}
}

/* The index of o, checked against what dladdr said about a (first), or
 * NULL when o cannot be indexed. */
static struct sym_index *build_index(const struct object *o, uintptr_t a, const Dl_info *first)
{
	struct sym_index *ix;
	struct dyn d;
	size_t keep, tmp;
	struct ent *ents;
	uint32_t *stack;
	Dl_info check;
	char *map;
	long n;

	/* dladdr must have found o itself: its name, its first page. */
	if ((first->dli_fname != o->name && o->name[0] != '\0') ||
	    (uintptr_t)first->dli_fbase < o->lo || (uintptr_t)first->dli_fbase >= o->hi)
		return NULL;
	if (read_dynamic(o, &d) < 0 || (n = walk_symbols(o, &d, NULL)) < 0 ||
	    (unsigned long)n >= UINT32_MAX / 2)
		return NULL;
	keep = page_up(sizeof(*ix) + (2 * (size_t)n + 1) * (sizeof(uintptr_t) + sizeof(uint32_t)));
	tmp = page_up((size_t)n * (sizeof(struct ent) + sizeof(uint32_t)) + 1);
	if ((map = prim_map_anon(keep + tmp)) == NULL)
		return NULL;
	ix = (struct sym_index *)(void *)map;
	ix->seg_start = (uintptr_t *)(void *)(ix + 1);
	ix->seg_sym = (uint32_t *)(ix->seg_start + 2 * n + 1);
	ents = (struct ent *)(void *)(map + keep);
	stack = (uint32_t *)(ents + n);
	if (walk_symbols(o, &d, ents) != n) {
		munmap(map, keep + tmp);
		return NULL;
	}
	heap_sort(ents, (size_t)n, sizeof(struct ent), ent_before);
	ix->nseg = sweep(ents, (size_t)n, stack, ix->seg_start, ix->seg_sym);
	munmap(map + keep, tmp);
	ix->bias = o->bias;
	ix->symtab = d.symtab;
	ix->strtab = d.strtab;
	ix->fname = first->dli_fname;
	ix->fbase = first->dli_fbase;
	answer(ix, a, &check);
	if (check.dli_sname != first->dli_sname || check.dli_saddr != first->dli_saddr) {
		munmap(map, keep);
		return NULL;
	}
	return ix;
}

int mtrec_symtab_find(const void *addr, Dl_info *info)
{
	uintptr_t a = (uintptr_t)addr;
	struct object_set *set = current_set();
	struct sym_index *ix;
	struct object *o;
	Dl_info first;
	pid_t pid;

	if (!set || (o = object_of(set, a)) == NULL || o->overlaps || !segment_of(o, addr, 1))
		return -1;
	ix = __atomic_load_n(&o->index, __ATOMIC_ACQUIRE);
	if (ix == NULL || INDEX_IS_BUILDING(ix)) {
		/* Claim the building, so that other threads ask dladdr()
		 * meanwhile instead of waiting or building too; a claim made
		 * before a fork is the child's to take over. */
		pid = getpid();
		if (ix == INDEX_BUILDING(pid) ||
		    !__atomic_compare_exchange_n(&o->index, &ix, INDEX_BUILDING(pid), 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return -1;
		if (!dladdr(addr, &first) || (ix = build_index(o, a, &first)) == NULL)
			ix = INDEX_NONE;
		__atomic_store_n(&o->index, ix, __ATOMIC_RELEASE);
	}
	if (ix == INDEX_NONE)
		return -1;
	answer(ix, a, info);
	return 1;
}

int mtrec_symtab_addr(const void *addr, Dl_info *info)
{
	if (mtrec_symtab_find(addr, info) > 0)
		return 1;
	return dladdr(addr, info);
}

void mtrec_symtab_reset(void)
{
	__atomic_store_n(&objects, NULL, __ATOMIC_RELEASE);
}
