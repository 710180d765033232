/* trace-words.h -- the words of the trace's extension lines ("# WORD
 * ..."), listed once: share/trace-format.md, "Extension lines", is their
 * documentation, in the same order, and t1045 checks that the two lists
 * and the words the recorder writes are one vocabulary.
 *
 * The reader classifies each '#' line once (MtaLine.word, trace-reader.h),
 * so that a consumer switches on the word instead of comparing bytes. */
#ifndef MTA_TRACE_WORDS_H
#define MTA_TRACE_WORDS_H

#include <stddef.h>

/* X(NAME, "word") */
#define MTA_TRACE_WORDS(X) \
	X(MTREC, "mtrec") \
	X(PART, "part") \
	X(PID, "pid") \
	X(EXE, "exe") \
	X(CMDLINE, "cmdline") \
	X(START, "start") \
	X(DEPTH, "depth") \
	X(OBJECT, "object") \
	X(UNLOAD, "unload") \
	X(T, "T") \
	X(THREAD, "thread") \
	X(TIME, "time") \
	X(MARK, "mark") \
	X(STACK, "stack") \
	X(STOPPED, "stopped") \
	X(LOST, "lost") \
	X(FREERES, "freeres") \
	X(FORK, "fork") \
	X(PARENT, "parent") \
	X(ATTACHED, "attached") \
	X(DETACHED, "detached") \
	X(EXEC, "exec") \
	X(K, "k") \
	X(REACH, "reach") \
	X(COMPACTED, "compacted") \
	X(AT, "at") \
	X(RUNSUM, "runsum") \
	X(PATHSUM, "pathsum") \
	X(TSTATE, "tstate")

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
