/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-module.h -- the object files a trace names (elf-module.c): each
 * opened once, with its sections, its DWARF line rows, its symbols and its
 * index of inlined functions.  The symbolizer (symbolize.c) decides which
 * file is which object; this only reads files. */
#ifndef MTA_ELF_MODULE_H
#define MTA_ELF_MODULE_H

#include <elfutils/libdwfl.h>
#include <glib.h>
#include <stdint.h>

#include "dwarf-inline.h"

/* An SHF_ALLOC section: its address range and index. */
typedef struct {
	uint64_t addr, size;
	size_t index;
} MtaSection;

/* One object file.  Read-only for users; the fields below the line are
 * the module's own. */
typedef struct {
	char *path;
	gboolean ok;              /* an ELF file we could read */
	uint16_t type;            /* ET_EXEC, ET_DYN */
	uint64_t load_base;       /* first PT_LOAD vaddr rounded down to the page */
	gboolean symtab;          /* a .symtab with symbols in the file itself */
	char *build_id;           /* hex, or NULL */
	Elf *elf;
	GArray *sections;         /* MtaSection, SHF_ALLOC only, file order */
	/* ---- */
	int fd;
	const Dwfl_Callbacks *callbacks;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	gboolean dwfl_tried;
	GArray *funcs;            /* symbols by address, once asked (symbol_at) */
	MtaDwarfInline *inl;      /* its inlined functions, once asked */
	struct MtaModules *owner;
	/* debuginfod: asked for its debug file (and how that ended: 0 got
	 * it, else a negative errno), for the no-symbols note */
	gboolean fetch_asked;
	int fetch_result;
	double fetch_seconds;
} MtaModule;

/* The cache of opened files.  CALLBACKS (libdwfl's, with the debug file
 * search path) must outlive it. */
typedef struct MtaModules MtaModules;
MtaModules *mta_modules_new (const Dwfl_Callbacks *callbacks);
void mta_modules_free (MtaModules *ms);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaModules, mta_modules_free)

/* Whether debug files missing here are asked of the debuginfod servers
 * of $DEBUGINFOD_URLS (elfutils' client, by build-id): TRUE by default;
 * the plain report turns it off, as addr2line never asks.  Once a server
 * could not be reached, no other object is asked (one timeout, not one
 * per object). */
void mta_modules_set_fetch (MtaModules *ms, gboolean fetch);
/* $DEBUGINFOD_URLS as mtanalyze started, or NULL when unset or empty. */
const char *mta_debuginfod_urls (void);
/* libdwfl's find_debuginfo: the search path first, then debuginfod when
 * the modules fetch (a line per object on a terminal while it downloads). */
int mta_module_find_debuginfo (Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name);

/* The module of PATH, opened the first time (never NULL: ->ok says
 * whether it is an ELF file we can read).  Only a regular file is read,
 * and only once its header is believable. */
MtaModule *mta_modules_get (MtaModules *ms, const char *path);

/* The SHF_ALLOC section holding ADDR (a file address), or NULL. */
const MtaSection *mta_module_section (const MtaModule *m, uint64_t addr);
/* The DWARF line row for ADDR (a file address): the file name built the
 * way addr2line builds it (free it), the line and the discriminator. */
gboolean mta_module_dwarf_row (MtaModule *m, uint64_t addr, char **name, int *lineno, unsigned *disc);
/* "file:line" of that row in addr2line's spelling, or NULL.  Free it. */
char *mta_module_file_line (MtaModule *m, uint64_t addr);
/* The same as addr2line (binutils 2.40) prints it, whose DWARF 5 rows
 * before any DW_LNS_set_file name file entry 0 (elf-module.c). */
char *mta_module_file_line_bfd (MtaModule *m, uint64_t addr);
/* The symbol at ADDR (a module address: file address plus m->bias) and
 * the offset into it, as dwfl_module_addrinfo would choose it; NULL when
 * none.  Owned by the module. */
const char *mta_module_symbol_at (MtaModule *m, uint64_t addr, uint64_t *off);
/* "symbol+0xoff" at ADDR (a file address), or NULL.  Free it. */
char *mta_module_function_at (MtaModule *m, uint64_t addr);
/* Its index of inlined functions (dwarf-inline.c), or NULL without DWARF. */
MtaDwarfInline *mta_module_dwarf_index (MtaModule *m);
/* The bounds [*LO, *HI) (file addresses) of the function holding ADDR (a
 * file address), from its .eh_frame entry (kept by strip: the unwinder
 * needs it); FALSE when none covers ADDR. */
gboolean mta_module_function_bounds (MtaModule *m, uint64_t addr, uint64_t *lo, uint64_t *hi);
/* Whether it has function names: a .symtab of its own, or a debug file. */
gboolean mta_module_has_symbols (MtaModule *m);

#endif
