/* addr2line.c -- `mtanalyze addr2line FILE ADDR...`: the FILE:LINE the
 * report uses for each address of an object, so that it can be checked
 * against binutils' addr2line (symbols/addr2line-emu.c does the work).
 */
#include "addr2line.h"

#include <stdio.h>

#include "symbolize.h"

/* No options, but its help must not be the report's. */
const GOptionEntry mta_addr2line_entries[] = { { NULL } };
const char mta_addr2line_params[] = "FILE ADDR... - print what 'addr2line -e FILE ADDR...' prints";
const char mta_addr2line_description[] =
	"Prints, one per line, the FILE:LINE the report uses for each hexadecimal\n"
	"ADDR of the object FILE, so that it can be checked against binutils'\n"
	"addr2line.\n"
	"\n"
	"Exit status: 0 printed, 2 trouble (a usage error).";

/* The answers the report uses in place of binutils' addr2line, one per
 * line, so that they can be checked against the real program. */
gboolean
mta_addr2line (int argc, char **argv, MtaWarnFunc warn, int *status, GError **error)
{
	(void) warn;
	if (argc < 2) {
		g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
			     "addr2line takes an object FILE and addresses");
		return FALSE;
	}
	MtaSymbolizer *sym = mta_symbolizer_new (NULL, NULL, NULL);
	mta_symbolizer_set_fetch (sym, FALSE);   /* binutils' addr2line asks no server */
	for (int i = 1; i < argc; i++) {
		const char *r = mta_symbolizer_addr2line (sym, argv[0],
							  g_ascii_strtoull (argv[i], NULL, 16));
		puts (r ? r : "??:0");
	}
	mta_symbolizer_free (sym);
	*status = 0;
	return TRUE;
}
