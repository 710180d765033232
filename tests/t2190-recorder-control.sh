#!/bin/sh
# mtrec ctl PID on|off|mark LABEL|status steers the recorder in a running
# process without a signal: it works in a daemon that blocks every signal
# in every thread and takes them with sigwait() (as glusterd does), where
# the --signal toggle never reaches the recorder.  A process that makes no
# allocation call takes a request only at its next one: ctl says it is
# pending (exit 2).  No such process, or no recorder in it: exit 125.
#
# Fixture: tests/helper/rec-sigwait-daemon.c.  Requests go to
# $XDG_RUNTIME_DIR/mtrec (the daemon's), here a directory of the test's own.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-sigwait-daemon"
mkdir -m 700 run
RUN=$OUT/run

# start_daemon NAME [idle]: run the fixture under mtrec --signal in NAME/,
# trace NAME/t.log; its pid in NAME/pid once it runs.
start_daemon() {
	mkdir "$1" && (
		cd "$1" &&
		XDG_RUNTIME_DIR=$RUN "$MTREC" --signal -o t.log "$PROG" ${2:-} >out 2>err &
	) &&
	for i in $(seq 100); do
		sed -n "s/^ready //p" "$1/out" >"$1/pid" && test -s "$1/pid" && return 0
		sleep 0.05
	done
	return 1
}

# stop_daemon NAME: SIGTERM, taken by its sigwait() thread; it exits 0.
stop_daemon() {
	kill "$(cat "$1/pid")" &&
	for i in $(seq 100); do
		grep -q "^bye" "$1/out" && grep -q "trace written" "$1/err" && return 0
		sleep 0.05
	done
	return 1
}

events() { grep -a -c "^@" "$1"; }

# spawn CMD...: run CMD in the background; its pid in spawned.pid.
spawn() {
	"$@" >/dev/null 2>&1 &
	echo $! >spawned.pid
}

test_expect_success 'kill -USR2 does not toggle: the daemon takes it with sigwait()' '
	start_daemon busy &&
	pid=$(cat busy/pid) &&
	sleep 0.3 &&
	kill -USR2 $pid &&
	sleep 0.3 &&
	grep -q "^usr2 1$" busy/out &&
	test "$(grep -a -c "^= End" busy/t.log)" = 0 &&
	a=$(events busy/t.log) && sleep 0.3 && b=$(events busy/t.log) &&
	test "$b" -gt "$a"
'

test_expect_success 'mtrec ctl PID off stops recording, and says so' '
	pid=$(cat busy/pid) &&
	"$MTREC" ctl $pid off >out 2>err &&
	test "$(cat out)" = "recording off" && test_must_be_empty err &&
	grep -a -q "^= End" busy/t.log &&
	a=$(events busy/t.log) && sleep 0.5 && b=$(events busy/t.log) &&
	test "$a" = "$b" &&
	"$MTREC" ctl $pid status >out &&
	test "$(cat out)" = "recording off"
'

test_expect_success 'mark while off is refused (exit 1), nothing written' '
	pid=$(cat busy/pid) &&
	test_expect_code 1 "$MTREC" ctl $pid mark early 2>err &&
	grep -q "process $pid: recording is off: mark not written" err &&
	! grep -a -q "^# mark early" busy/t.log
'

test_expect_success 'mtrec ctl PID on resumes recording, mark writes its line' '
	pid=$(cat busy/pid) &&
	"$MTREC" ctl $pid on >out &&
	test "$(cat out)" = "recording on" &&
	"$MTREC" ctl $pid mark "after the pause" >out &&
	test "$(cat out)" = "mark written" &&
	a=$(events busy/t.log) && sleep 0.3 && b=$(events busy/t.log) &&
	test "$b" -gt "$a" &&
	stop_daemon busy &&
	grep -a "^= \|^# mark" busy/t.log >actual &&
	printf "%s\n" "= Start" "= End" "= Start" "# mark after the pause" "= End" >expect &&
	test_cmp expect actual
'

test_expect_success 'both spans hold the workers events; mtrace reads the trace' '
	# (a block allocated in one span and freed in the other shows as a
	# leak or a free never allocated, as with trace_off()/trace_on())
	awk "/^= Start/ { span++ } /^@ .* \\+ 0x[0-9a-f]+ 0x309$/ { n[span]++ }
	     END { print (n[1] > 100), (n[2] > 100) }" busy/t.log >actual &&
	echo "1 1" >expect && test_cmp expect actual &&
	test_might_fail /usr/bin/mtrace busy/t.log >report 2>&1 &&
	grep -q "Memory not freed\|No memory leaks" report
'

test_expect_success 'the request is removed once taken, the directory is the user own' '
	test "$(ls -A run/mtrec)" = "" &&
	test "$(stat -c %a run/mtrec)" = 700
'

