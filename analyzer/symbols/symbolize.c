/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize.c -- from caller fields and stack frames to source locations.
 *
 * Which file is which object of the trace: the BINARY argument for the
 * program, '# object' lines (their build-ids: never a file of another
 * build), --sysroot, and the addresses of '[0xabs]' callers.  The files
 * themselves are read by elf-module.c, addr2line's answers are emulated
 * by addr2line-emu.c; every answer is computed once.
 *
 * Debug files are looked for where Debian puts them, through libdwfl's
 * own search (dwfl_standard_find_debuginfo) on a path we write: each
 * --debug-dir, the object's directory and its .debug/, then
 * SYSROOT/usr/lib/debug and /usr/lib/debug -- by build-id in
 * DIR/.build-id/xx/yyyy.debug, and by the .gnu_debuglink name in DIR/<the
 * object's directory>/ and DIR/.  libdwfl checks the build-id (or the CRC)
 * of what it finds, so a debug file of another build is never used.
 */
#include "symbolize.h"
#include "addr2line-emu.h"
#include "caller-field.h"
#include "demangle.h"
#include "elf-module.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t bias, lo, hi;
	char *build_id;           /* NULL when '-' */
	char *path;               /* NULL for the executable ('-') */
} TraceObject;

struct MtaSymbolizer {
	char *sysroot;
	char *debuginfo_path;
	GPtrArray *debug_dirs;    /* --debug-dir, absolute */
	Dwfl_Callbacks callbacks;  /* libdwfl's, with debuginfo_path */
	MtaWarnFunc warn;
	gpointer warn_data;
	char *binary;
	char *exe;                /* from "# exe" */
	MtaModules *modules;
	GHashTable *a2l;          /* "path\naddr" -> char* or NULL */
	GHashTable *locations;    /* caller field -> MtaLocation */
	GHashTable *warned;       /* paths already warned about */
	GPtrArray *objects;       /* TraceObject, in trace order */
};


/* ------------------------------------------------------------ resolve */

static char *
under_sysroot (MtaSymbolizer *s, const char *path)
{
	if (s->sysroot == NULL || path[0] != '/')
		return g_strdup (path);
	return g_strconcat (s->sysroot, path, NULL);
}

/* The module for PATH unless its build-id contradicts EXPECTED. */
static MtaModule *
checked_module (MtaSymbolizer *s, const char *path, const char *expected)
{
	MtaModule *m = mta_modules_get (s->modules, path);
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

gboolean
mta_symbolizer_object_info (MtaSymbolizer *s, const char *object, uint64_t *lo, uint64_t *hi,
			    const char **build_id)
{
	const TraceObject *o = object_by_path (s, object);

	if (o == NULL && s->exe != NULL && same_basename (object, s->exe))
		for (guint i = s->objects->len; i-- > 0 && o == NULL;)
			if (((const TraceObject *) s->objects->pdata[i])->path == NULL)
				o = s->objects->pdata[i];
	if (o == NULL)
		return FALSE;
	*lo = o->lo;
	*hi = o->hi;
	*build_id = o->build_id;
	return TRUE;
}

/* Find the file of the object a caller field names. */
static MtaModule *
module_for_object (MtaSymbolizer *s, const char *object)
{
	const TraceObject *o = object_by_path (s, object);
	const char *expected = o ? o->build_id : NULL;
	MtaModule *m;

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

/* ------------------------------------------------------------ addr2line */

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
	return expected != NULL && mta_modules_get (s->modules, path)->ok && checked_module (s, path, expected) == NULL;
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
	char *r = mta_addr2line_emulate (mta_modules_get (s->modules, path), addr);
	g_hash_table_insert (s->a2l, key, r);
	return r;
}

/* ------------------------------------------------------------ locations */

static void
location_free (gpointer p)
{
	MtaLocation *l = p;
	g_free (l->file_line);
	g_free (l->function);
	g_free (l->object);
	g_free (l);
}

/* The file of trace object O, P its path (the program's for '-'): the
 * BINARY argument for the program, else P (under --sysroot); never a file
 * of another build, so that a wrong BINARY leaves the program's own file,
 * when it is still where the trace says, to answer. */
static MtaModule *
trace_object_module (MtaSymbolizer *s, const TraceObject *o, const char *p)
{
	MtaModule *m;

	if (o->path == NULL && s->binary != NULL &&
	    (m = checked_module (s, s->binary, o->build_id)) != NULL)
		return m;
	g_autofree char *sp = under_sysroot (s, p);
	return checked_module (s, sp, o->build_id);
}

/* The module holding the code of caller C, the file address there, and
 * the object's name as the trace gives it (*OBJNAME, owned by the caller)
 * with the offset of the address in it. */
static MtaModule *
locate (MtaSymbolizer *s, const MtaCaller *c, uint64_t *vaddr, char **objname, uint64_t *objoff)
{
	MtaModule *m = NULL;

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
			MtaModule *b = checked_module (s, s->binary, exe_build_id (s));
			if (b != NULL && b->type == ET_EXEC && mta_module_section (b, c->addr) != NULL) {
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
	MtaModule *m = NULL;
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
			char *fl = mta_module_file_line (m, vaddr);
			if (fl != NULL && g_str_has_suffix (fl, ":?"))
				g_clear_pointer (&fl, g_free);
			l->file_line = fl;
			l->function = mta_module_function_at (m, vaddr);
		}
		if (l->function == NULL && c.symbol != NULL)
			l->function = g_strdup_printf ("%s%s0x%" PRIx64, c.symbol,
						       c.sym_offset < 0 ? "-" : "+",
						       (uint64_t) (c.sym_offset < 0 ? -c.sym_offset : c.sym_offset));
		mta_caller_clear (&c);
	}
	g_hash_table_insert (s->locations, g_strdup (field), l);
	return l;
}

