#!/bin/sh
# t2510-recorder-units.sh -- the recorder's layers alone.
#
# Builds tests/unit/chunk-test (the chunk writer, recorder/rec-chunk.c, on
# a real trace file but without the events or process life above it) and
# tables-test (caller strings, interned stacks, loaded objects), with the
# recorder's flags.
. "$(dirname "$0")/lib.sh"

B="$OUT/build"

test_expect_success 'build the unit tests with -Wall -Wextra -Werror' '
	CC="$CC" sh "$TOP/tests/unit/build-units-test.sh" "$B"
'

# unit PROG ARGS: run one driver; its "# ..." lines go to the test's log.
unit() {
	"$B/$1" "$2" >"out-$1" 2>&1 || { cat "out-$1"; return 1; }
	cat "out-$1" &&
	tail -n 1 "out-$1" | grep -qx PASS
}

test_expect_success 'chunk writer: threads, nesting, epochs, parts, the stop, the trim' '
	mkdir -p scratch &&
	unit chunk-test "$OUT/scratch"
'

test_expect_success 'tables: caller strings, stacks, objects and unloads' '
	unit tables-test "$B/libtables-obj.so"
'

test_done
