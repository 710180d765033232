#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/reach.sh -- part of "make bench": what MTREC_REACH costs per
# million live blocks (issue 30.5; share/reach.md, "Cost").  rec-reach
# keeps a million blocks of 32 bytes live (many) or loses half of them
# (lost), recorded with and without MTREC_REACH in interleaved rounds:
# medians of BENCH_RUNS (5) of the CPU time (user + system) and of the
# peak resident set, from /usr/bin/time.  The difference is the table's
# upkeep while the program runs and the scan at its exit.  BENCH_LIB
# measures another build of libmtrec.so.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
N=${BENCH_REACH_BLOCKS:-1000000}
LIB=${BENCH_LIB:-$TOP/recorder/libmtrec.so}
PROG="$TOP/tests/helper/rec-reach"
DIR=${BENCH_DIR:-$TOP/tests/out/bench}/reach

[ -x /usr/bin/time ] || { echo "reach benchmark: needs /usr/bin/time, skipped"; exit 0; }
[ -x "$PROG" ] || { echo "reach benchmark: tests/helper/rec-reach not built, skipped"; exit 0; }
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1

# run NAME REACH MODE: one recorded run; its CPU ms and peak KiB appended
# to DIR/NAME
run() {
	rm -f "$DIR/trace.log"
	if [ "$2" = 1 ]; then
		set -- "$1" env MTREC_REACH=1 "$PROG" "$3" "$N"
	else
		set -- "$1" env -u MTREC_REACH "$PROG" "$3" "$N"
	fi
	name=$1 && shift
	LD_PRELOAD=$LIB MALLOC_TRACE="$DIR/trace.log" /usr/bin/time -f '%U %S %M' -o "$DIR/time" "$@" \
		>/dev/null 2>"$DIR/stderr" || { echo "bench: '$*' failed:" >&2; cat "$DIR/stderr" >&2; return 1; }
	awk '{ printf "%d %d\n", ($1 + $2) * 1000 + 0.5, $3 }' "$DIR/time" >>"$DIR/$name"
}

# median NAME COLUMN
median() {
	cut -d' ' -f"$2" "$DIR/$1" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

r=0
while [ $r -lt "$RUNS" ]; do
	run many.off 0 many && run many.on 1 many && run lost.off 0 lost && run lost.on 1 lost || exit 1
	r=$((r + 1))
done

echo "MTREC_REACH benchmark: $N live blocks of 32 bytes, $RUNS interleaved rounds, medians (CPU time, peak RSS); $(uptime | sed 's/.*load/load/')"
for m in many lost; do
	off=$(median $m.off 1) on=$(median $m.on 1)
	offk=$(median $m.off 2) onk=$(median $m.on 2)
	printf '  %-6s without %5s ms %4s MB, with %5s ms %4s MB: %+5d ms, %+4d MB\n' "$m" \
		"$off" $((offk / 1024)) "$on" $((onk / 1024)) $((on - off)) $(((onk - offk) / 1024))
done
echo "  (issue 30: the scan 3x faster than its +1500 ms and +65 MB for a million blocks)"
rm -rf "$DIR"
