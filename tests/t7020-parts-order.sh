#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7020-parts-order: the parts of a rotated trace are one run in the order
# of their "# part N" headers, whatever order the shell gives them, and in
# every report; a missing part is a warning, a part given twice an error;
# traces of different processes are refused.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'rotated parts' 'needs the analyzer and the recorder'
	test_done; exit
fi

test_expect_success 'record a rotated trace of many parts' '
	MTREC_QUIET=1 MTREC_ROTATE=4M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/rot.log \
		"$HELPER/rec-handoff" 4 200000 3 &&
	test -f rot.log.part10 &&
	{ echo rot.log; n=2; while [ -f rot.log.part$n ]; do echo rot.log.part$n; n=$((n + 1)); done; } >order &&
	cat $(cat order) >all.log
'

test_expect_success 'the shell'"'"'s order (part10 before part2), reversed, shuffled: the same report' '
	test_expect_code 1 "$MTANALYZE" all.log >expect &&
	! grep -q "never alloc" expect &&
	test_expect_code 1 "$MTANALYZE" rot.log* >actual 2>err && test_cmp expect actual && test ! -s err &&
	test_expect_code 1 "$MTANALYZE" $(sort -r order) >actual && test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" $(awk "{ print NR % 3, \$0 }" order | sort | cut -d" " -f2) >actual &&
	test_cmp expect actual
'

test_expect_success 'by the header, not the name: renamed parts keep their place' '
	mkdir -p renamed && n=0 &&
	for f in $(sort -r order); do n=$((n + 1)); cp $f renamed/x$n; done &&
	test_expect_code 1 "$MTANALYZE" renamed/x* >actual && test_cmp expect actual
'

test_expect_success '--by-site and --json read the parts in order too' '
	test_expect_code 1 "$MTANALYZE" --by-site all.log >expect.sites &&
	test_expect_code 1 "$MTANALYZE" --by-site $(sort -r order) >actual.sites &&
	test_cmp expect.sites actual.sites &&
	test_expect_code 1 "$MTANALYZE" --json $(sort -r order) >j &&
	grep -q "\"traces\": \[\"rot.log\", \"rot.log.part2\", \"rot.log.part3\"" j
'

test_expect_success 'a missing part: a warning naming it, the analysis goes on' '
	test_expect_code 1 "$MTANALYZE" $(grep -v "^rot.log.part3\$" order) >/dev/null 2>err &&
	grep -q "warning: part 3 of the run is missing (before .rot.log.part4.)" err
'

test_expect_success 'the last parts not given: a warning' '
	test_expect_code 1 "$MTANALYZE" rot.log rot.log.part2 >/dev/null 2>err &&
	grep -q "warning: the run continues in .rot.log.part3., not given" err
'

test_expect_success 'a part given twice: an error (status 2), before any output' '
	test_expect_code 2 "$MTANALYZE" rot.log rot.log.part2 rot.log.part2 >out 2>err &&
	grep -q "both part 2 of the run" err && test ! -s out
'

test_expect_success 'traces of two processes are not one run: an error (status 2)' '
	MTREC_QUIET=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/fk.log "$HELPER/rec-fork" basic >fk.out &&
	child=$(sed -n "s/^child //p" fk.out) &&
	test -f "fk.log.$child" &&
	test_expect_code 1 "$MTANALYZE" fk.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" "fk.log.$child" >/dev/null &&
	test_expect_code 2 "$MTANALYZE" fk.log "fk.log.$child" >out 2>err &&
	test ! -s out &&
	grep -q "(pid [0-9]*) and .fk.log.$child. (pid $child) are traces of different processes" err &&
	test_expect_code 2 "$MTANALYZE" --by-site rot.log "fk.log.$child" >out 2>err &&
	test ! -s out && grep -q "different processes" err
'

test_expect_success 'the file before an exec and the one after are not one run either' '
	MTREC_QUIET=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/ex.log "$HELPER/rec-fork" exec >ex.out &&
	pid=$(sed -n "s/^pid //p" ex.out) &&
	test -f "ex.log.$pid" &&
	test_expect_code 2 "$MTANALYZE" ex.log "ex.log.$pid" >out 2>err &&
	grep -q "another program after an exec" err
'

test_expect_success GLIBC_DEBUG 'glibc traces and pieces without headers are read as given' '
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=g.log "$HELPER/ana-growth" 2000 &&
	split -l 3000 g.log piece. &&
	test_expect_code 1 "$MTANALYZE" g.log >expect &&
	test_expect_code 1 "$MTANALYZE" piece.* >actual 2>err &&
	test_cmp expect actual && test ! -s err
'

test_done
