#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2705-recorder-reach-live.sh -- mtrec ctl PID reach: the scan of
# MTREC_REACH while the program runs (a daemon never exits).  The verdicts
# go to the trace at once, a begin..end block as at exit; the program goes
# on, its table with it: blocks freed and allocated after a scan are
# judged right by the next one, and mtanalyze uses the latest scan.  A
# process started without MTREC_REACH answers no, saying why.  With
# MTREC_REACH=2 each trace_off() and muntrace() scans before its "= End".
#
# Fixture: tests/helper/rec-reach-live.c.  Requests go to
# $XDG_RUNTIME_DIR/mtrec, here a directory of the test's own.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach-live"
mkdir -m 700 run
RUN=$OUT/run
. "$TOP/tests/lib-reach.sh"

# start NAME [ENV...]: the fixture under the recorder (MTREC_REACH=1 unless
# ENV says otherwise) in NAME/, its pid in NAME/pid once it runs.
start() {
	mkdir "$1" && st_dir_=$1 && shift && (
		cd "$st_dir_" &&
		env XDG_RUNTIME_DIR="$RUN" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$st_dir_/t.log" \
			MTREC_REACH=1 "$@" "$PROG" >out 2>err &
	) &&
	for i in $(seq 100); do
		sed -n "s/^ready //p" "$st_dir_/out" >"$st_dir_/pid" && test -s "$st_dir_/pid" && return 0
		sleep 0.05
	done
	return 1
}

# wait_for NAME WORD: until the fixture printed WORD.
wait_for() {
	for i in $(seq 100); do
		grep -q "^$2\$" "$1/out" && return 0
		sleep 0.05
	done
	return 1
}

ctl() { XDG_RUNTIME_DIR=$RUN "$MTREC" ctl "$@"; }

test_expect_success 'a scan while the program runs: its verdicts in the trace at once' '
	start a &&
	pid=$(cat a/pid) &&
	ctl $pid reach >out &&
	grep "^scan written to the trace: [0-9]* blocks\{0,1\} judged in [0-9]* ms\$" out &&
	kill -0 $pid &&
	test "$(grep -a -c "^# reach begin " a/t.log)" = 1 &&
	test "$(grep -a -c "^# reach end " a/t.log)" = 1 &&
	verdicts a/t.log >v &&
	grep "^0x18 definite\$" v &&
	grep "^0x40 reachable\$" v
'

test_expect_success 'the program goes on; a second scan, then the one at exit, judge what changed' '
	pid=$(cat a/pid) &&
	a=$(grep -a -c "^@" a/t.log) && sleep 0.2 && b=$(grep -a -c "^@" a/t.log) &&
	test "$b" -gt "$a" &&
	kill -USR1 $pid &&
	wait_for a phase2 &&
	ctl $pid reach >out &&
	kill $pid &&
	wait_for a bye &&
	for i in $(seq 100); do grep -q "^= End" a/t.log && break; sleep 0.05; done &&
	test "$(grep -a -c "^# reach begin " a/t.log)" = 3 &&
	test_expect_code 1 "$MTANALYZE" --json "$PROG" a/t.log >j.json &&
	python3 -c "import json
d = json.load(open(\"j.json\"))
sizes = sorted((l[\"size\"], l[\"reach\"]) for l in d[\"leaks\"])
assert d[\"reach_scans\"] == 3, d[\"reach_scans\"]
assert [s for s, r in sizes] == [24, 40], sizes
assert dict(sizes)[24] == \"definite\", sizes"
'

test_expect_success MTRACE '/usr/bin/mtrace reads the trace with its scans' '
	test_expect_code 1 /usr/bin/mtrace a/t.log >out &&
	grep "^Memory not freed:" out
'

test_expect_success 'without MTREC_REACH: no scan, and the answer says why' '
	start b MTREC_REACH=0 &&
	pid=$(cat b/pid) &&
	test_expect_code 1 ctl $pid reach 2>err &&
	grep "MTREC_REACH was not set when the program started" err &&
	kill $pid &&
	wait_for b bye &&
	! grep -a "^# reach" b/t.log
'

test_expect_success 'MTREC_REACH=2: a scan before the "= End" of each trace_off() and muntrace()' '
	MTREC_SCOPED=1 MTREC_REACH=2 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/off2.log" \
		"$HELPER/rec-scoped" >out &&
	grep "^scoped ok\$" out &&
	grep -a "^= \|^# reach \(begin\|end\) " off2.log | sed "s/ [0-9].*//" >seq &&
	for i in 1 2 3 4; do printf "= Start\n# reach begin\n# reach end\n= End\n"; done >expect &&
	test_cmp expect seq &&
	MTREC_SCOPED=1 MTREC_REACH=1 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/off1.log" \
		"$HELPER/rec-scoped" >out &&
	test "$(grep -a -c "^= End" off1.log)" = 4 &&
	! grep -a "^# reach" off1.log
'

test_done
