#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7001-growth-plateau: leaks that stopped growing while the program went
# on are bounded, short runs are judged on the recorder's clock, and the
# class of a site is the same in every run of the same program (issue 26;
# share/growth.md).  tests/helper/ana-plateau.c makes, three runs each
# under the real recorder: a capped cache that goes on replacing entries
# at random once full (GlusterFS's io-stats), a 64-entry LRU cache over an
# 80 ms run, a 1.5 s run with a shutdown burst, 500 blocks flat for over
# 80% of the run (io-stats), a cache that saturates at 1,024 (fuse.so's),
# per-client state arriving at random moments -- and beside all but the
# LRU cache a steady leak, which
# must be linear every time; and a leak per request whose requests come
# ever slower, linear too.  Healthy runs (no steady leak) pass the
# --growth linear,exponential gate.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'growth plateau' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
APP="$HELPER/ana-plateau"

# classes FILE: "function class" of each leaking site, by function
classes() {
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 "$1" >"$1.sites" &&
	sed -n 's/^ *[0-9][0-9]* *[0-9][0-9]*  \([a-z_]*\) at .*  \[\([a-z]*\)\]$/\1 \2/p' "$1.sites" | sort
}

# runs SHAPE EXPECTED: three runs of SHAPE, each with the classes EXPECTED
# ("function class" lines) on a time axis
runs() {
	printf '%s\n' "$2" >expect.$1 &&
	for i in 1 2 3; do
		"$MTREC" -o $1$i.log --depth 8 "$APP" $1 2>/dev/null &&
		classes $1$i.log >actual.$1$i &&
		test_cmp expect.$1 actual.$1$i || return 1
		test_expect_code 1 "$MTANALYZE" --json $1$i.log >$1$i.json &&
		test "$(py "d[\"run\"][\"timeline\"][\"axis\"]" $1$i.json)" = time || return 1
	done
}

test_expect_success 'capped cache that replaces entries once full: bounded, beside a linear leak (3 runs)' '
	runs capped "capped_entry bounded
steady_leak linear"
'

test_expect_success 'LRU cache of 64 entries over an 80 ms run: bounded (3 runs)' '
	runs lru "lru_insert bounded"
'

test_expect_success 'a 1.5 s run with a shutdown burst: constant, beside a linear leak (3 runs)' '
	runs shutdown "rehash constant
steady_leak linear"
'

test_expect_success '500 blocks flat for over 80% of the run: bounded, beside a linear leak (3 runs)' '
	runs flat "flat_block bounded
steady_leak linear"
'

test_expect_success 'a cache that saturates at 1,024 entries: bounded, beside a linear leak (3 runs)' '
	runs saturate "saturate_entry bounded
steady_leak linear"
'

test_expect_success 'a leak per request, the requests ever slower: linear (3 runs)' '
	runs slowing "request_leak linear"
'

test_expect_success 'per-client state arriving at random moments: bounded, beside a linear leak (3 runs)' '
	runs clients "client_state bounded
steady_leak linear"
'

# The recorder's clock: a "# time" line before "= Start" and before
# "= End" (the 80 ms run has them), and about one every 100 ms while
# events come (the 1.5 s run allocates every 10 ms): at least one every
# 250 ms on average, which a loaded machine keeps too.
test_expect_success 'the recorder writes its clock at start, at exit, and while events come' '
	for f in lru1 shutdown1; do
		grep "^# time\|^= " $f.log >clock.$f &&
		grep -A1 "^# time" clock.$f | grep -q "^= Start" &&
		grep -A1 "^# time" clock.$f | grep -q "^= End" || exit 1
	done &&
	n=$(grep -c "^# time" shutdown1.log) &&
	last=$(grep "^# time" shutdown1.log | tail -1 | cut -d" " -f3) &&
	test "$n" -ge "$((last / 250000000))" &&
	test "$n" -ge 6
'

test_expect_success 'healthy runs pass the linear,exponential gate; the steady leak alone fails it' '
	for s in capped lru shutdown flat saturate clients; do
		"$MTREC" -o healthy-$s.log --depth 8 "$APP" $s no-steady 2>/dev/null &&
		"$MTANALYZE" --growth linear,exponential healthy-$s.log >gate.$s &&
		grep -q "^No leaks that grow as linear, exponential" gate.$s || exit 1
	done &&
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential capped1.log >gate.real &&
	grep -q "^Only the leaks that grow as linear, exponential: 1 of the 2 sites" gate.real &&
	grep -q "steady_leak at .*\[linear\]" gate.real &&
	test_expect_code 1 "$MTANALYZE" --growth bounded capped1.log >gate.bounded &&
	grep -q "capped_entry at .*\[bounded\]" gate.bounded
'

test_done
