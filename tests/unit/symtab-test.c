/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symtab-test.c -- unit test of recorder/symtab.c: for every address
 * of a large sample, mtrec_symtab_find() must say exactly what dladdr()
 * says, and must answer (not hand over to dladdr) everywhere inside the
 * objects it can index.
 *
 * The sample, per object (this executable, libc, libm, ld.so, the vDSO,
 * the symtab-odd shared objects): each dynamic symbol's start, start+-1, end-1, end, end+1;
 * every byte of the small objects' segments and every 13th of the big
 * ones'; addresses in no object.  Then the same after dlclose and a new
 * dlopen (stale indexes must go), and from several threads at once into an
 * object nobody has indexed yet.
 *
 * Usage: symtab-test DIR (where the libsymodd-*.so are).  Prints "# ..."
 * lines and a last line "PASS" or "FAIL N".
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symtab.h"

static int failures;

struct tally {
	const char *name;
	long checked, indexed;
};

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

/* Compare the two answers for a; inside an indexable object (must_index)
 * the index must have answered. */
static void check(const void *a, int must_index, struct tally *t)
{
	Dl_info want, got;
	int rw, rg;

	memset(&want, 0, sizeof(want));
	memset(&got, 0, sizeof(got));
	rw = dladdr(a, &want);
	rg = mtrec_symtab_find(a, &got);
	t->checked++;
	if (rg < 0) {
		if (must_index && failures++ < 20)
			printf("# %s: %p: not answered by the index\n", t->name, a);
		return;
	}
	t->indexed++;
	if (rw != rg || (rw && (want.dli_fbase != got.dli_fbase ||
				strcmp(str(want.dli_fname), str(got.dli_fname)) != 0 ||
				strcmp(str(want.dli_sname), str(got.dli_sname)) != 0 ||
				want.dli_saddr != got.dli_saddr))) {
		if (failures++ < 20)
			printf("# %s: %p: dladdr %d %s %p %s %p, index %d %s %p %s %p\n", t->name, a,
			       rw, str(want.dli_fname), want.dli_fbase, str(want.dli_sname),
			       want.dli_saddr, rg, str(got.dli_fname), got.dli_fbase,
			       str(got.dli_sname), got.dli_saddr);
	}
}

/* Every entry of an object's dynamic symbol table, counted without the
 * recorder's code: DT_HASH's nchain, or the end of the last GNU chain. */
static size_t dynsyms(const struct dl_phdr_info *info, const ElfW(Sym) **symtab)
{
	const ElfW(Dyn) *dyn = NULL;
	const Elf32_Word *hash = NULL, *gnu = NULL;
	size_t n = 0;

	*symtab = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = dyn->d_un.d_ptr;
		if (p < info->dlpi_addr)
			p += info->dlpi_addr;
		if (dyn->d_tag == DT_SYMTAB)
			*symtab = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_HASH)
			hash = (const Elf32_Word *)p;
		else if (dyn->d_tag == DT_GNU_HASH)
			gnu = (const Elf32_Word *)p;
	}
	if (hash)
		return hash[1];
	if (gnu) {
		const Elf32_Word *buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / 4);
		const Elf32_Word *chain = buckets + gnu[0] - gnu[1];
		for (uint32_t b = 0; b < gnu[0]; b++) {
			uint32_t i = buckets[b];
			if (i == 0)
				continue;
			while ((chain[i] & 1) == 0)
				i++;
			if (i + 1 > n)
				n = i + 1;
		}
	}
	return n;
}

struct want {
	const char *match;	/* a substring of the object's name, "" for the main program */
	int small;		/* every byte of its segments, else every 13th */
	struct tally t;
};

static struct want wants[] = {
	{ "", 1, { "executable", 0, 0 } },
	{ "libc.so", 0, { "libc", 0, 0 } },
	{ "libm.so", 0, { "libm", 0, 0 } },
	{ "ld-linux", 0, { "the dynamic linker", 0, 0 } },
	{ "linux-vdso", 1, { "the vDSO", 0, 0 } },
	{ "libsymodd-gnu", 1, { "gnu hash .so", 0, 0 } },
	{ "libsymodd-sysv", 1, { "DT_HASH .so", 0, 0 } },
	{ "libsymodd-both", 1, { "both hashes .so", 0, 0 } },
	{ "libsymodd-strip", 1, { "stripped .so", 0, 0 } },
};
#define NWANTS (int)(sizeof(wants) / sizeof(wants[0]))

