#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/db.sh -- loading the analyzer's bench trace (about 4.5M lines
# written by glibc's libc_malloc_debug.so from tests/bench/gen-ana-trace.c)
# into a new SQLite database with `mtanalyze --db`, against
# /usr/bin/mtrace printing its report on the same trace: medians of
# BENCH_RUNS runs, interleaved, and the ratio (target: load >= 3x faster).
# Also the cost of --all-events (time and database size), for the record.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
EVENTS=${BENCH_ANA_EVENTS:-4500000}
CC=${CC:-cc}
ANA="$TOP/analyzer/mtanalyze"
GLIBC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
DIR=${BENCH_DB_DIR:-${TMPDIR:-/tmp}/mtanalyze-db-bench.$$}

[ -x "$ANA" ] || { echo "db bench: analyzer/mtanalyze not built, skipped"; exit 0; }
[ -x /usr/bin/mtrace ] && [ -f "$GLIBC_DEBUG" ] ||
	{ echo "db bench: needs /usr/bin/mtrace and $GLIBC_DEBUG, skipped"; exit 0; }
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR" || exit 1
trap 'cd / && rm -rf "$DIR"' EXIT

$CC -O1 -g -o gen "$TOP/tests/bench/gen-ana-trace.c" || exit 1
LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=long.log ./gen "$EVENTS" || exit 1

now_ms() { date +%s%N | cut -c1-13; }

# one_ms CMD...: wall time of one run in ms (output discarded)
one_ms() {
	t0=$(now_ms); "$@" >/dev/null 2>&1; t1=$(now_ms)
	echo $((t1 - t0))
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# A failed load must not pass for a fast one.
rm -f check.db
"$ANA" --db check.db ./gen long.log >/dev/null
[ "$(sqlite3 check.db 'SELECT count(*) FROM runs' 2>/dev/null || echo 1)" = 1 ] ||
	{ echo "db bench: the load failed"; exit 1; }

: >load.times; : >perl.times
i=0
while [ $i -lt "$RUNS" ]; do
	rm -f new.db
	one_ms "$ANA" --db new.db ./gen long.log >>load.times
	one_ms /usr/bin/mtrace ./gen long.log >>perl.times
	i=$((i + 1))
done
load=$(median <load.times)
perl=$(median <perl.times)
rm -f all.db
all=$(one_ms "$ANA" --db all.db --all-events ./gen long.log)
all_size=$(du -k all.db | cut -f1)
agg_size=$(du -k new.db | cut -f1)

echo "db load: trace of $(wc -l <long.log) lines, $(wc -c <long.log) bytes"
printf '  %-34s %8s ms\n' "/usr/bin/mtrace report (median)" "$perl"
printf '  %-34s %8s ms   (%s KiB database)\n' "mtanalyze --db new.db (median)" "$load" "$agg_size"
awk -v p="$perl" -v a="$load" 'BEGIN { printf "  %-34s %8.1fx faster (target >= 3x)\n", "ratio", p / (a > 0 ? a : 1) }'
printf '  %-34s %8s ms   (%s KiB database)\n' "mtanalyze --db --all-events" "$all" "$all_size"
