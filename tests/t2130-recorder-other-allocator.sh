#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2130-recorder-other-allocator.sh -- a program that runs on another
# malloc (jemalloc, preloaded after the recorder) is traced too: calls are
# forwarded to the next allocator in the chain, and the trace is as
# consistent as on glibc's malloc.
#
# Fixture: tests/helper/rec-handoff.c (threads hand blocks to one another;
# the main thread leaks LEAKS blocks of 4242 bytes).
. "$(dirname "$0")/lib.sh"

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

# check FILE LEAKS: mtrace finds no free of memory never allocated, no
# duplicate, exactly LEAKS blocks of 4242 (0x1092) bytes not freed, and any
# other leak was made by libstdc++ (jemalloc's dependency keeps its
# exception pool for the life of the process).
check() {
	mtrace_ok "$1" &&
	test $mtrace_rc_ -eq 1 &&
	n=$(grep -c "^0x[0-9a-f]* *0x1092 " "mt_$1" || true) &&
	{ [ "$n" -eq "$2" ] || { cat "mt_$1"; echo "$n leaks of 4242 bytes, expected $2"; false; }; } &&
	grep "^0x" "mt_$1" | grep -v "^0x[0-9a-f]* *0x1092 " | while read -r addr size at caller; do
		a=$(printf "%#x" "$addr")
		grep -a " + $a $size\$" "$1" | grep "libstdc++" >/dev/null ||
			{ echo "unexpected leak $addr $size"; grep -a " $a" "$1"; exit 1; }
	done
}

if [ ! -r "$JEMALLOC" ]; then
	test_skip 'jemalloc: the trace of 2 threads is consistent' "$JEMALLOC is not installed"
	test_skip 'jemalloc: 4 threads, 400000 events' "$JEMALLOC is not installed"
	test_done
	exit $?
fi

test_expect_success 'jemalloc really serves the traced program' '
	LD_PRELOAD="$LIBMTREC $JEMALLOC" MALLOC_TRACE=stats.log MALLOC_CONF=stats_print:true \
		"$HELPER/rec-handoff" 2 20000 5 >out 2>err &&
	grep "Begin jemalloc statistics" err &&
	test "$(strip_ext stats.log | grep -c " + ")" -gt 10000
'

test_expect_success 'jemalloc: the trace of 2 threads is consistent, exactly the 5 leaks made' '
	LD_PRELOAD="$LIBMTREC $JEMALLOC" MALLOC_TRACE=two.log "$HELPER/rec-handoff" 2 100000 5 2>err &&
	test ! -s err &&
	grep -x "= Start" two.log && tail -n 1 two.log | grep -x "= End" &&
	test "$(strip_ext two.log | grep -c "^@ [^ ]*rec-handoff[^ ]* [-+<>] ")" -gt 100000 &&
	check two.log 5
'

test_expect_success 'jemalloc: 4 threads, 400000 events, consistent' '
	LD_PRELOAD="$LIBMTREC $JEMALLOC" MALLOC_TRACE=four.log "$HELPER/rec-handoff" 4 100000 3 2>err &&
	test ! -s err &&
	check four.log 3
'

test_expect_success 'the same program on glibc malloc gives the same leaks (reference)' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=glibc.log "$HELPER/rec-handoff" 2 100000 5 2>err &&
	check glibc.log 5 &&
	test "$(grep -c "^0x" mt_glibc.log)" -eq 5
'

test_done
