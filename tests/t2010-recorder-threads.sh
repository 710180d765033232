#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Thread safety and order: four threads hand blocks to one another through a
# shared ring (frees and reallocs in threads other than the allocating one,
# constant address reuse), two million events.  Every line must be whole and
# every free must follow its allocation and precede the address's reuse, so
# glibc's own mtrace finds no impossible free and exactly the planned leaks.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-handoff"

test_expect_success '4 threads, 2M events: no impossible free, exactly the leaks made' '
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t4.log "$PROG" 4 500000 7 &&
	test "$(grep -c "^[@]" t4.log)" -gt 2000000 &&
	mtrace_leaks t4.log 7 4242
'

test_expect_success 'every line of the threaded trace is whole' '
	{ tr -d "\000" <t4.log | grep -v -e "^#" -e "^= " -e "^ *\$" \
		-e "^@ [^ ]* [-<] 0x[0-9a-f]*\$" \
		-e "^@ [^ ]* [+>] 0x[0-9a-f]* 0x[0-9a-f]*\$" >bad || test $? = 1; } &&
	test_must_be_empty bad
'

test_expect_success 'the same under heavier contention (8 threads)' '
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t8.log "$PROG" 8 100000 3 &&
	mtrace_leaks t8.log 3 4242 &&
	test_when_passed "rm -f t8.log mt_t8.log"
'

test_expect_success 'with call stacks (depth 16) the order holds too' '
	MTREC_DEPTH=16 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/d16.log "$PROG" 4 100000 2 &&
	grep -q "^# stack [0-9]* 0x" d16.log &&
	grep -q " s=[0-9]*\$" d16.log &&
	mtrace_leaks d16.log 2 4242 &&
	test_when_passed "rm -f d16.log mt_d16.log"
'

test_expect_success 'every thread writes under its own "# T" tid' '
	test "$(grep "^# T " t4.log | sort -u | wc -l)" -ge 5 &&
	test_when_passed "rm -f t4.log mt_t4.log"
'

test_done
