#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2300-recorder-never-harm.sh -- whatever happens to the trace file or to
# the program's threads, signals and limits, the traced program runs as it
# does without the recorder, and the recorder never stops in silence: when
# it stops or drops events it says so on stderr and in the trace (issue 18).
#
# Fixtures: tests/helper/rec-harm.c (one mode per hostile condition) and
# tests/helper/librec-bump.c (an allocator signal handlers may call).
. "$(dirname "$0")/lib.sh"

HARM="$HELPER/rec-harm"
BUMP="$HELPER/librec-bump.so"

# ends_honestly FILE: the trace says it stopped, how many events it lost,
# and is closed by "= End".
ends_honestly() {
	grep -a "^# stopped " "$1" &&
	grep -a "^# lost [0-9][0-9]* events after recording stopped\$" "$1" &&
	test "$(tail -n 1 "$1")" = "= End"
}

# The churns below run until told to stop, writing hundreds of MB a
# second: each runs under a file size limit (ulimit -f, 2^23 blocks), so
# that a recorder which missed what the test did fails it without filling
# the disk (the limit is a stop the trace says, see "a size limit reached").
FSIZE=8388608


test_expect_success 'the trace truncated by another process: the program runs on, the trace says so' '
	rm -f stop &&
	{ (ulimit -f $FSIZE && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=trunc.log exec "$HARM" churn 120 stop) >trunc.out 2>trunc.err & } &&
	pid=$! &&
	{ within 600 grep -q "^= Start" trunc.log && : >trunc.log && within 600 test -s trunc.err
	  seen=$?; touch stop; } &&
	{ wait $pid; st=$?; } &&
	cat trunc.out trunc.err &&
	test $seen -eq 0 && test $st -eq 0 &&
	grep -x done trunc.out &&
	test "$(wc -l <trunc.err)" -eq 1 &&
	grep "^mtrec: stopped recording .*truncated by another process" trunc.err &&
	grep -a -x "# stopped the trace file was truncated by another process" trunc.log &&
	ends_honestly trunc.log
'

test_expect_success 'the trace removed while recording: the program runs on' '
	rm -f stop &&
	{ (ulimit -f $FSIZE && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=gone.log exec "$HARM" churn 120 stop) >gone.out 2>gone.err & } &&
	pid=$! &&
	{ within 600 grep -q "^= Start" gone.log && rm gone.log && sleep 0.3
	  seen=$?; touch stop; } &&
	wait $pid &&
	test $seen -eq 0 &&
	grep -x done gone.out
'

test_expect_success 'a second recording naming a file in use writes beside it and destroys nothing' '
	rm -f stop &&
	{ (ulimit -f $FSIZE && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/same.log exec "$HARM" churn 120 stop) >first.out 2>first.err & } &&
	pid=$! &&
	{ within 600 grep -q "^= Start" same.log &&
	  LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/same.log "$HARM" churn 0.1 >second.out 2>second.err
	  st=$?; touch stop; } &&
	wait $pid &&
	test $st -eq 0 &&
	cat first.err second.err &&
	grep -x done first.out && grep -x done second.out &&
	test ! -s first.err &&
	grep "^mtrec: trace file .*/same.log. is being written by another recording; this one writes .*/same\.log\.[0-9][0-9]*.\$" second.err &&
	test "$(ls same.log.* | wc -l)" -eq 1 &&
	for f in same.log same.log.*; do
		test "$(tail -n 1 $f)" = "= End" && ! grep -a "^# stopped" $f && mtrace_ok $f || exit 1
	done
'

test_expect_success 'a thread with a cancellation pending is never cancelled inside malloc or free' '
	timeout 120 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=selfcancel.log "$HARM" selfcancel 300000 >out &&
	grep -x "survived 300000" out &&
	test "$(tail -n 1 selfcancel.log)" = "= End"
'

test_expect_success 'threads cancelled while they allocate: no hang, no abort, a consistent trace' '
	timeout 300 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=cancel.log "$HARM" cancel 200 >out &&
	grep -x "rounds 200" out &&
	mtrace_ok cancel.log
'

# Without the thread count (recorder/life.c, release_libc_caches) the crash
# came in most runs: 10 runs tell.
test_expect_success 'exit() while other threads use stdio and localtime: no crash in 10 runs' '
	for i in $(seq 10); do
		timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/exit$i.log "$HARM" exitstdio ||
			{ echo "run $i: exit status $?"; exit 1; }
		grep -a -x "# freeres skipped: 4 other threads running" exit$i.log || exit 1
	done
'

test_expect_success 'a program alone at exit still has libc caches released' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=alone.log "$HARM" churn 0.05 >/dev/null &&
	grep -a -x "# freeres done" alone.log
'

test_expect_success 'closefrom(3) at start: recording goes on, silently, every event in the trace' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=closefrom.log "$HARM" closefrom 300000 >out 2>err &&
	grep -x "done 300000" out &&
	test ! -s err &&
	! grep -a "^# stopped" closefrom.log &&
	test "$(strip_ext closefrom.log | grep -c " + ")" -ge 300000 &&
	test "$(strip_ext closefrom.log | grep -c " - ")" -ge 300000 &&
	test "$(tail -n 1 closefrom.log)" = "= End" &&
	mtrace_ok closefrom.log &&
	grep -x "No memory leaks." mt_closefrom.log
'