/* ------------------------------------------------------------ no symbols */


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

/* The number in environment variable NAME, as libdebuginfod reads it
 * (strtol, negative taken as 0), or DEFAULT when unset or not a number. */
static long
env_long (const char *name, long dflt)
{
	const char *v = g_getenv (name);
	char *end;

	if (v == NULL)
		return dflt;
	long n = strtol (v, &end, 10);
	if (end == v)
		return dflt;
	return n < 0 ? 0 : n;
}

/* What debuginfod did for M, when $DEBUGINFOD_URLS is set: the server
 * had nothing, or could not be reached. */
static char *
debuginfod_note (const MtaModule *m, const char *urls)
{
	if (m->build_id == NULL)
		return g_strdup ("debuginfod cannot be asked: it has no build-id");
	if (!m->fetch_asked)
		return g_strdup_printf ("debuginfod was not asked: %s could not be reached "
					"for another object", urls);
	if (m->fetch_result == -ENOENT)
		return g_strdup_printf ("debuginfod at %s has no debug file for it", urls);
	/* libdebuginfod tries 1 + DEBUGINFOD_RETRY_LIMIT times, each attempt
	 * given DEBUGINFOD_TIMEOUT: 3 s and the default limit waited 9.6 s */
	long timeout = env_long ("DEBUGINFOD_TIMEOUT", 90), retries = env_long ("DEBUGINFOD_RETRY_LIMIT", 2);
	return g_strdup_printf ("debuginfod at %s could not be reached: %s after %.0f s, "
				"DEBUGINFOD_TIMEOUT (%ld s) bounding each of 1 + DEBUGINFOD_RETRY_LIMIT (%ld) "
				"attempts", urls, g_strerror (-m->fetch_result), m->fetch_seconds, timeout,
				retries);
}

/* When OBJECT is a file that is not here (deleted or moved since the
 * recording, or recorded on another machine): what to pass.  Not for a
 * file of another build (warned already) nor one that is no ELF file. */
static char *
not_found_note (MtaSymbolizer *s, const char *object)
{
	g_autofree char *p = under_sysroot (s, object);

	if (object[0] != '/' || g_file_test (p, G_FILE_TEST_EXISTS))
		return NULL;
	return g_strdup_printf ("not found: %s%s%s (deleted or moved since the recording, or recorded on "
				"another machine): its code shows as offsets; %s", p,
				s->sysroot ? ", the trace's " : "", s->sysroot ? object : "",
				is_main_exe (s, object) ? "name the program's file before the trace "
				"(mtanalyze BINARY TRACE), or pass --sysroot DIR"
				: "pass --sysroot DIR, DIR holding it as DIR/PATH");
}

