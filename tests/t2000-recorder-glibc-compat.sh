#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The recorder's event lines are byte for byte what glibc 2.36's
# libc_malloc_debug.so writes for the same calls, and /usr/bin/mtrace reads
# our traces.  Compared after replacing each pointer by the order of its
# first appearance; the two deliberate differences (pvalloc's size, and our
# "= End" at exit) are named below.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-every-call"

test_expect_success 'the fixture runs the same with either tracer' '
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/glibc.log "$PROG" >glibc.out &&
	MTREC_SCOPED=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/ours.log "$PROG" >ours.out &&
	test_cmp glibc.out ours.out
'

test_expect_success 'every event line matches glibc after pointer normalisation' '
	# glibc 2.36 logs pvalloc(100) as 0x1001; we log the page really allocated.
	sed -e "s/ 0x1001\$/ 0x1000/" glibc.log | strip_ext /dev/stdin | norm_ptrs >expect &&
	strip_ext ours.log | grep -v "^= End\$" | norm_ptrs >actual &&
	test_cmp expect actual
'

test_expect_success 'the pvalloc line is the one difference from glibc' '
	grep -c " 0x1001\$" glibc.log >n && test "$(cat n)" = 1 &&
	! grep -q " 0x1001\$" ours.log
'

test_expect_success 'nothing is logged for free(NULL), overflows or bad alignment' '
	test "$(strip_ext ours.log | grep -c "^@")" = "$(strip_ext glibc.log | grep -c "^@")"
'

test_expect_success '/usr/bin/mtrace reports the same leak on both traces' '
	test_expect_code 1 /usr/bin/mtrace "$PROG" glibc.log >glibc.report &&
	test_expect_code 1 /usr/bin/mtrace "$PROG" ours.log >ours.report &&
	sed -e "s/0x[0-9a-f]\{16\}/ADDR/" glibc.report >expect &&
	sed -e "s/0x[0-9a-f]\{16\}/ADDR/" ours.report >actual &&
	test_cmp expect actual &&
	grep -q "0x4d  at .*rec-every-call.c:" ours.report
'

test_expect_success 'interposition happened: unscoped runs record from the first allocation' '
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/full.log "$PROG" >/dev/null &&
	head -n 1 full.log >first && echo "# mtrec 1" >expect && test_cmp expect first &&
	test "$(grep -c "^= Start" full.log)" = 1 &&
	test "$(grep -c "^= End" full.log)" = 1 &&
	test "$(tail -n 1 full.log)" = "= End"
'

test_expect_success 'no MALLOC_TRACE: no file, no message, normal run' '
	env -u MALLOC_TRACE LD_PRELOAD=$LIBMTREC "$PROG" >plain.out 2>plain.err &&
	test_cmp glibc.out plain.out && test ! -s plain.err
'

test_expect_success 'extension lines describe the process and its objects' '
	grep -q "^# pid [0-9]* [0-9]*\$" full.log &&
	grep -q "^# exe .*/rec-every-call\$" full.log &&
	grep -q "^# object 0x[0-9a-f]* 0x[0-9a-f]*-0x[0-9a-f]* [0-9a-f-]* .*libc.so.6\$" full.log &&
	grep -q "^# depth 1\$" full.log
'

test_done
