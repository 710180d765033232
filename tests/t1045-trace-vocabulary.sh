#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1045-trace-vocabulary.sh -- one vocabulary for the trace: the words of
# the extension lines are listed once, in recorder/trace-words.def; the
# recorder writes them from it (words.h), the analyzer's reader classifies
# each '#' line by it (analyzer/trace/trace-words.h), share/trace-format.md
# documents the same words in the same order, and every "# WORD" the
# recorder or the analyzer spells in its code (a message, a comment after
# code) is one of them.
. "$(dirname "$0")/lib.sh"

test_expect_success 'the list in trace-words.h' '
	printf "%s\n" "#include \"trace-words.h\"" "#define X(n, w) w" "@@ MTA_TRACE_WORDS(X) @@" >w.c &&
	$CC -E -P -I"$TOP/analyzer/trace" w.c | sed -n "s/^@@ \(.*\) @@$/\1/p" |
		tr -s " \t" "\n\n" | sed "/^$/d; s/\"//g" >listed &&
	test "$(wc -l <listed)" -ge 20 &&
	test "$(sort -u listed | wc -l)" -eq "$(wc -l <listed)" &&
	grep -x time listed && grep -x T listed
'

test_expect_success 'share/trace-format.md documents the same words in the same order' '
	sed -n "/^## Extension lines/,/^    #   (spaces)/p" "$TOP/share/trace-format.md" |
		sed -n "s/^    # \([A-Za-z]\{1,\}\) .*/\1/p" | uniq >documented &&
	test_cmp listed documented
'

# "# WORD in the code of DIR's C files, comments left out
spelled() {
	grep -h "\"# [A-Za-z]" "$@" | grep -v "^[[:space:]]*\(\*\|/\*\)" |
		sed "s/.*\"# \([A-Za-z]*\).*/\1/" | sort -u
}

test_expect_success 'every word the recorder spells is listed' '
	spelled "$TOP"/recorder/*.c >recorder-words &&
	sort listed >sorted &&
	comm -23 recorder-words sorted >unknown &&
	test_must_be_empty unknown
'

# A writer spells "# WORD " (or "# WORD" before a value) where a message
# spells \"# WORD\": the recorder has none, it writes mtrec_word(W).
test_expect_success 'the recorder writes its words from the list, never as literals' '
	grep -n "[^\\]\"# [A-Za-z][A-Za-z]*[ \"]" "$TOP"/recorder/*.c "$TOP"/recorder/*.h |
		sed -e "/^[^:]*:[0-9]*:[[:space:]]*\(\*\|\/\*\)/d" -e "/\/\*.*\"# /d" >literals &&
	test_must_be_empty literals &&
	grep -q "mtrec_word(MTREC_W_TIME)\|mtrec_put_word(o, MTREC_W_TIME)" "$TOP/recorder/chunk.c" &&
	grep -q "include \"../../recorder/trace-words.def\"" "$TOP/analyzer/trace/trace-words.h"
'

test_expect_success 'every word the analyzer spells is listed' '
	spelled "$TOP"/analyzer/*/*.c >analyzer-words &&
	grep -x at analyzer-words &&
	comm -23 analyzer-words sorted >unknown &&
	test_must_be_empty unknown
'

test_done
