#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# MTREC_SIGNAL (launcher --signal) toggles recording from outside: a scoped
# program starts unrecorded and each delivery starts or stops a span.  A
# program that installs its own handler for the signal keeps working.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-signal"

# run_with_signals ARGS...: run PROG under mtrec, send SIGUSR2 at 0.3 s, 0.7 s
# and 1.1 s; the program runs for about 1.6 s.
run_with_signals() {
	"$@" >run.out 2>run.err &
	pid=$!
	for t in 0.3 0.4 0.4; do
		sleep $t
		kill -USR2 "$(sed -n "s/^ready //p" run.out)"
	done
	wait $pid
}

test_expect_success 'scoped + signal: nothing before the first signal, three toggles make two spans' '
	run_with_signals "$MTREC" --scoped --signal -o "$OUT/sig.log" "$PROG" 80 &&
	test "$(grep -c "^= Start" sig.log)" = 2 &&
	test "$(grep -c "^= End" sig.log)" = 2 &&
	test "$(sed -n "1,/^= Start/p" sig.log | grep -c "^@")" = 0
'

test_expect_success 'the recorded rounds are the ones inside the spans' '
	# rounds are 20 ms apart: the first span covers about rounds 15-35,
	# the second about 55 to the end; nothing from round 0-10 nor 40-50.
	grep "^@ .* + 0x[0-9a-f]* 0x" sig.log | sed "s/.* 0x//" | while read h; do
		echo $(( 0x$h - 1000 ))
	done >rounds &&
	test -s rounds &&
	! grep -q -x -e "[0-9]" -e "4[0-9]" rounds &&
	grep -q -x "2[0-9]" rounds && grep -q -x "7[0-9]" rounds
'

test_expect_success 'without --scoped the first signal stops recording' '
	run_with_signals "$MTREC" --signal=SIGUSR2 -o "$OUT/unscoped.log" "$PROG" 80 &&
	test "$(grep -c "^= Start" unscoped.log)" = 2 &&
	{ /usr/bin/mtrace unscoped.log >report || test $? = 1; }
'

test_expect_success 'a program with its own handler for the signal keeps it' '
	run_with_signals "$MTREC" --signal -o "$OUT/own.log" "$PROG" 80 own &&
	grep -q "own handler ran 3 times" run.out
'

test_expect_success 'an unknown signal name is reported, the program runs' '
	MTREC_SIGNAL=SIGBOGUS LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/bogus.log "$PROG" 2 >out 2>err &&
	grep -q "mtrec: MTREC_SIGNAL: unknown signal .SIGBOGUS." err &&
	grep -q "own handler ran 0 times" out
'

test_done
