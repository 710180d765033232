#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/bench/compact.sh -- "make bench-compact": bounded disk for a long
# rotated trace (issue 12 item 3, share/compact.md).  Not part of make
# check nor make bench: it writes BENCH_COMPACT_ITER iterations of
# tests/helper/ana-compact (13M: about 5.5 GB of trace with 4-frame
# stacks) three times over, so it needs about 12 GB free in
# BENCH_COMPACT_DIR (default /var/tmp/mtrec-compact-bench), removed at
# the end unless BENCH_KEEP=1.
#
#   whole    mtrec --rotate 256M: the trace kept whole
#   compact  mtrec --rotate 256M --compact: the compactor follows the run
#            and deletes what it folded; the program waits for it at a
#            part's start when two parts are on disk
#   nowait   the same without the waiting (MTREC_COMPACT_WAIT=0): whether
#            the compactor keeps up by itself
#   replay   the whole run's parts handed over one by one (a copy and a
#            rename) to `mtanalyze compact --delete` after each one
#   paced    as compact, the program slowed to about 45 MB of trace a
#            second, a pace the compactor keeps up with
#
# For each: peak disk use of the trace directory (du every 0.5 s) and
# what stays at the end; then the analysis of the whole trace against the
# compacted one: leaks, bad frees, growth classes, identical or not, and
# the wall time of each analysis.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ITER=${BENCH_COMPACT_ITER:-13000000}
DIR=${BENCH_COMPACT_DIR:-/var/tmp/mtrec-compact-bench}
ANA="$TOP/analyzer/mtanalyze"
MTREC="$TOP/recorder/mtrec"
PROG="$TOP/tests/helper/ana-compact"

[ -x "$ANA" ] && [ -x "$MTREC" ] && [ -x "$PROG" ] ||
	{ echo "compact bench: needs analyzer/mtanalyze, recorder/mtrec, tests/helper/ana-compact"; exit 1; }
rm -rf "$DIR" && mkdir -p "$DIR/whole" "$DIR/compact" "$DIR/nowait" "$DIR/replay" || exit 1
df -h "$DIR"

now_ms() { date +%s%N | cut -c1-13; }

# sample_du SUBDIR: the largest 'du' of DIR/SUBDIR, every 0.5 s, into
# DIR/SUBDIR.peak, until DIR/SUBDIR.stop exists
sample_du() {
	peak=0
	while [ ! -f "$DIR/$1.stop" ]; do
		k=$(du -sk "$DIR/$1" 2>/dev/null | cut -f1)
		[ "${k:-0}" -gt $peak ] && peak=$k && echo $peak >"$DIR/$1.peak"
		sleep 0.5
	done
}

# cpu_s FILE: the CPU seconds (user + system) of the children so far,
# from the output of the shell's 'times' in FILE (run in this shell: a
# subshell counts none of them)
cpu_s() {
	tail -1 "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); t += a[1] * 60 + a[2] } printf "%.1f", t }'
}

# measured SUBDIR CMD...: run CMD with du sampled; prints the wall and CPU
# time (the program's and the compactor's), the peak and the end
measured() {
	sub=$1; shift
	echo 0 >"$DIR/$sub.peak"
	sample_du "$sub" &
	sampler=$!
	t0=$(now_ms)
	times >"$DIR/$sub.cpu0"
	"$@" || echo "compact bench: '$*' failed"
	times >"$DIR/$sub.cpu1"
	t1=$(now_ms)
	touch "$DIR/$sub.stop"
	wait $sampler
	end=$(du -sk "$DIR/$sub" | cut -f1)
	cpu=$(awk -v a="$(cpu_s "$DIR/$sub.cpu0")" -v b="$(cpu_s "$DIR/$sub.cpu1")" 'BEGIN { print b - a }')
	printf '%-8s %6d s  CPU %5.1f s  peak disk %8d MB, at the end %8d MB (%s)\n' "$sub" $(((t1 - t0) / 1000)) "$cpu" \
		$(($(cat "$DIR/$sub.peak") / 1024)) $((end / 1024)) "$(ls "$DIR/$sub" | tr '\n' ' ')"
}

