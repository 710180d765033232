/* got.c -- redirect the GOT/PLT slots through which other objects call
 * the interposed functions, for the objects the preload does not reach.
 *
 * LD_PRELOAD puts the recorder first in the global scope, but an object
 * dlopen()ed with RTLD_DEEPBIND looks in its own scope (itself, then its
 * dependencies: libc) first, and binds malloc and free to libc: its events
 * are lost, and the blocks it frees show up as allocated twice.  The slots
 * its JUMP_SLOT and GLOB_DAT relocations fill are rewritten here to hold
 * the recorder's functions (heaptrack's inject library does the same).
 *
 * What is never touched: the objects holding the addresses the caller
 * names (the recorder, libc, the dynamic linker, the next allocator), so
 * that their own calls keep going to the real functions; slots bound to
 * the object's own definition or to any other one (a program or plugin
 * that brings its own malloc); objects not yet relocated (another thread
 * is in dlopen: they are looked at again on the next pass); and anything
 * that does not look like a well-formed dynamic section (the object is
 * skipped, never trusted).  Objects in another link-map namespace
 * (dlmopen) have their own libc: only slots already bound to our real
 * function are redirected there, never lazy stubs.
 *
 * Runs on slow paths only: start-up, the dl* wrappers, a caller or stack
 * seen for the first time.  Each slot is one aligned pointer store, so a
 * thread calling through it at the same moment gets the old function or
 * the new one, both valid. */
#include "got.h"
#include "lock.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#define R_JUMP R_X86_64_JUMP_SLOT
#define R_GLOB R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP R_AARCH64_JUMP_SLOT
#define R_GLOB R_AARCH64_GLOB_DAT
#elif defined(__i386__)
#define R_JUMP R_386_JMP_SLOT
#define R_GLOB R_386_GLOB_DAT
#elif defined(__arm__)
#define R_JUMP R_ARM_JUMP_SLOT
#define R_GLOB R_ARM_GLOB_DAT
#elif defined(__s390x__)
#define R_JUMP R_390_JMP_SLOT
#define R_GLOB R_390_GLOB_DAT
#elif defined(__riscv) && __riscv_xlen == 64
#define R_JUMP R_RISCV_JUMP_SLOT
#define R_GLOB (-1)		/* data references use R_RISCV_64: left alone */
#endif

#if __ELF_NATIVE_CLASS == 64
#define R_SYM_OF(i) ELF64_R_SYM(i)
#define R_TYPE_OF(i) ELF64_R_TYPE(i)
#define ST_BIND_OF(i) ELF64_ST_BIND(i)
#define ST_TYPE_OF(i) ELF64_ST_TYPE(i)
#else
#define R_SYM_OF(i) ELF32_R_SYM(i)
#define R_TYPE_OF(i) ELF32_R_TYPE(i)
#define ST_BIND_OF(i) ELF32_ST_BIND(i)
#define ST_TYPE_OF(i) ELF32_ST_TYPE(i)
#endif

#define MAX_OBJECTS 4096
#define MAX_SEGS 16
#define MAX_DYN 4096		/* entries of a dynamic section worth reading */

/* An object already looked at, known by what dl_iterate_phdr says of it
 * without reading anything (a pass visits every object loaded).  After an
 * unload, another object may come to the same place with a name string
 * at the same address: its path must then be the same too (name_hash),
 * and a plugin loaded again has fresh slots, perhaps bound otherwise (now
 * with RTLD_DEEPBIND): check_slot, the first slot for one of the
 * functions, no longer holds check_value then. */
struct done {
	uintptr_t bias;
	const void *name, *phdr;
	unsigned name_hash;
	int present;
	uintptr_t *check_slot;
	uintptr_t check_value;
};

