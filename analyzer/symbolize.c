/* symbolize.c -- objects, DWARF lines and symbols, without addr2line.
 *
 * Every object file is opened once (libelf for sections and symbols,
 * libdwfl for DWARF, which also finds separate debug files by build-id and
 * .gnu_debuglink), every address asked of addr2line and every caller
 * string is answered once.
 *
 * Debug files are looked for where Debian puts them, through libdwfl's
 * own search (dwfl_standard_find_debuginfo) on a path we write: each
 * --debug-dir, the object's directory and its .debug/, then
 * SYSROOT/usr/lib/debug and /usr/lib/debug -- by build-id in
 * DIR/.build-id/xx/yyyy.debug, and by the .gnu_debuglink name in DIR/<the
 * object's directory>/ and DIR/.  libdwfl checks the build-id (or the CRC)
 * of what it finds, so a debug file of another build is never used.
 *
 * The addr2line emulation follows binutils 2.40: an address outside every
 * SHF_ALLOC section is "??:0"; else the DWARF line table row (file name
 * built like bfd/dwarf2.c concat_filename: a relative name is prefixed
 * with DW_AT_comp_dir, and " (discriminator N)" follows the line); else the
 * nearest function symbol of that section (bfd/elf.c _bfd_elf_find_function,
 * symbols from .symtab, or .dynsym when there is none) printed as "FILE:?"
 * with the STT_FILE symbol before it, or "??:?".
 */
#include "symbolize.h"
#include "dwarf-inline.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <byteswap.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* More sections than a linked object ever has (binutils' ld makes a few
 * dozen; even -ffunction-sections objects are merged into .text).  libelf
 * allocates its section table from the header's count before it reads a
 * section, so a header claiming tens of millions (extended numbering, in a
 * large sparse file) would cost gigabytes. */
#define MAX_SECTIONS (1u << 17)

typedef struct {
	uint64_t addr, size;
	size_t index;
} Section;

typedef struct {
	char *path;
	gboolean ok;              /* an ELF file we could read */
	int fd;
	Elf *elf;
	uint16_t type;            /* ET_EXEC, ET_DYN */
	uint64_t load_base;       /* first PT_LOAD vaddr rounded down to the page */
	GArray *sections;         /* Section, SHF_ALLOC only, file order */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	gboolean dwfl_tried;
	gboolean symtab;          /* a .symtab with symbols in the file itself */
	char *build_id;           /* hex, or NULL */
	GArray *funcs;            /* FuncSym by address, once asked (symbol_at) */
	MtaDwarfInline *inl;      /* its inlined functions, once asked */
} Module;

/* A symbol of the module's table, for symbol_at. */
typedef struct {
	uint64_t lo, size;        /* module address (with libdwfl's bias) */
	const char *name;         /* in the ELF file's string table */
	int rank;                 /* binding: 2 global, 1 weak, 0 local */
	int index;                /* in the table: the first of equals wins, as in libdw */
	size_t shndx;             /* its section */
} FuncSym;

typedef struct {
	uint64_t bias, lo, hi;
	char *build_id;           /* NULL when '-' */
	char *path;               /* NULL for the executable ('-') */
} TraceObject;

struct MtaSymbolizer {
	char *sysroot;
	char *debuginfo_path;
	GPtrArray *debug_dirs;    /* --debug-dir, absolute */
	Dwfl_Callbacks callbacks;
	MtaWarnFunc warn;
	gpointer warn_data;
	char *binary;
	char *exe;                /* from "# exe" */
	GHashTable *modules;      /* path -> Module */
	GHashTable *a2l;          /* "path\naddr" -> char* or NULL */
	GHashTable *locations;    /* caller field -> MtaLocation */
	GHashTable *frames;       /* caller field -> MtaFrameInfo */
	GHashTable *warned;       /* paths already warned about */
	GPtrArray *objects;       /* TraceObject, in trace order */
};

/* ------------------------------------------------------------ callers */

void
mta_caller_clear (MtaCaller *c)
{
	g_clear_pointer (&c->object, g_free);
	g_clear_pointer (&c->symbol, g_free);
	c->form = MTA_CALLER_NONE;
}

