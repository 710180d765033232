#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2330-recorder-deepbind-plugin.sh -- a plugin loaded with RTLD_DEEPBIND
# (as nfs-ganesha loads its FSALs) binds malloc and free to libc, past the
# preloaded recorder (issue 10.1).  The recorder redirects its GOT/PLT
# slots: every call the plugin makes is in the trace, the blocks it frees
# for the program are not reported as leaks nor allocated twice, and its
# own leak is charged to its line.  With MTREC_PATCH=0 the same checks
# fail, as they did before.  A plugin with an allocator of its own keeps
# it.  dlopen and dlsym, wrapped to notice new objects, still see their
# real caller ($ORIGIN, RTLD_NEXT).  Threads loading and unloading the
# plugin while others allocate lose nothing.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-deepbind-main"
PLUG='$ORIGIN/librec-deepbind-plug.so'
SRC="$HELPER/librec-deepbind-plug.c"
LEAK_LINE=$(grep -n "the plugin's leak" "$SRC" | cut -d: -f1)

# record OUT MODE [ENV...]: the fixture under the recorder, with MODE
# "now" or "lazy" (how dlopen binds the plugin).
record() {
	rec_out_=$1 rec_mode_=$2 &&
	shift 2 &&
	env "$@" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$rec_out_" "$PROG" "$PLUG" "$rec_mode_" >"$rec_out_.out"
}

# plugin_events TRACE: the trace lines charged to the plugin.
plugin_events() {
	grep -c "^@ $HELPER/librec-deepbind-plug.so:[^ ]* [-+<>] " "$1"
}

# report_is_right REPORT: the only leaks in the report of the fixture are
# the plugin's block of 0x4d bytes at its line and the one the dynamic
# linker keeps for $ORIGIN; nothing was freed that was never allocated,
# and nothing allocated twice.
report_is_right() {
	! grep -i "never alloc\|duplicate" "$1" &&
	grep -q "0x4d  *at $SRC:$LEAK_LINE\$" "$1" &&
	! grep -q "rec-deepbind-main.c" "$1" &&
	test "$(grep -c " at " "$1")" -le 2
}

test_expect_success 'the fixture runs alone and finds its plugin by $ORIGIN' '
	"$PROG" "$PLUG" now >native &&
	grep -qx ok native
'

test_expect_success 'a plugin bound at load: each of its 21 calls is in the trace' '
	record now.log now MTREC_PATCH=verbose 2>now.err &&
	grep -qx ok now.log.out &&
	test "$(plugin_events now.log)" = 21 &&
	grep "librec-deepbind-plug.so: 9 call slots redirected, 9 of them bound past the preload" now.err
'

test_expect_success 'mtanalyze: no free of memory never allocated, no duplicate, the plugin'"'"'s leak at its line' '
	test_expect_code 1 "$MTANALYZE" "$PROG" now.log >now.report &&
	cat now.report &&
	report_is_right now.report
'

test_expect_success MTRACE '/usr/bin/mtrace reads the same' '
	test_expect_code 1 /usr/bin/mtrace "$PROG" now.log >now.mtrace &&
	cat now.mtrace &&
	report_is_right now.mtrace
'

test_expect_success 'a plugin bound lazily: the same' '
	record lazy.log lazy &&
	test "$(plugin_events lazy.log)" = 21 &&
	test_expect_code 1 "$MTANALYZE" "$PROG" lazy.log >lazy.report &&
	report_is_right lazy.report
'

test_expect_success 'with stacks, --by-site charges the leak to the plugin'"'"'s line' '
	record deep.log now MTREC_DEPTH=16 &&
	test_expect_code 1 "$MTANALYZE" --by-site deep.log >deep.report &&
	cat deep.report &&
	grep -q "^ *1  *77  *plug_run at $SRC:$LEAK_LINE in $HELPER/librec-deepbind-plug.so" deep.report &&
	! grep -q "never alloc" deep.report
'

test_expect_success 'dlopen and dlsym see their caller: $ORIGIN resolves, RTLD_NEXT leads to the recorder' '
	grep -qx "next malloc in $LIBMTREC" now.log.out &&
	grep -qx "next malloc in .*libc.so.6" native
'

test_expect_success 'MTREC_PATCH=0: the plugin bypasses the recorder and the report is wrong' '
	record off.log now MTREC_PATCH=0 &&
	test "$(plugin_events off.log)" -lt 3 &&
	test_expect_code 1 "$MTANALYZE" "$PROG" off.log >off.report &&
	cat off.report &&
	st=0 && { report_is_right off.report || st=$?; } &&
	test $st != 0 &&
	grep -q "never alloc" off.report
'

test_expect_success 'a plugin with its own malloc keeps it (left alone, nothing recorded from it)' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/own.log" MTREC_PATCH=verbose \
		"$PROG" "$HELPER/librec-deepbind-own.so" now >own.out 2>own.err &&
	grep -qx ok own.out &&
	! grep -q "librec-deepbind-own.so:[^ ]* [-+<>] " own.log &&
	! grep -q "librec-deepbind-own.so: " own.err
'

test_expect_success 'threads loading and unloading the plugin while another allocates: every call recorded, no leak' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/threads.log" \
		"$HELPER/rec-deepbind-threads" "$HELPER/librec-plug.so" 3000 >threads.out &&
	grep -qx ok threads.out &&
	test "$(grep -c "(plug_work+[0-9a-f]*)\[0x[0-9a-f]*\] + " threads.log)" = 12000 &&
	"$MTANALYZE" threads.log >threads.report &&
	grep -qx "No memory leaks." threads.report
'

test_expect_success 'a plugin loaded again at the same place, with and without RTLD_DEEPBIND: every time recorded' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/reload.log" \
		"$HELPER/rec-deepbind-reload" "$HELPER/librec-plug.so" >reload.out &&
	grep -qx ok reload.out &&
	test "$(grep -c "(plug_work+[0-9a-f]*)\[0x[0-9a-f]*\] + " reload.log)" = 8 &&
	"$MTANALYZE" reload.log >reload.report &&
	grep -qx "No memory leaks." reload.report
'

test_expect_success 'a program run by a traced shell records its plugin in its own file' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/fork.log" sh -c "\"\$0\" \"\$1\" now" "$PROG" "$PLUG" >fork.out &&
	grep -qx ok fork.out &&
	child=$(ls fork.log.* | head -1) &&
	test "$(plugin_events "$child")" = 21
'

test_done
