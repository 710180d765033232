#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2647-recorder-track-callback: a tracked function that calls the program
# back (tests/helper/librec-trkdeep.c: tobj_unref calls the program's
# destructor, which drops its reference to a child object).  A tracked
# call nested in another of its family is left to the outer call only when
# the library that defines it makes it (dict_new calling dict_ref); the
# program's own, made from a callback (GlusterFS's FUSE invalidator inside
# inode_link, a translator's forget inside inode_unref), is recorded
# (issue 27.2: 737 false drops below zero on the FUSE client).  A tracked
# function that ends in a tail call of another (tobj_new_tail jumping to
# tobj_new) is one call at the program's line, whatever their families.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

SRC="$HELPER/rec-trkdeep.c"
SPEC='tobj_new:ref:0:tobj,tobj_ref:ref:1:tobj,tobj_unref:unref:1:tobj,tobj_dup:ref:0:tobj,tobj_new_tail:ref:0:tobj'

test_expect_success 'the destructor'"'"'s unrefs, called back from inside tobj_unref, are recorded' '
	env MTREC_TRACK="$SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" \
		"$HELPER/rec-trkdeep" 1 dtor >out 2>err &&
	test "$(kcount t.log tobj r)" = $((3 + 150 + 2)) &&
	test "$(kcount t.log tobj u)" = $((2 + 150 + 2)) &&
	klines t.log tobj u | grep -c -x "$SRC:$(line_of "/\* DTOR-UNREF")" >n &&
	echo 50 >expect && test_cmp expect n
'

test_expect_success 'every child balanced: the one object above zero is the kept one' '
	need_analyzer &&
	test_expect_code 1 "$MTANALYZE" --by-site t.log >rep &&
	grep "^Unbalanced references, kind .tobj.: 1 object above zero, 1 entry$" rep &&
	grep "^  tobj: 1 object with net count +1, e.g. $(cat out)$" rep &&
	! grep "^Below zero" rep
'

test_expect_success 'the library'"'"'s own nested call (tobj_dup calling tobj_new) is left to the outer one' '
	klines t.log tobj r | grep -c -x "$SRC:$(line_of "/\* DUP \*/")" >n &&
	echo 1 >expect && test_cmp expect n &&
	! grep "^# k tobj @ [^ ]*librec-trkdeep.so" t.log
'

test_expect_success 'a tail call to a tracked function: one reference, at the program'"'"'s line' '
	klines t.log tobj r | grep -c -x "$SRC:$(line_of "/\* TAIL \*/")" >n &&
	echo 1 >expect && test_cmp expect n &&
	! grep "^# k .*libmtrec\|^@ .*libmtrec" t.log
'

test_expect_success 'the same tail call across two families: each at the program'"'"'s line' '
	env MTREC_TRACK="tobj_new:ref:0:tobj,tobj_new_tail:ref:0:tail" MTREC_DEPTH=8 LD_PRELOAD="$LIBMTREC" \
		MALLOC_TRACE="$OUT/tail.log" "$HELPER/rec-trkdeep" 1 dtor >/dev/null &&
	klines tail.log tail r >where &&
	klines tail.log tobj r | grep -x "$SRC:$(line_of "/\* TAIL \*/")" >>where &&
	printf "%s\n" "$SRC:$(line_of "/\* TAIL \*/")" "$SRC:$(line_of "/\* TAIL \*/")" >expect &&
	test_cmp expect where &&
	! grep "^# k .*libmtrec\|^@ .*libmtrec" tail.log
'

test_done