static struct {
	struct mtrec_got_func *funcs;
	int nfuncs;
	const void *const *keep;
	int nkeep;
	mtrec_got_note note;
	pthread_mutex_t lock;
	struct done done[MAX_OBJECTS];
	int ndone;
	int cursor;		/* where the next visit is likely found */
	int unloaded;		/* objects were unloaded since the last pass */
	int finding;		/* some functions are MTREC_GOT_FIND */
	int revisit;		/* find_reals learned a definition */
	int off;		/* mtrec detach gave the slots back: no passes */
	int restoring;		/* this pass gives them back (under lock) */
	unsigned long long seen_adds, seen_subs;
} G = { .lock = PTHREAD_MUTEX_INITIALIZER, .seen_adds = ~0ull, .seen_subs = ~0ull };

/* ---- one object's layout ------------------------------------------------ */

struct seg {
	uintptr_t lo, hi;
	int writable;
};

struct object {
	const struct dl_phdr_info *info;
	uintptr_t bias, lo, hi;
	struct seg seg[MAX_SEGS];
	int nseg;
	uintptr_t relro_lo, relro_hi;	/* the pages ld.so made read-only */
	int relro_open;			/* we made them writable this pass */
	int base_ns;			/* in the main link-map namespace */
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	const uint32_t *gnu_hash, *sysv_hash;	/* DT_GNU_HASH, DT_HASH */
};

static int mapped(const struct object *o, uintptr_t p, size_t len)
{
	for (int i = 0; i < o->nseg; i++)
		if (p >= o->seg[i].lo && p <= o->seg[i].hi && len <= o->seg[i].hi - p)
			return 1;
	return 0;
}

/* ld.so stores most d_ptr values relocated, some (the vDSO, a few
 * architectures) as link-time addresses. */
static uintptr_t dyn_addr(const struct object *o, uintptr_t v)
{
	return o->bias && v < o->bias ? v + o->bias : v;
}

static int read_layout(struct object *o, const struct dl_phdr_info *info)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	o->info = info;
	o->bias = info->dlpi_addr;
	o->lo = UINTPTR_MAX;
	o->hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = o->bias + ph->p_vaddr;

		if (ph->p_type == PT_GNU_RELRO) {
			o->relro_lo = lo & ~(page - 1);
			o->relro_hi = (lo + ph->p_memsz) & ~(page - 1);
		}
		if (ph->p_type != PT_LOAD || o->nseg == MAX_SEGS)
			continue;
		o->seg[o->nseg].lo = lo;
		o->seg[o->nseg].hi = lo + ph->p_memsz;
		o->seg[o->nseg].writable = (ph->p_flags & PF_W) != 0;
		o->nseg++;
		if (lo < o->lo)
			o->lo = lo;
		if (lo + ph->p_memsz > o->hi)
			o->hi = lo + ph->p_memsz;
	}
	return o->nseg > 0 ? 0 : -1;
}

/* Is this object on the main namespace's list?  Called under the loader's
 * write lock (inside dl_iterate_phdr), which also guards that list. */
static int in_base_namespace(const struct dl_phdr_info *info)
{
	int n = 0;

	for (const struct link_map *l = _r_debug.r_map; l && n < 100000; l = l->l_next, n++)
		if (l->l_name == info->dlpi_name && l->l_addr == info->dlpi_addr)
			return 1;
	return 0;
}

static int kept(const struct object *o)
{
	for (int i = 0; i < G.nkeep; i++)
		for (int j = 0; j < o->nseg; j++)
			if ((uintptr_t)G.keep[i] >= o->seg[j].lo && (uintptr_t)G.keep[i] < o->seg[j].hi)
				return 1;
	return 0;
}

/* ---- relocation tables -------------------------------------------------- */

/* One table of REL or RELA entries, read as (offset, info) pairs. */
struct table {
	uintptr_t at;
	size_t size, ent;
};

struct dynamic {
	struct table t[3];	/* DT_RELA, DT_REL, DT_JMPREL */
	int jmprel;		/* index of the JMPREL table in t, or -1 */
};

