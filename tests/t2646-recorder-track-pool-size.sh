#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2646-recorder-track-pool-size: a pool that holds its object size in its
# first word, as GlusterFS's struct mem_pool does (issue 27.5): with
# FUNC:alloc:*1 each object's "+" carries that size, and @glusterfs uses it
# for mem_get_malloc/mem_get_calloc.  The profile parses whole (every line
# of share/track/glusterfs.txt an item the recorder takes).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

SRC="$HELPER/rec-trkdeep.c"

test_expect_success 'alloc:*1: the size is the word argument 1 points to' '
	env MTREC_TRACK="tpool_get:alloc:*1:tpool,tpool_put:free:1:tpool" LD_PRELOAD="$LIBMTREC" \
		MALLOC_TRACE="$OUT/t.log" "$HELPER/rec-trkdeep" 1 pool >out 2>err &&
	grep "^# k tpool @ [^ ]* + 0x[0-9a-f]* 0x48\$" t.log >plus &&
	test "$(wc -l <plus)" = 3 &&
	test "$(kcount t.log tpool -)" = 2
'

test_expect_success 'the kept one is charged to POOL-KEPT' '
	grep "^# k tpool @ [^ ]* + $(head -n 1 out) 0x48\$" t.log >kept &&
	klines kept tpool + >where &&
	echo "$SRC:$(line_of "/\* POOL-KEPT")" >expect &&
	test_cmp expect where
'

test_expect_success 'the report: the kept object with its size and its callers (depth 16), JSON too' '
	need_analyzer &&
	env MTREC_TRACK="tpool_get:alloc:*1:tpool,tpool_put:free:1:tpool" MTREC_DEPTH=16 \
		LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/d.log" "$HELPER/rec-trkdeep" 1 pool >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 2 d.log >rep &&
	grep -A2 -E "^  tpool +1 +72  pool_use at $SRC:$(line_of "/\* POOL-KEPT") in " rep >row &&
	sed -n 2p row | grep -E "^ {43}called from main at $SRC:[0-9]+ in " &&
	test_expect_code 1 "$MTANALYZE" --json --frames 2 d.log >rep.json &&
	py "json.dumps ([(s[\"leaked_bytes\"], s[\"line\"], [f[\"function\"] for f in s[\"frames\"]][:1]) for k in d[\"kinds\"] if k[\"kind\"] == \"tpool\" for s in k[\"leak_sites\"]])" rep.json >actual &&
	echo "[[72, $(line_of "/\* POOL-KEPT"), [\"main\"]]]" >expect &&
	test_cmp expect actual
'

test_expect_success 'a bad *N is refused, named once; free:*1 too' '
	env MTREC_TRACK="tpool_get:alloc:*7,tpool_put:free:*1" LD_PRELOAD="$LIBMTREC" \
		MALLOC_TRACE="$OUT/bad.log" "$HELPER/rec-trkdeep" 1 pool >/dev/null 2>err &&
	grep -x "mtrec: MTREC_TRACK: .tpool_get:alloc:\*7.: ARG is 0 (size unknown), N, N\*M or \*N, N and M from 1 to 6; ignored" err &&
	grep -x "mtrec: MTREC_TRACK: .tpool_put:free:\*1.: ARG is an argument from 1 to 6; ignored" err &&
	test "$(kcount bad.log tpool_get +)" = 0
'

test_expect_success '@glusterfs: every line of the profile is taken, none refused' '
	items=$(grep -c "^[a-z_]" "$TOP/share/track/glusterfs.txt") &&
	test "$items" -gt 30 &&
	env MTREC_TRACK=@glusterfs LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/gl.log" /bin/true 2>err &&
	! grep "ignored" err &&
	grep -x "mtrec: track: none of the $items functions named is in a loaded object; nothing is tracked until one is loaded" err
'

test_done
