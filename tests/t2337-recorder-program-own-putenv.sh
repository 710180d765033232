#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2337-recorder-program-own-putenv.sh -- the recorder marks the
# environment as a running session (MTREC_SESSION) from its constructor
# with libc's putenv, never with one the program defines: bash's own
# putenv makes shell variables, and, called before bash's main with its
# allocations hidden from the trace, made bash's variable table look
# lost at exit under MTREC_REACH=1 (79 blocks definitely lost, 376
# indirectly, where valgrind says all still reachable).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-ownputenv"

test_expect_success 'alone: its putenv never runs before main, no session' '
	"$PROG" >out &&
	printf "before 0\nsession no\n" >expect &&
	test_cmp expect out
'

test_expect_success 'under the recorder: still never before main, and the session is in libc'"'"'s environment' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" "$PROG" >out &&
	printf "before 0\nsession yes\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a program run by a traced bash is recorded in a file of its own (the session passed on)' '
	rm -f b.log* &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/b.log" bash -c "ls / >/dev/null; true" &&
	ls b.log.* >children &&
	test -s children &&
	grep -l "^# exe .*/ls\$" $(cat children)
'

test_expect_success 'bash under MTREC_REACH=1: nothing lost (valgrind says all still reachable)' '
	printf "x=1\necho \$x\n" >s.sh &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/r.log" MTREC_REACH=1 bash s.sh >out &&
	test "$(cat out)" = 1 &&
	grep "^# reach end " r.log &&
	! grep "^# reach 0x[0-9a-f]* \(definite\|indirect\)\$" r.log
'

test_done