static int read_dynamic(struct object *o, struct dynamic *d)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t rela = 0, rel = 0, jmprel = 0, symtab = 0, strtab = 0;
	size_t relasz = 0, relsz = 0, pltrelsz = 0, relaent = sizeof(ElfW(Rela));
	size_t relent = sizeof(ElfW(Rel));
	long pltrel = -1;

	for (int i = 0; i < o->info->dlpi_phnum; i++)
		if (o->info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(o->bias + o->info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	for (int i = 0;; i++) {
		if (i == MAX_DYN || !mapped(o, (uintptr_t)&dyn[i], sizeof(dyn[i])))
			return -1;
		if (dyn[i].d_tag == DT_NULL)
			break;
		switch (dyn[i].d_tag) {
		case DT_RELA: rela = dyn[i].d_un.d_ptr; break;
		case DT_RELASZ: relasz = dyn[i].d_un.d_val; break;
		case DT_RELAENT: relaent = dyn[i].d_un.d_val; break;
		case DT_REL: rel = dyn[i].d_un.d_ptr; break;
		case DT_RELSZ: relsz = dyn[i].d_un.d_val; break;
		case DT_RELENT: relent = dyn[i].d_un.d_val; break;
		case DT_JMPREL: jmprel = dyn[i].d_un.d_ptr; break;
		case DT_PLTRELSZ: pltrelsz = dyn[i].d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn[i].d_un.d_val; break;
		case DT_SYMTAB: symtab = dyn[i].d_un.d_ptr; break;
		case DT_STRTAB: strtab = dyn[i].d_un.d_ptr; break;
		case DT_STRSZ: o->strsz = dyn[i].d_un.d_val; break;
		case DT_GNU_HASH: o->gnu_hash = (const uint32_t *)dyn[i].d_un.d_ptr; break;
		case DT_HASH: o->sysv_hash = (const uint32_t *)dyn[i].d_un.d_ptr; break;
		default: break;
		}
	}
	if (!symtab || !strtab || !o->strsz)
		return -1;
	o->symtab = (const ElfW(Sym) *)dyn_addr(o, symtab);
	o->strtab = (const char *)dyn_addr(o, strtab);
	if (!mapped(o, (uintptr_t)o->strtab, o->strsz))
		return -1;
	if (o->gnu_hash)
		o->gnu_hash = (const uint32_t *)dyn_addr(o, (uintptr_t)o->gnu_hash);
	if (o->sysv_hash)
		o->sysv_hash = (const uint32_t *)dyn_addr(o, (uintptr_t)o->sysv_hash);
	if (relaent < sizeof(ElfW(Rela)) || relent < sizeof(ElfW(Rel)))
		return -1;
	d->t[0] = (struct table){ rela ? dyn_addr(o, rela) : 0, relasz, relaent };
	d->t[1] = (struct table){ rel ? dyn_addr(o, rel) : 0, relsz, relent };
	d->t[2] = (struct table){ jmprel ? dyn_addr(o, jmprel) : 0, pltrelsz,
				  pltrel == DT_RELA ? relaent : relent };
	d->jmprel = jmprel && pltrelsz && (pltrel == DT_RELA || pltrel == DT_REL) ? 2 : -1;
	if (jmprel && d->jmprel < 0)
		d->t[2].size = 0;
	for (int i = 0; i < 3; i++)
		if (d->t[i].at && d->t[i].size && !mapped(o, d->t[i].at, d->t[i].size))
			return -1;
	return 0;
}

/* Entry i of a table: both REL and RELA begin with r_offset, r_info. */
static const ElfW(Rel) *entry(const struct table *t, size_t i)
{
	return (const ElfW(Rel) *)(t->at + i * t->ent);
}

static size_t count(const struct table *t)
{
	return t->at ? t->size / t->ent : 0;
}

static uintptr_t *slot_of(const struct object *o, const ElfW(Rel) *r)
{
	uintptr_t p = o->bias + r->r_offset;

	if (p % sizeof(uintptr_t) || !mapped(o, p, sizeof(uintptr_t)))
		return NULL;
	return (uintptr_t *)p;
}

/* A slot still holding its link-time contents: the object is being
 * relocated by another thread's dlopen. */
static int raw(const struct object *o, uintptr_t v)
{
	return o->bias && v < o->hi - o->bias;
}

/* The last JUMP_SLOT or GLOB_DAT of table t to a symbol that cannot be
 * null, or NULL. */
static const ElfW(Rel) *last_binding(const struct object *o, const struct table *t)
{
	for (size_t i = count(t); i-- > 0;) {
		const ElfW(Rel) *r = entry(t, i);
		const ElfW(Sym) *s = o->symtab + R_SYM_OF(r->r_info);
		long type = (long)R_TYPE_OF(r->r_info);

		if ((type == R_JUMP || type == R_GLOB) && R_SYM_OF(r->r_info) != 0 &&
		    mapped(o, (uintptr_t)s, sizeof(*s)) && ST_BIND_OF(s->st_info) != STB_WEAK)
			return r;
	}
	return NULL;
}

/* Is this object relocated?  ld.so processes the PLT relocations last, in
 * order, so the last JUMP_SLOT tells; an object without them, its last
 * GLOB_DAT to a symbol that cannot be null. */
static int relocated(const struct object *o, const struct dynamic *d)
{
	const ElfW(Rel) *r = NULL;
	uintptr_t *slot;

	if (d->jmprel >= 0)
		r = last_binding(o, &d->t[d->jmprel]);
	for (int t = 1; !r && t >= 0; t--)
		r = last_binding(o, &d->t[t]);
	if (!r)
		return 1;	/* nothing to redirect anyway */
	if ((slot = slot_of(o, r)) == NULL)
		return 1;	/* malformed: wanted() finds nothing usable either */
	return !raw(o, __atomic_load_n(slot, __ATOMIC_RELAXED));
}

/* ---- redirecting -------------------------------------------------------- */

static int in_object(const struct object *o, uintptr_t v)
{
	return mapped(o, v, 1);
}

static struct mtrec_got_func *wanted(const struct object *o, const ElfW(Rel) *r)
{
	const ElfW(Sym) *s = o->symtab + R_SYM_OF(r->r_info);
	long type = (long)R_TYPE_OF(r->r_info);
	const char *name;

	if ((type != R_JUMP && type != R_GLOB) || R_SYM_OF(r->r_info) == 0)
		return NULL;
	if (!mapped(o, (uintptr_t)s, sizeof(*s)) || s->st_name >= o->strsz)
		return NULL;
	name = o->strtab + s->st_name;
	for (int i = 0; i < G.nfuncs; i++)
		if (name[0] == G.funcs[i].name[0] &&
		    strnlen(name, o->strsz - s->st_name) < o->strsz - s->st_name &&
		    strcmp(name, G.funcs[i].name) == 0)
			/* The object's own definition (a private malloc) is
			 * left to it, unless asked for. */
			return s->st_shndx == SHN_UNDEF || (G.funcs[i].flags & MTREC_GOT_OWN)
				       ? &G.funcs[i] : NULL;
	return NULL;
}

static int in_relro(const struct object *o, const uintptr_t *slot)
{
	return (uintptr_t)slot >= o->relro_lo && (uintptr_t)slot < o->relro_hi;
}

static int writable(const struct object *o, const uintptr_t *slot)
{
	for (int i = 0; i < o->nseg; i++)
		if ((uintptr_t)slot >= o->seg[i].lo && (uintptr_t)slot < o->seg[i].hi)
			return o->seg[i].writable;
	return 0;
}

/* Make the slot writable if it lies in RELRO; 0 when it can be written. */
static int open_slot(struct object *o, const uintptr_t *slot)
{
	if (in_relro(o, slot)) {
		if (!o->relro_open) {
			if (mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo,
				     PROT_READ | PROT_WRITE) != 0)
				return -1;
			o->relro_open = 1;
		}
		return 0;
	}
	return writable(o, slot) ? 0 : -1;
}

