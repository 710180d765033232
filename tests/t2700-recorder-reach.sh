#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2700-recorder-reach: MTREC_REACH=1 (mtrec --reach, issue 17) -- at exit
# the recorder scans memory as valgrind's leak check does and writes, before
# "= End", the verdict of every block still live: "# reach begin N", one
# "# reach ADDR KIND" per block (KIND definite, indirect, possible or
# reachable), "# reach unscanned WHAT: WHY", "# reach end BYTES MS".  The
# fixture has each kind; valgrind --leak-check=full, run on the same program
# without the recorder, finds the same blocks of each kind, and the same
# bytes but for one block: the second thread's DTV, which glibc's dynamic
# linker allocates and keeps through a pointer 16 bytes into it (so
# "possible" for both), is 16 bytes larger under the recorder, one entry
# for the TLS of libmtrec.so itself.  /usr/bin/mtrace reads the file as
# without the lines.  Threads that allocate without end and block every
# signal while the program exits, and a PROT_NONE page in the program's
# data, neither crash nor block the scan: the page is named unscanned.
#
# Fixture: tests/helper/rec-reach.c.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach"

test_lazy_prereq VALGRIND 'command -v valgrind'

. "$TOP/tests/lib-reach.sh"

test_expect_success 'the fixture runs without the recorder' '
	"$PROG"
'

test_expect_success MTRACE 'MTREC_REACH=1: a verdict for every live block, before "= End"' '
	record t.log &&
	grep -a "^# reach " t.log >reach &&
	head -n 1 reach | grep "^# reach begin [0-9][0-9]*\$" &&
	tail -n 1 reach | grep "^# reach end [0-9][0-9]* [0-9][0-9]*\$" &&
	n=$(sed -n "s/^# reach begin //p" reach) &&
	test "$(grep -c "^# reach 0x[0-9a-f]* \(definite\|indirect\|possible\|reachable\)\$" reach)" = "$n" &&
	test "$(grep -vc "^# reach \(begin \|end \|0x[0-9a-f]* \|unscanned \)" reach)" = 0 &&
	awk "/^# reach 0x/ { if (seen_unscanned) bad = 1 } /^# reach unscanned/ { seen_unscanned = 1 }
	     END { exit bad }" reach &&
	tail -n 1 t.log | grep "^= End\$" &&
	mtrace_leaks t.log "$n"
'

test_expect_success 'the fixture: each block of the kind it was made to be' '
	cat >expect.kinds <<-\EOF &&
	0x18 definite
	0x20 reachable
	0x20 reachable
	0x30 definite
	0x30 indirect
	0x30 indirect
	0x30 indirect
	0x40 reachable
	0x64 possible
	0xc8 reachable
	EOF
	verdicts t.log >actual &&
	test_cmp expect.kinds actual
'

test_expect_success 'the registers of the sleeping thread are named unscanned' '
	grep "^# reach unscanned registers of 1 other thread: " reach
'

# same_as_valgrind ARGS...: the fixture with ARGS, recorded and under
# valgrind: the same kinds' totals, but the DTV's 16 bytes.
same_as_valgrind() {
	record vs.log "$@" &&
	valgrind --leak-check=full --show-leak-kinds=all --log-file=vg.log "$PROG" "$@" &&
	vg_totals vg.log >vg &&
	totals vs.log >ours &&
	awk "\$1 == \"possible\" { \$2 += 16 } { print }" vg >expect &&
	test_cmp expect ours
}

test_expect_success VALGRIND 'valgrind --leak-check=full: the same kinds, the same bytes but the DTV' '
	same_as_valgrind &&
	totals t.log >ours.t &&
	test_cmp expect ours.t
'

test_expect_success VALGRIND 'the same with 1000 lost pairs, and with 2000 blocks kept in an array' '
	same_as_valgrind lost 2000 &&
	grep "^definite 32072 1002\$" ours &&
	same_as_valgrind many 2000 &&
	grep "^reachable 80328 2005\$" ours
'

test_expect_success MTRACE '/usr/bin/mtrace reads the file as without the lines' '
	grep -av "^# reach " t.log >plain.log &&
	test_expect_code 1 /usr/bin/mtrace "$PROG" t.log >with 2>&1 &&
	test_expect_code 1 /usr/bin/mtrace "$PROG" plain.log >without 2>&1 &&
	test_cmp without with
'

test_expect_success 'without MTREC_REACH, no "# reach" lines' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$PWD/off.log" "$PROG" &&
	! grep -a "^# reach" off.log
'

test_expect_success 'mtrec --reach sets MTREC_REACH' '
	"$MTREC" -q --reach -o launched.log "$PROG" &&
	verdicts launched.log >actual &&
	test_cmp expect.kinds actual
'

test_expect_success 'threads that allocate and block every signal, a PROT_NONE page: no crash, no wait' '
	record busy.log busy &&
	tail -n 1 busy.log | grep "^= End\$" &&
	grep -a "^# reach end " busy.log &&
	addr=$(awk "\$1 == \"@\" && \$3 == \"+\" && \$5 == \"0x12c\" { print \$4 }" busy.log) &&
	grep -a "^# reach $addr reachable\$" busy.log &&
	grep -a "^# reach unscanned the executable 0x[0-9a-f]*-0x[0-9a-f]*: 4096 bytes unreadable\$" busy.log
'

test_expect_success 'process_vm_readv refused (seccomp): the same verdicts, read through a pipe' '
	record seccomp.log seccomp &&
	verdicts seccomp.log >actual &&
	test_cmp expect.kinds actual
'

test_expect_success 'many blocks: all reachable from the global array' '
	record many.log many 100000 &&
	test "$(grep -ac "^# reach 0x[0-9a-f]* reachable\$" many.log)" -ge 100001
'

test_done
