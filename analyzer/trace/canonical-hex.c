/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* canonical-hex.c -- whether a field is spelled as glibc's %p writes an
 * address (declared in trace-reader.h).  Apart from the reader, so that
 * compact-sum.c, which the reader calls for "# at" lines, checks its
 * addresses without calling the reader back.
 */
#include "trace-reader.h"

gboolean
mta_canonical_hex (MtaSpan s, uint64_t *value)
{
	uint64_t v = 0;

	if (s.len < 3 || s.len > 18 || s.p[0] != '0' || s.p[1] != 'x')
		return FALSE;
	if (s.p[2] == '0' && s.len != 3)
		return FALSE;
	for (size_t i = 2; i < s.len; i++) {
		unsigned char c = s.p[i];
		int d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else
			return FALSE;
		v = (v << 4) | (uint64_t) d;
	}
	*value = v;
	return TRUE;
}