static void close_relro(struct object *o)
{
	if (o->relro_open)
		mprotect((void *)o->relro_lo, o->relro_hi - o->relro_lo, PROT_READ);
	o->relro_open = 0;
}

/* Redirect one slot if it holds what we may replace: 0 when not, 1 when
 * it was not bound yet, 2 when it was bound past the preload. */
static int redirect(struct object *o, uintptr_t *slot, struct mtrec_got_func *f,
		    struct mtrec_got_report *rep)
{
	uintptr_t v = __atomic_load_n(slot, __ATOMIC_RELAXED);

	if (G.restoring) {
		if (v != (uintptr_t)f->ours || !f->real || open_slot(o, slot) < 0)
			return 0;
		__atomic_store_n(slot, (uintptr_t)f->real, __ATOMIC_RELAXED);
		return 2;
	}
	if (v == (uintptr_t)f->ours)
		return 0;
	if (!__atomic_load_n(&f->real, __ATOMIC_ACQUIRE))
		return 0;	/* MTREC_GOT_FIND: no definition yet to call */
	if (v != (uintptr_t)f->real && !((f->flags & MTREC_GOT_LAZY) && o->base_ns && in_object(o, v))) {
		rep->elsewhere++;
		return 0;
	}
	if (open_slot(o, slot) < 0)
		return 0;
	__atomic_store_n(slot, (uintptr_t)f->ours, __ATOMIC_RELAXED);
	__atomic_add_fetch(&f->slots, 1, __ATOMIC_RELAXED);
	return v == (uintptr_t)f->real ? 2 : 1;
}

