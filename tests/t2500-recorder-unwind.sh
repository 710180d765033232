#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2500-recorder-unwind.sh -- the call-stack walker (recorder/unwind.c).
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
	{ "$OUT/build/unwind-test" >out 2>&1 || { cat out; false; }; } &&
	tail -n 1 out | grep -x PASS
'

test_expect_success 'cached walks are faster than backtrace()' '
	{ "$OUT/build/unwind-test" --bench >bench 2>&1 || { cat bench; false; }; } &&
	cat bench &&
	ratio=$(sed -n "s/^# bench: backtrace\/hit ratio \([0-9]*\).*/\1/p" bench) &&
	test "$ratio" -ge 3
'

# Inside real programs' malloc and free, walks equal backtrace() too.
preload_check() {
	LD_PRELOAD="$OUT/build/libuwpreload.so" "$@" >/dev/null 2>err || { cat err; return 1; }
	cat err
	grep -q "^unwind-preload: [1-9][0-9]* walks, 0 differ$" err &&
	! grep "^unwind-preload: " err | grep -qv " 0 differ$"
}

test_expect_success 'walks equal backtrace() in malloc of ls, sh and perl' '
	preload_check ls -l / &&
	preload_check sh -c "for i in 1 2 3; do echo \$i; done | sort" &&
	if command -v perl >/dev/null; then
		preload_check perl -e "my %h; \$h{\$_} = [\$_] for 1..2000"
	fi
'

test_done
