/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* caller-field.c -- the caller field of a trace line, as dladdr(3) and
 * glibc's tracer spell it (share/trace-format.md, "Standard lines"). */
#include "caller-field.h"

#include <string.h>

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