/* All slots of one object; the number redirected (*bound of them bound
 * past the preload), or -1 when it is not relocated yet.  *first: the
 * first slot for one of the functions, redirected or not. */
static int patch_object(struct object *o, struct mtrec_got_report *rep, uintptr_t **first,
			unsigned *bound)
{
	struct dynamic d;
	int n = 0, how;

	if (read_dynamic(o, &d) < 0)
		return 0;
	if (!relocated(o, &d))
		return -1;
	o->base_ns = in_base_namespace(o->info);
	for (int t = 0; t < 3; t++)
		for (size_t i = 0; i < count(&d.t[t]); i++) {
			const ElfW(Rel) *r = entry(&d.t[t], i);
			struct mtrec_got_func *f = wanted(o, r);
			uintptr_t *slot;

			if (!f || (slot = slot_of(o, r)) == NULL)
				continue;
			if (!*first)
				*first = slot;
			if ((how = redirect(o, slot, f, rep)) == 0)
				continue;
			*bound += how == 2;
			n++;
		}
	close_relro(o);
	return n;
}

/* ---- finding definitions (MTREC_GOT_FIND) ----------------------------- */

static int named(const struct object *o, const ElfW(Sym) *s, const char *name)
{
	return mapped(o, (uintptr_t)s, sizeof(*s)) && s->st_name < o->strsz &&
	       strnlen(o->strtab + s->st_name, o->strsz - s->st_name) < o->strsz - s->st_name &&
	       strcmp(o->strtab + s->st_name, name) == 0;
}

/* A function the object defines and exports (not an IFUNC: its value is
 * the resolver, not the function). */
static int defines(const ElfW(Sym) *s)
{
	int type = ST_TYPE_OF(s->st_info), bind = ST_BIND_OF(s->st_info);

	return s->st_shndx != SHN_UNDEF && s->st_value != 0 && type == STT_FUNC &&
	       (bind == STB_GLOBAL || bind == STB_WEAK);
}

/* The symbol `name` in the GNU hash table (the bloom filter first: most
 * objects do not define it), or NULL. */
