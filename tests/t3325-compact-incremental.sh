#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3325-compact-incremental: compaction is incremental -- a pass reads the
# previous TRACE.compact and the parts completed since -- and compacting
# in several passes writes exactly the file one pass writes; --delete
# removes the parts once the compacted file holding them is in place, and
# a pass finishes what a killed one left (a stale temporary file, parts
# not deleted yet).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-compact.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'compact' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi

test_expect_success 'a rotated run of the fixture' '
	record_fixture t.log 100000 &&
	last=$(ls t.log.part* | sed "s/.*part//" | sort -n | tail -1) &&
	test $last -ge 6 && echo $last >last &&
	"$MTANALYZE" compact -q t.log && mv t.log.compact one-pass
'

test_expect_success 'three passes, as parts complete: the file one pass writes' '
	last=$(cat last) && mkdir inc &&
	for f in $(parts_of t.log 1 2); do cp $f inc/; done &&
	"$MTANALYZE" compact inc/t.log >msg1 && grep -q "parts 1-2," msg1 &&
	for f in $(parts_of t.log 3 5); do cp $f inc/; done &&
	"$MTANALYZE" compact inc/t.log >msg2 && grep -q "parts 1-5," msg2 &&
	for f in $(parts_of t.log 6 $last); do cp $f inc/; done &&
	"$MTANALYZE" compact inc/t.log >msg3 && grep -q "parts 1-$last," msg3 &&
	test_cmp one-pass inc/t.log.compact &&
	same_analysis "$(parts_of t.log 1 $last)" inc/t.log.compact
'

test_expect_success 'nothing new: a pass changes nothing' '
	cp inc/t.log.compact before &&
	"$MTANALYZE" compact inc/t.log >msg && test_must_be_empty msg &&
	test_cmp before inc/t.log.compact
'

test_expect_success '--delete: the parts go once the compacted file holds them' '
	last=$(cat last) && mkdir del &&
	for f in $(parts_of t.log 1 3); do cp $f del/; done &&
	"$MTANALYZE" compact -q --delete del/t.log &&
	test "$(ls -A del)" = t.log.compact &&
	for f in $(parts_of t.log 4 $last); do cp $f del/; done &&
	"$MTANALYZE" compact -q --delete del/t.log &&
	test "$(ls -A del)" = t.log.compact &&
	test_cmp one-pass del/t.log.compact
'

test_expect_success 'after a killed pass: a stale temporary file, parts left behind' '
	last=$(cat last) && mkdir kill &&
	for f in $(parts_of t.log 1 4); do cp $f kill/; done &&
	"$MTANALYZE" compact -q kill/t.log &&
	echo "# mtrec 1" >kill/.t.log.compact.tmp &&
	for f in $(parts_of t.log 5 $last); do cp $f kill/; done &&
	"$MTANALYZE" compact -q --delete kill/t.log &&
	test "$(ls -A kill)" = t.log.compact &&
	test_cmp one-pass kill/t.log.compact
'

test_done
