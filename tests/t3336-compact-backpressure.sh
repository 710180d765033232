#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3336-compact-backpressure: a program that writes its trace faster than
# the compactor folds it waits for the compactor (share/compact.md,
# "Keeping up"): under `mtrec --rotate --compact`, before part k begins,
# part k-2 is deleted, so that no more than two parts are ever on disk; a
# compactor that never comes costs MTREC_COMPACT_WAIT seconds once, said
# once, and the program runs on; MTREC_COMPACT_WAIT=0 never waits.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-compact.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'compact' 'needs the analyzer and the recorder'
	test_done; exit
fi

# parts DIR: how many parts of DIR/t.log are there now
parts() {
	ls "$1" | awk '/^t\.log(\.part[0-9]+)?$/ { n++ } END { print n + 0 }'
}

# Part sizes are 4 MB (the smallest rotation); bench-alloc, one thread of
# 600,000 iterations, writes 27 parts, each in a few tens of milliseconds,
# where a pass of the compactor takes at least its look every 0.1 s.  One
# thread: the part before last is always unmapped when a part begins (with
# several, a part some thread still writes in is not yet, and adds to the
# two: compact.md).
test_expect_success 'mtrec --compact: never more than two parts on disk' '
	mkdir run &&
	{ while [ ! -f run.done ]; do parts run >>counts; sleep 0.02; done & } &&
	"$MTREC" --rotate 4M --compact -d 4 -o run/t.log "$HELPER/bench-alloc" 1 600000 2>err &&
	touch run.done &&
	wait &&
	most=$(sort -n counts | tail -1) &&
	looks=$(wc -l <counts) &&
	echo "$looks looks, at most $most parts at once" &&
	test "$looks" -ge 20 &&
	test "$(ls -A run)" = t.log.compact &&
	last=$(sed -n "2s/^# compacted 1 //p" run/t.log.compact) &&
	echo "$last parts in all" && test "$last" -ge 10 &&
	test "$most" -le 2 &&
	! grep -q "not waiting" err &&
	"$MTANALYZE" run/t.log.compact >r.out &&
	grep -q "^No memory leaks.$" r.out
'

# alone MTREC_COMPACT_WAIT DIR: ana-compact recorded in parts of 4 MB as
# the process a compactor follows, with no compactor
alone() {
	mkdir "$2" &&
	MTREC_COMPACT_WAIT=$1 MTREC_ROTATE=4M MTREC_DEPTH=4 MALLOC_TRACE="$OUT/$2/t.log" \
		LIBMTREC="$LIBMTREC" HELPER="$HELPER" \
		sh -c 'MTREC_COMPACT_PID=$$ LD_PRELOAD=$LIBMTREC exec "$HELPER/ana-compact" 60000 100000'
}

test_expect_success 'no compactor: one wait of MTREC_COMPACT_WAIT seconds, said once' '
	alone 1 gone 2>err &&
	cat err &&
	test "$(grep -c "the compactor has not taken part [0-9]* of the trace in MTREC_COMPACT_WAIT seconds; not waiting for it any more" err)" = 1 &&
	test "$(parts gone)" -ge 5 &&
	test_expect_code 1 "$MTANALYZE" gone/t.log gone/t.log.part* >/dev/null
'

test_expect_success 'MTREC_COMPACT_WAIT=0: no waiting' '
	alone 0 nowait 2>err &&
	! grep -q "compactor" err &&
	test "$(parts nowait)" -ge 5
'

test_done
