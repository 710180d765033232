#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2510-recorder-units.sh -- the recorder's layers alone, and realloc's
# held place.
#
# Builds tests/unit/chunk-test (the chunk writer, recorder/chunk.c, on
# a real trace file but without the events or process life above it) and
# tables-test (caller strings, interned stacks, loaded objects), with the
# recorder's flags.  Then the realloc stress: libturn.so, an allocator
# preloaded after libmtrec.so, hands the block realloc released to another
# thread, which marks the trace and mallocs it, before realloc returns;
# meanwhile realloc's thread may use up its chunk (mallocs inside realloc,
# a signal handler that allocates and marks).  The trace must still say
# "< old" before the other thread's "+ old", every round.
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

# In file order, no address is allocated twice or freed while not live.
cat >order.awk <<'AWK'
$1 == "@" && ($3 == "+" || $3 == ">") && $4 != "(nil)" {
	if ($4 in live) { bad++; print "line " NR ", allocated twice: " $0 }
	live[$4] = 1
}
$1 == "@" && ($3 == "-" || $3 == "<") {
	if (!($4 in live)) { bad++; print "line " NR ", not allocated: " $0 }
	delete live[$4]
}
END { exit bad > 0 }
AWK

# turn NAME ROUNDS INNER [signal]: the stress, checked.
turn() {
	name=$1 && shift &&
	LD_PRELOAD="$LIBMTREC $B/libturn.so" MALLOC_TRACE="$OUT/$name.log" \
		"$B/realloc-turn" "$@" >"$name.out" &&
	cat "$name.out" &&
	awk -f order.awk "$name.log" >"$name.bad" || { head -n 5 "$name.bad"; return 1; }
}

test_expect_success 'realloc: another thread marks and takes the block meanwhile' '
	turn epoch 300 0
'

test_expect_success 'realloc: its chunk used up by mallocs inside realloc' '
	turn inner 300 40
'

test_expect_success 'realloc: a signal handler allocates and marks inside realloc' '
	turn signal 300 0 signal &&
	turn both 300 40 signal
'

test_done