char *
mta_symbolizer_no_symbols_note (MtaSymbolizer *s, const char *object)
{
	MtaModule *m = module_for_object (s, object);
	const char *urls = mta_debuginfod_urls ();

	if (m == NULL)
		return not_found_note (s, object);
	if (mta_module_has_symbols (m))
		return NULL;
	/* under --sysroot the objects are another machine's: this one's
	 * package database does not know them */
	g_autofree char *pkg = s->sysroot == NULL ? owning_package (m->path) : NULL;
	g_autofree char *where = pkg ? g_strdup_printf ("install %s-dbgsym (Debian's debug symbols of %s), "
							"pass --debug-dir DIR", pkg, pkg)
		: g_strdup ("pass --debug-dir DIR, DIR holding its debug file (by build-id, "
			    ".build-id/xx/yyyy.debug, or by name)");
	/* debuginfod: Debian's server has every package's debug file, which
	 * the separate debug archive makes hard to install */
	g_autofree char *dnote = urls != NULL ? debuginfod_note (m, urls) : NULL;
	g_autofree char *what = urls == NULL
		? g_strdup_printf ("%s, or set DEBUGINFOD_URLS=https://debuginfod.debian.net "
				   "(a debuginfod server%s; its debug file is fetched by build-id)", where,
				   pkg ? "" : " that has it, Debian's for its packages")
		: g_strdup_printf ("%s (%s)", where, dnote);
	return g_strdup_printf ("no symbols for %s (no .symtab, no debug file found%s%s): its code shows as "
				"offsets; %s", object, m->build_id ? " for build-id " : "",
				m->build_id ? m->build_id : "", what);
}

void
mta_frame_info_free (MtaFrameInfo *fi)
{
	for (MtaFrameInfo *f = fi, *next; f != NULL; f = next) {
		next = f->outer;
		g_free (f->function);
		g_free (f->linkage);
		g_free (f->file);
		g_free (f->object);
		g_free (f);
	}
}

/* F's function NAME (taken): C++ names demangled, as every output but the
 * plain one shows them, the symbol table's spelling kept for the wrapper
 * list and --skip.  SUFFIX ("+0x12", or "") follows both. */
static void
set_function (MtaFrameInfo *f, char *name, const char *suffix)
{
	char *d = mta_demangle (name);

	if (d != NULL) {
		f->function = g_strconcat (d, suffix, NULL);
		f->linkage = g_strconcat (name, suffix, NULL);
		g_free (d);
		g_free (name);
	} else if (suffix[0] != '\0') {
		f->function = g_strconcat (name, suffix, NULL);
		g_free (name);
	} else
		f->function = name;
}

/* When the call at ADDR (a file address of M) is in inlined code, F (the
 * frame of the function that holds the code, its line that of the line
 * table, which is the innermost function's) becomes the innermost of a
 * chain: each inlined function at its line, then the function it was
 * inlined into at the line of that call; F's function and object stay
 * with the last, which is no inlined code.  Without DWARF F is left
 * alone. */
static void
add_inline_frames (MtaSymbolizer *s, MtaModule *m, uint64_t addr, MtaFrameInfo *f)
{
	guint n = 0;
	MtaDwarfInline *d = mta_module_dwarf_index (m);

	if (d == NULL)
		return;
	const MtaInlineCall *calls = mta_dwarf_inline_at (d, addr + m->bias, &n);
	if (n == 0)
		return;
	MtaFrameInfo *last = f;
	char *outer_function = f->function, *outer_linkage = f->linkage;
	for (guint i = 0; i < n; i++) {
		MtaFrameInfo *o = g_new0 (MtaFrameInfo, 1);
		o->object = g_strdup (f->object);
		o->offset = f->offset;
		o->main_exe = f->main_exe;
		o->file = calls[i].call_file[0] ? g_strdup (calls[i].call_file) : NULL;
		o->line = calls[i].call_line;
		last->inlined = TRUE;
		last->function = last->linkage = NULL;
		if (calls[i].function[0])
			set_function (last, g_strdup (calls[i].function), "");
		last->outer = o;
		last = o;
	}
	last->function = outer_function;
	last->linkage = outer_linkage;
}

