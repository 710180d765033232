#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3337-compact-long-lines: a pass holds each live block's allocation
# line until its free (compact-text.c: slots of 128 and 512 bytes reused,
# longer lines apart); lines of every length, blocks freed and their room
# taken again, kept (live at the end, met by a duplicate) or not, in two
# threads: the compacted trace gives the reports of the full one, at the
# full one's line numbers, in one pass or in two.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer; then
	test_skip 'compact' 'needs the analyzer'
	test_done; exit
fi

# A trace of 3000 rounds in two parts: each round allocates with callers
# of 40, 300 and 900 bytes, frees two of the three, now and then leaves a
# block live, meets one with a duplicate, or frees what was never
# allocated; the threads take turns.  (The duplicate meets the thread's
# latest block: one met after another allocation, whose line is dropped,
# gives the compacted trace temporary allocations the full one does not
# have -- a known difference, not this test's.)
test_expect_success 'a trace with lines of every length' '
	awk -v part=1 "BEGIN {
		for (i = 0; i < 900; i++) long = long \"x\"
		mid = substr(long, 1, 300); short = substr(long, 1, 40)
		print \"= Start\" >\"t.log\"
		for (r = 0; r < 3000; r++) {
			if (r == 1500) { close(\"t.log\"); part = 2 }
			out = part == 1 ? \"t.log\" : \"t.log.part2\"
			if (r % 7 == 0) print \"# T \" (r % 14 == 0 ? 11 : 12) >out
			a = 4096 + r * 64
			printf \"@ /%s:[0x1] + 0x%x 0x10\n\", short, a >out
			printf \"@ /%s:[0x2] + 0x%x 0x20\n\", mid, a + 16 >out
			printf \"@ /%s:[0x3] + 0x%x 0x30\n\", long, a + 32 >out
			if (r % 11 == 3) printf \"@ /%s:[0x4] + 0x%x 0x8\n\", short, a + 32 >out
			printf \"@ /%s:[0x5] - 0x%x\n\", short, a + 16 >out
			if (r % 13 != 5) printf \"@ /%s:[0x6] - 0x%x\n\", mid, a + 32 >out
			if (r % 17 != 1) printf \"@ /%s:[0x7] - 0x%x\n\", long, a >out
			if (r % 101 == 50) printf \"@ /%s:[0x8] - 0x%x\n\", long, 16 >out
		}
		print \"= End\" >out
	}" &&
	test_expect_code 1 "$MTANALYZE" t.log t.log.part2 >full.txt &&
	grep -q "^Memory not freed:" full.txt && grep -q "was never alloc.d" full.txt &&
	grep -q "Alloc [0-9]* duplicate" full.txt
'

test_expect_success 'one pass: the same reports' '
	mkdir one && cp t.log t.log.part2 one/ &&
	"$MTANALYZE" compact -q one/t.log &&
	test $(wc -c <one/t.log.compact) -lt $(cat t.log t.log.part2 | wc -c) &&
	test_expect_code 1 "$MTANALYZE" one/t.log.compact >one.txt &&
	test_cmp full.txt one.txt &&
	test_expect_code 1 "$MTANALYZE" --by-site t.log t.log.part2 >full-sites.txt &&
	test_expect_code 1 "$MTANALYZE" --by-site one/t.log.compact >one-sites.txt &&
	test_cmp full-sites.txt one-sites.txt
'

test_expect_success 'two passes: the file one pass writes' '
	mkdir two && cp t.log two/ &&
	"$MTANALYZE" compact -q two/t.log &&
	cp t.log.part2 two/ &&
	"$MTANALYZE" compact -q two/t.log &&
	test_cmp one/t.log.compact two/t.log.compact
'

test_done
