#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2338-recorder-library-destructors.sh -- the trace ends after every
# object's destructor, as valgrind's leak check comes after them: a
# library whose destructor frees what its constructor allocated (libnuma
# its masks, in ovsdb-server) has its free in the trace, and no leak is
# reported.  The dynamic linker runs the destructors from one exit
# handler, the recorder's among the first; the recorder's end used to
# come there, before the library's free, and ovsdb-server showed 14
# blocks of libnuma's still reachable that valgrind does not list.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-dtor"
LIB="$HELPER/librec-dtor.so"

test_lazy_prereq VALGRIND 'command -v valgrind'

test_expect_success 'the fixture alone: the block is there in main' '
	"$PROG" >out &&
	test "$(cat out)" = "mask yes"
'

test_expect_success 'under the recorder: the destructor'"'"'s free is in the trace, before "= End"' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" "$PROG" >out &&
	test "$(cat out)" = "mask yes" &&
	grep "^@ $LIB:[^ ]* + " t.log >alloc &&
	test "$(wc -l <alloc)" = 1 &&
	addr=$(cut -d" " -f4 alloc) &&
	grep "^@ $LIB:[^ ]* - $addr\$" t.log &&
	test "$(tail -n 1 t.log)" = "= End" &&
	"$MTANALYZE" "$PROG" t.log >report &&
	grep "^No memory leaks\.\$" report
'

test_expect_success 'with MTREC_REACH=1: the block freed is not judged, as valgrind does not list it' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/r.log" MTREC_REACH=1 "$PROG" >out &&
	addr=$(grep "^@ $LIB:[^ ]* + " r.log | cut -d" " -f4) &&
	grep "^# reach end " r.log &&
	! grep "^# reach $addr " r.log
'

test_expect_success VALGRIND 'valgrind says the same: no block of the library left' '
	valgrind --leak-check=full --show-leak-kinds=all "$PROG" >out 2>vg &&
	! grep "librec-dtor" vg
'

test_done