MtaFrameInfo *
mta_symbolizer_call_site (MtaSymbolizer *s, const char *field)
{
	MtaFrameInfo *f = g_new0 (MtaFrameInfo, 1);
	MtaCaller c;
	uint64_t vaddr;

	if (mta_caller_parse (field, &c)) {
		MtaModule *m = locate (s, &c, &vaddr, &f->object, &f->offset);
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
			if (mta_module_dwarf_row (m, vaddr - 1, &f->file, &line, &disc))
				f->line = line > 0 ? (unsigned) line : 0;
			const char *name = mta_module_symbol_at (m, vaddr - 1 + m->bias, &off);
			/* "__libc_start_main@@GLIBC_2.34": the version is no
			 * part of the name a user looks for */
			if (name != NULL)
				set_function (f, g_strndup (name, strcspn (name, "@")), "");
		}
		/* The symbol the caller field names: with its offset when the
		 * object could not be read, so that the calls of one function
		 * stay apart (they have no line to tell them apart). */
		if (f->function == NULL && c.symbol != NULL && c.symbol[0] != '\0') {
			g_autofree char *off = m != NULL ? g_strdup ("")
				: g_strdup_printf ("%s0x%" PRIx64, c.sym_offset < 0 ? "-" : "+",
						   (uint64_t) (c.sym_offset < 0 ? -c.sym_offset : c.sym_offset));
			set_function (f, g_strdup (c.symbol), off);
		}
		/* no name: where its function's code lies, for the wrappers
		 * found without symbols (run.c) */
		uint64_t lo, hi;
		if (f->function == NULL && m != NULL && vaddr > 0 &&
		    mta_module_function_bounds (m, vaddr - 1, &lo, &hi)) {
			f->code_lo = f->offset - (vaddr - lo);
			f->code_hi = f->offset + (hi - vaddr);
		}
		if (m != NULL && vaddr > 0)
			add_inline_frames (s, m, vaddr - 1, f);
		mta_caller_clear (&c);
	}
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

	s->sysroot = sysroot && sysroot[0] ? g_strdup (sysroot) : NULL;
	s->debug_dirs = g_ptr_array_new_with_free_func (g_free);
	set_debuginfo_path (s);
	s->callbacks.find_elf = dwfl_build_id_find_elf;
	s->callbacks.find_debuginfo = mta_module_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->warn = warn;
	s->warn_data = user_data;
	s->modules = mta_modules_new (&s->callbacks);
	s->a2l = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
	s->locations = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, location_free);
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
	g_hash_table_destroy (s->a2l);
	mta_modules_free (s->modules);
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
	g_hash_table_remove_all (s->warned);
	g_ptr_array_set_size (s->objects, 0);
	g_clear_pointer (&s->exe, g_free);
}

void
mta_symbolizer_set_fetch (MtaSymbolizer *s, gboolean fetch)
{
	mta_modules_set_fetch (s->modules, fetch);
}

void
mta_symbolizer_set_binary (MtaSymbolizer *s, const char *path)
{
	g_free (s->binary);
	s->binary = path ? g_strdup (path) : NULL;
}

void
mta_symbolizer_header (MtaSymbolizer *s, const MtaHeader *h)
{
	if (h->kind == MTA_HEADER_EXE) {
		g_free (s->exe);
		s->exe = mta_header_dup (h->rest);
	} else if (h->kind == MTA_HEADER_OBJECT) {
		TraceObject *n = g_new0 (TraceObject, 1);
		n->bias = h->bias;
		n->lo = h->lo;
		n->hi = h->hi;
		n->build_id = mta_header_dup (h->build_id);
		n->path = h->rest.len == 1 && h->rest.p[0] == '-' ? NULL : mta_header_dup (h->rest);
		g_ptr_array_add (s->objects, n);
		/* A BINARY of another build is said at once, in every mode,
		 * whether or not an address of it is asked for later. */
		if (n->path == NULL && n->build_id != NULL && s->binary != NULL)
			(void) checked_module (s, s->binary, n->build_id);
	}
}