test_expect_success 'an idle daemon, --no-ptrace: the request is pending (exit 2) until its next allocation' '
	start_daemon idle idle &&
	pid=$(cat idle/pid) &&
	test_expect_code 2 "$MTREC" ctl --no-ptrace --timeout=0.5 $pid off 2>err &&
	grep -q "process $pid has not taken the request in 0.5 s" err &&
	grep -q "stays pending" err &&
	test -f run/mtrec/$pid.ctl &&
	test_expect_code 125 "$MTREC" ctl --no-ptrace --timeout=0.5 $pid on 2>err &&
	grep -q "an earlier request to process $pid is still pending" err &&
	: >idle/wake &&
	for i in $(seq 50); do test -f run/mtrec/$pid.ctl || break; sleep 0.05; done &&
	! test -f run/mtrec/$pid.ctl &&
	grep -a -q "^= End" idle/t.log &&
	"$MTREC" ctl $pid status >out &&
	test "$(cat out)" = "recording off" &&
	stop_daemon idle
'

test_expect_success 'a request left for an exited process does not reach a later one' '
	start_daemon stale idle &&
	pid=$(cat stale/pid) &&
	printf "mtrec-ctl 1 1\noff\n" >run/mtrec/$pid.ctl &&
	: >stale/wake &&
	for i in $(seq 50); do test -f run/mtrec/$pid.ctl || break; sleep 0.05; done &&
	! test -f run/mtrec/$pid.ctl &&
	"$MTREC" ctl $pid status >out &&
	test "$(cat out)" = "recording on" &&
	stop_daemon stale
'

test_expect_success 'a daemonized child (daemon(3), closefrom(3)) takes requests under its own pid' '
	mkdir dmn && (
		cd dmn &&
		env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log XDG_RUNTIME_DIR=$RUN "$PROG" daemon >out 2>err
	) &&
	for i in $(seq 100); do grep -q "^ready" dmn/out && break; sleep 0.05; done &&
	pid=$(sed -n "s/^ready //p" dmn/out) &&
	test -n "$pid" &&
	"$MTREC" ctl $pid off >out &&
	test "$(cat out)" = "recording off" &&
	"$MTREC" ctl $pid on >out &&
	"$MTREC" ctl $pid mark child >out &&
	kill $pid &&
	for i in $(seq 100); do grep -q "^bye" dmn/out && break; sleep 0.05; done &&
	sleep 0.2 &&
	grep -a "^= \|^# mark" dmn/t.log.$pid >actual &&
	printf "%s\n" "= Start" "= End" "= Start" "# mark child" "= End" >expect &&
	test_cmp expect actual &&
	! grep -a -q "^# mark" dmn/t.log
'

test_expect_success 'no such process, no recorder, not recording: exit 125 and why' '
	pid=$(cat busy/pid) &&
	test_expect_code 125 "$MTREC" ctl $pid on 2>err &&
	grep -q "^mtrec: no process $pid$" err &&
	spawn sleep 5 && sp=$(cat spawned.pid) &&
	test_expect_code 125 "$MTREC" ctl $sp on 2>err &&
	grep -q "process $sp does not run the recorder (libmtrec.so is not loaded in it)" err &&
	spawn env LD_PRELOAD="$LIBMTREC" sleep 5 && sp2=$(cat spawned.pid) &&
	sleep 0.2 &&
	test_expect_code 125 "$MTREC" ctl $sp2 on 2>err2 &&
	grep -q "process $sp2 runs the recorder but records nothing" err2 &&
	spawn env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/nc.log MTREC_CONTROL=0 sleep 5 &&
	sp3=$(cat spawned.pid) &&
	sleep 0.2 &&
	test_expect_code 125 "$MTREC" ctl $sp3 on 2>err3 &&
	grep -q "process $sp3 takes no requests (MTREC_CONTROL=0)" err3 &&
	kill $sp $sp2 $sp3
'

test_expect_success 'bad usage: exit 125 with a hint' '
	test_expect_code 125 "$MTREC" ctl 2>err &&
	grep -q "no process given" err && grep -q "Try .mtrec ctl --help." err &&
	test_expect_code 125 "$MTREC" ctl 12x on 2>err &&
	grep -q "invalid process id .12x." err &&
	test_expect_code 125 "$MTREC" ctl $$ toggle 2>err &&
	grep -q "unknown request .toggle." err &&
	test_expect_code 125 "$MTREC" ctl $$ mark 2>err &&
	grep -q "mark takes one LABEL" err &&
	test_expect_code 125 "$MTREC" ctl $$ on now 2>err &&
	grep -q "takes no argument" err &&
	test_expect_code 125 "$MTREC" ctl --timeout=soon $$ on 2>err &&
	grep -q "invalid --timeout .soon." err &&
	"$MTREC" ctl --help >out && grep -q "^Usage: mtrec ctl" out
'

test_done
