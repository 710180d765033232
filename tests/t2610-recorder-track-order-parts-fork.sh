#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2610-recorder-track-order-parts-fork: tracked events keep malloc's
# guarantees (issue 10.4): under 4 threads reusing the same pool slots, no
# "+" of a pool address comes before the "-" of its previous life; in a
# rotated trace every part keeps its lines and the parts together hold
# them all; a forked child's lines are in its own file, with its leak.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

T=4 R=20000

test_expect_success 'under 4 threads: in order, none lost' '
	env MTREC_TRACK="$POOL_SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" "$POOL" $T $R >/dev/null &&
	test "$(kcount t.log pool +)" = $((3 + 1 + T * R)) &&
	test "$(kcount t.log pool -)" = $((1 + T * R)) &&
	echo 0 >expect && in_order t.log >bad && test_cmp expect bad
'

test_expect_success 'rotated in parts: every part self-describing, all lines kept' '
	env MTREC_TRACK="$POOL_SPEC" MTREC_ROTATE=1M LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/r.log" \
		"$POOL" 2 40000 >/dev/null &&
	test -f r.log.part2 &&
	cat r.log r.log.part[0-9]* >all.log &&
	test "$(kcount all.log pool +)" = $((3 + 1 + 2 * 40000)) &&
	test "$(kcount all.log pool -)" = $((1 + 2 * 40000)) &&
	test "$(kcount r.log.part2 pool +)" -gt 0 &&
	echo 0 >expect && in_order all.log >bad && test_cmp expect bad
'

test_expect_success 'fork: the child'"'"'s lines in its own file, with its leak' '
	env MTREC_TRACK="$POOL_SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/f.log" "$POOL" 1 100 fork >/dev/null &&
	child=$(ls f.log.[0-9]*) &&
	test "$(kcount $child pool +)" = $((100 + 1)) &&
	test "$(kcount $child pool -)" = 100 &&
	test "$(kcount f.log pool +)" = $((3 + 1 + 100)) &&
	grep "^# k pool @ [^ ]* + 0x[0-9a-f]* 0x28\$" $child
'

test_done
