/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-text.h -- the text of the lines a compaction has not decided on
 * yet: each allocation whose block is still live, held until its free
 * says whether it is kept (compact.c).  Memory follows the live blocks,
 * not the trace: a freed line's room is taken by the next one.
 */
#ifndef MTA_COMPACT_TEXT_H
#define MTA_COMPACT_TEXT_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	GArray *small, *medium;    /* fixed slots: a length, then the text */
	GArray *free_small, *free_medium, *free_big;   /* guint indices */
	GPtrArray *big;            /* GBytes for longer lines */
} MtaTextStore;

void mta_text_init (MtaTextStore *t);
void mta_text_release (MtaTextStore *t);
/* A copy of LEN bytes at P; the reference names it until dropped. */
uint64_t mta_text_put (MtaTextStore *t, const char *p, size_t len);
/* The text of REF; valid until the next put or drop. */
const char *mta_text_get (const MtaTextStore *t, uint64_t ref, size_t *len);
void mta_text_drop (MtaTextStore *t, uint64_t ref);

#endif
