#!/bin/sh
# t2365-recorder-refusals.sh -- what the recorder will not do, it says
# (issue 24, point 7): loaded by dlopen() into a program that did not
# preload it, it records nothing (the program's calls never reach it)
# and says why; a part of a rotated trace that cannot be mapped leaves no
# empty file; mtrec ctl says when a mark's label had to be changed; -q
# does not hide a malformed --track.
#
# Fixtures: tests/helper/rec-dlopen-self.c, librec-failmap.c,
# rec-sigwait-daemon.c, rec-harm.c.
. "$(dirname "$0")/lib.sh"

HARM="$HELPER/rec-harm"

test_expect_success 'dlopen() of libmtrec.so: not recording, said once, no file' '
	MALLOC_TRACE=self.log "$HELPER/rec-dlopen-self" "$LIBMTREC" >out 2>err &&
	cat err &&
	grep -x done out &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "mtrec: libmtrec.so was loaded after the program.s malloc (by dlopen(), not LD_PRELOAD): its calls never come here; not recording" err &&
	test -z "$(ls self.log* 2>/dev/null)"
'

test_expect_success 'dlopen() without MALLOC_TRACE: silent' '
	"$HELPER/rec-dlopen-self" "$LIBMTREC" >out 2>err &&
	grep -x done out &&
	test_must_be_empty err
'

test_expect_success 'a part that cannot be mapped: recording stops, saying so, and no empty part is left' '
	MTREC_TEST_MAPS=1 LD_PRELOAD="$LIBMTREC $HELPER/librec-failmap.so" MALLOC_TRACE=rot.log \
		MTREC_ROTATE=4M "$HELPER/bench-alloc" 2 200000 2>err &&
	cat err &&
	grep "^mtrec: stopped recording to .*rot.log.part2.: cannot start the next part: Cannot allocate memory\$" err &&
	grep -a -x "# stopped cannot start the next part: Cannot allocate memory" rot.log &&
	test "$(tail -n 1 rot.log)" = "= End" &&
	test ! -e rot.log.part2 &&
	test "$(ls rot.log*)" = rot.log
'

test_expect_success 'mtrec -q still says that an MTREC_TRACK item is malformed' '
	"$MTREC" -q -o q.log --track "pool_get:bogus" "$HARM" churn 0.01 >out 2>err &&
	cat err &&
	grep -x done out &&
	grep -x "mtrec: MTREC_TRACK: .pool_get:bogus.: KIND is one of alloc, free, ref, unref; ignored" err &&
	test "$(wc -l <err)" -eq 1
'

mkdir -m 700 run
RUN=$OUT/run

test_expect_success 'mtrec ctl PID mark: a label with line breaks or too long is changed, and ctl says how' '
	(XDG_RUNTIME_DIR=$RUN "$MTREC" -o d.log "$HELPER/rec-sigwait-daemon" >d.out 2>d.err &) &&
	for i in $(seq 200); do
		pid=$(sed -n "s/^ready //p" d.out) && test -n "$pid" && break
		sleep 0.05
	done &&
	test -n "$pid" &&
	XDG_RUNTIME_DIR=$RUN "$MTREC" ctl -t 30 $pid mark "$(printf "two\nlines")" >m1.out 2>m1.err &&
	cat m1.err &&
	grep -x "mark written" m1.out &&
	grep -x "mtrec: ctl: the label.s line breaks are written as spaces (a mark is one line)" m1.err &&
	long=$(printf "%0600d" 0) &&
	XDG_RUNTIME_DIR=$RUN "$MTREC" ctl -t 30 $pid mark "$long" >m2.out 2>m2.err &&
	cat m2.err &&
	grep -x "mark written" m2.out &&
	grep -x "mtrec: ctl: the label is cut to its first 511 bytes (a mark holds 511)" m2.err &&
	XDG_RUNTIME_DIR=$RUN "$MTREC" ctl -t 30 $pid mark plain >m3.out 2>m3.err &&
	test_must_be_empty m3.err &&
	kill $pid &&
	for i in $(seq 200); do
		grep -q "trace written" d.err && break
		sleep 0.05
	done &&
	grep -a -x "# mark two lines" d.log &&
	grep -a -x "# mark $(printf "%0511d" 0)" d.log &&
	grep -a -x "# mark plain" d.log
'

test_done