replay() {
	n=1
	while :; do
		if [ $n = 1 ]; then f=t.log; else f=t.log.part$n; fi
		[ -f "$DIR/whole/$f" ] || break
		cp "$DIR/whole/$f" "$DIR/replay/.incoming" && mv "$DIR/replay/.incoming" "$DIR/replay/$f" &&
		"$ANA" compact -q --delete "$DIR/replay/t.log" || return 1
		n=$((n + 1))
	done
}

cd "$DIR" || exit 1
measured whole "$MTREC" -q --rotate 256M -d 4 -o "$DIR/whole/t.log" "$PROG" "$ITER" 10000
measured compact "$MTREC" -q --rotate 256M --compact -d 4 -o "$DIR/compact/t.log" "$PROG" "$ITER" 10000
MTREC_COMPACT_WAIT=0 measured nowait "$MTREC" -q --rotate 256M --compact -d 4 -o "$DIR/nowait/t.log" \
	"$PROG" "$ITER" 10000
measured replay replay
# The compactor at a daemon's pace: the same run slowed to about 45 MB of
# trace a second (1 ms asleep every 150 iterations), which a pass keeps up
# with, so that the peak shows what the recorder lets go of.
mkdir -p "$DIR/paced"
measured paced "$MTREC" -q --rotate 256M --compact -d 4 -o "$DIR/paced/t.log" "$PROG" "$ITER" 150
echo "whole trace: $(cat whole/t.log* | wc -l) lines, $(du -sb whole | cut -f1) bytes in $(ls whole | wc -l) parts"

# analyze NAME FILES...: --json into NAME.json, wall time printed
analyze() {
	name=$1; shift
	t0=$(now_ms)
	"$ANA" --json "$@" >"$name.json"
	t1=$(now_ms)
	printf 'analysis of %-28s %6d ms\n' "$name" $((t1 - t0))
}
analyze whole whole/t.log whole/t.log.part*
analyze compact compact/t.log.compact
analyze replay replay/t.log.compact
t0=$(now_ms); "$ANA" whole/t.log whole/t.log.part* >whole.txt; t1=$(now_ms)
echo "script report, whole:     $((t1 - t0)) ms"
t0=$(now_ms); "$ANA" replay/t.log.compact >replay.txt; t1=$(now_ms)
echo "script report, compacted: $((t1 - t0)) ms"
cmp -s whole.txt replay.txt && echo "script reports: identical" || echo "script reports: DIFFER"

python3 - whole.json compact.json replay.json <<'PY'
import json, sys
w, c, r = (json.load(open(f)) for f in sys.argv[1:])
def figures(d):
    return (d['run']['leaked_blocks'], d['run']['leaked_bytes'], d['run']['bad_frees'],
            sorted((s['function'], s['line'], s['growth'], s['leaked_blocks']) for s in d['leak_sites']))
print('whole: %d leaked blocks, %d bytes, %d bad frees; sites %s' % figures(w))
same = lambda a, b: {k: a[k] == b[k] for k in ('leaks', 'bad_frees', 'leak_sites_growth')}
# the replay is the whole run itself: everything must be identical; the
# compact run is another run of the same program (other addresses, other
# thread interleavings): its figures must be
for x in (w, c, r):
    x['leak_sites_growth'] = [(s['function'], s['line'], s['growth'], s['growth_exponent'])
                              for s in x['leak_sites']]
print('compact (another run): same leak and bad free counts, same sites and classes: %s'
      % (figures(w) == figures(c)))
run = [k for k in ('allocations', 'frees', 'bytes_allocated', 'peak_live_bytes', 'peak_line',
                   'temporary_allocations', 'lines', 'events', 'reallocations')
       if w['run'][k] != r['run'][k]]
print('replay (the same run): leaks, bad frees, growth identical: %s; run totals differing: %s'
      % ({k: w[k] == r[k] for k in ('leaks', 'bad_frees', 'leak_sites_growth')}, run or 'none'))
PY
cd / && [ "${BENCH_KEEP:-0}" = 1 ] || rm -rf "$DIR"
