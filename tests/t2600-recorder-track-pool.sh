#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2600-recorder-track-pool: a pool allocator in a shared library
# (tests/helper/librec-pool.c: objects carved from one malloc'd arena),
# used by an unmodified program that leaks 3 pool objects at LEAK-POOL, is
# recorded with MTREC_TRACK (issue 10.2): every pool_get and pool_put is a
# "# k pool" line charged to the program's line, the call inside the
# library to its own exported pool_get (through its PLT) too, and
# /usr/bin/mtrace prints the same report as without tracking.  The
# launcher's --track does the same, with the family named after the first
# function; a copy of the library rebuilt with mtrec.h's API writes the
# same lines.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

SRC="$HELPER/rec-pool.c"
LIBSRC="$HELPER/librec-pool.c"
T=2 R=200

test_expect_success 'tracked: every get and put, as "# k pool" lines, and the coverage said' '
	env MTREC_TRACK="$POOL_SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/t.log" \
		"$POOL" $T $R >out 2>err &&
	test "$(kcount t.log pool +)" = $((3 + 1 + T * R)) &&
	test "$(kcount t.log pool -)" = $((1 + T * R)) &&
	grep "^mtrec: track: call slots patched: pool_get [0-9]*, pool_put [0-9]*\$" err &&
	grep "^# k pool @ [^ ]* + 0x[0-9a-f]* 0x30\$" t.log >leaks &&
	test "$(wc -l <leaks)" = 3
'

test_expect_success 'the 3 leaked objects are charged to LEAK-POOL, the churn to CHURN-GET' '
	klines t.log pool + | sort | uniq -c | sed "s/^ *//" >where &&
	grep -x "3 $SRC:$(line_of "/\* LEAK-POOL")" where &&
	grep -x "$((T * R)) $SRC:$(line_of "/\* CHURN-GET")" where
'

test_expect_success 'a call inside the library to its own exported pool_get is recorded (own PLT)' '
	grep "^# k pool @ $HELPER/librec-pool.so:(pool_dup+[0-9a-fx]*)\[0x[0-9a-f]*\] + 0x[0-9a-f]* 0x8\$" t.log &&
	klines t.log pool + | grep -x "$LIBSRC:$(line_of "POOL-DUP-GET \*/" "$LIBSRC")"
'

test_expect_success '/usr/bin/mtrace prints the same report as on an untracked run' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/plain.log" "$POOL" $T $R >/dev/null &&
	test "$(kcount plain.log pool +)" = 0 &&
	/usr/bin/mtrace "$POOL" t.log >with 2>&1 &&
	/usr/bin/mtrace "$POOL" plain.log >without 2>&1 &&
	test_cmp without with &&
	grep "No memory leaks" with
'

test_expect_success 'mtrec --track: the family is named after the first function of its group' '
	"$MTREC" -o "$OUT/launcher.log" --track "pool_get:alloc:1,pool_put:free" "$POOL" 1 50 >out 2>err &&
	test "$(kcount launcher.log pool_get +)" = $((3 + 1 + 50)) &&
	test "$(kcount launcher.log pool_get -)" = $((1 + 50)) &&
	test "$(kcount launcher.log pool +)" = 0
'

test_expect_success 'rebuilt with the mtrec.h API: the same lines at the same program lines' '
	mkdir -p api &&
	$CC -O1 -g -fPIC -shared -DUSE_MTREC_API -I"$TOP/recorder" -o api/librec-pool.so "$LIBSRC" &&
	$CC -O1 -g -o api/rec-pool "$SRC" -Lapi -lrec-pool -Wl,-rpath,"\$ORIGIN" -pthread &&
	api/rec-pool 1 10 >/dev/null &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/api.log" api/rec-pool $T $R >/dev/null &&
	test "$(kcount api.log pool +)" = $((3 + 1 + T * R)) &&
	test "$(kcount api.log pool -)" = $((1 + T * R)) &&
	klines api.log pool + | grep -c "librec-pool.c:" >n &&
	echo $((3 + 1 + T * R)) >expect && test_cmp expect n
'

test_done
