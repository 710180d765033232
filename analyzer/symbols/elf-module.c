/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* elf-module.c -- every object file a trace names, opened once: libelf
 * for its sections and symbols, libdwfl for its DWARF (which also finds
 * separate debug files by build-id and .gnu_debuglink, on the search path
 * the symbolizer hands over in its callbacks), the line rows and the
 * symbols at an address. */
#include "elf-module.h"

#include <byteswap.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-input.h"

struct MtaModules {
	const Dwfl_Callbacks *callbacks;
	GHashTable *table;        /* path -> MtaModule */
	gboolean fetch;           /* ask debuginfod (mta_modules_set_fetch) */
	gboolean unreachable;     /* a server could not be reached: ask no more */
};

/* More sections than a linked object ever has (binutils' ld makes a few
 * dozen; even -ffunction-sections objects are merged into .text).  libelf
 * allocates its section table from the header's count before it reads a
 * section, so a header claiming tens of millions (extended numbering, in a
 * large sparse file) would cost gigabytes. */
#define MAX_SECTIONS (1u << 17)

/* A symbol of the module's table, for symbol_at. */
typedef struct {
	uint64_t lo, size;        /* module address (with libdwfl's bias) */
	const char *name;         /* in the ELF file's string table */
	int rank;                 /* binding: 2 global, 1 weak, 0 local */
	int index;                /* in the table: the first of equals wins, as in libdw */
	size_t shndx;             /* its section */
} FuncSym;


static void
module_free (gpointer p)
{
	MtaModule *m = p;
	mta_dwarf_inline_free (m->inl);
	if (m->dwfl)
		dwfl_end (m->dwfl);
	if (m->elf)
		elf_end (m->elf);
	if (m->fd >= 0)
		close (m->fd);
	if (m->sections)
		g_array_free (m->sections, TRUE);
	if (m->funcs)
		g_array_free (m->funcs, TRUE);
	g_free (m->build_id);
	g_free (m->path);
	g_free (m);
}

