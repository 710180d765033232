#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2745-recorder-reach-batches.sh -- MTREC_REACH=1 reads the blocks it
# marks thousands at a time, those close together as one piece with the
# gaps between them (issue 30, point 5): many blocks of 16 bytes 240 bytes
# apart, by fours reachable from an array, reachable from the first,
# definitely lost, indirectly lost -- each of its kind, as valgrind's.  A
# batch whose pieces and gaps would pass the scan's buffer stops there; a
# block read at a wrong place in a batch loses its pointer, and the
# blocks it pointed to are lost.
#
# Fixture: tests/helper/rec-reach.c (gaps N).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach"

test_lazy_prereq VALGRIND 'command -v valgrind'

. "$TOP/tests/lib-reach.sh"

test_expect_success 'the fixture runs without the recorder' '
	"$PROG" gaps 4000
'

test_expect_success '40,000 small blocks with gaps: each of the kind it was made to be' '
	record g.log gaps 40000 &&
	verdicts g.log | grep "^0x10 " | uniq -c >actual &&
	printf "%7d 0x10 %s\n" 10000 definite 10000 indirect 20000 reachable >expect &&
	test_cmp expect actual
'

test_expect_success VALGRIND 'the same kinds and bytes as valgrind, but the DTV' '
	record v.log gaps 4000 &&
	valgrind --leak-check=full --log-file=vg.log "$PROG" gaps 4000 &&
	vg_totals vg.log | awk "\$1 == \"possible\" { \$2 += 16 } { print }" >expect &&
	totals v.log >ours &&
	test_cmp expect ours &&
	grep "^indirect 16144 1003\$" ours
'

test_done
