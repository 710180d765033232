#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2105-recorder-fork-inheritance.sh -- a fork is marked in the parent's
# trace ("# fork MARK CHILDPID", in order with its events) and the child's
# header names its parent's trace and that mark ("# parent PID MARK
# PATH"), so that an analysis can start the child from the heap it
# inherited (share/trace-format.md, "Forks").
#
# Fixture: tests/helper/rec-daemon.c (daemon(3), a double fork, a fork
# where both sides keep running).
. "$(dirname "$0")/lib.sh"

DAEMON="$HELPER/rec-daemon"

# run MODE: record rec-daemon MODE in the current directory (t.log), wait
# for the daemon to be gone; its pid in $daemon, the first process's in
# $first.
run() {
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$DAEMON" "$1" pid >out 2>err &&
	test ! -s err &&
	i=0 && while [ ! -s pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done &&
	daemon=$(cat pid) &&
	while kill -0 "$daemon" 2>/dev/null; do sleep 0.01; done &&
	first=$(sed -n "s/^# pid \([0-9]*\) .*/\1/p" t.log)
}

# fork_lines FILE: the "# fork" lines of FILE, spaces squeezed.
fork_lines() {
	tr -d '\000' <"$1" | grep -a "^# fork " | tr -s " " | sed "s/ \$//"
}

test_expect_success 'daemon(3): the parent marks the fork with the child pid, the child names its parent' '
	mkdir daemon && cd daemon &&
	run daemon &&
	test -n "$first" && test "$first" != "$daemon" &&
	echo "# fork 1 $daemon" >expect &&
	fork_lines t.log >actual && test_cmp expect actual &&
	ls t.log* >actual && printf "t.log\nt.log.%s\n" "$daemon" >expect && test_cmp expect actual &&
	echo "# parent $first 1 $PWD/t.log" >expect &&
	grep -a "^# parent " "t.log.$daemon" >actual && test_cmp expect actual
'

test_expect_success 'the mark follows every event the parent made before the fork' '
	cd daemon &&
	tr -d "\000" <t.log | grep -a -e "^@" -e "^# fork" | tail -n 1 | grep "^# fork 1 " &&
	test "$(tr -d "\000" <t.log | grep -a -c "^@.* + .* 0x3e[9a]\$")" -eq 5
'

test_expect_success 'glibc mtrace ignores the new lines: same report as on the standard lines alone' '
	cd daemon &&
	strip_ext t.log >plain.log &&
	st=0 && { /usr/bin/mtrace t.log >m1 2>&1 || st=$?; } &&
	st=0 && { /usr/bin/mtrace plain.log >m2 2>&1 || st=$?; } &&
	test_cmp m2 m1 && grep -c "^0x" m1 | grep -x 5
'

test_expect_success 'without the analysis the child trace still shows the inherited frees as never allocated' '
	cd daemon && daemon=$(cat pid) &&
	st=0 && { /usr/bin/mtrace "t.log.$daemon" >m 2>&1 || st=$?; } &&
	test "$(grep -c "was never alloc" m)" -eq 2
'

test_expect_success 'double fork: the middle process allocates nothing, the grandchild names the first process' '
	mkdir double && cd double &&
	run double &&
	ls t.log* >actual && printf "t.log\nt.log.%s\n" "$daemon" >expect && test_cmp expect actual &&
	middle=$(fork_lines t.log | cut -d" " -f4) &&
	test -n "$middle" && test "$middle" != "$daemon" &&
	echo "# parent $first 1 $PWD/t.log" >expect &&
	grep -a "^# parent " "t.log.$daemon" >actual && test_cmp expect actual
'

test_expect_success 'double fork with a middle trace: each child names its own parent and its mark' '
	mkdir chain && cd chain &&
	run double-alloc &&
	middle=$(fork_lines t.log | cut -d" " -f4) &&
	test -f "t.log.$middle" &&
	echo "# parent $first 1 $PWD/t.log" >expect &&
	grep -a "^# parent " "t.log.$middle" >actual && test_cmp expect actual &&
	echo "# fork 1 $daemon" >expect &&
	fork_lines "t.log.$middle" >actual && test_cmp expect actual &&
	echo "# parent $middle 1 $PWD/t.log.$middle" >expect &&
	grep -a "^# parent " "t.log.$daemon" >actual && test_cmp expect actual
'

test_expect_success 'both sides keep running: the parent events after the fork follow the mark' '
	mkdir both && cd both &&
	run both &&
	tr -d "\000" <t.log | grep -a -e "^@" -e "^# fork" >ev &&
	fork_at=$(grep -n "^# fork 1 $daemon *\$" ev | cut -d: -f1) &&
	test -n "$fork_at" &&
	sed -n "$((fork_at + 1)),\$p" ev | grep " 0x3ed\$" &&
	sed -n "1,${fork_at}p" ev | grep -c " + " | grep -x 5
'

test_expect_success 'rotation: a mark in a later part, the child names part 1' '
	mkdir rot && cd rot &&
	REC_DAEMON_CHURN=100000 MTREC_ROTATE=4M run daemon &&
	test -f t.log.part2 &&
	grep -a -l "^# fork 1 $daemon" t.log* >where &&
	test "$(cat where)" != t.log &&
	echo "# parent $first 1 $PWD/t.log" >expect &&
	grep -a "^# parent " "t.log.$daemon" >actual && test_cmp expect actual
'

test_expect_success 'with %p in the name the child names its parent file by the parent pid' '
	mkdir pct && cd pct &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.%p.log "$DAEMON" daemon pid 2>err &&
	test ! -s err &&
	i=0 && while [ ! -s pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done &&
	daemon=$(cat pid) &&
	while kill -0 "$daemon" 2>/dev/null; do sleep 0.01; done &&
	first=$(ls t.*.log | grep -v "t.$daemon.log" | sed "s/t\.\([0-9]*\)\.log/\1/") &&
	echo "# parent $first 1 $PWD/t.$first.log" >expect &&
	grep -a "^# parent " "t.$daemon.log" >actual && test_cmp expect actual
'

test_expect_success 'a child made by _Fork() (no fork handlers): no mark, no parent line' '
	mkdir raw && cd raw &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$HELPER/rec-fork" raw-fork >out 2>err &&
	child=$(sed -n "s/^child //p" out) &&
	test -f "t.log.$child" &&
	! grep -a "^# fork" t.log &&
	! grep -a "^# parent" "t.log.$child"
'

test_expect_success 'a child that forks after its first event marks its own fork; its child names it' '
	cd chain && daemon=$(cat pid) &&
	middle=$(grep -a "^# parent " "t.log.$daemon" | cut -d" " -f3) &&
	test "$(grep -a -c "^# fork " "t.log.$middle")" -eq 1 &&
	test "$(grep -a -c "^# fork " t.log)" -eq 1
'

test_done