static const ElfW(Sym) *gnu_lookup(const struct object *o, const char *name)
{
	const uint32_t *ht = o->gnu_hash;
	uint32_t h = 5381, nbuckets, symoffset, bloom_size, shift, ix;
	const ElfW(Addr) *bloom;
	const uint32_t *buckets, *chain;
	ElfW(Addr) word;
	unsigned bits = sizeof(ElfW(Addr)) * 8;

	if (!mapped(o, (uintptr_t)ht, 16))
		return NULL;
	for (const char *c = name; *c; c++)
		h = h * 33 + (unsigned char)*c;
	nbuckets = ht[0], symoffset = ht[1], bloom_size = ht[2], shift = ht[3];
	bloom = (const ElfW(Addr) *)(ht + 4);
	buckets = (const uint32_t *)(bloom + bloom_size);
	chain = buckets + nbuckets;
	if (!nbuckets || !bloom_size || !mapped(o, (uintptr_t)bloom, (size_t)((const char *)chain - (const char *)bloom)))
		return NULL;
	word = bloom[(h / bits) % bloom_size];
	if (!((word >> (h % bits)) & (word >> ((h >> shift) % bits)) & 1))
		return NULL;
	ix = buckets[h % nbuckets];
	if (ix < symoffset)
		return NULL;
	for (int guard = 0; guard < 1000000; guard++, ix++) {
		const uint32_t *c = chain + (ix - symoffset);

		if (!mapped(o, (uintptr_t)c, sizeof(*c)))
			return NULL;
		if ((*c | 1) == (h | 1) && named(o, o->symtab + ix, name))
			return o->symtab + ix;
		if (*c & 1)
			return NULL;
	}
	return NULL;
}

/* Without a GNU hash table: DT_HASH's nchain is the number of symbols. */
static const ElfW(Sym) *sysv_lookup(const struct object *o, const char *name)
{
	uint32_t n;

	if (!mapped(o, (uintptr_t)o->sysv_hash, 8))
		return NULL;
	n = o->sysv_hash[1];
	for (uint32_t i = 1; i < n && i < 1000000; i++)
		if (named(o, o->symtab + i, name))
			return o->symtab + i;
	return NULL;
}

struct finding {
	int todo;	/* functions still looked for in this pass */
	int learned;	/* a definition was found */
	unsigned char found[256];
};

static int find_in(struct dl_phdr_info *info, size_t size, void *data)
{
	struct finding *fd = data;
	struct object o;
	struct dynamic d;

	(void)size;
	memset(&o, 0, sizeof(o));
	if (read_layout(&o, info) < 0 || kept(&o) || read_dynamic(&o, &d) < 0 ||
	    !in_base_namespace(info))
		return 0;
	for (int i = 0; i < G.nfuncs && i < 256; i++) {
		struct mtrec_got_func *f = &G.funcs[i];
		const ElfW(Sym) *s;

		if (!(f->flags & MTREC_GOT_FIND) || fd->found[i])
			continue;
		s = o.gnu_hash ? gnu_lookup(&o, f->name) : o.sysv_hash ? sysv_lookup(&o, f->name) : NULL;
		if (s && defines(s)) {
			__atomic_store_n(&f->real, (void *)(o.bias + s->st_value), __ATOMIC_RELEASE);
			fd->found[i] = 1;
			fd->todo--;
			fd->learned = 1;
		}
	}
	return fd->todo == 0;
}

/* Before a pass: the definitions of the MTREC_GOT_FIND functions not known
 * yet, and after an unload all of them (the object may be gone, or back at
 * another address).  A function no longer defined anywhere keeps its last
 * address: a slot still calling it was calling an unloaded object anyway. */
static void find_reals(int unloaded)
{
	struct finding fd;

	memset(&fd, 0, sizeof(fd));
	for (int i = 0; i < G.nfuncs && i < 256; i++) {
		if (!(G.funcs[i].flags & MTREC_GOT_FIND) ||
		    (!unloaded && __atomic_load_n(&G.funcs[i].real, __ATOMIC_ACQUIRE)))
			fd.found[i] = 1;
		else
			fd.todo++;
	}
	if (fd.todo)
		prim_dl_iterate_phdr(find_in, &fd);
	/* Objects already looked at may call a function only now defined
	 * (a plugin's, loaded after them): look at every object again. */
	if (fd.learned)
		__atomic_store_n(&G.revisit, 1, __ATOMIC_RELEASE);
}

