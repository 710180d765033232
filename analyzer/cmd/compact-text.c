/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* compact-text.c -- the pending lines' text (compact-text.h).  Most event
 * lines are 60-120 bytes: two sizes of fixed slots, reused through free
 * lists, take them without a malloc each (a compaction stores and drops
 * one per allocation); a reference is the slot's index, its class in the
 * low two bits. */
#include "compact-text.h"

#include <string.h>

#define SMALL 128
#define MEDIUM 512
enum { SMALL_CLASS, MEDIUM_CLASS, BIG_CLASS };

void
mta_text_init (MtaTextStore *t)
{
	t->small = g_array_new (FALSE, FALSE, SMALL);
	t->medium = g_array_new (FALSE, FALSE, MEDIUM);
	t->free_small = g_array_new (FALSE, FALSE, sizeof (guint));
	t->free_medium = g_array_new (FALSE, FALSE, sizeof (guint));
	t->free_big = g_array_new (FALSE, FALSE, sizeof (guint));
	t->big = g_ptr_array_new ();
}

void
mta_text_release (MtaTextStore *t)
{
	g_array_free (t->small, TRUE);
	g_array_free (t->medium, TRUE);
	g_array_free (t->free_small, TRUE);
	g_array_free (t->free_medium, TRUE);
	g_array_free (t->free_big, TRUE);
	for (guint i = 0; i < t->big->len; i++)
		if (t->big->pdata[i] != NULL)
			g_bytes_unref (t->big->pdata[i]);
	g_ptr_array_free (t->big, TRUE);
}

/* A free index of slots (growing them when none is free). */
static guint
take (GArray *slots, GArray *free_list)
{
	if (free_list->len > 0) {
		guint i = g_array_index (free_list, guint, free_list->len - 1);
		g_array_set_size (free_list, free_list->len - 1);
		return i;
	}
	g_array_set_size (slots, slots->len + 1);
	return slots->len - 1;
}

static uint64_t
put_slot (GArray *slots, GArray *free_list, guint size, int cls, const char *p, size_t len)
{
	guint i = take (slots, free_list);
	char *s = slots->data + (size_t) i * size;
	uint16_t n = (uint16_t) len;
	memcpy (s, &n, sizeof n);
	memcpy (s + sizeof n, p, len);
	return (uint64_t) i << 2 | (uint64_t) cls;
}

uint64_t
mta_text_put (MtaTextStore *t, const char *p, size_t len)
{
	if (len <= SMALL - sizeof (uint16_t))
		return put_slot (t->small, t->free_small, SMALL, SMALL_CLASS, p, len);
	if (len <= MEDIUM - sizeof (uint16_t))
		return put_slot (t->medium, t->free_medium, MEDIUM, MEDIUM_CLASS, p, len);
	GBytes *b = g_bytes_new (p, len);
	if (t->free_big->len > 0) {
		guint i = g_array_index (t->free_big, guint, t->free_big->len - 1);
		g_array_set_size (t->free_big, t->free_big->len - 1);
		t->big->pdata[i] = b;
		return (uint64_t) i << 2 | BIG_CLASS;
	}
	g_ptr_array_add (t->big, b);
	return (uint64_t) (t->big->len - 1) << 2 | BIG_CLASS;
}

const char *
mta_text_get (const MtaTextStore *t, uint64_t ref, size_t *len)
{
	guint i = (guint) (ref >> 2);
	const char *s;
	uint16_t n;

	if ((ref & 3) == BIG_CLASS) {
		gsize size;
		const char *p = g_bytes_get_data (t->big->pdata[i], &size);
		*len = size;
		return p;
	}
	s = (ref & 3) == SMALL_CLASS ? t->small->data + (size_t) i * SMALL
				     : t->medium->data + (size_t) i * MEDIUM;
	memcpy (&n, s, sizeof n);
	*len = n;
	return s + sizeof n;
}

void
mta_text_drop (MtaTextStore *t, uint64_t ref)
{
	guint i = (guint) (ref >> 2);

	switch (ref & 3) {
	case SMALL_CLASS:
		g_array_append_val (t->free_small, i);
		break;
	case MEDIUM_CLASS:
		g_array_append_val (t->free_medium, i);
		break;
	default:
		g_bytes_unref (t->big->pdata[i]);
		t->big->pdata[i] = NULL;
		g_array_append_val (t->free_big, i);
		break;
	}
}
