/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* index-table.h -- a set of indexes into an array the caller keeps (its
 * sites, say), found by a hash the caller computes and an equality it
 * tests against the element an index names.
 *
 * For millions of keys: a slot is 8 bytes (the 32-bit hash and the index)
 * where a GHashTable costs 20 bytes a slot and often a key of its own.
 * Open addressing, linear probing, at most 3/4 full; no removal.
 */
#ifndef MTA_INDEX_TABLE_H
#define MTA_INDEX_TABLE_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	uint64_t *slots;    /* hash << 32 | (index + 1); 0: empty */
	size_t mask;        /* capacity - 1, capacity a power of two */
	size_t count;
} MtaIndexTable;

/* Whether the element INDEX is KEY. */
typedef gboolean (*MtaIndexEqual) (uint32_t index, gconstpointer key, gpointer data);

void mta_index_init (MtaIndexTable *t);
void mta_index_release (MtaIndexTable *t);
/* The index stored with HASH whose element EQUAL says is KEY; FALSE when
 * there is none. */
gboolean mta_index_find (const MtaIndexTable *t, guint hash, MtaIndexEqual equal, gconstpointer key,
			 gpointer data, uint32_t *index);
/* Add INDEX under HASH (not there yet: mta_index_find said so). */
void mta_index_add (MtaIndexTable *t, guint hash, uint32_t index);

#endif