/* ---- passes ------------------------------------------------------------- */

static unsigned hash_name(const char *s)
{
	unsigned h = 2166136261u;

	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static int same(const struct done *d, const struct dl_phdr_info *info)
{
	return d->bias == info->dlpi_addr && d->name == info->dlpi_name && d->phdr == info->dlpi_phdr &&
	       (!G.unloaded || d->name_hash == hash_name(info->dlpi_name));
}

/* Passes visit the objects in the same order each time, the order they
 * were added in: look after the last one found first. */
static struct done *find_done(const struct dl_phdr_info *info)
{
	for (int k = 0; k < G.ndone; k++) {
		int i = (G.cursor + k) % G.ndone;

		if (same(&G.done[i], info)) {
			G.cursor = i + 1;
			return &G.done[i];
		}
	}
	return NULL;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mtrec_got_report *rep = data;
	struct object o;
	struct done *d;
	uintptr_t *first = NULL;
	unsigned bound = 0;
	int n;

	(void)size;
	d = find_done(info);
	if (d && (!d->check_slot || __atomic_load_n(d->check_slot, __ATOMIC_RELAXED) == d->check_value)) {
		d->present = 1;
		return 0;
	}
	memset(&o, 0, sizeof(o));
	if (read_layout(&o, info) < 0)
		return 0;
	if (kept(&o))
		n = 0;
	else if ((n = patch_object(&o, rep, &first, &bound)) < 0) {
		rep->pending++;
		return 0;
	}
	if (n > 0) {
		rep->objects++;
		rep->slots += (unsigned)n;
		rep->bound += bound;
		if (G.note)
			G.note(info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "the program",
			       (unsigned)n, bound);
	}
	if (!d && G.ndone < MAX_OBJECTS)
		d = &G.done[G.ndone++];
	if (d)
		*d = (struct done){ info->dlpi_addr, info->dlpi_name, info->dlpi_phdr,
				    hash_name(info->dlpi_name), 1, first, first ? *first : 0 };
	return 0;
}

struct counters {
	unsigned long long adds, subs;
};

static int read_counters(struct dl_phdr_info *info, size_t size, void *data)
{
	struct counters *c = data;

	(void)size;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	return 1;
}

static unsigned long long read_subs(void)
{
	struct counters now = { 0, 0 };

	prim_dl_iterate_phdr(read_counters, &now);
	return now.subs;
}

int mtrec_got_changed(void)
{
	struct counters now = { 0, 0 };

	if (!G.funcs || __atomic_load_n(&G.off, __ATOMIC_ACQUIRE))
		return 0;
	prim_dl_iterate_phdr(read_counters, &now);
	return now.adds != __atomic_load_n(&G.seen_adds, __ATOMIC_RELAXED) ||
	       now.subs != __atomic_load_n(&G.seen_subs, __ATOMIC_RELAXED);
}

/* One pass.  Our lock is taken inside dl_iterate_phdr, under the dynamic
 * linker's lock, never the other way round: a thread allocating in a
 * dl_iterate_phdr callback of the program's (holding that lock) may come
 * here while another thread is in a pass. */
struct pass {
	struct mtrec_got_report *r;
	struct counters now;
	int locked, refused;
};

static int visit_locked(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pass *p = data;

	if (!p->locked) {
		if (p->refused || mtrec_lock(&G.lock, MTREC_LOCK_GOT) < 0) {
			p->refused = 1;
			return 1;	/* nested in this thread's own pass */
		}
		p->locked = 1;
		/* The counters as this pass sees the list: an object loaded
		 * after it is seen next time. */
		p->now.adds = info->dlpi_adds;
		p->now.subs = info->dlpi_subs;
		G.unloaded = p->now.subs != G.seen_subs;
		if (__atomic_exchange_n(&G.revisit, 0, __ATOMIC_ACQ_REL))
			G.ndone = 0;
		for (int i = 0; i < G.ndone; i++)
			G.done[i].present = 0;
	}
	return visit(info, size, p->r);
}

void mtrec_got_sync(struct mtrec_got_report *r)
{
	struct pass p = { r, { 0, 0 }, 0, 0 };

	memset(r, 0, sizeof(*r));
	if (!mtrec_got_changed())
		return;
	if (G.finding)
		find_reals(__atomic_load_n(&G.seen_subs, __ATOMIC_RELAXED) != ~0ull &&
			   read_subs() != __atomic_load_n(&G.seen_subs, __ATOMIC_RELAXED));
	prim_dl_iterate_phdr(visit_locked, &p);
	if (!p.locked)
		return;
	for (int i = 0; i < G.ndone; i++)
		if (!G.done[i].present)
			G.done[i--] = G.done[--G.ndone];
	if (r->pending == 0) {
		__atomic_store_n(&G.seen_adds, p.now.adds, __ATOMIC_RELAXED);
		__atomic_store_n(&G.seen_subs, p.now.subs, __ATOMIC_RELAXED);
	}
	mtrec_unlock(&G.lock, MTREC_LOCK_GOT);
}

/* mtrec detach: every slot holding one of ours holds the real function
 * again (a lazy stub redirected gets the definition the dynamic linker
 * would have bound it to); passes stop until mtrec_got_resume(). */
static int restore_visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pass *p = data;
	struct object o;
	uintptr_t *first = NULL;
	unsigned bound = 0;
	int n;

	(void)size;
	if (!p->locked) {
		if (p->refused || mtrec_lock(&G.lock, MTREC_LOCK_GOT) < 0) {
			p->refused = 1;
			return 1;
		}
		p->locked = 1;
		G.restoring = 1;
	}
	memset(&o, 0, sizeof(o));
	if (read_layout(&o, info) < 0 || kept(&o))
		return 0;
	if ((n = patch_object(&o, p->r, &first, &bound)) > 0)
		p->r->slots += (unsigned)n;
	return 0;
}

