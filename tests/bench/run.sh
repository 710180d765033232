#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/run.sh -- "make bench": the recorder against glibc's mtrace and
# heaptrack on one multi-threaded workload, in one run, as medians and
# ratios; then the analyzer's benchmark when it is there.
#
# BENCH_RUNS (5) rounds; the machine is shared, so each round runs every
# configuration once, one after the other (interleaved: a burst of load
# from other jobs falls on all of them alike), and each figure is the
# median of its rounds, in wall-clock and in CPU time.  Each trace goes
# to a fresh file that is removed afterwards, with a sync before each
# timed run so that one run's write-back does not land on the next.  BENCH_WRITER=0 skips the rounds
# beside a concurrent writer (dd of BENCH_WRITER_MB, 2000, to BENCH_DIR's
# filesystem).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
THREADS=${BENCH_THREADS:-2}
ITER=${BENCH_ITER:-1000000}
PROG="$TOP/tests/helper/bench-alloc"
DEEP="$TOP/tests/helper/rec-deep-stack"
LIB=${BENCH_LIB:-$TOP/recorder/libmtrec.so}
GLIBC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
DIR=${BENCH_DIR:-$TOP/tests/out/bench}
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1

now_ms() { date +%s%N | cut -c1-13; }

# The CPU time of each run too (the program and what it waited for), from
# perf stat's task-clock (to the microsecond) or else /usr/bin/time (to
# 10 ms): on a shared machine the wall-clock time is the other jobs' as
# much as ours.
TIMED=
if perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then
	TIMED=perf
elif [ -x /usr/bin/time ]; then
	TIMED=time
fi
timed() {
	[ -n "$TIMED" ] || { "$@"; return; }
	# they run programs, not the shell function rec
	if [ "$1" = rec ]; then
		shift; d=$1; shift
		set -- env MTREC_DEPTH="$d" LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" "$@"
	fi
	if [ $TIMED = perf ]; then
		perf stat -x, -e task-clock -o "$DIR/cpu.out" "$@" &&
		awk -F, '$3 == "task-clock" { printf "%d\n", $1 + 0.5 }' "$DIR/cpu.out" >"$DIR/cpu"
	else
		/usr/bin/time -f '%U %S' -o "$DIR/cpu.out" "$@" &&
		awk '{ printf "%d\n", ($1 + $2) * 1000 + 0.5 }' "$DIR/cpu.out" >"$DIR/cpu"
	fi
}

# run_once NAME CMD...: one timed run, appended to $DIR/t.NAME (its CPU
# time to $DIR/c.NAME, the trace's bytes per event to $DIR/b.NAME)
run_once() {
	name=$1; shift
	rm -f "$DIR"/trace* "$DIR"/heaptrack*
	sync
	t0=$(now_ms)
	timed "$@" >/dev/null 2>"$DIR/stderr" || { echo "bench: '$name' failed:"; cat "$DIR/stderr"; return 1; }
	t1=$(now_ms)
	echo $((t1 - t0)) >>"$DIR/t.$name"
	[ -z "$TIMED" ] || cat "$DIR/cpu" >>"$DIR/c.$name"
	if [ -f "$DIR/trace.log" ]; then
		cat "$DIR"/trace* | awk '{ b += length($0) + 1 } /^@ / { n++ } END { if (n) printf "%.1f\n", b / n }' \
			>>"$DIR/b.$name"
	fi
	rm -f "$DIR"/trace* "$DIR"/heaptrack*
}

