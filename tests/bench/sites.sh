#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/sites.sh -- part of "make bench": the analyzer on a trace of
# BENCH_CALLERS (2,000,000) distinct callers, each a site, a call path
# and a leak (tests/bench/gen-callers.awk): CPU time (user + system) and
# peak resident set of --by-site, --json and --db, one run each (issue
# 30.3: every mode linear in sites, 2 million callers in under 10 s and
# 1 GB).  BENCH_CALLERS=0 skips it.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
N=${BENCH_CALLERS:-2000000}
ANA="$TOP/analyzer/mtanalyze"
DIR=${BENCH_DIR:-$TOP/tests/out/bench}/sites

[ "$N" -gt 0 ] || exit 0
[ -x /usr/bin/time ] || { echo "sites benchmark: needs /usr/bin/time, skipped"; exit 0; }
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
awk -v N="$N" -f "$TOP/tests/bench/gen-callers.awk" >"$DIR/callers.log" || exit 1

echo "analyzer on $N distinct callers ($(wc -c <"$DIR/callers.log") bytes), one run each; $(uptime | sed 's/.*load/load/')"
for mode in --by-site --json --db; do
	set -- "$mode"
	[ "$mode" = --db ] && set -- --db "$DIR/run.db"
	rm -f "$DIR/run.db"
	# exit 1: leaks found, as every caller leaks
	/usr/bin/time -f '%U %S %M' -o "$DIR/time" "$ANA" -q "$@" "$DIR/callers.log" >/dev/null 2>"$DIR/stderr"
	st=$?
	[ $st = 1 ] || { echo "bench: mtanalyze $* exited $st:" >&2; cat "$DIR/stderr" >&2; exit 1; }
	# (time's first line says the exit status)
	tail -n 1 "$DIR/time" | awk -v m="$mode" '{ printf "  %-10s %6.1f s CPU %6d MB peak\n", m, $1 + $2, $3 / 1024 }'
done
echo "  (issue 30: under 10 s and 1 GB each)"
rm -rf "$DIR"
