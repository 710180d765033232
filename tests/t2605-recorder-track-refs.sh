#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2605-recorder-track-refs: a reference-counted object in a shared
# library (tests/helper/librec-refobj.c), used by an unmodified program
# where one path takes a reference at LEAK-REF it never drops, recorded
# with MTREC_TRACK (issue 10.2): obj_new's result is a reference taken, and
# the object made at NEW-KEPT ends with a net count of +1, its extra
# reference charged to LEAK-REF.  The API-rebuilt copy writes the same.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

SRC="$HELPER/rec-refobj.c"
R=50

# net TRACE: "ADDR NET" for each object of kind obj whose count is not 0.
net() {
	tr -d '\000' <"$1" | awk '$1 == "#" && $2 == "k" && $3 == "obj" {
		if ($6 == "r") n[$7]++; else if ($6 == "u") n[$7]--
	} END { for (a in n) if (n[a] != 0) print a, n[a] }'
}

test_expect_success 'tracked: each new, ref and unref is a "# k obj" line' '
	env MTREC_TRACK="$REF_SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" "$REFOBJ" $R >out &&
	test "$(kcount t.log obj r)" = $((2 * R + 2)) &&
	test "$(kcount t.log obj u)" = $((2 * R + 1))
'

test_expect_success 'the one object left at +1 is the kept one, its references at NEW-KEPT and LEAK-REF' '
	net t.log >left &&
	test "$(wc -l <left)" = 1 &&
	grep "^$(cat out) 1\$" left &&
	grep "^# k obj @ [^ ]* r $(cat out)\$" t.log >refs &&
	tail -n 2 refs >last &&
	klines last obj r | sort >where &&
	printf "%s\n" "$SRC:$(line_of "/\* LEAK-REF")" "$SRC:$(line_of "/\* NEW-KEPT")" | sort >expect &&
	test_cmp expect where
'

test_expect_success '/usr/bin/mtrace: the same report as untracked (the kept block leaks)' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/plain.log" "$REFOBJ" $R >/dev/null &&
	test_expect_code 1 /usr/bin/mtrace "$REFOBJ" t.log >with 2>&1 &&
	test_expect_code 1 /usr/bin/mtrace "$REFOBJ" plain.log >without 2>&1 &&
	sed "s/0x[0-9a-f]\{9,\}/ADDR/" with >a && sed "s/0x[0-9a-f]\{9,\}/ADDR/" without >b &&
	test_cmp b a
'

test_expect_success 'rebuilt with the mtrec.h API: the same counts and the same object left' '
	mkdir -p api &&
	$CC -O1 -g -fPIC -shared -DUSE_MTREC_API -I"$TOP/recorder" -o api/librec-refobj.so "$HELPER/librec-refobj.c" &&
	$CC -O1 -g -o api/rec-refobj "$SRC" -Lapi -lrec-refobj -Wl,-rpath,"\$ORIGIN" &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/api.log" api/rec-refobj $R >api.out &&
	test "$(kcount api.log obj r)" = $((2 * R + 2)) &&
	test "$(kcount api.log obj u)" = $((2 * R + 1)) &&
	net api.log >api.left && echo "$(cat api.out) 1" >expect && test_cmp expect api.left
'

test_done
