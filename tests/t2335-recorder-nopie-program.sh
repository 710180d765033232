#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2335-recorder-nopie-program.sh -- a program linked at fixed addresses
# (no -fPIE) that takes malloc's address, bound lazily, as Debian's
# /usr/bin/python3 is: malloc's address in the whole process, the
# recorder's included, is then the program's PLT entry.  The recorder
# once wrote that address into the program's own slot for malloc, and the
# program's first malloc jumped to itself for ever.  It must run, with
# every call recorded, with and without the slots' redirection.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-nopie"
SRC="$HELPER/rec-nopie.c"
LEAK_LINE=$(grep -n "the leak" "$SRC" | cut -d: -f1)

test_lazy_prereq NOPIE_PYTHON '[ -x /usr/bin/python3 ] && ! LC_ALL=C readelf -h /usr/bin/python3 | grep -q "DYN "'

# record TRACE [ENV...]: the fixture under the recorder, killed after 20 s
record() {
	rec_trace_=$1 && shift &&
	timeout 20 env "$@" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$rec_trace_" "$PROG" >"$rec_trace_.out"
}

test_expect_success 'the fixture is linked at fixed addresses and runs alone' '
	LC_ALL=C readelf -h "$PROG" | grep "Type: *EXEC" &&
	"$PROG" | grep "^done"
'

test_expect_success 'under the recorder it runs to its end, every call in the trace' '
	record t.log MTREC_PATCH=verbose 2>t.err &&
	grep "^done" t.log.out &&
	test "$(grep -c "^@ $PROG:.* + " t.log)" = 201 &&
	test "$(grep -c "^@ $PROG:.* - " t.log)" = 200
'

test_expect_success 'mtanalyze: the one leak, at its line' '
	test_expect_code 1 "$MTANALYZE" "$PROG" t.log >report &&
	grep "0x4d  *at $SRC:$LEAK_LINE\$" report &&
	! grep -i "never alloc\|duplicate" report
'

test_expect_success 'the same with MTREC_PATCH=0, and with stacks' '
	record p.log MTREC_PATCH=0 &&
	grep "^done" p.log.out &&
	record s.log MTREC_DEPTH=8 &&
	grep "^done" s.log.out &&
	test "$(grep -c "^@ $PROG:.* + " s.log)" = 201
'

test_expect_success NOPIE_PYTHON 'Debian'"'"'s /usr/bin/python3 runs under the recorder, with MTREC_REACH=1' '
	timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/py.log" MTREC_REACH=1 \
		/usr/bin/python3 -c "import json; print(json.dumps([1]))" >py.out &&
	test "$(cat py.out)" = "[1]" &&
	grep "^# reach end " py.log
'

test_done
