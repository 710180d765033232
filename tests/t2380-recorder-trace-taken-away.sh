#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2380-recorder-trace-taken-away.sh -- a trace removed or replaced while
# the program runs: the recorder notices (within 100 ms of allocation
# calls, at a chunk turnover, or at exit), says once on stderr that it
# stopped and why, naming the file, lets the file go (its disk space is
# freed), and never writes into the file that took the name; a trace renamed goes on under
# its new name; a filter that refuses stat() never yields a wrong reason
# (issue 24, point 2).
#
# Fixture: tests/helper/rec-files.c; the traces read back with
# /usr/bin/mtrace come from its paced churn (a full-speed churn of 3 s
# writes about 2 GB, which the script takes a minute to read).
. "$(dirname "$0")/lib.sh"

FILES="$HELPER/rec-files"

# wait_for FILE: until the recorder has made it (10 s at most, for a
# loaded machine).
wait_for() {
	for i in $(seq 200); do
		test -e "$1" && return 0
		sleep 0.05
	done
	return 1
}

test_expect_success 'the trace removed 0.3 s into a churn: said once, naming the file; no file re-created' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=gone.log "$FILES" churn 3 >gone.out 2>gone.err & } &&
	pid=$! &&
	wait_for gone.log &&
	sleep 0.3 &&
	rm gone.log &&
	wait $pid &&
	cat gone.err &&
	grep -x done gone.out &&
	test "$(wc -l <gone.err)" -eq 1 &&
	grep -x "mtrec: stopped recording to .$OUT/gone.log.: the trace file was removed" gone.err &&
	test ! -e gone.log
'

test_expect_success 'another file moved over the trace: said once; that file is left as it was' '
	seq 1000 >other.txt &&
	cp other.txt other.orig &&
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=over.log "$FILES" churn 3 >over.out 2>over.err & } &&
	pid=$! &&
	wait_for over.log &&
	sleep 0.3 &&
	mv other.txt over.log &&
	wait $pid &&
	cat over.err &&
	grep -x done over.out &&
	test "$(wc -l <over.err)" -eq 1 &&
	grep -x "mtrec: stopped recording to .$OUT/over.log.: the trace file was replaced by another file" over.err &&
	cmp over.log other.orig
'

test_expect_success 'removed while the program sleeps, then it exits: said at exit' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=nap.log "$FILES" nap 2 >nap.out 2>nap.err & } &&
	pid=$! &&
	wait_for nap.log &&
	sleep 0.3 &&
	rm nap.log &&
	wait $pid &&
	cat nap.err &&
	grep -x done nap.out &&
	test "$(wc -l <nap.err)" -eq 1 &&
	grep -x "mtrec: stopped recording to .$OUT/nap.log.: the trace file was removed" nap.err
'

test_expect_success 'a program that allocates every 200 ms: said while it runs, not at its next chunk; the file let go' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=slow.log "$FILES" slow 10 >slow.out 2>slow.err & } &&
	pid=$! &&
	wait_for slow.log &&
	sleep 0.5 &&
	rm slow.log &&
	for i in $(seq 50); do test -s slow.err && break; sleep 0.1; done &&
	kill -0 $pid &&
	cat slow.err &&
	grep -x "mtrec: stopped recording to .$OUT/slow.log.: the trace file was removed" slow.err &&
	{ ls -l /proc/$pid/fd; cat /proc/$pid/maps; } >held &&
	kill -0 $pid &&
	! grep "slow.log" held &&
	wait $pid &&
	grep -x done slow.out &&
	test "$(wc -l <slow.err)" -eq 1
'

test_expect_success 'the trace renamed: nothing is lost, recording goes on under the new name' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/moved.log "$FILES" paced 3 >moved.out 2>moved.err & } &&
	pid=$! &&
	wait_for moved.log &&
	sleep 0.3 &&
	mv moved.log moved-away.log &&
	wait $pid &&
	cat moved.err &&
	grep -x done moved.out &&
	test ! -s moved.err &&
	test ! -e moved.log &&
	test "$(tail -n 1 moved-away.log)" = "= End" &&
	! grep -a "^# stopped" moved-away.log &&
	mtrace_ok moved-away.log
'

test_expect_success 'a hard link kept elsewhere: the trace is not lost, recording goes on' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=$OUT/linked.log "$FILES" paced 3 >linked.out 2>linked.err & } &&
	pid=$! &&
	wait_for linked.log &&
	sleep 0.3 &&
	ln linked.log linked-keep.log &&
	rm linked.log &&
	wait $pid &&
	grep -x done linked.out &&
	test ! -s linked.err &&
	test "$(tail -n 1 linked-keep.log)" = "= End" &&
	mtrace_ok linked-keep.log
'

# Under a filter that refuses fstat() the recorder cannot tell its file
# from one the program put in its place: it must say that, not that the
# file was removed or replaced -- whether or not it was.
test_expect_success 'stat refused by a seccomp filter: the reason given is that, never a removal' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=nostat.log "$FILES" nostat 3 >nostat.out 2>nostat.err & } &&
	pid=$! &&
	wait_for nostat.log &&
	sleep 0.3 &&
	rm nostat.log &&
	wait $pid &&
	cat nostat.err &&
	grep -x done nostat.out &&
	test "$(wc -l <nostat.err)" -eq 1 &&
	! grep -e removed -e replaced nostat.err &&
	grep -x "mtrec: stopped recording to .$OUT/nostat.log.: cannot check that the trace file is still the one it opened (fstat refused): Operation not permitted" nostat.err
'

# The file is not trimmed then (its descriptor might be the program's
# now): NULs follow "= End".
test_expect_success 'stat refused, the trace left alone: the trace says why it stopped, and ends' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=nostat2.log "$FILES" nostat 0.5 >nostat2.out 2>nostat2.err &&
	cat nostat2.err &&
	grep -x done nostat2.out &&
	! grep -e removed -e replaced nostat2.err &&
	grep -a "^# stopped cannot check that the trace file is still the one it opened" nostat2.log &&
	grep -a -x "= End" nostat2.log
'

test_done
