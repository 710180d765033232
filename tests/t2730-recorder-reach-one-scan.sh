#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2730-recorder-reach-one-scan.sh -- a scan is one unbroken block of the
# trace, made once (issue 26): "mtrec ctl PID reach" on a program whose
# scan takes longer than the 100 ms between two looks at the request, while
# two threads allocate and free (each of them looks for requests): the
# request is taken by one thread only (one scan, one answer), and no other
# thread's line falls between the scan's "# reach begin" and "# reach end"
# -- the verdicts are written in one piece of the file taken before the
# table is copied, and every event after it comes after that piece, so
# that a verdict never follows the free of its block (nor judges a block
# allocated later at the same address).  The scan at exit is one block
# too.  With MTREC_REACH=2, "mtrec ctl PID off" scans before its "= End"
# as trace_off() does.
#
# Fixtures: tests/helper/rec-reach-churn.c, tests/helper/rec-reach-live.c.
. "$(dirname "$0")/lib.sh"

mkdir -m 700 run
RUN=$OUT/run

# start NAME PROG [ARGS...]: PROG under the recorder with MTREC_REACH
# ($REACH, 1 by default) in NAME/, its pid in NAME/pid once it runs.
start() {
	mkdir "$1" && st_dir_=$1 && shift && (
		cd "$st_dir_" &&
		env XDG_RUNTIME_DIR="$RUN" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$st_dir_/t.log" \
			MTREC_REACH=${REACH:-1} "$@" >out 2>err &
	) &&
	for i in $(seq 600); do
		sed -n "s/^ready //p" "$st_dir_/out" >"$st_dir_/pid" && test -s "$st_dir_/pid" && return 0
		sleep 0.1
	done
	return 1
}

# ended NAME: the program printed "bye" and its trace has its "= End".
ended() {
	for i in $(seq 600); do
		grep -q "^bye\$" "$1/out" && grep -aq "^= End" "$1/t.log" && return 0
		sleep 0.1
	done
	return 1
}

ctl() { XDG_RUNTIME_DIR=$RUN "$MTREC" ctl "$@"; }

# unbroken TRACE: every line from a "# reach begin" to its "# reach end"
# is a "# reach" line, and the verdicts are as many as "begin" says.
unbroken() {
	awk '/^# reach begin / { inside = 1; want = $4; got = 0; next }
	     inside && /^# reach end / { inside = 0; if (got != want) bad = 1; next }
	     inside && /^# reach 0x/ { got++ }
	     inside && !/^# reach / { bad = 1; print "foreign line: " $0 }
	     END { exit bad || inside }' "$1"
}

# judged_live TRACE: each verdict of the first scan judges a block live
# where it stands in the file: the last event on its address before it is
# an allocation, or, when it is a free, the next one after it is (a block
# allocated before the table was copied, whose "+" line was written after
# the scan's piece of the file was taken).
judged_live() {
	awk 'function ev(a, kind) { if (a in open) { if (kind != "+") bad++; delete open[a] } last[a] = kind }
	     $1 == "@" && ($3 == "+" || $3 == ">") { ev($4, "+") }
	     $1 == "@" && ($3 == "-" || $3 == "<") { ev($4, "-") }
	     /^# reach begin / { scan++ }
	     scan == 1 && /^# reach 0x/ && last[$3] == "-" { open[$3] = 1 }
	     END { for (a in open) bad++; exit bad > 0 }' "$1"
}

test_expect_success 'a long scan while two threads allocate: taken once, one unbroken block' '
	start a "$HELPER/rec-reach-churn" 500000 &&
	pid=$(cat a/pid) &&
	ctl $pid reach >answer &&
	grep "^scan written to the trace: [0-9]* blocks judged in [0-9]* ms\$" answer &&
	sleep 0.5 &&
	kill -0 $pid &&
	test "$(grep -a -c "^# reach begin " a/t.log)" = 1 &&
	unbroken a/t.log &&
	judged_live a/t.log
'

test_expect_success 'the scan at exit is one block too; the analyzer uses it' '
	pid=$(cat a/pid) &&
	kill $pid &&
	ended a &&
	test "$(grep -a -c "^# reach begin " a/t.log)" = 2 &&
	test "$(grep -a -c "^# reach end " a/t.log)" = 2 &&
	unbroken a/t.log &&
	"$MTANALYZE" --leaks definite,indirect "$HELPER/rec-reach-churn" a/t.log >report &&
	grep "^No blocks definitely lost or indirectly lost" report
'

test_expect_success 'MTREC_REACH=2: mtrec ctl PID off scans before its "= End"' '
	REACH=2 start b "$HELPER/rec-reach-live" &&
	pid=$(cat b/pid) &&
	ctl $pid off >answer &&
	grep "^recording off\$" answer &&
	grep -a "^= \|^# reach \(begin\|end\) " b/t.log | sed "s/ [0-9].*//" >seq &&
	printf "= Start\n# reach begin\n# reach end\n= End\n" >expect &&
	test_cmp expect seq &&
	grep -a "^# reach 0x" b/t.log >verdicts &&
	grep -c " definite\$" verdicts >n &&
	test "$(cat n)" = 1 &&
	kill $pid &&
	for i in $(seq 100); do grep -q "^bye\$" b/out && break; sleep 0.1; done &&
	grep -q "^bye\$" b/out
'

test_expect_success 'MTREC_REACH=2: the toggle signal, which cannot scan, says so before its "= End"' '
	(MTREC_SIGNAL=SIGUSR2 && export MTREC_SIGNAL && REACH=2 start c "$HELPER/rec-reach-live") &&
	pid=$(cat c/pid) &&
	kill -USR2 $pid &&
	for i in $(seq 600); do grep -aq "^= End" c/t.log && break; sleep 0.1; done &&
	grep -a "^= \|^# reach " c/t.log >seq &&
	printf "= Start\n# reach refused asked by the toggle signal (MTREC_SIGNAL), %s\n= End\n" \
		"whose handler may have interrupted the dynamic linker; mtrec ctl PID off scans" >expect &&
	test_cmp expect seq &&
	kill $pid &&
	for i in $(seq 100); do grep -q "^bye\$" c/out && break; sleep 0.1; done &&
	test_expect_code 2 "$MTANALYZE" --leaks definite,indirect "$HELPER/rec-reach-live" c/t.log 2>err &&
	grep "did not make the scan asked for (asked by the toggle signal" err
'

test_expect_success PYTHON3 'a process that left by _exit has no scan, and the gate says why (not "record with --reach")' '
	MTREC_REACH=1 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/x.log" python3 -c "import os; os._exit(0)" &&
	! grep -a "^# reach \|^# freeres" x.log &&
	test_expect_code 2 "$MTANALYZE" --leaks definite,indirect x.log 2>err &&
	grep "^mtanalyze: --leaks: .x.log. has no reachability verdicts: its process did not go through exit() while recording (it left by _exit" err &&
	! grep "record with" err &&
	test_expect_code 2 "$MTANALYZE" diff --leaks definite,indirect x.log x.log 2>err &&
	grep "did not go through exit() while recording" err
'

test_done
