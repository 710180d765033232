/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-words.c -- the words of the extension lines (trace-words.h).
 * A search of the 27 words by length and first byte before memcmp: only
 * '#' lines are looked up, once each, by the reader. */
#include "trace-words.h"

#include <string.h>

static const struct {
	const char *word;
	unsigned char len;
} words[MTA_WORD_N] = {
	[MTA_WORD_NONE] = { "", 0 },
	[MTA_WORD_FILLER] = { "", 0 },
#define ENTRY(name, w) [MTA_WORD_##name] = { w, sizeof (w) - 1 },
	MTA_TRACE_WORDS (ENTRY)
#undef ENTRY
};

MtaWord
mta_trace_word (const char *word, size_t len)
{
	for (int w = MTA_WORD_FILLER + 1; w < MTA_WORD_N; w++)
		if (words[w].len == len && word[0] == words[w].word[0] &&
		    memcmp (word, words[w].word, len) == 0)
			return (MtaWord) w;
	return MTA_WORD_NONE;
}

const char *
mta_trace_word_name (MtaWord w)
{
	return w < MTA_WORD_N ? words[w].word : "";
}