static int sample_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct want *w = NULL;
	const ElfW(Sym) *symtab;
	uintptr_t bias = info->dlpi_addr;
	size_t n;

	(void)size;
	(void)data;
	for (int i = 0; i < NWANTS && !w; i++)
		if (wants[i].match[0] ? strstr(info->dlpi_name, wants[i].match) != NULL
				      : info->dlpi_name[0] == '\0')
			w = &wants[i];
	if (!w)
		return 0;
	n = dynsyms(info, &symtab);
	for (size_t i = 0; i < n; i++) {
		uintptr_t s = bias + symtab[i].st_value, z = symtab[i].st_size;
		if (symtab[i].st_value == 0 || symtab[i].st_shndx == SHN_ABS)
			continue;
		const uintptr_t pts[] = { s - 1, s, s + 1, s + z - 1, s + z, s + z + 1 };
		for (size_t k = 0; k < sizeof(pts) / sizeof(pts[0]); k++) {
			int inside = 0;
			for (int j = 0; j < info->dlpi_phnum; j++) {
				const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
				if (ph->p_type == PT_LOAD && pts[k] - bias - ph->p_vaddr < ph->p_memsz)
					inside = 1;
			}
			check((const void *)pts[k], inside, &w->t);
		}
	}
	for (int j = 0; j < info->dlpi_phnum; j++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[j];
		if (ph->p_type != PT_LOAD)
			continue;
		for (uintptr_t off = 0; off < ph->p_memsz; off += w->small ? 1 : 13)
			check((const void *)(bias + ph->p_vaddr + off), 1, &w->t);
	}
	return 0;
}

/* Threads racing into an object nobody has indexed: each answer right. */
struct racer {
	const char *lib;
	void *fn;
	struct tally t;
};

static void *race(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < 20000; i++)
		check((const char *)r->fn + i % 64, 0, &r->t);
	return NULL;
}

static void *open_lib(const char *dir, const char *name)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		printf("# %s\n", dlerror());
		failures++;
	}
	return h;
}

/* Every byte of the odd functions of lib, and a few outside. */
static void check_lib_now(void *h, const char *what)
{
	struct tally t = { what, 0, 0 };
	const char *f = dlsym(h, "odd_span");
	const char *e = dlsym(h, "odd_end");

	if (!f || !e || e < f) {
		printf("# %s: no odd_span/odd_end\n", what);
		failures++;
		return;
	}
	/* The margins may fall outside the text segment: then the index may
	 * hand them to dladdr. */
	for (const char *p = f - 16; p < e + 32; p++)
		check(p, p >= f && p <= e, &t);
	printf("# %s: %ld addresses, %ld by the index\n", what, t.checked, t.indexed);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";

	prim_loader_init(dl_iterate_phdr);	/* what the shim's bootstrap does */
	const char *libs[] = { "libsymodd-gnu.so", "libsymodd-sysv.so", "libsymodd-both.so",
			       "libsymodd-strip.so" };
	struct tally outside = { "outside", 0, 0 };
	pthread_t th[4];
	struct racer racers[4];
	void *h;
	volatile double x = 2.0;

	/* libm is linked for real: keep it. */
	x = sqrt(x) + cos(x);
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!open_lib(dir, libs[i]))
			return 1;
	dl_iterate_phdr(sample_object, NULL);
	for (int i = 0; i < NWANTS; i++) {
		printf("# %s: %ld addresses, %ld by the index\n", wants[i].t.name, wants[i].t.checked,
		       wants[i].t.indexed);
		if (wants[i].t.checked == 0 || wants[i].t.indexed == 0) {
			printf("# %s: not sampled or never indexed\n", wants[i].t.name);
			failures++;
		}
	}
	/* Addresses in no object: the index hands them to dladdr, or says
	 * what dladdr says. */
	check(NULL, 0, &outside);
	check((void *)16, 0, &outside);
	check(&outside, 0, &outside);
	check((void *)&h, 0, &outside);
	check((void *)UINTPTR_MAX, 0, &outside);

	/* Unload and load: the old index must not answer for the new object,
	 * with mtrec_symtab_reset() (the dlclose wrapper) and without. */
	for (int round = 0; round < 4; round++) {
		char what[64];
		h = open_lib(dir, round & 1 ? "libsymodd-extra2.so" : "libsymodd-extra.so");
		if (!h)
			return 1;
		snprintf(what, sizeof(what), "reloaded .so, round %d", round);
		check_lib_now(h, what);
		dlclose(h);
		if (round >= 2)
			mtrec_symtab_reset();
	}

	h = open_lib(dir, "libsymodd-race.so");
	if (!h)
		return 1;
	for (int i = 0; i < 4; i++) {
		racers[i] = (struct racer){ "race", dlsym(h, "odd_fn2"), { "race", 0, 0 } };
		pthread_create(&th[i], NULL, race, &racers[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		printf("# thread %d: %ld addresses, %ld by the index\n", i, racers[i].t.checked,
		       racers[i].t.indexed);
	}
	(void)x;
	if (failures)
		printf("FAIL %d\n", failures);
	else
		printf("PASS\n");
	return failures != 0;
}
