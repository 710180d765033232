#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2310-recorder-resident-set.sh -- the trace the recorder writes does not
# stay in the program's resident set (issue 12.4): people watch VmRSS for a
# leak, and ovs-vswitchd read 403 MB traced against 15 MB native.  Over a
# trace of more than 1 GB, the traced program's peak RSS stays within a
# bound that does not grow with the trace (about 2 MiB per writing thread,
# the size of the file's folios), and the trace is whole.  Crash safety
# with the pages shed is t2110's "written pages shed" test.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/bench-alloc"

if ! test_have_prereq TIME; then
	test_skip 'the resident set over a 1 GB trace' 'needs /usr/bin/time (package time)'
	test_done; exit
fi

# maxrss_kb CMD...: the peak resident set of CMD, in KiB.
maxrss_kb() {
	/usr/bin/time -f "%M" -o rss.out "$@" >/dev/null &&
	tail -n 1 rss.out
}

# trace_bytes N: the size of the trace of 4 threads of N iterations.
trace_bytes() {
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/probe.log" "$PROG" 4 "$1" &&
	stat -c %s probe.log && rm -f probe.log
}

# The iterations that make the trace 1.1 GiB: every line names the
# program's path, so the size per event depends on where the tree is (a
# clone at /tmp/c made 1800000 iterations fall short of 1 GiB); measured
# from two small runs, the slope and what does not depend on N.
test_expect_success 'the run that writes 1.1 GiB of trace, from two small ones' '
	s1=$(trace_bytes 20000) && s2=$(trace_bytes 40000) &&
	slope=$(( (s2 - s1) / 20000 )) && fixed=$(( s1 - slope * 20000 )) &&
	n=$(( (1181116006 - fixed) / slope + 1 )) &&
	echo "$slope bytes per iteration (4 threads), $fixed fixed: $n iterations" &&
	test "$slope" -gt 0 && echo "$n" >iterations
'

test_expect_success '4 threads, over 1 GiB of trace: peak RSS within 24 MB of native' '
	n=$(cat iterations) &&
	# The small runs end before the first 100 ms tick of the recorder, the big
	# one pads a chunk of every thread at each tick: when the estimate
	# fell short of 1 GiB, once more with the iterations scaled up.
	for try in 1 2; do
		native=$(maxrss_kb "$PROG" 4 "$n") &&
		traced=$(maxrss_kb env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/big.log" "$PROG" 4 "$n") &&
		size=$(stat -c %s big.log) || exit 1
		test "$size" -gt $((1 << 30)) && break
		n=$(( n * 1181116006 / size + 1 )) && echo "$n" >iterations &&
		echo "trace $size bytes, short of 1 GiB: again with $n iterations" || exit 1
	done &&
	echo "native $native KiB, traced $traced KiB (limit: native + 24576)" &&
	echo "trace $size bytes (must be over $((1 << 30)))" &&
	test "$size" -gt $((1 << 30)) &&
	test $((traced - native)) -lt $((24 << 10))
'

test_expect_success 'the trace is whole: every event of the run is in it' '
	n=$(cat iterations) &&
	test "$(grep -c "^@ .* + " big.log)" -ge $((4 * n)) &&
	"$MTANALYZE" big.log >report &&
	grep -qx "No memory leaks." report
'

test_done
