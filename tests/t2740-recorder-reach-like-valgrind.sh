#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2740-recorder-reach-like-valgrind.sh -- two kinds MTREC_REACH=1 once
# told otherwise than valgrind --leak-check=full (issue 26), each compared
# with valgrind's LEAK SUMMARY on the same program:
#
#  - a block whose only pointer was cleared is definitely lost, also the
#    one just before malloc's top chunk: glibc's main arena, in libc's
#    data, points at the top chunk's header, which lies in that block's
#    last bytes; valgrind's malloc leaves glibc's unused, and the scan
#    leaves the main arena out of libc's data;
#  - threads that ended and were joined, their stacks kept by glibc for
#    its next threads: the static TLS and the thread control block at the
#    top of each are read as valgrind reads them (they stay addressable,
#    the stack below them does not), the stack not: a block held in a
#    __thread variable is still reachable, one only the stack held is
#    definitely lost, the DTV (the TCB points 16 bytes into it) possibly
#    lost.  libc's caches are kept at exit on both sides
#    (MTREC_FREERES=0, --run-libc-freeres=no), as when other threads run
#    at exit: __libc_freeres() frees the cached stacks.
#
# Each DTV is 16 bytes larger under the recorder (libmtrec.so has TLS).
#
# Fixture: tests/helper/rec-reach-threads.c.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach-threads"

test_lazy_prereq VALGRIND 'command -v valgrind'

. "$TOP/tests/lib-reach.sh"

test_expect_success 'the fixture runs without the recorder' '
	"$PROG" cleared &&
	"$PROG" ended
'

test_expect_success 'a block whose pointer was cleared: definitely lost, even next to the top chunk' '
	record c.log cleared &&
	verdicts c.log >actual &&
	printf "0x18 definite\n0x3e8 definite\n0x64 definite\n" >expect &&
	test_cmp expect actual
'

test_expect_success VALGRIND 'the same kinds and bytes as valgrind' '
	valgrind --leak-check=full --log-file=vg.c "$PROG" cleared &&
	vg_totals vg.c >expect &&
	totals c.log >ours &&
	test_cmp expect ours &&
	grep "^definite 1124 3\$" ours
'

test_expect_success 'joined threads: TLS reachable, stack-only lost, DTV possible' '
	(MTREC_FREERES=0 && export MTREC_FREERES && record e.log ended) &&
	grep -a "^# freeres skipped" e.log &&
	verdicts e.log >actual &&
	for k in "0x28 reachable" "0x30 definite"; do
		echo "$k" && echo "$k" && echo "$k" || exit 1
	done >expect &&
	test_cmp expect actual &&
	test "$(grep -a -c "^# reach 0x[0-9a-f]* possible\$" e.log)" = 3
'

test_expect_success VALGRIND 'the same kinds as valgrind, the bytes but the DTVs 16 bytes' '
	valgrind --leak-check=full --run-libc-freeres=no --log-file=vg.e "$PROG" ended &&
	vg_totals vg.e | awk "\$1 == \"possible\" { \$2 += 3 * 16 } { print }" >expect &&
	totals e.log >ours &&
	test_cmp expect ours
'

test_done
