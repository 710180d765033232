#!/bin/sh
# t2615-recorder-track-messages: what MTREC_TRACK says on stderr (issue
# 10.2): a bad item is named once and ignored, the program runs normally
# and the good items are tracked; a function no loaded object defines is
# "not found"; one defined but called through no slot says so; MTREC_QUIET
# silences it all; MTREC_PATCH=0 keeps tracking; the launcher refuses an
# empty --track; the profiles are known by name.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

run() {
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$1" "$@"
}

test_expect_success 'bad items: one line each, ignored; the program runs and the rest is tracked' '
	env MTREC_TRACK="pool_get:grab:1,pool_get:alloc:9,:free,pool_get:alloc:1:pool;pool_put:free:0;pool_put:free:1:pool" \
		LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/bad.log" "$POOL" 1 10 >out 2>err &&
	test "$(wc -l <out)" = 1 &&
	grep -x "mtrec: MTREC_TRACK: '"'"'pool_get:grab:1'"'"': KIND is one of alloc, free, ref, unref; ignored" err &&
	grep "^mtrec: MTREC_TRACK: '"'"'pool_get:alloc:9'"'"': ARG is" err &&
	grep "^mtrec: MTREC_TRACK: '"'"':free'"'"': FUNC:KIND" err &&
	grep "^mtrec: MTREC_TRACK: '"'"'pool_put:free:0'"'"': ARG is an argument from 1 to 6; ignored" err &&
	test "$(grep -c "MTREC_TRACK:" err)" = 4 &&
	test "$(kcount bad.log pool +)" = 14 && test "$(kcount bad.log pool -)" = 11
'

test_expect_success 'a function not found is said once; the slots of the others counted' '
	env MTREC_TRACK="no_such_function:alloc,pool_init:free,pool_fini:free,$POOL_SPEC" \
		LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/nf.log" "$POOL" 1 10 >out 2>err &&
	grep -x "mtrec: track: no_such_function: not found in any loaded object; its calls are not recorded" err &&
	test "$(grep -c no_such_function err)" = 1 &&
	grep "^mtrec: track: call slots patched: pool_init 1, pool_fini 1, pool_get 2, pool_put 1\$" err
'

test_expect_success 'MTREC_QUIET=1: only the malformed item is said (an error); MTREC_PATCH=0: still tracked' '
	env MTREC_QUIET=1 MTREC_TRACK="x:y,nothere:ref" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/q.log" \
		"$POOL" 1 10 >out 2>err &&
	cat err &&
	grep -x "mtrec: MTREC_TRACK: .x:y.: KIND is one of alloc, free, ref, unref; ignored" err &&
	test "$(wc -l <err)" -eq 1 &&
	env MTREC_PATCH=0 MTREC_TRACK="$POOL_SPEC" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/np.log" \
		"$POOL" 1 10 >out 2>err &&
	test "$(kcount np.log pool +)" = 14
'

test_expect_success 'profiles by name; an unknown one is named; none present is one line; untracked without MALLOC_TRACE' '
	env MTREC_TRACK="@glib,@nosuch" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/p.log" "$POOL" 1 1 >out 2>err &&
	grep -x "mtrec: MTREC_TRACK: '"'"'@nosuch'"'"': no such profile (@glusterfs, @dpdk, @glib); ignored" err &&
	n=$(grep -c "^[A-Za-z0-9_]*:" "$TOP/share/track/glib.txt") &&
	grep -x "mtrec: track: none of the $n functions named is in a loaded object; nothing is tracked until one is loaded" err &&
	! grep "g_slice_alloc" err &&
	env MTREC_TRACK="$POOL_SPEC" LD_PRELOAD="$LIBMTREC" "$POOL" 1 1 >out 2>err &&
	test_must_be_empty err
'

test_expect_success 'mtrec --track: an empty SPEC is refused before the program runs' '
	test_expect_code 125 "$MTREC" --track "" "$POOL" >out 2>err &&
	test_must_be_empty out &&
	grep "invalid --track" err
'

test_done
