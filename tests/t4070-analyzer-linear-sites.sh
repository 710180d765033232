#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4070-analyzer-linear-sites: every report by call site costs time in
# proportion to the sites and paths of the run, not their square (issue
# 30.3: --json scanned every path for each site, 100k leak sites took 275
# s).  Four times the sites must cost about four times the CPU, where a
# quadratic scan costs sixteen: the bound (9x) is far from both, and CPU
# time (user + system, the smaller of two runs) does not count the time
# other jobs on the machine hold the cores.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! test_have_prereq TIME || ! test_have_prereq SQLITE3; then
	test_skip 'reports linear in the sites' 'needs the analyzer, /usr/bin/time and sqlite3'
	test_done; exit
fi


SMALL=8000
BIG=32000
test_expect_success 'traces of 8k and 32k leak sites' '
	gen_callers $SMALL >small.log &&
	gen_callers $BIG >big.log &&
	test_expect_code 1 "$MTANALYZE" -q --by-site small.log >by-site &&
	grep -q "^Memory not freed, by call site: $SMALL blocks, .* $SMALL sites" by-site
'

# cpu ARGS...: the smaller CPU time in seconds of two runs of mtanalyze
cpu() {
	best= &&
	for run in 1 2; do
		rm -f out.db &&
		st=0 && /usr/bin/time -o t -f "%U %S" "$MTANALYZE" -q "$@" >/dev/null 2>err || st=$? &&
		test "$st" -eq 1 || { cat err; return 1; }
		s=$(tail -n 1 t | awk "{ print \$1 + \$2 }") &&
		best=$(awk -v a="$best" -v b="$s" "BEGIN { print (a == \"\" || b < a) ? b : a }") || return 1
	done &&
	echo "$best"
}

# linear MODE...: 4x the sites cost less than 9x the CPU
linear() {
	small=$(cpu "$@" small.log) &&
	big=$(cpu "$@" big.log) &&
	say "$*: $SMALL sites ${small}s, $BIG sites ${big}s" &&
	awk -v a="$small" -v b="$big" "BEGIN { if (a < 0.05) a = 0.05; exit !(b / a < 9) }"
}

test_expect_success '--json is linear in the sites' 'linear --json'
test_expect_success '--by-site is linear in the sites' 'linear --by-site'
test_expect_success '--html is linear in the sites' 'linear --html=out.html'
test_expect_success '--db is linear in the sites' 'linear --db=out.db'
test_expect_success '--pprof is linear in the sites' 'linear --pprof=out.pb'

test_expect_success '--json has each site and its stack' '
	test_expect_code 1 "$MTANALYZE" -q --json big.log >big.json &&
	test "$(grep -c "\"stack\": " big.json)" -eq $BIG
'

test_done
