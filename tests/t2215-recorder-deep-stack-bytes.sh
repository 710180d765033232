#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2215-recorder-deep-stack-bytes: a deep stack costs the trace its
# definition once a part, not room for it at every event (issue 30.2).
# Each event used to take room for a whole "# stack" line in its chunk,
# and at depth 64 a chunk held a few events and a tail of filler: the
# trace was 3.3 times that of depth 1 for the same events.  Now bytes per
# event at depth 64 stay within 1.5 times those at depth 1, and every part
# of a rotated trace still defines the stacks its events use.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-deep-stack"
EVENTS=400000

# record DEPTH FILE [ENV...]: the helper's 400k events at DEPTH
record() {
	d_=$1 f_=$2 && shift 2 &&
	env "$@" MTREC_DEPTH="$d_" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$f_" "$PROG" $EVENTS 80
}

# per_event FILE...: bytes per event line of the files
per_event() {
	cat "$@" | awk '{ bytes += length($0) + 1 } /^@ / { n++ } END { printf "%.1f\n", bytes / n }'
}

test_expect_success 'the same events at depth 1 and 64' '
	record 1 d1.log &&
	record 64 d64.log &&
	test "$(grep -c "^@ " d1.log)" -ge $EVENTS &&
	test "$(grep -c "^@ " d64.log)" -ge $EVENTS &&
	grep "^# stack " d64.log | awk "NF >= 2 + 64 { deep++ } END { exit !(deep >= 1) }"
'

test_expect_success 'bytes per event at depth 64 within 1.5x of depth 1' '
	b1=$(per_event d1.log) && b64=$(per_event d64.log) &&
	say "bytes per event: depth 1 $b1, depth 64 $b64" &&
	awk -v a="$b1" -v b="$b64" "BEGIN { exit !(b <= 1.5 * a) }"
'

test_expect_success MTRACE 'the depth 64 trace is whole for /usr/bin/mtrace' '
	mtrace_leaks d64.log 0
'

test_expect_success 'each part of a rotated depth 64 trace defines the stacks it uses' '
	record 64 rot.log MTREC_ROTATE=4M &&
	test -f rot.log.part2 &&
	for f in rot.log rot.log.part*; do
		awk -v f="$f" "/^# stack / { def[\$3] = 1 }
			/^@ .* s=[0-9]+\$/ { id = \$NF; sub(/^s=/, \"\", id); used[id] = 1 }
			END { for (id in used) if (!(id in def)) { print f \": stack \" id \" not defined\"; bad = 1 }
			      exit bad }" "$f" || return 1
	done &&
	test "$(cat rot.log rot.log.part* | grep -c "^@ ")" -ge $EVENTS
'

test_done
