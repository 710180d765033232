#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4000-sites-wrappers: --by-site charges leaks made through allocation
# wrappers to the real callers (the fixture's three xmalloc call sites,
# found by their LEAK-x comments), follows --skip and --no-skip, says what
# it cannot do without stacks, groups bad frees by site, and its totals are
# those of the mtrace report.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'report by call site' 'needs the analyzer and the recorder'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-wrappers.c"
APP="$TOP/tests/helper/ana-wrappers"

# site_row BLOCKS BYTES FUNCTION LINE FILE: the report has this row
site_row() {
	grep -E "^ +$1 +$2  $3 at $SRC:$4 in " "$5"
}

test_expect_success 'record the wrapper fixture with stacks' '
	"$MTREC" -o deep.log --depth 16 "$APP" &&
	grep -q "^# stack" deep.log &&
	"$MTREC" -o flat.log "$APP" &&
	! grep -q " s=[0-9]" flat.log
'

test_expect_success 'leaks through xmalloc are charged to its three call sites' '
	test_expect_code 1 "$MTANALYZE" --by-site deep.log >out &&
	cat out &&
	site_row 1 100 load_config "$(line_of LEAK-A)" out &&
	site_row 2 40 parse_args "$(line_of LEAK-B)" out &&
	site_row 3 21 main "$(line_of LEAK-C)" out &&
	site_row 1 20 main "$(line_of LEAK-DUP)" out &&
	! grep -q "^ .*  xmalloc at" out
'

test_expect_success 'largest first, with the totals of the mtrace report' '
	grep "^ *[0-9]" out | awk "{ print \$2 }" >bytes &&
	sort -rn bytes >sorted && test_cmp sorted bytes &&
	test_expect_code 1 "$MTANALYZE" deep.log >mtrace.out &&
	n=$(grep -c "^0x" mtrace.out) &&
	sum=0 && for s in $(grep "^0x" mtrace.out | awk "{ print \$2 }"); do sum=$((sum + s)); done &&
	grep -q "^Memory not freed, by call site: $n blocks, $sum bytes, 5 sites" out
'

test_expect_success 'the stacks under a site show its callers (--frames)' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 1 deep.log >f1 &&
	grep -A1 "load_config at" f1 | grep -q "called from main at $SRC:$(line_of "load_config ();")" &&
	test $(grep -c "called from" f1) = 5 &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 deep.log >f0 &&
	! grep -q "called from" f0
'

test_expect_success 'a wrapper not on the list is a site, until --skip names it' '
	site_row 1 50 pool_get "$(line_of POOL-CALL)" out &&
	test_expect_code 1 "$MTANALYZE" --by-site --skip pool_get --skip "no_such_*" deep.log >skip &&
	site_row 1 50 main "$(line_of LEAK-POOL)" skip
'

test_expect_success '--no-skip charges every leak to the wrapper itself' '
	test_expect_code 1 "$MTANALYZE" --by-site --no-skip deep.log >noskip &&
	site_row 7 211 xmalloc "$(line_of XMALLOC-CALL)" noskip &&
	grep -q "wrappers not skipped" noskip
'

test_expect_success 'without stacks the wrapper is charged, and the report says why' '
	test_expect_code 1 "$MTANALYZE" --by-site flat.log >flat &&
	site_row 7 211 xmalloc "$(line_of XMALLOC-CALL)" flat &&
	grep -q "record with .mtrec --depth 16" flat
'

test_expect_success 'no leaks: exit 0' '
	"$MTREC" -o clean.log --depth 8 "$APP" free &&
	"$MTANALYZE" --by-site clean.log >clean &&
	grep -q "^No memory leaks" clean
'

test_expect_success GLIBC_DEBUG 'a glibc trace (no stacks, BINARY given)' '
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=glibc.log "$TOP/tests/helper/ana-leaks" &&
	test_expect_code 1 "$MTANALYZE" "$TOP/tests/helper/ana-leaks" glibc.log >g.mtrace &&
	test_expect_code 1 "$MTANALYZE" --by-site "$TOP/tests/helper/ana-leaks" glibc.log >g.sites &&
	n=$(grep -c "^0x" g.mtrace) &&
	grep -q "^Memory not freed, by call site: $n blocks" g.sites &&
	grep -q "leaky at .*ana-leaks.c:$(grep -n "return malloc (n)" "$TOP/tests/helper/ana-leaks.c" | cut -d: -f1) " g.sites
'

test_expect_success 'frees of memory never allocated, grouped by the site of the free' '
	caller=$(grep " + " deep.log | sed -n "2p" | cut -d" " -f2) &&
	s=$(grep " + " deep.log | sed -n "2p" | sed "s/.* s=//") &&
	cp deep.log bad.log &&
	for a in 0x10 0x20 0x30; do echo "@ $caller - $a s=$s" >>bad.log; done &&
	echo "@ $caller < 0x40 s=$s" >>bad.log &&
	test_expect_code 1 "$MTANALYZE" --by-site bad.log >bad &&
	grep -q "^Frees of memory never allocated, by call site: 4 frees, 1 site" bad &&
	grep -A2 "^    Frees" bad | grep -q "^        4  load_config at $SRC:$(line_of LEAK-A) " &&
	"$MTANALYZE" bad.log | grep -c "was never alloc.d" >n && test "$(cat n)" = 4
'

test_expect_success 'usage errors' '
	test_expect_code 2 "$MTANALYZE" --all-events deep.log 2>err &&
	grep -q "all-events needs --db" err &&
	test_expect_code 2 "$MTANALYZE" --frames x deep.log 2>err
'

test_done