static char *
elf_build_id (Elf *elf)
{
	size_t n;
	if (elf_getshdrnum (elf, &n) < 0)
		return NULL;
	for (size_t i = 1; i < n; i++) {
		Elf_Scn *scn = elf_getscn (elf, i);
		GElf_Shdr sh;
		if (scn == NULL || gelf_getshdr (scn, &sh) == NULL || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *d = elf_getdata (scn, NULL);
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while (d != NULL && (off = gelf_getnote (d, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp ((char *) d->d_buf + noff, "GNU", 4) == 0) {
				GString *s = g_string_new (NULL);
				for (size_t k = 0; k < nh.n_descsz; k++)
					g_string_append_printf (s, "%02x",
								((unsigned char *) d->d_buf)[doff + k]);
				return g_string_free (s, FALSE);
			}
		}
	}
	return NULL;
}

static uint64_t
elf_word (const unsigned char *p, size_t n, gboolean swap)
{
	uint64_t v = 0;
	memcpy (&v, p, n);   /* little-endian host: the low N bytes */
	if (swap)
		v = n == 2 ? bswap_16 ((uint16_t) v) : n == 4 ? bswap_32 ((uint32_t) v) : bswap_64 (v);
	return v;
}

/* Whether the ELF header of FD (SIZE bytes) claims no more sections and
 * program headers than MAX_SECTIONS, counting extended numbering (the
 * real count in section 0), and tables that lie inside the file: checked
 * before libelf sizes anything by them.  Not ELF at all is fine: libelf
 * will say so. */
static gboolean
elf_counts_sane (int fd, uint64_t size)
{
	unsigned char h[64], s0[64];
	if (pread (fd, h, sizeof h, 0) != (ssize_t) sizeof h || memcmp (h, ELFMAG, SELFMAG) != 0)
		return TRUE;
	gboolean is64 = h[EI_CLASS] == ELFCLASS64, swap = h[EI_DATA] == ELFDATA2MSB;
	uint64_t shoff = is64 ? elf_word (h + 40, 8, swap) : elf_word (h + 32, 4, swap);
	uint64_t phnum = elf_word (h + (is64 ? 56 : 44), 2, swap);
	uint64_t shnum = elf_word (h + (is64 ? 60 : 48), 2, swap);
	if (shoff != 0 && (shnum == 0 || phnum == PN_XNUM)) {
		size_t shsz = is64 ? 64 : 40;
		if (shoff > size || pread (fd, s0, shsz, (off_t) shoff) != (ssize_t) shsz)
			return FALSE;
		if (shnum == 0)
			shnum = is64 ? elf_word (s0 + 32, 8, swap) : elf_word (s0 + 20, 4, swap);
		if (phnum == PN_XNUM)
			phnum = elf_word (s0 + (is64 ? 44 : 28), 4, swap);
	}
	return shnum <= MAX_SECTIONS && phnum <= MAX_SECTIONS;
}

MtaModule *
mta_modules_get (MtaModules *ms, const char *path)
{
	MtaModule *m = g_hash_table_lookup (ms->table, path);
	struct stat st;

	if (m != NULL)
		return m;
	m = g_new0 (MtaModule, 1);
	m->path = g_strdup (path);
	m->fd = -1;
	m->callbacks = ms->callbacks;
	m->owner = ms;
	g_hash_table_insert (ms->table, m->path, m);
	/* The trace names the path: only a regular file is read, and only
	 * once its header is believable (tests/t6000). */
	if (path[0] == '\0' || (m->fd = mta_open_regular (path)) < 0 ||
	    fstat (m->fd, &st) < 0 || !elf_counts_sane (m->fd, (uint64_t) st.st_size))
		return m;
	m->elf = elf_begin (m->fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (m->elf == NULL || elf_kind (m->elf) != ELF_K_ELF || gelf_getehdr (m->elf, &eh) == NULL)
		return m;
	m->type = eh.e_type;
	size_t nph = 0;
	elf_getphdrnum (m->elf, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr (m->elf, (int) i, &ph) && ph.p_type == PT_LOAD) {
			/* ld.so: l_map_start = ALIGN_DOWN (p_vaddr, pagesize) */
			m->load_base = ph.p_vaddr & ~(uint64_t) 4095;
			break;
		}
	}
	m->sections = g_array_new (FALSE, FALSE, sizeof (MtaSection));
	size_t nsec = 0;
	elf_getshdrnum (m->elf, &nsec);
	for (size_t i = 1; i < nsec; i++) {
		Elf_Scn *scn = elf_getscn (m->elf, i);
		GElf_Shdr sh;
		if (scn != NULL && gelf_getshdr (scn, &sh) != NULL && sh.sh_type == SHT_SYMTAB &&
		    sh.sh_entsize > 0 && sh.sh_size / sh.sh_entsize > 1)
			m->symtab = TRUE;
		if (scn == NULL || gelf_getshdr (scn, &sh) == NULL || !(sh.sh_flags & SHF_ALLOC))
			continue;
		MtaSection sec = { sh.sh_addr, sh.sh_size, i };
		g_array_append_val (m->sections, sec);
	}
	m->build_id = elf_build_id (m->elf);
	m->ok = TRUE;
	return m;
}

static gboolean
module_dwfl (MtaModule *m)
{
	if (m->dwfl_tried)
		return m->mod != NULL;
	m->dwfl_tried = TRUE;
	m->dwfl = dwfl_begin (m->callbacks);
	if (m->dwfl == NULL)
		return FALSE;
	dwfl_report_begin (m->dwfl);
	/* a copy of our descriptor (libdwfl takes it): opening the name again
	 * could open another file than the one checked in get_module */
	int fd = m->fd >= 0 ? fcntl (m->fd, F_DUPFD_CLOEXEC, 0) : -1;
	if (fd < 0) {
		dwfl_report_end (m->dwfl, NULL, NULL);
		return FALSE;
	}
	m->mod = dwfl_report_elf (m->dwfl, m->path, m->path, fd, 0, false);
	dwfl_report_end (m->dwfl, NULL, NULL);
	if (m->mod == NULL) {
		close (fd);   /* consumed only on success */
		return FALSE;
	}
	/* for mta_module_find_debuginfo, which libdwfl hands only this */
	void **userdata = NULL;
	dwfl_module_info (m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata != NULL)
		*userdata = m;
	if (dwfl_module_getelf (m->mod, &m->bias) == NULL) {
		m->mod = NULL;
		return FALSE;
	}
	return TRUE;
}

/* M's DWARF index (dwarf-inline.c), or NULL without libdwfl's module. */
MtaDwarfInline *
mta_module_dwarf_index (MtaModule *m)
{
	if (!module_dwfl (m))
		return NULL;
	if (m->inl == NULL)
		m->inl = mta_dwarf_inline_new (m->mod);
	return m->inl;
}

/* The line row for ADDR (a module address) when libdwfl finds no unit
 * for it: an object without .debug_aranges (clang's), whose lines
 * addr2line finds all the same. */
static const char *
unit_row (MtaModule *m, Dwarf_Addr addr, Dwarf_Die **cu, int *lineno, Dwarf_Line **dl)
{
	MtaDwarfInline *d = mta_module_dwarf_index (m);
	Dwarf_Addr bias;

	if (d == NULL || (*cu = mta_dwarf_unit_at (d, addr, &bias)) == NULL ||
	    (*dl = dwarf_getsrc_die (*cu, addr - bias)) == NULL || dwarf_lineno (*dl, lineno) != 0)
		return NULL;
	return dwarf_linesrc (*dl, NULL, NULL);
}

const MtaSection *
mta_module_section (const MtaModule *m, uint64_t addr)
{
	for (guint i = 0; i < m->sections->len; i++) {
		const MtaSection *sec = &g_array_index (m->sections, MtaSection, i);
		if (addr >= sec->addr && addr - sec->addr < sec->size)
			return sec;
	}
	return NULL;
}

/* bfd (binutils 2.40) starts a DWARF 5 line program's file register at
 * entry 0 of the file table, where the standard says 1, so addr2line
 * names a row no DW_LNS_set_file came before by entry 0.  GCC gives the
 * two entries the same name and directory unless the primary file only
 * #includes another one (glibc's sysdeps/x86_64/l10nflist.c, of
 * intl/l10nflist.c): then /usr/bin/mtrace names the primary file.  FILE
 * is libdw's name of DL's file; entry 0's when bfd would use it.  A row
 * of file 1 counts as the register's first value when every row before
 * it in its sequence has file 1 too (an explicit DW_LNS_set_file 1 at the
 * start of a sequence cannot be told apart). */
static const char *
bfd_initial_file (Dwarf_Die *cu, Dwarf_Line *dl, const char *file)
{
	Dwarf_Files *files, *pf;
	Dwarf_Lines *lines;
	Dwarf_Half version;
	size_t idx, n, i, pi;
	const char *f0;

	if (cu == NULL || dl == NULL ||
	    dwarf_cu_info (cu->cu, &version, NULL, NULL, NULL, NULL, NULL, NULL) != 0 || version < 5 ||
	    dwarf_line_file (dl, &files, &idx) != 0 || idx != 1 ||
	    (f0 = dwarf_filesrc (files, 0, NULL, NULL)) == NULL || strcmp (f0, file) == 0 ||
	    dwarf_getsrclines (cu, &lines, &n) != 0)
		return file;
	for (i = 0; i < n && dwarf_onesrcline (lines, i) != dl; i++)
		;
	if (i == n)
		return file;
	while (i-- > 0) {
		Dwarf_Line *p = dwarf_onesrcline (lines, i);
		bool end = false;
		if (p == NULL || (dwarf_lineendsequence (p, &end) == 0 && end))
			break;
		if (dwarf_line_file (p, &pf, &pi) != 0 || pi != 1)
			return file;
	}
	return f0;
}

/* The DWARF line row for ADDR (a file address): the file name built the
 * way addr2line builds it (with bfd's first file when BFD), the line and
 * the discriminator. */
static gboolean
dwarf_row (MtaModule *m, uint64_t addr, char **name, int *lineno, unsigned *disc, gboolean bfd)
{
	Dwarf_Addr a, cubias;
	int col = 0;
	const char *file, *comp_dir = NULL;
	Dwarf_Die *cu = NULL;
	Dwarf_Line *dl = NULL;

	*lineno = 0;
	*disc = 0;
	if (!module_dwfl (m))
		return FALSE;
	Dwfl_Line *line = dwfl_module_getsrc (m->mod, addr + m->bias);
	if (line != NULL) {
		file = dwfl_lineinfo (line, &a, lineno, &col, NULL, NULL);
		cu = dwfl_module_addrdie (m->mod, addr + m->bias, &cubias);
		dl = dwfl_dwarf_line (line, &cubias);
	} else
		file = unit_row (m, addr + m->bias, &cu, lineno, &dl);
	if (file == NULL)
		return FALSE;
	if (bfd)
		file = bfd_initial_file (cu, dl, file);
	if (cu != NULL) {
		Dwarf_Attribute attr;
		if (dwarf_attr (cu, DW_AT_comp_dir, &attr) != NULL)
			comp_dir = dwarf_formstring (&attr);
	}
	/* libdw joins a relative name to its directory entry only; bfd also
	 * puts the compilation directory in front of what is still relative. */
	if (file[0] != '/' && comp_dir != NULL && comp_dir[0] != '\0')
		*name = g_strdup_printf ("%s/%s", comp_dir, file);
	else
		*name = g_strdup (file);
	if (dl == NULL || dwarf_linediscriminator (dl, disc) != 0)
		*disc = 0;
	return TRUE;
}

gboolean
mta_module_dwarf_row (MtaModule *m, uint64_t addr, char **name, int *lineno, unsigned *disc)
{
	return dwarf_row (m, addr, name, lineno, disc, FALSE);
}

static char *
file_line (MtaModule *m, uint64_t addr, gboolean bfd)
{
	char *name = NULL, *res;
	int lineno;
	unsigned disc;

	if (!dwarf_row (m, addr, &name, &lineno, &disc, bfd))
		return NULL;
	if (lineno == 0)
		res = g_strdup_printf ("%s:?", name);
	else if (disc != 0)
		res = g_strdup_printf ("%s:%d (discriminator %u)", name, lineno, disc);
	else
		res = g_strdup_printf ("%s:%d", name, lineno);
	g_free (name);
	return res;
}

/* "file:line" of the DWARF line row for ADDR (a file address), in
 * addr2line's spelling, or NULL. */
char *
mta_module_file_line (MtaModule *m, uint64_t addr)
{
	return file_line (m, addr, FALSE);
}

/* The same, with addr2line's own file for a DWARF 5 row (bfd_initial_file):
 * what /usr/bin/mtrace prints. */
char *
mta_module_file_line_bfd (MtaModule *m, uint64_t addr)
{
	return file_line (m, addr, TRUE);
}

static int
func_sym_cmp (const void *a, const void *b)
{
	const FuncSym *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->index - y->index;
}

/* The module's symbols (libdwfl's choice of table: .symtab, the debug
 * file's, or .dynsym), sorted by address: read once. */
static void
build_funcs (MtaModule *m)
{
	int n = dwfl_module_getsymtab (m->mod);

	m->funcs = g_array_new (FALSE, FALSE, sizeof (FuncSym));
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx = 0;
		const char *name = dwfl_module_getsym_info (m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE (sym.st_info), bind = GELF_ST_BIND (sym.st_info);
		/* libdw takes symbols of the address's own section only: never
		 * an absolute one (the version names of .dynsym) */
		if (name == NULL || name[0] == '\0' || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		FuncSym f = { addr, sym.st_size, name,
			      bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0, i, shndx };
		g_array_append_val (m->funcs, f);
	}
	g_array_sort (m->funcs, func_sym_cmp);	/* empty (no symbols): data is NULL */
}

/* How far back from the nearest symbol below an address symbol_at looks
 * for one that contains it (symbols nest or overlap only a little). */
#define SYMBOL_LOOKBACK 256

/* The symbol at ADDR (a module address with bias) and the offset into it,
 * chosen as dwfl_module_addrinfo chooses (the nearest sized symbol that
 * contains it, global before weak before local; else the nearest sizeless
 * one past the end of every sized symbol below), but by a binary search:
 * libdw scans the whole table on every call, seconds for a thousand
 * addresses of libLLVM (issue 18 point 10). */
const char *
mta_module_symbol_at (MtaModule *m, uint64_t addr, uint64_t *off)
{
	if (!module_dwfl (m))
		return NULL;
	if (m->funcs == NULL)
		build_funcs (m);
	const FuncSym *f = (const FuncSym *) (void *) m->funcs->data;
	guint lo = 0, hi = m->funcs->len;
	while (lo < hi) {          /* the first symbol above ADDR */
		guint mid = (lo + hi) / 2;
		if (f[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const FuncSym *sized = NULL, *sizeless = NULL;
	uint64_t min_label = 0;    /* end of the sized symbols below that end before ADDR */
	const MtaSection *sec = m->sections ? mta_module_section (m, addr - m->bias) : NULL;
	for (guint i = lo, seen = 0; i-- > 0 && seen < SYMBOL_LOOKBACK; seen++) {
		const FuncSym *c = &f[i];
		if (sized != NULL && c->lo < sized->lo)
			break;
		if (sec != NULL && c->shndx != sec->index)
			continue;
		/* equal symbols come last index first: on a tie, take the
		 * later seen (libdw keeps the first of the table) */
		if (c->size == 0) {
			if (sizeless == NULL || (c->lo == sizeless->lo && c->rank >= sizeless->rank))
				sizeless = c;
		} else if (c->lo + c->size > addr) {
			if (sized == NULL || c->rank > sized->rank ||
			    (c->rank == sized->rank && c->size <= sized->size))
				sized = c;
		} else if (c->lo + c->size > min_label)
			min_label = c->lo + c->size;
	}
	if (sized == NULL && sizeless != NULL && sizeless->lo >= min_label)
		sized = sizeless;
	if (sized == NULL)
		return NULL;
	*off = addr - sized->lo;
	return sized->name;
}

char *
mta_module_function_at (MtaModule *m, uint64_t addr)
{
	uint64_t off;
	const char *name = mta_module_symbol_at (m, addr + m->bias, &off);

	if (name == NULL)
		return NULL;
	return g_strdup_printf ("%s+0x%" PRIx64, name, off);
}

gboolean
mta_module_function_bounds (MtaModule *m, uint64_t addr, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Addr bias = 0, start, end;
	Dwarf_Frame *frame = NULL;

	if (!module_dwfl (m))
		return FALSE;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi (m->mod, &bias);
	if (cfi == NULL || dwarf_cfi_addrframe (cfi, addr + m->bias - bias, &frame) != 0)
		return FALSE;
	int ok = dwarf_frame_info (frame, &start, &end, NULL) >= 0;
	free (frame);
	if (!ok || end <= start)
		return FALSE;
	*lo = start + bias - m->bias;
	*hi = end + bias - m->bias;
	return TRUE;
}

/* Whether M has function names: a .symtab of its own, or a debug file
 * (which libdwfl looks for here, if it has not yet). */
gboolean
mta_module_has_symbols (MtaModule *m)
{
	Dwarf_Addr bias;
	const char *debugfile = NULL;

	if (m->symtab)
		return TRUE;
	if (!module_dwfl (m))
		return FALSE;
	(void) dwfl_module_getdwarf (m->mod, &bias);
	dwfl_module_info (m->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	return debugfile != NULL;
}

/* ------------------------------------------------------------ debuginfod
 *
 * libdwfl's own search (dwfl_standard_find_debuginfo) ends with elfutils'
 * debuginfod client, which asks the servers of $DEBUGINFOD_URLS as it
 * finds the variable at that moment.  The variable is taken away at start
 * and put back only around a fetch that we decided on: so that the plain
 * report (addr2line asks no server) never fetches, so that a fetch is
 * said on a terminal before the wait, and so that a server that cannot be
 * reached costs one timeout (DEBUGINFOD_TIMEOUT, libdebuginfod's 90 s by
 * default), not one per object. */

const char *
mta_debuginfod_urls (void)
{
	static char *urls;
	static gsize once;

	if (g_once_init_enter (&once)) {
		const char *v = g_getenv ("DEBUGINFOD_URLS");
		if (v != NULL && strspn (v, " \t") < strlen (v))
			urls = g_strdup (v);
		g_unsetenv ("DEBUGINFOD_URLS");
		/* libdebuginfod's own progress lines, on a terminal only */
		if (urls != NULL && isatty (STDERR_FILENO))
			g_setenv ("DEBUGINFOD_PROGRESS", "1", FALSE);
		g_once_init_leave (&once, 1);
	}
	return urls;
}

void
mta_modules_set_fetch (MtaModules *ms, gboolean fetch)
{
	ms->fetch = fetch;
}

int
mta_module_find_debuginfo (Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	MtaModule *m = *userdata;
	const char *urls = mta_debuginfod_urls ();
	/* the search path only: $DEBUGINFOD_URLS is unset */
	int fd = dwfl_standard_find_debuginfo (mod, userdata, modname, base, file_name, debuglink_file,
					       debuglink_crc, debuginfo_file_name);

	if (fd >= 0 || m == NULL || m->build_id == NULL || urls == NULL || !m->owner->fetch ||
	    m->owner->unreachable || m->fetch_asked)
		return fd;
	gboolean tty = isatty (STDERR_FILENO);
	if (tty)
		fprintf (stderr, "mtanalyze: fetching the debug file of '%s' (build-id %s) from %s\n",
			 m->path, m->build_id, urls);
	gint64 t0 = g_get_monotonic_time ();
	g_setenv ("DEBUGINFOD_URLS", urls, TRUE);
	fd = dwfl_standard_find_debuginfo (mod, userdata, modname, base, file_name, debuglink_file,
					   debuglink_crc, debuginfo_file_name);
	g_unsetenv ("DEBUGINFOD_URLS");
	m->fetch_asked = TRUE;
	m->fetch_result = fd >= 0 ? 0 : fd < -1 ? fd : -ENOENT;
	m->fetch_seconds = (double) (g_get_monotonic_time () - t0) / 1e6;
	/* "not there" is an answer; anything else (refused, timed out, no
	 * such host) would be the same for the next object */
	if (fd < 0 && m->fetch_result != -ENOENT)
		m->owner->unreachable = TRUE;
	if (tty && fd < 0)
		fprintf (stderr, "mtanalyze: no debug file of '%s' from debuginfod: %s (%.1f s)\n",
			 m->path, g_strerror (-m->fetch_result), m->fetch_seconds);
	return fd;
}

MtaModules *
mta_modules_new (const Dwfl_Callbacks *callbacks)
{
	MtaModules *ms = g_new0 (MtaModules, 1);

	elf_version (EV_CURRENT);
	(void) mta_debuginfod_urls ();   /* before libdwfl looks for any file */
	ms->callbacks = callbacks;
	ms->fetch = TRUE;
	ms->table = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, module_free);
	return ms;
}

void
mta_modules_free (MtaModules *ms)
{
	if (ms == NULL)
		return;
	g_hash_table_destroy (ms->table);
	g_free (ms);
}
