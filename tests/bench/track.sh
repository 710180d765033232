#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/track.sh -- part of "make bench": what MTREC_TRACK costs
# (issue 10.7).  Per call: rec-pool's threads get and put pool objects
# (tests/helper/librec-pool.so), 1 thread x ROUNDS, under the recorder
# untracked and tracked; the difference per tracked call (2 per round).
# Start-up: rec-dlopen-many loading 200 plugins with 3 tracked names to
# look up in every new object, against the same run untracked.  Medians of
# BENCH_RUNS (5), wall time.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
ROUNDS=${BENCH_TRACK_ROUNDS:-2000000}
N=${BENCH_PLUGINS:-200}
LIB="$TOP/recorder/libmtrec.so"
DIR=${BENCH_DIR:-$TOP/tests/out/bench}/track
SPEC='pool_get:alloc:1:pool,pool_put:free:1:pool'
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1

# median_ns CMD...: median wall time of CMD in ns over RUNS runs.
median_ns() {
	: >"$DIR/times"
	r=0
	while [ $r -lt "$RUNS" ]; do
		rm -f "$DIR/trace.log"*
		t0=$(date +%s%N)
		"$@" >/dev/null 2>"$DIR/stderr" || { echo "bench: '$*' failed:" >&2; cat "$DIR/stderr" >&2; return 1; }
		echo $(($(date +%s%N) - t0)) >>"$DIR/times"
		r=$((r + 1))
	done
	sort -n "$DIR/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

echo "MTREC_TRACK benchmark: median of $RUNS"
plain=$(median_ns env LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" "$TOP/tests/helper/rec-pool" 1 "$ROUNDS") || exit 1
tracked=$(median_ns env MTREC_TRACK="$SPEC" LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" \
	"$TOP/tests/helper/rec-pool" 1 "$ROUNDS") || exit 1
printf '%-44s %8.1f ns\n' "untracked pool_get+pool_put, per call" "$(echo "$plain / (2 * $ROUNDS)" | bc -l)"
printf '%-44s %8.1f ns\n' "tracked pool_get+pool_put, per call" "$(echo "$tracked / (2 * $ROUNDS)" | bc -l)"
printf '%-44s %8.1f ns\n' "cost of tracking, per call" "$(echo "($tracked - $plain) / (2 * $ROUNDS)" | bc -l)"

i=0
while [ $i -lt "$N" ]; do
	cp "$TOP/tests/helper/librec-plug.so" "$DIR/libplug-$i.so" || exit 1
	i=$((i + 1))
done
base=$(median_ns env LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" \
	"$TOP/tests/helper/rec-dlopen-many" "$DIR" "$N") || exit 1
withtrack=$(median_ns env MTREC_TRACK="$SPEC,plug_missing:free" LD_PRELOAD="$LIB" \
	MALLOC_TRACE="$DIR/trace.log" "$TOP/tests/helper/rec-dlopen-many" "$DIR" "$N") || exit 1
printf '%-44s %8.2f ms\n' "$N plugins loaded, untracked" "$(echo "$base / 1000000" | bc -l)"
printf '%-44s %8.2f ms\n' "$N plugins loaded, 3 tracked names" "$(echo "$withtrack / 1000000" | bc -l)"
rm -rf "$DIR"
