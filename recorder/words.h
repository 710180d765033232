/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* words.h -- "# WORD " of each extension line, from the one list
 * (trace-words.def), for the code that writes the lines: a constant
 * wherever the word is one, so writing it costs what a literal costs. */
#ifndef MTREC_WORDS_H
#define MTREC_WORDS_H

#include <stddef.h>
#include <string.h>

#include "trace-words.def"

enum mtrec_word {
#define MTREC_WORD_ENUM(name, word) MTREC_W_##name,
	MTREC_TRACE_WORDS(MTREC_WORD_ENUM)
#undef MTREC_WORD_ENUM
};

/* "# WORD " (with its blank). */
static inline const char *mtrec_word(enum mtrec_word w)
{
	switch (w) {
#define MTREC_WORD_CASE(name, word) case MTREC_W_##name: return "# " word " ";
	MTREC_TRACE_WORDS(MTREC_WORD_CASE)
#undef MTREC_WORD_CASE
	}
	return "# ";
}

static inline size_t mtrec_word_len(enum mtrec_word w)
{
	return __builtin_strlen(mtrec_word(w));
}

/* "# WORD " written at O (room checked by the caller); the byte after. */
static inline char *mtrec_put_word(char *o, enum mtrec_word w)
{
	size_t n = mtrec_word_len(w);

	memcpy(o, mtrec_word(w), n);
	return o + n;
}

#endif
