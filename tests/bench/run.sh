#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/run.sh -- "make bench": the recorder against glibc's mtrace and
# heaptrack on one multi-threaded workload, in one run, as medians and
# ratios; then the analyzer's benchmark when it is there.
#
# BENCH_RUNS (5) runs of each; the machine is shared, so medians.  Each
# trace goes to a fresh file that is removed afterwards, with a sync before
# each timed run so that one run's write-back does not land on the next.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
THREADS=${BENCH_THREADS:-2}
ITER=${BENCH_ITER:-1000000}
PROG="$TOP/tests/helper/bench-alloc"
LIB="$TOP/recorder/libmtrec.so"
GLIBC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
DIR=${BENCH_DIR:-$TOP/tests/out/bench}
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1

now_ms() { date +%s%N | cut -c1-13; }

# time_cmd NAME CMD...: median wall time in ms of RUNS runs, into $median.
time_cmd() {
	name=$1; shift
	: >"$DIR/times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		rm -f "$DIR"/trace* "$DIR"/heaptrack*
		sync
		t0=$(now_ms)
		"$@" >/dev/null 2>"$DIR/stderr" || { echo "bench: '$name' failed:"; cat "$DIR/stderr"; return 1; }
		t1=$(now_ms)
		echo $((t1 - t0)) >>"$DIR/times"
		i=$((i + 1))
	done
	median=$(sort -n "$DIR/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	lines=$(cat "$DIR"/trace* 2>/dev/null | wc -l)
	printf '%-28s %8s ms   (runs: %s)%s\n' "$name" "$median" "$(sort -n "$DIR/times" | tr '\n' ' ')" \
		"$( [ "$lines" -gt 0 ] && echo "  $lines lines")"
	rm -f "$DIR"/trace* "$DIR"/heaptrack*
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

echo "recorder benchmark: $THREADS threads x $ITER iterations (about $((THREADS * ITER * 2)) events), median of $RUNS"
time_cmd "native" "$PROG" "$THREADS" "$ITER" || exit 1; native=$median
time_cmd "libmtrec depth 1" env LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" "$PROG" "$THREADS" "$ITER" || exit 1; d1=$median
time_cmd "libmtrec depth 16" env MTREC_DEPTH=16 LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" "$PROG" "$THREADS" "$ITER" || exit 1; d16=$median
time_cmd "glibc mtrace" env LD_PRELOAD="$GLIBC_DEBUG" MALLOC_TRACE="$DIR/trace.log" "$PROG" "$THREADS" "$ITER" || exit 1; glibc=$median
heap=0
if [ -x /usr/bin/heaptrack ]; then
	time_cmd "heaptrack" /usr/bin/heaptrack -o "$DIR/heaptrack" "$PROG" "$THREADS" "$ITER" || exit 1; heap=$median
else
	echo "heaptrack                    not installed (apt-get install heaptrack)"
fi
echo
echo "ratios (higher is better for mtrec):"
echo "  glibc mtrace / libmtrec depth 1:  $(ratio "$glibc" "$d1")   (target >= 8x)"
[ "$heap" -gt 0 ] && echo "  heaptrack / libmtrec depth 1:     $(ratio "$heap" "$d1")   (target >= 4x)"
[ "$heap" -gt 0 ] && echo "  heaptrack / libmtrec depth 16:    $(ratio "$heap" "$d16")   (target > 1x)"
echo "  libmtrec depth 1 / native:        $(ratio "$d1" "$native")"
rm -rf "$DIR"

echo
sh "$TOP/tests/bench/dlopen.sh"
sh "$TOP/tests/bench/track.sh"

for part in analyzer db; do
	if [ -f "$TOP/tests/bench/$part.sh" ] && [ -x "$TOP/analyzer/mtanalyze" ]; then
		echo
		sh "$TOP/tests/bench/$part.sh"
	fi
done
