#!/bin/sh
# t2500-recorder-unwind.sh -- the call-stack walker (recorder/rec-unwind.c).
#
# Builds tests/unit/unwind-test with $CC (and a clang-compiled variant of
# the call chains when $CLANG is set): every walk must equal glibc's
# backtrace() on the same chain -- frames with and without frame pointers,
# -O0/-O2/-Os, alloca, a shared library, recursion, threads, signal
# handlers -- and odd frames must end the walk without a crash.
. "$(dirname "$0")/lib.sh"

test_expect_success 'build the unwinder unit test with -Wall -Wextra -Werror' '
	CC="$CC" CLANG="${CLANG:-}" sh "$TOP/tests/unit/build-unwind-test.sh" "$OUT/build"
'

test_expect_success 'walks equal backtrace() on every call chain' '
	"$OUT/build/unwind-test" >out 2>&1 || { cat out; false; }
	tail -n 1 out | grep -x PASS
'

test_expect_success 'cached walks are faster than backtrace()' '
	"$OUT/build/unwind-test" --bench >bench 2>&1 || { cat bench; false; }
	cat bench
	ratio=$(sed -n "s/^# bench: backtrace\/hit ratio \([0-9]*\).*/\1/p" bench)
	test "$ratio" -ge 3
'

test_done
