#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# mtrec attach PID starts recording in a process started without the
# recorder, through ptrace (one thread made to call dlopen() and
# mtrec_attach()); mtrec detach PID stops it and gives the program its own
# calls back; attach again works.  The program runs on unharmed: its
# threads churning malloc and free meanwhile, inside malloc in every
# thread at the moment, or asleep in a system call.  The trace says where
# recording began; frees of blocks from before it are counted apart, never
# as frees of memory never allocated, and leaks planted in the windows are
# found.  Refused, exit 2 with the reason: no such process, a static
# program, a process another tracer holds.
#
# Fixture: tests/helper/rec-attach-churn.c (commands through ./cmd).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-attach-churn"

# start NAME ARGS...: run the fixture natively in NAME/; its pid in NAME/pid.
start() {
	name=$1 && shift &&
	mkdir "$name" && (cd "$name" && exec "$PROG" "$@" >out 2>err &) &&
	for i in $(seq 200); do
		sed -n "s/^ready //p" "$name/out" >"$name/pid" && test -s "$name/pid" && return 0
		sleep 0.05
	done
	return 1
}

# send NAME CMD EXPECT: a command, then wait for its answer on stdout.
send() {
	echo "$2" >"$1/cmd.tmp" && mv "$1/cmd.tmp" "$1/cmd" &&
	for i in $(seq 400); do
		grep -q "^$3\$" "$1/out" && return 0
		sleep 0.05
	done
	echo "no '$3' from $1" >&2
	return 1
}

# finish NAME: the program exits by itself, status 0 ("bye").
finish() {
	pid=$(cat "$1/pid") &&
	send "$1" exit bye &&
	for i in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	return 1
}

test_expect_success 'attach, leaks planted, detach, attach again, detach: the program runs on' '
	start churn churn 3 200 &&
	pid=$(cat churn/pid) &&
	"$MTREC" attach -o "$OUT/churn/t.log" $pid >attach1.out 2>attach1.err &&
	grep "process $pid: recording into $OUT/churn/t.log; [0-9]* call slots redirected; thread [0-9]* was held" attach1.out &&
	test_must_be_empty attach1.err &&
	sleep 0.2 &&
	send churn "leak 5" "leaked 5" &&
	send churn "strdup 3" "strdups 3" &&
	send churn fork "forked [0-9]* 0" &&
	"$MTREC" detach $pid >detach1.out &&
	grep "recording stopped in $OUT/churn/t.log; [0-9]* call slots given back" detach1.out &&
	send churn "leak 2" "leaked 2" &&
	"$MTREC" attach -o "$OUT/churn/t.log" $pid >attach2.out &&
	sleep 0.2 &&
	send churn "leak 3" "leaked 3" &&
	"$MTREC" detach $pid &&
	finish churn &&
	grep -x bye churn/out &&
	test_must_be_empty churn/err
'

test_expect_success 'the trace says where each window began and ended' '
	grep -a "^# attached\|^# detached\|^= " churn/t.log | sed "s/ by mtrec attach.*//" >windows &&
	printf "%s\n" "# attached 1" "= Start" "# detached 1" "= End" \
		"# attached 2" "= Start" "# detached 2" "= End" >expect &&
	test_cmp expect windows
'

test_expect_success 'a child forked while attached records into a trace of its own' '
	child=$(sed -n "s/^forked \([0-9]*\) 0$/\1/p" churn/out) &&
	test -n "$child" &&
	grep -a "^# parent $(cat churn/pid) 1 $OUT/churn/t.log$" "churn/t.log.$child" &&
	grep -a "^# attached 1 " "churn/t.log.$child" &&
	test "$(grep -a -c " + 0x[0-9a-f]* 0x1092$" "churn/t.log.$child")" = 1
'

