#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1040-analyzer-units.sh -- the analyzer's layers alone: the trace reader
# (tests/unit/reader-test.c, linked with analyzer/trace/ only) and the
# growth rules (tests/unit/growth-test.c, linked with growth.o only),
# built by `make helpers` (Makefile.in, ANA_UNITS).  Each prints "# ..."
# lines and ends with PASS or FAIL N.
. "$(dirname "$0")/lib.sh"

if [ "$BUILD_ANALYZER" != yes ]; then
	test_skip 'the analyzer units' 'the analyzer was not built (./configure --disable-analyzer)'
	test_done; exit
fi
U="$TOP/tests/unit"

# unit PROG ARGS...: run one driver; its "# ..." lines go to the test's log.
unit() {
	prog=$1 && shift &&
	"$U/$prog" "$@" >"out-$prog" 2>&1 || { cat "out-$prog"; return 1; }
	cat "out-$prog" &&
	tail -n 1 "out-$prog" | grep -qx PASS
}

test_expect_success 'reader: each kind of line classified, two parts read from memory' '
	unit reader-test
'

test_expect_success 'reader: the same parts read from files, one gzip-compressed' '
	"$U/reader-test" --write part1 part2.log &&
	gzip part1 &&
	unit reader-test part1.gz part2.log
'

test_expect_success 'growth: each rule of share/growth.md, the names, --growth' '
	unit growth-test
'

test_done