unsigned mtrec_got_restore(void)
{
	struct mtrec_got_report r = { 0, 0, 0, 0, 0 };
	struct pass p = { &r, { 0, 0 }, 0, 0 };

	if (!G.funcs)
		return 0;
	__atomic_store_n(&G.off, 1, __ATOMIC_RELEASE);
	prim_dl_iterate_phdr(restore_visit, &p);
	if (!p.locked)
		return 0;
	G.restoring = 0;
	G.ndone = 0;
	__atomic_store_n(&G.seen_adds, ~0ull, __ATOMIC_RELAXED);
	__atomic_store_n(&G.seen_subs, ~0ull, __ATOMIC_RELAXED);
	mtrec_unlock(&G.lock, MTREC_LOCK_GOT);
	return r.slots;
}

void mtrec_got_resume(void)
{
	__atomic_store_n(&G.off, 0, __ATOMIC_RELEASE);
}

int mtrec_got_init(struct mtrec_got_func *funcs, int n,
		   const void *const *keep, int nkeep, mtrec_got_note note)
{
#ifdef R_JUMP
	G.note = note;
	G.keep = keep;
	G.nkeep = nkeep;
	G.nfuncs = n;
	for (int i = 0; i < n; i++)
		G.finding |= (funcs[i].flags & MTREC_GOT_FIND) != 0;
	__atomic_store_n(&G.funcs, funcs, __ATOMIC_RELEASE);
	return 0;
#else
	(void)funcs, (void)n, (void)keep, (void)nkeep, (void)note;
	return -1;
#endif
}

void mtrec_got_fork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
}
