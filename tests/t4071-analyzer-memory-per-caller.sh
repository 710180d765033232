#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4071-analyzer-memory-per-caller: what the analyzer keeps for each
# distinct caller (issue 30.3: 2 million callers in 1 GB).  Each caller of
# these traces is a site, a call path, a stack and a leaked block: the
# slope of the peak resident set between N and 4N callers is what one of
# them costs, the program, its libraries and the fixed tables cancelling
# out.  Today about 540 bytes (a site 128, a path 152 and its frames and
# stack 44, the live block's slot 80, the lookup tables and strings about
# 100, its leak record 40 made once the tables are gone); 725 before a
# site of one path shared that path's totals (MtaSite.t), its first
# timeline point went in place, its frame's address got a table of 12
# bytes a slot and the records were made beside the live blocks packed,
# 1,140 before the symbolizer's cache went and the tables were made
# compact.  The bound, 630, leaves 15% for the allocator and fails on
# any of those undone (2 million callers: 1,369 -> 991 MB).  The plain report (mtrace's table, no
# sites) keeps the script's bookkeeping and its cache of locations: 344
# bytes (494 before its entries became their own keys and the
# symbolizer's locations lost an unread copy), bound 420.  Memory does not depend on the load of
# the machine: the tables of N and 4N callers are both powers of two
# apart, and the peak is taken from /usr/bin/time (the kernel's maxrss).
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! test_have_prereq TIME; then
	test_skip 'memory per caller' 'needs the analyzer and /usr/bin/time'
	test_done; exit
fi
# AddressSanitizer's shadow and redzones triple what a caller costs:
# the figures are those of the build users run.
if ldd "$MTANALYZE" 2>/dev/null | grep -q libasan; then
	test_skip 'memory per caller' 'a sanitizer build (its allocator keeps redzones and shadow memory)'
	test_done; exit
fi

SMALL=50000
BIG=200000
test_expect_success 'traces of 50k and 200k callers' '
	gen_callers $SMALL >small.log &&
	gen_callers $BIG >big.log &&
	test_expect_code 1 "$MTANALYZE" -q --by-site big.log >by-site &&
	grep -q "^Memory not freed, by call site: $BIG blocks, .* $BIG sites" by-site
'

# rss ARGS...: the peak resident set of mtanalyze ARGS, in KB
rss() {
	st=0 && /usr/bin/time -o t -f "%M" "$MTANALYZE" -q "$@" >/dev/null 2>err || st=$? &&
	test "$st" -eq 1 || { cat err; return 1; }
	tail -n 1 t
}

# per_caller BOUND MODE...: the bytes one more caller costs, under BOUND
per_caller() {
	bound=$1 && shift &&
	small=$(rss "$@" small.log) &&
	big=$(rss "$@" big.log) &&
	slope=$(awk -v a="$small" -v b="$big" -v n=$((BIG - SMALL)) "BEGIN { printf \"%d\", (b - a) * 1024 / n }") &&
	say "$*: $SMALL callers ${small} KB, $BIG callers ${big} KB: $slope bytes a caller" &&
	test "$slope" -gt 0 && test "$slope" -lt "$bound"
}

test_expect_success '--by-site: under 630 bytes a caller' 'per_caller 630 --by-site'
test_expect_success '--json: under 630 bytes a caller' 'per_caller 630 --json'
test_expect_success 'the plain report: under 420 bytes a caller' 'per_caller 420'

test_done
