#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# mtrec ctl answers at once, whatever the process does: a process that
# makes no allocation call is made to take the request (one of its threads
# calls the recorder's mtrec_ctl_now() through ptrace, as mtrec attach
# does), instead of leaving it pending until its next allocation.  The
# windows are exact: the first allocation after "ctl on" is recorded, the
# first after "ctl off" is not.  A process attached then detached answers
# too.
#
# Fixture: tests/helper/rec-attach-churn.c with no churning thread: its
# main thread waits in nanosleep() and allocates only on command.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-attach-churn"
mkdir -m 700 run
RUN=$OUT/run
export XDG_RUNTIME_DIR=$RUN

# start NAME CMD...: run CMD in NAME/; the fixture's pid in NAME/pid.
start() {
	name=$1 && shift &&
	mkdir "$name" && (cd "$name" && exec "$@" >out 2>err &) &&
	for i in $(seq 200); do
		sed -n "s/^ready //p" "$name/out" >"$name/pid" && test -s "$name/pid" && return 0
		sleep 0.05
	done
	return 1
}

send() {
	echo "$2" >"$1/cmd.tmp" && mv "$1/cmd.tmp" "$1/cmd" &&
	for i in $(seq 400); do
		test "$(grep -c "^$3\$" "$1/out")" -ge "${4:-1}" && return 0
		sleep 0.05
	done
	return 1
}

finish() {
	pid=$(cat "$1/pid") &&
	send "$1" exit bye &&
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

# ms CMD...: run CMD, its time in milliseconds in ms.out.
ms() {
	t0=$(date +%s%N) && "$@" && t1=$(date +%s%N) && echo $(( (t1 - t0) / 1000000 )) >ms.out
}

test_expect_success 'an idle process takes on, mark, off at once; the windows are exact' '
	start idle "$MTREC" --scoped -o "$OUT/idle/t.log" "$PROG" churn 0 &&
	pid=$(cat idle/pid) &&
	sleep 0.3 &&
	ms "$MTREC" ctl --timeout=5 $pid on >on.out &&
	echo "ctl on took $(cat ms.out) ms" &&
	test "$(cat on.out)" = "recording on" &&
	send idle "leak 1" "leaked 1" &&
	"$MTREC" ctl --timeout=5 $pid mark between >mark.out &&
	test "$(cat mark.out)" = "mark written" &&
	ms "$MTREC" ctl --timeout=5 $pid off >off.out &&
	echo "ctl off took $(cat ms.out) ms" &&
	test "$(cat off.out)" = "recording off" &&
	send idle "leak 1" "leaked 1" 2 &&
	"$MTREC" ctl --timeout=5 $pid status >status.out &&
	test "$(cat status.out)" = "recording off" &&
	finish idle &&
	test "$(ls -A run/mtrec)" = ""
'

test_expect_success 'the trace: one leak_here in the window, the mark inside it' '
	grep -a "^= \|^# mark" idle/t.log >windows &&
	printf "%s\n" "= Start" "# mark between" "= End" >expect &&
	test_cmp expect windows &&
	test "$(grep -a -c "^@ .* + 0x[0-9a-f]* 0x1092$" idle/t.log)" = 1 &&
	test_expect_code 1 "$MTANALYZE" --by-site "$PROG" idle/t.log >report &&
	grep "^ *1 *4242  leak_here" report
'

test_expect_success 'a daemon that blocks every signal and takes them with sigwait(), idle: on, mark, off within a second' '
	start sw "$MTREC" --scoped -o "$OUT/sw/t.log" "$HELPER/rec-sigwait-daemon" idle &&
	pid=$(cat sw/pid) &&
	for c in on "mark idle" off on off; do
		ms "$MTREC" ctl --timeout=5 $pid $c >/dev/null &&
		echo "ctl $c took $(cat ms.out) ms" &&
		test "$(cat ms.out)" -lt 1000 || return 1
	done &&
	kill $pid &&
	for i in $(seq 200); do
		grep -q "^bye" sw/out && break
		sleep 0.05
	done &&
	grep -a "^= \|^# mark" sw/t.log >sw/windows &&
	printf "%s\n" "= Start" "# mark idle" "= End" "= Start" "= End" >expect &&
	test_cmp expect sw/windows
'

test_expect_success 'an attached process, then detached, still answers' '
	start att "$PROG" churn 0 &&
	pid=$(cat att/pid) &&
	"$MTREC" attach -o "$OUT/att/t.log" $pid &&
	"$MTREC" ctl --timeout=5 $pid mark attached >m.out &&
	test "$(cat m.out)" = "mark written" &&
	"$MTREC" detach $pid &&
	"$MTREC" ctl --timeout=5 $pid status >s.out &&
	test "$(cat s.out)" = "recording off" &&
	finish att &&
	grep -a -x "# mark attached" att/t.log
'

test_done