static gboolean
parse_hex0x (const char *p, size_t len, uint64_t *v)
{
	if (len < 3 || len > 18 || p[0] != '0' || p[1] != 'x')
		return FALSE;
	*v = 0;
	for (size_t i = 2; i < len; i++) {
		int d = g_ascii_xdigit_value (p[i]);
		if (d < 0)
			return FALSE;
		*v = (*v << 4) | (uint64_t) d;
	}
	return TRUE;
}

gboolean
mta_caller_parse (const char *field, MtaCaller *out)
{
	size_t len = strlen (field);
	const char *lb, *pre_end;

	memset (out, 0, sizeof *out);
	if (len < 4 || field[len - 1] != ']')
		return FALSE;
	lb = memrchr (field, '[', len);
	if (lb == NULL || !parse_hex0x (lb + 1, (size_t) (field + len - 1 - (lb + 1)), &out->addr))
		return FALSE;
	pre_end = lb;
	if (pre_end == field) {
		out->form = MTA_CALLER_ABS;
		return TRUE;
	}
	if (pre_end[-1] == ')') {
		const char *lp = memrchr (field, '(', (size_t) (pre_end - field));
		if (lp == NULL)
			return FALSE;
		const char *s = lp + 1, *e = pre_end - 1;
		const char *sign = NULL;
		for (const char *q = e - 1; q > s; q--)
			if (*q == '+' || *q == '-') {
				sign = q;
				break;
			}
		if (sign == NULL)
			return FALSE;
		uint64_t off = 0;
		for (const char *q = sign + 1; q < e; q++) {
			int d = g_ascii_xdigit_value (*q);
			if (d < 0)
				return FALSE;
			off = (off << 4) | (uint64_t) d;
		}
		out->symbol = g_strndup (s, (size_t) (sign - s));
		out->sym_offset = *sign == '-' ? -(int64_t) off : (int64_t) off;
		if (lp == field) {
			out->form = MTA_CALLER_SYM;
			return TRUE;
		}
		if (lp[-1] != ':') {
			mta_caller_clear (out);
			return FALSE;
		}
		out->object = g_strndup (field, (size_t) (lp - 1 - field));
		out->form = MTA_CALLER_OBJ_SYM;
		return TRUE;
	}
	if (pre_end[-1] != ':')
		return FALSE;
	out->object = g_strndup (field, (size_t) (pre_end - 1 - field));
	out->form = MTA_CALLER_OBJ;
	return TRUE;
}

/* ------------------------------------------------------------ modules */

