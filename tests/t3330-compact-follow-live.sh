#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3330-compact-follow-live: on a live run, a part is compacted only once
# it is complete -- the next part exists and the process no longer maps it
# (/proc/PID/maps), or the process has exited; `compact --follow --delete`
# follows the run to its end and leaves TRACE.compact alone, which gives
# the reports of all the parts kept; `mtrec --rotate --compact` does the
# same beside the program, and says so.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-compact.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'compact' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi

# mapped PID FILE: process PID maps FILE (by device and inode)
mapped() {
	ino=$(stat -c %i "$2") &&
	awk -v ino="$ino" '$5 == ino { found = 1 } END { exit !found }' /proc/$1/maps
}

test_expect_success 'a live run: only complete parts are compacted' '
	mkdir live keep &&
	{ record_fixture live/t.log 100000 "$OUT/go" >state & } &&
	while ! grep -q waiting state; do sleep 0.05; done &&
	pid=$(sed -n "s/^# pid \([0-9]*\) .*/\1/p" live/t.log) && kill -0 $pid &&
	test -f live/t.log.part6 &&
	"$MTANALYZE" compact -q live/t.log &&
	# the recorder unmaps the parts it left: those are compacted, no other
	test -f live/t.log.compact &&
	upto=$(sed -n "2s/^# compacted 1 //p" live/t.log.compact) &&
	echo "parts 1 to $upto compacted while the program runs" &&
	test "$upto" -ge 4 &&
	for f in $(parts_of live/t.log 1 $upto); do ! mapped $pid $f || exit 1; done &&
	mapped $pid live/t.log.part$((upto + 1)) &&
	for f in live/t.log*; do ln $f keep/ || exit 1; done
'

test_expect_success '--follow --delete to the end: the reports of all the parts' '
	touch go &&
	"$MTANALYZE" compact -q --follow --delete live/t.log &&
	test "$(ls -A live)" = t.log.compact &&
	last=$(ls keep/t.log.part* | sed "s/.*part//" | sort -n | tail -1) &&
	grep -q "^# compacted 1 $last$" live/t.log.compact &&
	same_analysis "$(parts_of keep/t.log 1 $last)" live/t.log.compact
'

# The steady leak is linear in time while the program keeps its pace (a
# tick every 50 iterations: 2 s); at 100 a tick, a machine loaded to 10 on
# 2 cores left the traced program and its compactor behind the clock late
# in the run, and the leak looked logarithmic.
test_expect_success 'mtrec --rotate --compact: the parts compacted beside the program' '
	mkdir run &&
	"$MTREC" --rotate 1M --compact -d 4 -o run/t.log "$HELPER/ana-compact" 100000 50 2>err &&
	test "$(ls -A run)" = t.log.compact &&
	grep -q "^mtrec: trace written to .run/t.log.compact. (its parts, compacted)$" err &&
	! grep -q "nothing was recorded" err &&
	test_expect_code 1 "$MTANALYZE" --by-site run/t.log.compact >r.out &&
	grep -q "steady_leak.*\[linear\]" r.out
'

test_expect_success 'mtrec --compact needs --rotate, and mtanalyze beside it' '
	test_expect_code 125 "$MTREC" --compact true 2>err &&
	grep -q "needs --rotate" err &&
	cp "$MTREC" ./mtrec-alone &&
	MTREC_LIB=$LIBMTREC ./mtrec-alone --rotate 1M --compact -o alone.log true 2>err &&
	grep -q "mtanalyze is not installed beside mtrec" err
'

test_done
