/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trace-words.h -- the words of the trace's extension lines ("# WORD
 * ...") as the analyzer knows them: an enum from the one list,
 * recorder/trace-words.def, which the recorder writes from (t1045).
 *
 * The reader classifies each '#' line once (MtaLine.word, trace-reader.h),
 * so that a consumer switches on the word instead of comparing bytes. */
#ifndef MTA_TRACE_WORDS_H
#define MTA_TRACE_WORDS_H

#include <stddef.h>

/* X(NAME, "word"): the list the recorder writes from */
#include "../../recorder/trace-words.def"
#define MTA_TRACE_WORDS(X) MTREC_TRACE_WORDS (X)

typedef enum {
	MTA_WORD_NONE,     /* not a '#' line, or a word no reader knows (skipped) */
	MTA_WORD_FILLER,   /* '#' and blanks only */
#define MTA_WORD_ENUM(name, word) MTA_WORD_##name,
	MTA_TRACE_WORDS (MTA_WORD_ENUM)
#undef MTA_WORD_ENUM
	MTA_WORD_N
} MtaWord;

/* The word of "# WORD ...", given WORD (LEN bytes). */
MtaWord mta_trace_word (const char *word, size_t len);
/* "time" for MTA_WORD_TIME; "" for NONE and FILLER. */
const char *mta_trace_word_name (MtaWord w);

#endif
