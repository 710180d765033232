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

test_expect_success '4 threads, 1 GB of trace: peak RSS within 24 MB of native' '
	native=$(maxrss_kb "$PROG" 4 1800000) &&
	traced=$(maxrss_kb env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/big.log" "$PROG" 4 1800000) &&
	size=$(stat -c %s big.log) &&
	echo "native $native KiB, traced $traced KiB, trace $size bytes" &&
	test "$size" -gt $((1 << 30)) &&
	test $((traced - native)) -lt $((24 << 10))
'

test_expect_success 'the trace is whole: every event of the run is in it' '
	test "$(grep -c "^@ .* + " big.log)" -ge $((4 * 1800000)) &&
	"$MTANALYZE" big.log >report &&
	grep -qx "No memory leaks." report
'

test_done