test_expect_success 'a size limit reached: the trace says where it stopped and what it lost' '
	(ulimit -f 512 && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=fsize.log "$HARM" closefrom 200000 >out 2>err) &&
	cat err &&
	grep -x "done 200000" out &&
	grep -a -x "# stopped file size limit reached: File too large" fsize.log &&
	ends_honestly fsize.log &&
	lost=$(sed -n "s/^# lost \([0-9]*\) events after recording stopped\$/\1/p" fsize.log) &&
	recorded=$(strip_ext fsize.log | grep -c "^@") &&
	echo "recorded $recorded, lost $lost" &&
	test $((recorded + lost)) -ge 400000
'

test_expect_success 'a signal handler that allocates inside the recorder: every event recorded' '
	LD_PRELOAD="$LIBMTREC $BUMP" MALLOC_TRACE=sig.log "$HARM" sigalloc 60000 >out &&
	handled=$(sed -n "s/^handled //p" out) &&
	traced=$(grep -a -c " + 0x[0-9a-f]* 0x384\$" sig.log) &&
	echo "handled $handled, traced $traced (2 before the timer)" &&
	test "$handled" -gt 1000 &&
	test "$traced" -eq $((handled + 2)) &&
	! grep -a "^# lost" sig.log &&
	mtrace_ok sig.log &&
	grep -x "No memory leaks." mt_sig.log
'

# A refused path: the first process says so once, and the programs it
# starts (exec'd children) do not create NAME.PID beside it.
refused() {
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$1" sh -c "\"$HARM\" churn 0.01; \"$HARM\" churn 0.01" \
		>refused.out 2>refused.err &&
	cat refused.err &&
	test "$(grep -c done refused.out)" -eq 2 &&
	test "$(wc -l <refused.err)" -eq 1 &&
	grep "^mtrec: .*not recording" refused.err
}

test_expect_success 'MALLOC_TRACE naming /dev/null: nothing written beside it' '
	{ ls -d /dev/null.* 2>/dev/null || true; } >dev.before &&
	refused /dev/null &&
	{ ls -d /dev/null.* 2>/dev/null || true; } >dev.after &&
	test_cmp dev.before dev.after
'

test_expect_success 'MALLOC_TRACE naming a FIFO: no block, nothing written beside it' '
	mkfifo fifo &&
	refused "$OUT/fifo" &&
	test -p fifo &&
	test -z "$(ls -d fifo.* 2>/dev/null)"
'

test_expect_success 'MALLOC_TRACE naming a directory: nothing written beside it' '
	mkdir dir &&
	refused "$OUT/dir" &&
	test -z "$(ls dir)" &&
	test -z "$(ls -d dir.* 2>/dev/null)"
'

test_expect_success 'under ulimit -v 1000000 the program gets (almost) all it gets without the recorder' '
	native=$( (ulimit -v 1000000; "$HARM" grab 2000) | sed -n "s/^got //p") &&
	traced=$( (ulimit -v 1000000; LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=as.log "$HARM" grab 2000) |
		sed -n "s/^got //p") &&
	echo "native $native MB, traced $traced MB" &&
	test "$traced" -ge $((native - 12))
'

test_expect_success 'under ulimit -v 200000 the program is recorded, and gets its memory when short' '
	native=$( (ulimit -v 200000; "$HARM" grab 1000) | sed -n "s/^got //p") &&
	traced=$( (ulimit -v 200000; LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=as2.log "$HARM" grab 1000) |
		sed -n "s/^got //p") &&
	echo "native $native MB, traced $traced MB" &&
	test "$traced" -ge $((native - 12)) &&
	test "$(strip_ext as2.log | grep -c " + ")" -ge 100 &&
	grep -a "^# stopped the program ran out of address space" as2.log &&
	ends_honestly as2.log &&
	(ulimit -v 200000; LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=as3.log "$HARM" closefrom 20000 >/dev/null) &&
	test "$(strip_ext as3.log | grep -c " + ")" -ge 20000 &&
	test "$(tail -n 1 as3.log)" = "= End"
'

# A limit the program sets itself once running finds the recorder's
# reservation already taken (a terabyte when there was no limit): the
# program's first allocation that fails gets it back, as under ulimit -v.
test_expect_success 'an address-space limit the program sets itself: it gets its memory, the trace says why it stopped' '
	native=$("$HARM" lategrab 500 | sed -n "s/^got //p") &&
	traced=$(LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=late.log "$HARM" lategrab 500 2>late.err |
		sed -n "s/^got //p") &&
	echo "native $native MB, traced $traced MB" &&
	test "$native" -eq 500 &&
	test "$traced" -ge $((native - 12)) &&
	grep -a "^# stopped the program ran out of address space" late.log &&
	grep "mtrec: stopped recording to .*late.log.: the program ran out of address space" late.err &&
	ends_honestly late.log
'

# t2360 runs the same exit 50 times beside 4 busy loops, for cut lines;
# here a few runs, each also read by mtrace.
test_expect_success 'exit() from a thread mid-chunk: no run of NUL bytes swallows a line (5 runs)' '
	for i in $(seq 5); do
		timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/texit.log "$HARM" threadexit 3000 ||
			exit 1
		perl -ne "exit 1 if /^\\0+[^\\0\\n]/" texit.log || { echo "run $i: a NUL run before text"; exit 1; }
		mtrace_ok texit.log || exit 1
	done
'

test_done
