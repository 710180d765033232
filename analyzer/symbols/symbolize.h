/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* symbolize.h -- from caller fields and addresses to source locations.
 *
 * Two services on one cache of opened objects (libelf + libdwfl, no
 * subprocess):
 *
 *  - mta_symbolizer_addr2line() answers what `addr2line -e PATH ADDR`
 *    (GNU binutils 2.40) prints on its first line, so that the output of
 *    /usr/bin/mtrace, which runs it, can be reproduced byte for byte;
 *  - mta_symbolizer_resolve() gives the best location of a caller field
 *    ("obj:(sym+off)[0xrel]", "obj:[0xrel]", "[0xaddr]"): it corrects what
 *    the script gets wrong (non-PIE offsets, objects that are not where the
 *    trace says, absolute addresses), follows `# object` lines, --sysroot,
 *    separate debug files (build-id, .gnu_debuglink), and falls back to
 *    function+offset, then object+offset.  Each caller string is resolved
 *    once.
 */
#ifndef MTA_SYMBOLIZE_H
#define MTA_SYMBOLIZE_H

#include <glib.h>
#include <stdint.h>

#include "trace-header.h"
#include "warn.h"


typedef struct {
	char *file_line;     /* "/src/a.c:12" as addr2line prints it, or NULL */
	char *function;      /* "leaky+0x12", or NULL */
	char *object;        /* "/path/obj+0x11f1", or NULL */
} MtaLocation;

typedef struct MtaSymbolizer MtaSymbolizer;


MtaSymbolizer *mta_symbolizer_new (const char *sysroot, MtaWarnFunc warn, gpointer user_data);
void mta_symbolizer_free (MtaSymbolizer *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (MtaSymbolizer, mta_symbolizer_free)

/* Also look for separate debug files under DIR (--debug-dir), before the
 * standard places; an error when DIR is not a directory.  Call before the
 * first lookup. */
gboolean mta_symbolizer_add_debug_dir (MtaSymbolizer *s, const char *dir, GError **error);

/* Forget what the last trace said (its executable, objects, and the
 * answers that depend on them), keep the opened files: the next trace is
 * read as if by a new symbolizer, without opening them again. */
void mta_symbolizer_forget_trace (MtaSymbolizer *s);

/* The program the trace was recorded from (BINARY argument). */
void mta_symbolizer_set_binary (MtaSymbolizer *s, const char *path);
/* Whether missing debug files are fetched from $DEBUGINFOD_URLS (TRUE by
 * default; the plain report, addr2line's answers, never fetches). */
void mta_symbolizer_set_fetch (MtaSymbolizer *s, gboolean fetch);
/* Feed a header line of the trace (it uses exe and object). */
void mta_symbolizer_header (MtaSymbolizer *s, const MtaHeader *h);

/* What `addr2line -e PATH ADDR` prints, or NULL when it prints "??:0" or
 * nothing (file missing or not an object).  Owned by the symbolizer. */
const char *mta_symbolizer_addr2line (MtaSymbolizer *s, const char *path, uint64_t addr);

/* Best location of a caller field; owned by the symbolizer. */
const MtaLocation *mta_symbolizer_resolve (MtaSymbolizer *s, const char *field);

/* A code location split into the parts that stay the same from one build
 * to the next (function, source file and line), for grouping by call site.
 * Code the compiler inlined is several frames at one address: the inlined
 * function at the line of the code, then the function it was inlined
 * into at the line of the inlined call (DWARF's DW_AT_call_line), and so
 * on out to the function that holds the code, as `addr2line -i` lists
 * them. */
typedef struct MtaFrameInfo MtaFrameInfo;
struct MtaFrameInfo {
	char *function;      /* symbol name without offset (C++ demangled), or NULL */
	char *linkage;       /* the name as the symbol table spells it, when demangled; else NULL */
	char *file;          /* source file as addr2line names it, or NULL */
	unsigned line;       /* 0: unknown */
	char *object;        /* the object as the trace names it, or NULL */
	uint64_t offset;     /* the address in that object (or absolute) */
	gboolean main_exe;   /* the object is the traced program itself */
	gboolean inlined;    /* this function's code was inlined into OUTER's */
	/* Without a function name: the bounds of the code holding the call,
	 * as offsets in OBJECT like OFFSET (.eh_frame); 0, 0: unknown */
	uint64_t code_lo, code_hi;
	MtaFrameInfo *outer; /* the next frame at the same address, NULL: none */
};

/* The address range and build-id (NULL: not recorded) that the trace's
 * '# object' lines give OBJECT, as a frame names it (the program by its
 * path or argv[0]); FALSE when no line names it. */
gboolean mta_symbolizer_object_info (MtaSymbolizer *s, const char *object, uint64_t *lo,
				     uint64_t *hi, const char **build_id);

/* When OBJECT (as a frame names it) has no function names -- no .symtab
 * and no debug file -- one sentence saying so and what would bring them
 * (the Debian -dbgsym package, found with dpkg-query, --debug-dir, a
 * debuginfod server, or what the one of $DEBUGINFOD_URLS answered); when
 * OBJECT is not here at all, that it was not found; else NULL.  Free it. */
char *mta_symbolizer_no_symbols_note (MtaSymbolizer *s, const char *object);

/* Where the call that returned to the caller field or stack frame FIELD
 * ("obj:(sym+off)[0xrel]", "[0xabs]", ...) is: the address just before the
 * return address is looked up, so the line is that of the call itself,
 * not of the statement after it.  When that call is in inlined code, the
 * innermost of its frames, the others following through OUTER.  Not
 * cached (the run keeps what it needs of each field, once, and a copy
 * here cost 150 bytes a distinct caller): free it with
 * mta_frame_info_free. */
MtaFrameInfo *mta_symbolizer_call_site (MtaSymbolizer *s, const char *field);
void mta_frame_info_free (MtaFrameInfo *fi);

#endif