static void
module_free (gpointer p)
{
	Module *m = p;
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

int
mta_open_regular (const char *path)
{
	struct stat st;
	struct statfs fs;
	int fd;

	/* Look before opening: even a non-blocking open of a FIFO makes us a
	 * reader for a moment, which lets its writer go on and lose what it
	 * writes when we close it again. */
	if (stat (path, &st) < 0)
		return -1;
	if (!S_ISREG (st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size == 0 ||
	    fstatfs (fd, &fs) < 0 || fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC) {
		close (fd);
		errno = EINVAL;
		return -1;
	}
	/* no effect on a regular file, but what we hand on reads normally */
	(void) fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
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

static Module *
get_module (MtaSymbolizer *s, const char *path)
{
	Module *m = g_hash_table_lookup (s->modules, path);
	struct stat st;

	if (m != NULL)
		return m;
	m = g_new0 (Module, 1);
	m->path = g_strdup (path);
	m->fd = -1;
	g_hash_table_insert (s->modules, m->path, m);
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
	m->sections = g_array_new (FALSE, FALSE, sizeof (Section));
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
		Section sec = { sh.sh_addr, sh.sh_size, i };
		g_array_append_val (m->sections, sec);
	}
	m->build_id = elf_build_id (m->elf);
	m->ok = TRUE;
	return m;
}

static gboolean
module_dwfl (MtaSymbolizer *s, Module *m)
{
	if (m->dwfl_tried)
		return m->mod != NULL;
	m->dwfl_tried = TRUE;
	m->dwfl = dwfl_begin (&s->callbacks);
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
	if (dwfl_module_getelf (m->mod, &m->bias) == NULL) {
		m->mod = NULL;
		return FALSE;
	}
	return TRUE;
}

/* M's DWARF index (dwarf-inline.c), or NULL without libdwfl's module. */
static MtaDwarfInline *
module_dwarf_index (MtaSymbolizer *s, Module *m)
{
	if (!module_dwfl (s, m))
		return NULL;
	if (m->inl == NULL)
		m->inl = mta_dwarf_inline_new (m->mod);
	return m->inl;
}

/* The line row for ADDR (a module address) when libdwfl finds no unit
 * for it: an object without .debug_aranges (clang's), whose lines
 * addr2line finds all the same. */
static const char *
unit_row (MtaSymbolizer *s, Module *m, Dwarf_Addr addr, Dwarf_Die **cu, int *lineno, Dwarf_Line **dl)
{
	MtaDwarfInline *d = module_dwarf_index (s, m);
	Dwarf_Addr bias;

	if (d == NULL || (*cu = mta_dwarf_unit_at (d, addr, &bias)) == NULL ||
	    (*dl = dwarf_getsrc_die (*cu, addr - bias)) == NULL || dwarf_lineno (*dl, lineno) != 0)
		return NULL;
	return dwarf_linesrc (*dl, NULL, NULL);
}

static const Section *
find_section (const Module *m, uint64_t addr)
{
	for (guint i = 0; i < m->sections->len; i++) {
		const Section *sec = &g_array_index (m->sections, Section, i);
		if (addr >= sec->addr && addr - sec->addr < sec->size)
			return sec;
	}
	return NULL;
}

/* The DWARF line row for ADDR (a file address): the file name built the
 * way addr2line builds it, the line and the discriminator. */
static gboolean
dwarf_row (MtaSymbolizer *s, Module *m, uint64_t addr, char **name, int *lineno, unsigned *disc)
{
	Dwarf_Addr a, cubias;
	int col = 0;
	const char *file, *comp_dir = NULL;
	Dwarf_Die *cu = NULL;
	Dwarf_Line *dl = NULL;

	*lineno = 0;
	*disc = 0;
	if (!module_dwfl (s, m))
		return FALSE;
	Dwfl_Line *line = dwfl_module_getsrc (m->mod, addr + m->bias);
	if (line != NULL) {
		file = dwfl_lineinfo (line, &a, lineno, &col, NULL, NULL);
		cu = dwfl_module_addrdie (m->mod, addr + m->bias, &cubias);
		dl = dwfl_dwarf_line (line, &cubias);
	} else
		file = unit_row (s, m, addr + m->bias, &cu, lineno, &dl);
	if (file == NULL)
		return FALSE;
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

/* "file:line" of the DWARF line row for ADDR (a file address), in
 * addr2line's spelling, or NULL. */
static char *
dwarf_file_line (MtaSymbolizer *s, Module *m, uint64_t addr)
{
	char *name = NULL, *res;
	int lineno;
	unsigned disc;

	if (!dwarf_row (s, m, addr, &name, &lineno, &disc))
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
symtab_function (Module *m, const Section *sec, uint64_t addr, const char **filename)
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

static char *
addr2line_uncached (MtaSymbolizer *s, Module *m, uint64_t addr)
{
	const Section *sec;
	const char *filename = NULL;
	char *r;

	if (!m->ok || (sec = find_section (m, addr)) == NULL)
		return NULL;
	if ((r = dwarf_file_line (s, m, addr)) != NULL)
		return r;
	if (symtab_function (m, sec, addr, &filename))
		return g_strdup_printf ("%s:?", filename ? filename : "??");
	return NULL;
}

static Module *checked_module (MtaSymbolizer *s, const char *path, const char *expected);
static const TraceObject *object_by_path (MtaSymbolizer *s, const char *path);
static const char *exe_build_id (MtaSymbolizer *s);

/* Whether PATH is a file the trace says it is not: the BINARY argument or
 * an object of a '# object' line, with another build-id (warned once).
 * What the script would ask of it would be a wrong answer. */
static gboolean
contradicts_trace (MtaSymbolizer *s, const char *path)
{
	const char *expected;

	if (s->binary != NULL && strcmp (path, s->binary) == 0)
		expected = exe_build_id (s);
	else {
		const TraceObject *o = object_by_path (s, path);
		expected = o ? o->build_id : NULL;
	}
	return expected != NULL && get_module (s, path)->ok && checked_module (s, path, expected) == NULL;
}

const char *
mta_symbolizer_addr2line (MtaSymbolizer *s, const char *path, uint64_t addr)
{
	char *key;
	gpointer v;

	if (contradicts_trace (s, path))
		return NULL;
	key = g_strdup_printf ("%s\n%" PRIx64, path, addr);

	if (g_hash_table_lookup_extended (s->a2l, key, NULL, &v)) {
		g_free (key);
		return v;
	}
	char *r = addr2line_uncached (s, get_module (s, path), addr);
	g_hash_table_insert (s->a2l, key, r);
	return r;
}

/* ------------------------------------------------------------ resolve */

static char *
under_sysroot (MtaSymbolizer *s, const char *path)
{
	if (s->sysroot == NULL || path[0] != '/')
		return g_strdup (path);
	return g_strconcat (s->sysroot, path, NULL);
}

/* The module for PATH unless its build-id contradicts EXPECTED. */
static Module *
checked_module (MtaSymbolizer *s, const char *path, const char *expected)
{
	Module *m = get_module (s, path);
	if (!m->ok)
		return NULL;
	if (expected != NULL && m->build_id != NULL && g_ascii_strcasecmp (expected, m->build_id) != 0) {
		if (s->warn && !g_hash_table_contains (s->warned, path)) {
			g_hash_table_add (s->warned, g_strdup (path));
			g_autofree char *msg = g_strdup_printf (
				"'%s' does not match the traced object (build-id %s, trace has %s); "
				"its addresses are left unresolved", path, m->build_id, expected);
			s->warn (msg, s->warn_data);
		}
		return NULL;
	}
	return m;
}

static const TraceObject *
object_by_path (MtaSymbolizer *s, const char *path)
{
	for (guint i = s->objects->len; i-- > 0;) {
		const TraceObject *o = s->objects->pdata[i];
		const char *p = o->path ? o->path : s->exe;
		if (p != NULL && strcmp (p, path) == 0)
			return o;
	}
	return NULL;
}

static gboolean
same_basename (const char *a, const char *b)
{
	const char *x = strrchr (a, '/'), *y = strrchr (b, '/');
	return strcmp (x ? x + 1 : a, y ? y + 1 : b) == 0;
}

/* The build-id the trace gives the program ('# object ... -'), or NULL. */
static const char *
exe_build_id (MtaSymbolizer *s)
{
	for (guint i = s->objects->len; i-- > 0;) {
		const TraceObject *o = s->objects->pdata[i];
		if (o->path == NULL)
			return o->build_id;
	}
	return NULL;
}

/* Whether OBJECT, as the trace or a frame names it, is the program. */
static gboolean
is_main_exe (MtaSymbolizer *s, const char *object)
{
	return (s->exe != NULL && strcmp (object, s->exe) == 0) ||
		(s->binary != NULL && same_basename (object, s->binary));
}

/* Find the file of the object a caller field names. */
static Module *
module_for_object (MtaSymbolizer *s, const char *object)
{
	const TraceObject *o = object_by_path (s, object);
	const char *expected = o ? o->build_id : NULL;
	Module *m;

	/* The executable: the trace names it by argv[0] ("./app"), which
	 * no '# object' line names: its build-id is the program's. */
	gboolean is_exe = (s->exe != NULL && same_basename (object, s->exe));
	const char *exe_id = exe_build_id (s);
	if (s->binary != NULL && (is_exe || same_basename (object, s->binary))) {
		if ((m = checked_module (s, s->binary, exe_id ? exe_id : expected)) != NULL)
			return m;
	}
	if (is_exe) {
		g_autofree char *p = under_sysroot (s, s->exe);
		if ((m = checked_module (s, p, exe_id ? exe_id : expected)) != NULL)
			return m;
	}
	if (s->sysroot != NULL) {
		g_autofree char *p = object[0] == '/' ? under_sysroot (s, object)
			: g_build_filename (s->sysroot, object, NULL);
		if ((m = checked_module (s, p, expected)) != NULL)
			return m;
	}
	return checked_module (s, object, expected);
}

static void
location_free (gpointer p)
{
	MtaLocation *l = p;
	g_free (l->file_line);
	g_free (l->function);
	g_free (l->object);
	g_free (l->best);
	g_free (l);
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
build_funcs (Module *m)
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
static const char *
symbol_at (MtaSymbolizer *s, Module *m, uint64_t addr, uint64_t *off)
{
	if (!module_dwfl (s, m))
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
	const Section *sec = m->sections ? find_section (m, addr - m->bias) : NULL;
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

static char *
function_at (MtaSymbolizer *s, Module *m, uint64_t addr)
{
	uint64_t off;
	const char *name = symbol_at (s, m, addr + m->bias, &off);

	if (name == NULL)
		return NULL;
	return g_strdup_printf ("%s+0x%" PRIx64, name, off);
}

/* The file of trace object O, P its path (the program's for '-'): the
 * BINARY argument for the program, else P (under --sysroot); never a file
 * of another build, so that a wrong BINARY leaves the program's own file,
 * when it is still where the trace says, to answer. */
static Module *
trace_object_module (MtaSymbolizer *s, const TraceObject *o, const char *p)
{
	Module *m;

	if (o->path == NULL && s->binary != NULL &&
	    (m = checked_module (s, s->binary, o->build_id)) != NULL)
		return m;
	g_autofree char *sp = under_sysroot (s, p);
	return checked_module (s, sp, o->build_id);
}

/* The module holding the code of caller C, the file address there, and
 * the object's name as the trace gives it (*OBJNAME, owned by the caller)
 * with the offset of the address in it. */
static Module *
locate (MtaSymbolizer *s, const MtaCaller *c, uint64_t *vaddr, char **objname, uint64_t *objoff)
{
	Module *m = NULL;

	*vaddr = 0;
	*objname = NULL;
	*objoff = c->addr;
	if (c->object != NULL) {
		m = module_for_object (s, c->object);
		if (m != NULL)
			*vaddr = c->addr + m->load_base;
		*objname = g_strdup (c->object);
	} else if (c->form == MTA_CALLER_ABS) {
		const TraceObject *named = NULL;
		const char *named_path = NULL;
		for (guint i = s->objects->len; i-- > 0 && m == NULL;) {
			const TraceObject *o = s->objects->pdata[i];
			if (c->addr < o->lo || c->addr >= o->hi)
				continue;
			const char *p = o->path ? o->path : s->exe;
			if (p == NULL && s->binary != NULL)
				p = s->binary;
			if (p == NULL)
				break;
			if (named == NULL) {
				named = o;
				named_path = p;
			}
			m = trace_object_module (s, o, p);
			if (m != NULL) {
				*vaddr = c->addr - o->bias;
				*objname = g_strdup (p);
				*objoff = c->addr - o->bias - m->load_base;
			}
		}
		if (m == NULL && s->binary != NULL) {
			Module *b = checked_module (s, s->binary, exe_build_id (s));
			if (b != NULL && b->type == ET_EXEC && find_section (b, c->addr) != NULL) {
				m = b;
				*vaddr = c->addr;
			}
		}
		/* An object the trace names but that is not here (deleted,
		 * another machine): still that object, at the offset a caller
		 * field would give (from the page of its lowest segment,
		 * dladdr's dli_fbase), so that its addresses stay apart. */
		if (m == NULL && named != NULL) {
			*objname = g_strdup (named_path);
			*objoff = c->addr - (named->lo & ~(uint64_t) 4095);
		}
	}
	return m;
}

const MtaLocation *
mta_symbolizer_resolve (MtaSymbolizer *s, const char *field)
{
	MtaLocation *l = g_hash_table_lookup (s->locations, field);
	MtaCaller c;
	Module *m = NULL;
	uint64_t vaddr = 0, objoff;
	char *objname;

	if (l != NULL)
		return l;
	l = g_new0 (MtaLocation, 1);
	if (mta_caller_parse (field, &c)) {
		m = locate (s, &c, &vaddr, &objname, &objoff);
		if (objname != NULL && (c.object != NULL || m != NULL))
			l->object = g_strdup_printf ("%s+0x%" PRIx64, objname, objoff);
		g_free (objname);
		if (m != NULL) {
			char *fl = dwarf_file_line (s, m, vaddr);
			if (fl != NULL && g_str_has_suffix (fl, ":?"))
				g_clear_pointer (&fl, g_free);
			l->file_line = fl;
			l->function = function_at (s, m, vaddr);
		}
		if (l->function == NULL && c.symbol != NULL)
			l->function = g_strdup_printf ("%s%s0x%" PRIx64, c.symbol,
						       c.sym_offset < 0 ? "-" : "+",
						       (uint64_t) (c.sym_offset < 0 ? -c.sym_offset : c.sym_offset));
		mta_caller_clear (&c);
	}
	l->best = g_strdup (l->file_line ? l->file_line : l->function ? l->function
			    : l->object ? l->object : field);
	g_hash_table_insert (s->locations, g_strdup (field), l);
	return l;
}

/* ------------------------------------------------------------ no symbols */

/* Whether M has function names: a .symtab of its own, or a debug file
 * (which libdwfl looks for here, if it has not yet). */
static gboolean
module_has_symbols (MtaSymbolizer *s, Module *m)
{
	Dwarf_Addr bias;
	const char *debugfile = NULL;

	if (m->symtab)
		return TRUE;
	if (!module_dwfl (s, m))
		return FALSE;
	(void) dwfl_module_getdwarf (m->mod, &bias);
	dwfl_module_info (m->mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	return debugfile != NULL;
}

/* The Debian package that holds PATH (dpkg-query -S), or NULL.  dpkg
 * knows a file by the path it installed: try the path as named, then
 * the file it leads to (/usr/sbin/ovs-vswitchd is an alternative for
 * /usr/lib/openvswitch-switch/ovs-vswitchd), then that without /usr
 * (libc6 installed /lib/x86_64-linux-gnu/libc.so.6, merged into /usr). */
static char *
owning_package (const char *path)
{
	g_autofree char *real = realpath (path, NULL);
	const char *tries[3] = { path, real, real && g_str_has_prefix (real, "/usr/") ? real + 4 : NULL };

	for (int i = 0; i < 3; i++) {
		g_autofree char *out = NULL;
		int status = 0;
		if (tries[i] == NULL)
			continue;
		const char *argv[] = { "dpkg-query", "-S", tries[i], NULL };
		if (!g_spawn_sync (NULL, (char **) argv, NULL,
				   G_SPAWN_SEARCH_PATH | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
				   &out, NULL, &status, NULL) || !g_spawn_check_wait_status (status, NULL))
			continue;
		/* "openvswitch-switch: /usr/lib/...", "libc6:amd64: /lib/..." */
		size_t n = strcspn (out, ":, \n");
		if (n > 0 && out[n] == ':')
			return g_strndup (out, n);
	}
	return NULL;
}

char *
mta_symbolizer_no_symbols_note (MtaSymbolizer *s, const char *object)
{
	Module *m = module_for_object (s, object);

	if (m == NULL || module_has_symbols (s, m))
		return NULL;
	/* under --sysroot the objects are another machine's: this one's
	 * package database does not know them */
	g_autofree char *pkg = s->sysroot == NULL ? owning_package (m->path) : NULL;
	g_autofree char *what = pkg ? g_strdup_printf ("install %s-dbgsym (Debian's debug symbols of %s), "
						       "or pass --debug-dir DIR", pkg, pkg)
		: g_strdup ("pass --debug-dir DIR, DIR holding its debug file (by build-id, "
			    ".build-id/xx/yyyy.debug, or by name)");
	return g_strdup_printf ("no symbols for %s (no .symtab, no debug file found%s%s): its code shows as "
				"offsets; %s", object, m->build_id ? " for build-id " : "",
				m->build_id ? m->build_id : "", what);
}

static void
frame_info_free (gpointer p)
{
	for (MtaFrameInfo *f = p, *next; f != NULL; f = next) {
		next = f->outer;
		g_free (f->function);
		g_free (f->file);
		g_free (f->object);
		g_free (f);
	}
}

/* When the call at ADDR (a file address of M) is in inlined code, F (the
 * frame of the function that holds the code, its line that of the line
 * table, which is the innermost function's) becomes the innermost of a
 * chain: each inlined function at its line, then the function it was
 * inlined into at the line of that call; F's function and object stay
 * with the last, which is no inlined code.  Without DWARF F is left
 * alone. */
static void
add_inline_frames (MtaSymbolizer *s, Module *m, uint64_t addr, MtaFrameInfo *f)
{
	guint n = 0;
	MtaDwarfInline *d = module_dwarf_index (s, m);

	if (d == NULL)
		return;
	const MtaInlineCall *calls = mta_dwarf_inline_at (d, addr + m->bias, &n);
	if (n == 0)
		return;
	MtaFrameInfo *last = f;
	char *outer_function = f->function;
	for (guint i = 0; i < n; i++) {
		MtaFrameInfo *o = g_new0 (MtaFrameInfo, 1);
		o->object = g_strdup (f->object);
		o->offset = f->offset;
		o->main_exe = f->main_exe;
		o->file = calls[i].call_file[0] ? g_strdup (calls[i].call_file) : NULL;
		o->line = calls[i].call_line;
		last->inlined = TRUE;
		last->function = calls[i].function[0] ? g_strdup (calls[i].function) : NULL;
		last->outer = o;
		last = o;
	}
	last->function = outer_function;
}

const MtaFrameInfo *
mta_symbolizer_call_site (MtaSymbolizer *s, const char *field)
{
	MtaFrameInfo *f = g_hash_table_lookup (s->frames, field);
	MtaCaller c;
	uint64_t vaddr;

	if (f != NULL)
		return f;
	f = g_new0 (MtaFrameInfo, 1);
	if (mta_caller_parse (field, &c)) {
		Module *m = locate (s, &c, &vaddr, &f->object, &f->offset);
		/* The executable by one name, whether a caller field (argv[0])
		 * or a stack frame ('# exe') named it. */
		if (c.object != NULL && s->exe != NULL && same_basename (c.object, s->exe)) {
			g_free (f->object);
			f->object = g_strdup (s->exe);
		}
		f->main_exe = f->object != NULL && is_main_exe (s, f->object);
		/* A return address: the call is the instruction before it. */
		if (m != NULL && vaddr > 0) {
			uint64_t off;
			int line;
			unsigned disc;
			if (dwarf_row (s, m, vaddr - 1, &f->file, &line, &disc))
				f->line = line > 0 ? (unsigned) line : 0;
			const char *name = symbol_at (s, m, vaddr - 1 + m->bias, &off);
			/* "__libc_start_main@@GLIBC_2.34": the version is no
			 * part of the name a user looks for */
			if (name != NULL)
				f->function = g_strndup (name, strcspn (name, "@"));
		}
		/* The symbol the caller field names: with its offset when the
		 * object could not be read, so that the calls of one function
		 * stay apart (they have no line to tell them apart). */
		if (f->function == NULL && c.symbol != NULL && c.symbol[0] != '\0')
			f->function = m != NULL ? g_strdup (c.symbol)
				: g_strdup_printf ("%s%s0x%" PRIx64, c.symbol, c.sym_offset < 0 ? "-" : "+",
						   (uint64_t) (c.sym_offset < 0 ? -c.sym_offset : c.sym_offset));
		if (m != NULL && vaddr > 0)
			add_inline_frames (s, m, vaddr - 1, f);
		mta_caller_clear (&c);
	}
	g_hash_table_insert (s->frames, g_strdup (field), f);
	return f;
}

/* ------------------------------------------------------------ setup */

static void
trace_object_free (gpointer p)
{
	TraceObject *o = p;
	g_free (o->build_id);
	g_free (o->path);
	g_free (o);
}

/* libdwfl's search path (see the top of this file).  Its elements are
 * directories separated by ':', so a directory whose name has one cannot
 * be searched (said by mta_symbolizer_add_debug_dir). */
static void
set_debuginfo_path (MtaSymbolizer *s)
{
	GString *p = g_string_new (NULL);

	for (guint i = 0; i < s->debug_dirs->len; i++)
		g_string_append_printf (p, "%s:", (char *) s->debug_dirs->pdata[i]);
	g_string_append (p, ":.debug:");
	/* absolute: libdwfl takes a relative element as relative to the
	 * object's directory, and never looks for a build-id there */
	g_autofree char *root = s->sysroot ? g_canonicalize_filename (s->sysroot, NULL) : NULL;
	if (root != NULL && strchr (root, ':') == NULL)
		g_string_append_printf (p, "%s/usr/lib/debug:", root);
	g_string_append (p, "/usr/lib/debug");
	g_free (s->debuginfo_path);
	s->debuginfo_path = g_string_free (p, FALSE);
}

gboolean
mta_symbolizer_add_debug_dir (MtaSymbolizer *s, const char *dir, GError **error)
{
	g_autofree char *abs = g_canonicalize_filename (dir, NULL);

	if (!g_file_test (abs, G_FILE_TEST_IS_DIR)) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR,
			     "--debug-dir '%s': not a directory", dir);
		return FALSE;
	}
	if (strchr (abs, ':') != NULL) {
		g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
			     "--debug-dir '%s': a directory whose name holds ':' cannot be searched "
			     "(libdw separates directories with it)", dir);
		return FALSE;
	}
	g_ptr_array_add (s->debug_dirs, g_steal_pointer (&abs));
	set_debuginfo_path (s);
	return TRUE;
}

MtaSymbolizer *
mta_symbolizer_new (const char *sysroot, MtaWarnFunc warn, gpointer user_data)
{
	MtaSymbolizer *s = g_new0 (MtaSymbolizer, 1);

	elf_version (EV_CURRENT);
	s->sysroot = sysroot && sysroot[0] ? g_strdup (sysroot) : NULL;
	s->debug_dirs = g_ptr_array_new_with_free_func (g_free);
	set_debuginfo_path (s);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->warn = warn;
	s->warn_data = user_data;
	s->modules = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, module_free);
	s->a2l = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
	s->locations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, location_free);
	s->frames = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, frame_info_free);
	s->warned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
	s->objects = g_ptr_array_new_with_free_func (trace_object_free);
	return s;
}

void
mta_symbolizer_free (MtaSymbolizer *s)
{
	if (s == NULL)
		return;
	g_hash_table_destroy (s->locations);
	g_hash_table_destroy (s->frames);
	g_hash_table_destroy (s->a2l);
	g_hash_table_destroy (s->modules);
	g_hash_table_destroy (s->warned);
	g_ptr_array_free (s->objects, TRUE);
	g_free (s->binary);
	g_free (s->exe);
	g_free (s->sysroot);
	g_free (s->debuginfo_path);
	g_ptr_array_free (s->debug_dirs, TRUE);
	g_free (s);
}

void
mta_symbolizer_forget_trace (MtaSymbolizer *s)
{
	g_hash_table_remove_all (s->locations);
	g_hash_table_remove_all (s->frames);
	g_hash_table_remove_all (s->warned);
	g_ptr_array_set_size (s->objects, 0);
	g_clear_pointer (&s->exe, g_free);
}

void
mta_symbolizer_set_binary (MtaSymbolizer *s, const char *path)
{
	g_free (s->binary);
	s->binary = path ? g_strdup (path) : NULL;
}

void
mta_symbolizer_ext_line (MtaSymbolizer *s, const char *text, size_t len)
{
	g_autofree char *line = g_strndup (text, len);
	g_strchomp (line);
	if (g_str_has_prefix (line, "# exe ")) {
		g_free (s->exe);
		s->exe = g_strdup (line + 6);
	} else if (g_str_has_prefix (line, "# object ")) {
		/* # object BIAS LOW-HIGH BUILDID REST */
		char *p = line + 9, *end;
		TraceObject o = { 0 };
		o.bias = g_ascii_strtoull (p, &end, 16);
		if (end == p || *end != ' ')
			return;
		p = end + 1;
		o.lo = g_ascii_strtoull (p, &end, 16);
		if (end == p || *end != '-')
			return;
		p = end + 1;
		o.hi = g_ascii_strtoull (p, &end, 16);
		if (end == p || *end != ' ')
			return;
		p = end + 1;
		char *sp = strchr (p, ' ');
		if (sp == NULL)
			return;
		TraceObject *n = g_new0 (TraceObject, 1);
		*n = o;
		n->build_id = (sp - p == 1 && *p == '-') ? NULL : g_strndup (p, (size_t) (sp - p));
		n->path = strcmp (sp + 1, "-") == 0 ? NULL : g_strdup (sp + 1);
		g_ptr_array_add (s->objects, n);
		/* A BINARY of another build is said at once, in every mode,
		 * whether or not an address of it is asked for later. */
		if (n->path == NULL && n->build_id != NULL && s->binary != NULL)
			(void) checked_module (s, s->binary, n->build_id);
	}
}
