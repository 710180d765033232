#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/dlopen.sh -- part of "make bench": what redirecting the call
# slots of new objects costs (issue 10.7).  A program loads 200 copies of
# a small plugin, finds and calls one function in each; the time of that
# loop, as the fixture measures it, median of BENCH_RUNS (5), natively,
# under the recorder with MTREC_PATCH=0 and with it (the default), with
# RTLD_LOCAL and with RTLD_DEEPBIND (where the slots really are rewritten).
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
RUNS=${BENCH_RUNS:-5}
N=${BENCH_PLUGINS:-200}
PROG="$TOP/tests/helper/rec-dlopen-many"
LIB="$TOP/recorder/libmtrec.so"
DIR=${BENCH_DIR:-$TOP/tests/out/bench}/dlopen
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
i=0
while [ $i -lt "$N" ]; do
	cp "$TOP/tests/helper/librec-plug.so" "$DIR/libplug-$i.so" || exit 1
	i=$((i + 1))
done

# load NAME ARGS...: median of the fixture's own figure over RUNS runs.
load() {
	name=$1; shift
	: >"$DIR/times"
	r=0
	while [ $r -lt "$RUNS" ]; do
		rm -f "$DIR/trace.log"
		"$@" >"$DIR/out" 2>"$DIR/stderr" || { echo "bench: '$name' failed:"; cat "$DIR/stderr"; return 1; }
		sed -n 's/^loaded [0-9]* in \([0-9.]*\) ms$/\1/p' "$DIR/out" >>"$DIR/times"
		r=$((r + 1))
	done
	median=$(sort -n "$DIR/times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	printf '%-34s %9s ms   (min %s)\n' "$name" "$median" "$(sort -n "$DIR/times" | head -1)"
}

echo "dlopen benchmark: $N plugins loaded, looked up and called, median of $RUNS"
for how in local deepbind; do
	load "native, $how" "$PROG" "$DIR" "$N" "$how" || exit 1
	load "libmtrec MTREC_PATCH=0, $how" env MTREC_PATCH=0 LD_PRELOAD="$LIB" \
		MALLOC_TRACE="$DIR/trace.log" "$PROG" "$DIR" "$N" "$how" || exit 1
	load "libmtrec (patching), $how" env LD_PRELOAD="$LIB" \
		MALLOC_TRACE="$DIR/trace.log" "$PROG" "$DIR" "$N" "$how" || exit 1
done
rm -rf "$DIR"
