#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7002-recorder-clock: a trace of ours has a time axis -- a "# time" line
# at the start, at exit, and at least every 100 ms while events come
# (issue 26; share/growth.md) -- in a program whose only allocating
# thread is not its first, in one that blocks every signal, and in one
# whose allocations come slowly after a quick burst (a daemon's start-up,
# then its idle loop), and in a forked child that execs at once (no exit
# of ours).  tests/helper/rec-clock.c makes them: a malloc of 41 bytes
# every 20 ms for 2 s, or the child's 10.
. "$(dirname "$0")/lib.sh"

if [ ! -f "$LIBMTREC" ]; then
	test_skip 'recorder clock' 'needs the recorder'
	test_done; exit
fi
APP="$HELPER/rec-clock"

# slow_gaps FILE: for each two "# time" lines in a row in the slow phase
# (from its first 41-byte block on), the 41-byte blocks allocated between
# them.  A "# time" line is due 100 ms after the one before and written at
# the next event once some thread has looked at the clock: 100 ms holds 5
# blocks of the slow phase (fewer when a loaded machine stretches its
# sleeps), and a look comes within 16 calls after a burst
# (recorder/life.c): so 25 at most for the first, 10 for the others.  A
# trace dated only when a thread's chunk of 2 KB fills has about 26 in
# each.
slow_gaps() {
	awk '/ 0x29$/ { slow = 1 }
	     slow && /^# time / { if (seen) print n; seen = 1; n = 0; next }
	     / 0x29$/ { n++ }' "$1"
}

for mode in burst thread sigblock; do
	test_expect_success "$mode: a \"# time\" line at start, at exit, and every 100 ms of the slow phase" '
		"$MTREC" -o '$mode'.log "$APP" '$mode' 2>/dev/null &&
		grep -A1 "^# time" '$mode'.log | grep -q "^= Start" &&
		grep -A1 "^# time" '$mode'.log | grep -q "^= End" &&
		slow_gaps '$mode'.log >gaps.'$mode' &&
		test "$(wc -l <gaps.'$mode')" -ge 5 &&
		awk "NR == 1 && \$1 > 25 || NR > 1 && \$1 > 10 { bad = 1 } END { exit bad }" gaps.'$mode' &&
		n=$(grep -c "^# time" '$mode'.log) &&
		last=$(grep "^# time" '$mode'.log | tail -1 | cut -d" " -f3) &&
		test "$n" -ge "$((last / 250000000))"
	'
done

# A forked child that execs at once ends without our exit code: the
# clock is written before its "# exec" line, so its trace has two.
test_expect_success 'a forked child that execs within 100 ms: a "# time" at its start and before its exec' '
	"$MTREC" -o fe.%p.log "$APP" forkexec 2>/dev/null &&
	child=$(grep -l "^# exec /bin/true" fe.*.log) &&
	test "$(echo "$child" | wc -l)" = 1 &&
	test "$(grep -c "^# time" $child)" -ge 2 &&
	grep -B1 "^# exec /bin/true" $child | head -1 | grep -q "^# time " &&
	grep -A1 "^# time" $child | grep -q "^= Start"
'

test_done