test_expect_success 'libc calls its own malloc through slots that were redirected (strdup)' '
	test "$(grep -a -c "(__strdup+" churn/t.log)" = 3
'

test_expect_success 'the planted leaks are found; frees of blocks from before are not errors' '
	test_expect_code 1 "$MTANALYZE" --by-site "$PROG" churn/t.log >report &&
	grep "^Attached run (mtrec attach)" report &&
	grep "frees\{0,1\} of blocks from before" report &&
	! grep "never allocated" report &&
	grep "^ *8 *33936  leak_here at" report &&
	test_expect_code 1 "$MTANALYZE" --json "$PROG" churn/t.log >report.json &&
	grep "\"bad_frees\": 0, \"attaches\": 2, \"frees_before_attach\": [1-9]" report.json
'

test_expect_success 'the plain report is the mtrace script'"'"'s' '
	test_might_fail "$MTANALYZE" "$PROG" churn/t.log >plain.ours &&
	if test -x /usr/bin/mtrace; then
		test_might_fail /usr/bin/mtrace "$PROG" churn/t.log >plain.perl &&
		test_cmp plain.perl plain.ours
	fi
'

test_expect_success 'every thread inside malloc at the attach: they come out unharmed' '
	start busy busy 2 &&
	pid=$(cat busy/pid) &&
	"$MTREC" attach -o "$OUT/busy/t.log" $pid >busy-attach.out &&
	grep "recording into" busy-attach.out &&
	"$MTREC" detach $pid &&
	"$MTREC" attach -o "$OUT/busy/t.log" $pid &&
	"$MTREC" detach $pid &&
	finish busy &&
	test_must_be_empty busy/err &&
	test_expect_code 1 "$MTANALYZE" --by-site "$PROG" busy/t.log >busy-report &&
	! grep "never allocated" busy-report
'

test_expect_success 'a thread taking a signal every 100 us inside malloc: unharmed' '
	start sig signals 2 &&
	pid=$(cat sig/pid) &&
	for i in 1 2; do
		"$MTREC" attach -o "$OUT/sig/t.log" $pid >/dev/null &&
		sleep 0.2 &&
		"$MTREC" detach $pid >/dev/null || return 1
	done &&
	finish sig &&
	grep "^handled [1-9]" sig/out &&
	test_must_be_empty sig/err &&
	test "$(grep -a -c "^# detached" sig/t.log)" = 2
'

test_expect_success 'a thread waiting in poll() with a timeout, used again and again (restart_syscall)' '
	start poll churn 0 -400000 &&
	pid=$(cat poll/pid) &&
	for i in 1 2 3; do
		"$MTREC" attach -o "$OUT/poll/t.log" $pid >/dev/null &&
		"$MTREC" ctl $pid mark m$i >/dev/null &&
		"$MTREC" detach $pid >/dev/null || return 1
	done &&
	finish poll &&
	test "$(grep -a -c "^# mark m" poll/t.log)" = 3
'

test_expect_success 'refused: no such process' '
	test_expect_code 2 "$MTREC" attach 2147483646 2>err &&
	grep "no process 2147483646" err &&
	test_expect_code 2 "$MTREC" detach 2147483646 2>err &&
	grep "no process 2147483646" err
'

test_expect_success 'refused: detach from a process without the recorder' '
	start plain churn 1 500 &&
	test_expect_code 2 "$MTREC" detach "$(cat plain/pid)" 2>err &&
	grep "does not run the recorder" err &&
	finish plain
'

test_expect_success 'refused: a process another tracer holds' '
	start traced traced &&
	test_expect_code 2 "$MTREC" attach -o "$OUT/traced.log" "$(cat traced/pid)" 2>err &&
	grep "already traced by process" err &&
	! test -e traced.log &&
	kill -9 "$(cat traced/pid)"
'

# switches TID: how many times the thread has given up the processor.
switches() { sed -n "s/^voluntary_ctxt_switches:[^0-9]*//p" "/proc/$1/status"; }

test_expect_success 'the thread used is stopped a few times, not at each of its system calls' '
	start few churn 0 -400000 &&
	pid=$(cat few/pid) &&
	a=$(switches $pid) &&
	"$MTREC" attach -o "$OUT/few/t.log" $pid >few/attach.out &&
	b=$(switches $pid) &&
	"$MTREC" detach $pid &&
	c=$(switches $pid) &&
	echo "held thread: $((b - a)) switches at the attach, $((c - b)) at the detach" &&
	grep "thread $pid was held" few/attach.out &&
	test $((b - a)) -lt 40 &&
	renice -n 7 -p $pid >/dev/null &&
	"$MTREC" attach -o "$OUT/few/t.log" $pid >/dev/null &&
	"$MTREC" detach $pid &&
	test "$(ps -o ni= -p $pid | tr -d " ")" = 7 &&
	finish few &&
	test_must_be_empty few/err
'

test_expect_success 'a thread that blocks SIGTRAP: its calls return to a system call instead' '
	mkdir trapblock &&
	(cd trapblock && REC_BLOCK_SIGTRAP=1 exec "$PROG" churn 1 500 >out 2>err &) &&
	for i in $(seq 200); do
		sed -n "s/^ready //p" trapblock/out >trapblock/pid && test -s trapblock/pid && break
		sleep 0.05
	done &&
	pid=$(cat trapblock/pid) &&
	"$MTREC" attach -o "$OUT/trapblock/t.log" $pid &&
	"$MTREC" ctl $pid mark blocked &&
	"$MTREC" detach $pid &&
	finish trapblock &&
	test_must_be_empty trapblock/err &&
	grep -a -x "# mark blocked" trapblock/t.log &&
	test_must_be_empty churn/err
'

# touched PID LIB: kB of LIB's mappings in PID touched since the last
# write to its clear_refs (smaps' Referenced).
touched() {
	awk -v lib="$2" '/^[0-9a-f]+-[0-9a-f]+ / { mine = ($NF == lib) }
		mine && /^Referenced:/ { kb += $2 } END { print kb + 0 }' "/proc/$1/smaps"
}

# A copy of the library that only this process maps: another one using it
# would mark its pages referenced.  The calls in flight at the detach (a
# churning thread is inside the recorder most of the time while attached,
# and may be waiting for a processor there) end in it: the count starts
# 0.5 s after.
test_expect_success 'after the detach, the program never touches the recorder again' '
	mkdir own && cp "$LIBMTREC" "$OUT/own/libmtrec.so" &&
	start inert churn 2 &&
	pid=$(cat inert/pid) &&
	MTREC_LIB="$OUT/own/libmtrec.so" "$MTREC" attach -o "$OUT/inert/t.log" $pid >/dev/null &&
	echo 1 >/proc/$pid/clear_refs &&
	sleep 0.5 &&
	attached=$(touched $pid "$OUT/own/libmtrec.so") &&
	"$MTREC" detach $pid >/dev/null &&
	sleep 0.5 &&
	echo 1 >/proc/$pid/clear_refs &&
	sleep 1 &&
	detached=$(touched $pid "$OUT/own/libmtrec.so") &&
	echo "recorder pages touched in 0.5 s attached: $attached kB, in 1 s detached: $detached kB" &&
	test "$attached" -gt 0 &&
	test "$detached" = 0 &&
	finish inert
'

test_expect_success 'a seccomp filter: refused, unless --seccomp; then detach works' '
	start sec seccomp 1 &&
	pid=$(cat sec/pid) &&
	test_expect_code 2 "$MTREC" attach -o "$OUT/sec/t.log" $pid 2>err &&
	grep "runs under a seccomp filter.*--seccomp to attach all the same" err &&
	"$MTREC" attach --seccomp -o "$OUT/sec/t.log" $pid &&
	"$MTREC" detach $pid &&
	finish sec &&
	grep -a "^# detached 1" sec/t.log
'

for kind in sigwait epoll; do
	test_expect_success "a thread waiting in $kind itself sees no EINTR" '
		start $kind waiter $kind &&
		pid=$(cat $kind/pid) &&
		"$MTREC" attach -o "$OUT/$kind/t.log" $pid >$kind/attach.out &&
		grep "thread [0-9]* was held" $kind/attach.out &&
		"$MTREC" ctl $pid mark m >/dev/null &&
		"$MTREC" detach $pid &&
		finish $kind &&
		test_must_be_empty $kind/err
	'
done

test_expect_success 'refused: a process of ones own user that is not dumpable' '
	if test "$(id -u)" = 0 && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
		mkdir nd && chmod 777 nd &&
		(cd nd && exec setpriv --reuid=nobody --regid=nogroup --clear-groups "$PROG" nodump 0 >out 2>err &) &&
		for i in $(seq 200); do
			sed -n "s/^ready //p" nd/out >nd/pid && test -s nd/pid && break
			sleep 0.05
		done &&
		test_expect_code 2 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$MTREC" attach -o /tmp/never.log "$(cat nd/pid)" 2>err &&
		kill "$(cat nd/pid)" &&
		grep "process $(cat nd/pid) is not dumpable" err
	fi
'

test_expect_success 'refused: a static program' '
	printf "%s\n" "#include <unistd.h>" "int main(void) { sleep(30); return 0; }" >static.c &&
	if $CC -static -o static static.c 2>/dev/null; then
		{ ./static & } &&
		spid=$! &&
		sleep 0.2 &&
		test_expect_code 2 "$MTREC" attach -o "$OUT/static.log" $spid 2>err &&
		kill $spid &&
		grep "no libc.so loaded (a static program?)" err
	fi
'

test_expect_success 'bad usage: 125' '
	test_expect_code 125 "$MTREC" attach 2>err &&
	grep "one process id expected" err &&
	test_expect_code 125 "$MTREC" attach --depth 0 1 2>err &&
	grep "from 1 to 64" err
'

test_done
