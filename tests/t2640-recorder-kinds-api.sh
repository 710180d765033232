#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2640-recorder-kinds-api: a program rebuilt with mtrec.h's mtrec_alloc,
# mtrec_free, mtrec_ref and mtrec_unref (issue 10.3) -- a pool allocator
# over one malloc'd arena, a reference-counted object -- gets its pool's
# and its objects' events in the trace as "# k KIND" lines, in order under
# threads; /usr/bin/mtrace reads the file as before; mtanalyze names the 3
# pool objects leaked at LEAK-POOL and the reference never dropped at
# LEAK-REF; without the recorder the calls do nothing.
#
# Fixture: tests/helper/rec-kinds-api.c (two threads churn ROUNDS times).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-kinds-api"
SRC="$HELPER/rec-kinds-api.c"
ROUNDS=300

# count TRACE KIND OP: "# k KIND ... OP ADDR" lines.
count() {
	grep -c "^# k $2 @ [^ ]* $3 0x" "$1" || true
}

test_expect_success 'the program runs without the recorder (weak calls)' '
	"$PROG" 10
'

test_expect_success 'recorded: every pool and reference event, as "# k" lines' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$PWD/t.log" MTREC_DEPTH=16 "$PROG" $ROUNDS &&
	test "$(count t.log pool +)" = $((ROUNDS * 2 * 2 + 4)) &&
	test "$(count t.log pool -)" = $((ROUNDS * 2 * 2)) &&
	test "$(count t.log obj r)" = $((ROUNDS * 2 * 2 + 2)) &&
	test "$(count t.log obj u)" = $((ROUNDS * 2 * 2 + 1)) &&
	grep "^# k pool @ .* + 0x[0-9a-f]* 0x30 s=[0-9]*\$" t.log >/dev/null
'

test_expect_success 'in order: no KIND allocation of a live address, no release of a dead one' '
	awk "\$1 == \"#\" && \$2 == \"k\" {
		for (i = 4; i <= NF; i++) if (\$i == \"+\" || \$i == \"-\") break
		if (i > NF) next
		key = \$3 \" \" \$(i + 1)
		if (\$i == \"+\") { if (live[key]) bad++; live[key] = 1 }
		else { if (!live[key]) bad++; delete live[key] }
	} END { print bad + 0 }" t.log >bad &&
	echo 0 >expect && test_cmp expect bad
'

test_expect_success '/usr/bin/mtrace reads the file as without the lines' '
	grep -v "^# k " t.log >plain.log &&
	/usr/bin/mtrace "$PROG" t.log >with 2>&1 &&
	/usr/bin/mtrace "$PROG" plain.log >without 2>&1 &&
	test_cmp without with &&
	grep "No memory leaks" with
'

if need_analyzer; then
test_expect_success 'mtanalyze: the pool leak at LEAK-POOL, the reference at LEAK-REF' '
	test_expect_code 1 "$MTANALYZE" --by-site --skip pool_get --frames 2 "$PROG" t.log >report &&
	grep "^  pool  *3  *144  main at $SRC:$(line_of "/\* LEAK-POOL") " report &&
	grep "^  obj: 1 object with net count +1" report &&
	sed -n "/references taken at:/,/dropped at:/p" report >taken &&
	grep "obj_ref at $SRC:" taken &&
	grep "called from main at $SRC:$(line_of "/\* LEAK-REF") " taken
'

test_expect_success 'mtanalyze: the plain report is the script'"'"'s' '
	"$MTANALYZE" "$PROG" t.log >ours &&
	"$MTANALYZE" "$PROG" plain.log >ours-plain &&
	test_cmp ours-plain ours
'
fi

test_done
