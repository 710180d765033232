#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# MTREC_SIGNAL (launcher --signal) toggles recording from outside: a scoped
# program starts unrecorded and each delivery starts or stops a span.  A
# program that installs its own handler for the signal keeps working.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-signal"

# run_with_signals ARGS...: run PROG under mtrec, send SIGUSR2 after its
# rounds 15, 35 and 55 (of 80, 20 ms apart), where it waits for go.N: the
# signal is pending before it goes on, so the rounds recorded are exactly
# those in between however loaded the machine.
run_with_signals() {
	rm -f go.*
	REC_SIGNAL_WAIT=1 "$@" >run.out 2>run.err &
	pid=$!
	for r in 15 35 55; do
		n=0
		until grep -q -x "round $r" run.out; do
			n=$((n + 1)); [ $n -lt 1200 ] || break
			sleep 0.05
		done
		kill -USR2 "$(sed -n "s/^ready //p" run.out)"
		touch go.$r
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
	grep "^@ .* + 0x[0-9a-f]* 0x" sig.log | sed "s/.* 0x//" | while read h; do
		echo $(( 0x$h - 1000 ))
	done >rounds &&
	# the first span covers rounds 16-35, the second 56 to the end
	seq 16 35 >expect && seq 56 79 >>expect &&
	test_cmp expect rounds
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