median_of() { sort -n "$1" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# report NAME: its median (into $median, its CPU time's into $cpu) and its runs
report() {
	median=$(median_of "$DIR/t.$1")
	cpu=0
	extra=
	[ -s "$DIR/c.$1" ] && cpu=$(median_of "$DIR/c.$1") && extra="  cpu $cpu ms"
	[ -s "$DIR/b.$1" ] && extra="$extra  $(median_of "$DIR/b.$1") bytes/event"
	printf '%-28s %8s ms   (runs: %s)%s\n' "$1" "$median" "$(tr '\n' ' ' <"$DIR/t.$1")" "$extra"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }
bytes() { median_of "$DIR/b.$1"; }

rec() { d=$1; shift; env MTREC_DEPTH="$d" LD_PRELOAD="$LIB" MALLOC_TRACE="$DIR/trace.log" "$@"; }

HEAP=no
[ -x /usr/bin/heaptrack ] && HEAP=yes
echo "recorder benchmark: $THREADS threads x $ITER iterations (about $((THREADS * ITER * 2)) events), $RUNS interleaved rounds, medians; load: $(uptime | sed 's/.*load/load/')"
r=0
while [ $r -lt "$RUNS" ]; do
	run_once native "$PROG" "$THREADS" "$ITER" || exit 1
	run_once "libmtrec depth 1" rec 1 "$PROG" "$THREADS" "$ITER" || exit 1
	run_once "libmtrec depth 16" rec 16 "$PROG" "$THREADS" "$ITER" || exit 1
	run_once "glibc mtrace" env LD_PRELOAD="$GLIBC_DEBUG" MALLOC_TRACE="$DIR/trace.log" \
		"$PROG" "$THREADS" "$ITER" || exit 1
	[ $HEAP = yes ] && { run_once heaptrack /usr/bin/heaptrack -o "$DIR/heaptrack" "$PROG" "$THREADS" "$ITER" || exit 1; }
	run_once "deep stack native" "$DEEP" 800000 80 || exit 1
	run_once "deep stack depth 1" rec 1 "$DEEP" 800000 80 || exit 1
	run_once "deep stack depth 64" rec 64 "$DEEP" 800000 80 || exit 1
	r=$((r + 1))
done
report native; native=$median; native_cpu=$cpu
report "libmtrec depth 1"; d1=$median; d1_cpu=$cpu
report "libmtrec depth 16"; d16=$median; d16_cpu=$cpu
report "glibc mtrace"; glibc=$median
heap=0
heap_cpu_ratio=
if [ $HEAP = yes ]; then
	report heaptrack; heap=$median
	heap_cpu_ratio=", heaptrack / depth 1 $(ratio "$cpu" "$d1_cpu")"
else
	echo "heaptrack                    not installed (apt-get install heaptrack)"
fi
report "deep stack native"; deep0=$median
report "deep stack depth 1"; deep1=$median
report "deep stack depth 64"; deep64=$median
echo
echo "ratios (issue 30's goals in brackets):"
echo "  libmtrec depth 1 / native:          $(ratio "$d1" "$native")   (<= 3x)"
echo "  libmtrec depth 16 / native:         $(ratio "$d16" "$native")   (<= 5x)"
if [ -n "$TIMED" ]; then
	echo "  in CPU time ($TIMED): depth 1 / native $(ratio "$d1_cpu" "$native_cpu"), depth 16 / native $(ratio "$d16_cpu" "$native_cpu")$heap_cpu_ratio"
fi
echo "  glibc mtrace / libmtrec depth 1:    $(ratio "$glibc" "$d1")   (>= 8x)"
[ "$heap" -gt 0 ] && echo "  heaptrack / libmtrec depth 1:       $(ratio "$heap" "$d1")   (>= 6x)"
[ "$heap" -gt 0 ] && echo "  heaptrack / libmtrec depth 16:      $(ratio "$heap" "$d16")   (> 1x)"
echo "  deep stack: bytes/event depth 64 / depth 1: $(ratio "$(bytes "deep stack depth 64")" "$(bytes "deep stack depth 1")")   (<= 1.5x)"
echo "  deep stack: time depth 64 / depth 1:        $(ratio "$((deep64 - deep0))" "$((deep1 - deep0))")   (<= 4x, the recorder's own time)"

if [ "${BENCH_WRITER:-1}" != 0 ]; then
	# Beside a concurrent writer to the same filesystem: the spread.
	echo
	echo "beside a concurrent writer (dd of ${BENCH_WRITER_MB:-2000} MB to $DIR, conv=fdatasync):"
	r=0
	while [ $r -lt "$RUNS" ]; do
		dd if=/dev/zero of="$DIR/dd.out" bs=1M count="${BENCH_WRITER_MB:-2000}" conv=fdatasync 2>/dev/null &
		ddpid=$!
		sleep 1
		run_once "native, writer" "$PROG" "$THREADS" "$ITER" || exit 1
		run_once "libmtrec depth 1, writer" rec 1 "$PROG" "$THREADS" "$ITER" || exit 1
		wait $ddpid
		rm -f "$DIR/dd.out"
		r=$((r + 1))
	done
	report "native, writer"; wn=$median
	report "libmtrec depth 1, writer"; wd1=$median
	spread=$(sort -n "$DIR/t.libmtrec depth 1, writer" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print hi - lo }')
	echo "  libmtrec depth 1 / native beside the writer: $(ratio "$wd1" "$wn"); spread of depth 1: $spread ms"
fi
rm -rf "$DIR"

echo
sh "$TOP/tests/bench/dlopen.sh"
sh "$TOP/tests/bench/track.sh"
echo
sh "$TOP/tests/bench/reach.sh"

for part in analyzer db sites; do
	if [ -f "$TOP/tests/bench/$part.sh" ] && [ -x "$TOP/analyzer/mtanalyze" ]; then
		echo
		sh "$TOP/tests/bench/$part.sh"
	fi
done
