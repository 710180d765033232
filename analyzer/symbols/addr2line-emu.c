/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* addr2line-emu.c -- what `addr2line -e OBJECT ADDR` (GNU binutils 2.40)
 * prints on its first line, so that the output of /usr/bin/mtrace, which
 * runs it, can be reproduced byte for byte without a subprocess.
 *
 * binutils' rules: an address outside every SHF_ALLOC section is "??:0";
 * else the DWARF line table row (file name built like bfd/dwarf2.c
 * concat_filename: a relative name is prefixed with DW_AT_comp_dir, and
 * " (discriminator N)" follows the line; in DWARF 5, a row before any
 * DW_LNS_set_file named by file entry 0, where the standard says 1:
 * elf-module.c's bfd_initial_file); else the nearest function symbol
 * of that section (bfd/elf.c _bfd_elf_find_function, symbols from
 * .symtab, or .dynsym when there is none) printed as "FILE:?" with the
 * STT_FILE symbol before it, or "??:?". */
#include "addr2line-emu.h"

#include <gelf.h>
#include <string.h>

/* bfd/elf.c _bfd_elf_find_function over .symtab (or .dynsym). */
typedef struct {
	gboolean found;
	uint64_t code_off, code_size;
	unsigned char type;
	const char *filename;
} FuncFit;

static gboolean
better_fit (const FuncFit *c, unsigned char type, uint64_t code_off, uint64_t size, uint64_t offset)
{
	if (code_off > offset)
		return FALSE;
	if (code_off < c->code_off)
		return FALSE;
	if (code_off > c->code_off)
		return TRUE;
	if (c->code_off + c->code_size <= offset)
		return size > c->code_size;
	if (code_off + size > offset) {
		gboolean new_func = type == STT_FUNC, old_func = c->type == STT_FUNC;
		if (new_func && !old_func)
			return TRUE;
		if (!new_func && old_func)
			return FALSE;
		return size < c->code_size;
	}
	return FALSE;
}

static gboolean
symtab_function (MtaModule *m, const MtaSection *sec, uint64_t addr, const char **filename)
{
	Elf_Scn *symscn = NULL, *dynscn = NULL;
	GElf_Shdr symsh = { 0 }, dynsh = { 0 };
	size_t nsec = 0;

	elf_getshdrnum (m->elf, &nsec);
	for (size_t i = 1; i < nsec; i++) {
		Elf_Scn *scn = elf_getscn (m->elf, i);
		GElf_Shdr sh;
		if (scn == NULL || gelf_getshdr (scn, &sh) == NULL || sh.sh_entsize == 0)
			continue;
		if (sh.sh_type == SHT_SYMTAB && symscn == NULL)
			symscn = scn, symsh = sh;
		else if (sh.sh_type == SHT_DYNSYM && dynscn == NULL)
			dynscn = scn, dynsh = sh;
	}
	/* addr2line's slurp_symtab: the dynamic symbols when no others. */
	if (symscn == NULL || symsh.sh_size / symsh.sh_entsize <= 1)
		symscn = dynscn, symsh = dynsh;
	if (symscn == NULL)
		return FALSE;
	Elf_Data *data = elf_getdata (symscn, NULL);
	if (data == NULL)
		return FALSE;
	size_t nsym = symsh.sh_size / symsh.sh_entsize;
	enum { NOTHING_SEEN, SYMBOL_SEEN, FILE_AFTER_SYMBOL_SEEN } state = NOTHING_SEEN;
	const char *file = NULL;
	FuncFit fit = { 0 };
	uint64_t offset = addr - sec->addr;

	for (size_t i = 1; i < nsym; i++) {
		GElf_Sym sym;
		if (gelf_getsym (data, (int) i, &sym) == NULL)
			continue;
		unsigned char type = GELF_ST_TYPE (sym.st_info);
		unsigned char bind = GELF_ST_BIND (sym.st_info);
		const char *name = elf_strptr (m->elf, symsh.sh_link, sym.st_name);
		if (name == NULL)
			name = "";
		if (type == STT_FILE) {
			file = name;
			if (state == SYMBOL_SEEN)
				state = FILE_AFTER_SYMBOL_SEEN;
			continue;
		}
		if (state == NOTHING_SEEN)
			state = SYMBOL_SEEN;
		if (type == STT_SECTION || type == STT_OBJECT || type == STT_COMMON ||
		    type == STT_TLS || sym.st_shndx != sec->index)
			continue;
		uint64_t size = sym.st_size;
		if (size == 0 && bind == STB_LOCAL && type == STT_NOTYPE &&
		    GELF_ST_VISIBILITY (sym.st_other) == STV_HIDDEN)
			continue;
		if (size == 0)
			size = 1;
		uint64_t code_off = sym.st_value - sec->addr;
		if (better_fit (&fit, type, code_off, size, offset)) {
			fit.found = TRUE;
			fit.code_off = code_off;
			fit.code_size = size;
			fit.type = type;
			fit.filename = NULL;
			if (file != NULL && (bind == STB_LOCAL || state != FILE_AFTER_SYMBOL_SEEN))
				fit.filename = file;
		}
	}
	*filename = fit.filename;
	return fit.found;
}

char *
mta_addr2line_emulate (MtaModule *m, uint64_t addr)
{
	const MtaSection *sec;
	const char *filename = NULL;
	char *r;

	if (!m->ok || (sec = mta_module_section (m, addr)) == NULL)
		return NULL;
	if ((r = mta_module_file_line_bfd (m, addr)) != NULL)
		return r;
	if (symtab_function (m, sec, addr, &filename))
		return g_strdup_printf ("%s:?", filename ? filename : "??");
	return NULL;
}
