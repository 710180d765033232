/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* live-table.h -- the blocks currently allocated, keyed by address.
 *
 * Open addressing with linear probing and backward-shift deletion (no
 * tombstones), so the table's size follows the largest live set, never the
 * number of events.  One table for every reader of blocks: a value is what
 * the script keeps of the allocation (its line, size and caller; shrink
 * also its stack and flags of its own), or what the run keeps (its line,
 * size, call path and thread).
 */
#ifndef MTA_LIVE_TABLE_H
#define MTA_LIVE_TABLE_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	uint64_t addr;
	uint64_t size;
	uint64_t seq;       /* line number of the allocation */
	union {
		int64_t stack;      /* shrink: its stack id, -1: none */
		int64_t tid;        /* the run: the thread that allocated it */
	};
	union {
		uint32_t caller;    /* the script's view: caller id (see MtaStrtab) */
		uint32_t path;      /* the run: its call path */
	};
	uint16_t used;      /* 0: free slot */
	uint16_t flags;     /* the user's */
} MtaLiveEntry;

typedef struct {
	MtaLiveEntry *slots;
	size_t mask;        /* capacity - 1, capacity a power of two */
	size_t count;
} MtaLiveTable;

void mta_live_init (MtaLiveTable *t);
void mta_live_release (MtaLiveTable *t);

/* The entry for ADDR, or NULL. */
MtaLiveEntry *mta_live_lookup (MtaLiveTable *t, uint64_t addr);
/* The entry for ADDR, created (zeroed but for addr/used) when missing. */
MtaLiveEntry *mta_live_insert (MtaLiveTable *t, uint64_t addr);
/* Remove ADDR; TRUE when it was there. */
gboolean mta_live_remove (MtaLiveTable *t, uint64_t addr);
/* Remove E, a pointer returned by lookup or insert. */
void mta_live_remove_entry (MtaLiveTable *t, MtaLiveEntry *e);

/* The entries moved to the front of the table's memory, T->count of
 * them, and the rest given back: what the end of a run reads while it
 * makes its records of them, with a table half the size.  After, T can
 * only be released. */
const MtaLiveEntry *mta_live_pack (MtaLiveTable *t);

/* Iterate: for (i = 0; mta_live_next (t, &i, &e); ) ... */
gboolean mta_live_next (const MtaLiveTable *t, size_t *iter, const MtaLiveEntry **entry);

/* Interned strings (callers): id 0 is always "". */
typedef struct {
	uint32_t *slots;    /* id + 1, 0 = empty */
	size_t mask;
	GArray *offsets;    /* id -> offset in data */
	GArray *lengths;    /* id -> length */
	GString *data;      /* NUL-terminated strings back to back */
} MtaStrtab;

void mta_strtab_init (MtaStrtab *s);
void mta_strtab_release (MtaStrtab *s);
uint32_t mta_strtab_intern (MtaStrtab *s, const char *p, size_t len);
static inline const char *
mta_strtab_get (const MtaStrtab *s, uint32_t id)
{
	return s->data->str + g_array_index (s->offsets, size_t, id);
}
static inline size_t
mta_strtab_len (const MtaStrtab *s, uint32_t id)
{
	return g_array_index (s->lengths, size_t, id);
}
static inline uint32_t
mta_strtab_count (const MtaStrtab *s)
{
	return s->offsets->len;
}

#endif
