#!/bin/sh
# Thread safety and order: four threads hand blocks to one another through a
# shared ring (frees and reallocs in threads other than the allocating one,
# constant address reuse), two million events.  Every line must be whole and
# every free must follow its allocation and precede the address's reuse, so
# glibc's own mtrace finds no impossible free and exactly the planned leaks.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-handoff"

check_trace() { # TRACE LEAKS
	/usr/bin/mtrace "$1" >report
	test $? = 1 &&
	! grep -q "never alloc" report &&
	! grep -q "duplicate" report &&
	test "$(grep -c " 0x1092  at " report)" = "$2" &&
	test "$(grep -c "  at " report)" = "$2"
}

test_expect_success '4 threads, 2M events: no impossible free, exactly the leaks made' '
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t4.log "$PROG" 4 500000 7 &&
	test "$(grep -c "^[@]" t4.log)" -gt 2000000 &&
	check_trace t4.log 7
'

test_expect_success 'every line of the threaded trace is whole' '
	tr -d "\000" <t4.log | grep -v -e "^#" -e "^= " -e "^ *\$" \
		-e "^@ [^ ]* [-<] 0x[0-9a-f]*\$" \
		-e "^@ [^ ]* [+>] 0x[0-9a-f]* 0x[0-9a-f]*\$" >bad || :
	test ! -s bad
'

test_expect_success 'the same under heavier contention (8 threads)' '
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t8.log "$PROG" 8 100000 3 &&
	check_trace t8.log 3
'

test_expect_success 'with call stacks (depth 16) the order holds too' '
	MTREC_DEPTH=16 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/d16.log "$PROG" 4 100000 2 &&
	grep -q "^# stack [0-9]* 0x" d16.log &&
	grep -q " s=[0-9]*\$" d16.log &&
	check_trace d16.log 2
'

test_expect_success 'every thread writes under its own "# T" tid' '
	test "$(grep "^# T " t4.log | sort -u | wc -l)" -ge 5
'

test_done
