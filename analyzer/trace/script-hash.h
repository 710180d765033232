/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* script-hash.h -- glibc's mtrace script's view of a trace: what it reads
 * on a line, and its %allocated hash.
 *
 * The script keys %allocated by the address *text* of the trace.  glibc
 * writes each address in one spelling (%p), so canonical texts ("0x" and
 * lowercase hex, no leading zero) are kept by value in the fast MtaLiveTable
 * and any other spelling ("(nil)", "0X1F", a field cut by a crash, a
 * missing one) by its bytes: together they behave as the one perl hash.
 * The mtrace-compatible report (mtrace-compat.c) and shrink (shrink.c),
 * which must keep whatever the script would report, both see the trace
 * through this.
 */
#ifndef MTA_SCRIPT_HASH_H
#define MTA_SCRIPT_HASH_H

#include <glib.h>

#include "live-table.h"
#include "trace-reader.h"

/* What the script reads on a line: "[@ WHERE] OP KEY [SIZE]". */
typedef struct {
	char op;                   /* the one-character operator; 0: no operator */
	MtaSpan where;             /* empty without "@ WHERE" */
	MtaSpan key;               /* empty when missing */
	MtaSpan size;              /* the column after KEY, empty when missing */
	gboolean canonical;        /* KEY spelled as %p spells VALUE */
	uint64_t value;
} MtaScriptEvent;

/* Read line L as the script does; FALSE when it has no operator. */
gboolean mta_script_event (const MtaLine *l, MtaScriptEvent *ev);

typedef struct {
	MtaLiveTable live;         /* canonical keys, by value */
	GHashTable *odd;           /* GBytes (the key's text) -> MtaLiveEntry */
} MtaScriptHash;

void mta_script_hash_init (MtaScriptHash *h);
void mta_script_hash_release (MtaScriptHash *h);

static inline size_t
mta_script_hash_count (const MtaScriptHash *h)
{
	return h->live.count + g_hash_table_size (h->odd);
}

/* $allocated{KEY} of EV, or NULL. */
MtaLiveEntry *mta_script_hash_lookup (MtaScriptHash *h, const MtaScriptEvent *ev);
/* A new entry for EV's key, which is not in the hash (zeroed but addr). */
MtaLiveEntry *mta_script_hash_insert (MtaScriptHash *h, const MtaScriptEvent *ev);
/* delete $allocated{KEY}: E is what lookup returned for EV. */
void mta_script_hash_remove (MtaScriptHash *h, const MtaScriptEvent *ev, MtaLiveEntry *e);

/* Every key, with its text as the script has it, in no order. */
typedef void (*MtaScriptHashFunc) (const char *key, size_t len, const MtaLiveEntry *e,
				   gpointer data);
void mta_script_hash_foreach (const MtaScriptHash *h, MtaScriptHashFunc func, gpointer data);

#endif
