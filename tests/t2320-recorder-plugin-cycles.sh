#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2320-recorder-plugin-cycles.sh -- a daemon that loads and unloads a
# plugin all day keeps the recorder's memory bounded (issue 12.5): each
# dlclose used to leave a new caller table, a new symbol index list and a
# new copy of the object lines behind (678 MB after 10,000 cycles, 1.5 MB
# native).  The caller strings stay glibc's through the cycles, also once
# the symbol index has been given up for dladdr() (after 32 unloads):
# callers and operations compared line by line with glibc's tracer (the
# block addresses differ: glibc's tracer allocates its own FILE).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-plugin-cycles"
PLUG="$HELPER/librec-plug.so"

# rss FILE AT: the "rss AT KB" the fixture printed
rss() {
	sed -n "s/^rss $2 //p" "$1"
}

test_expect_success '10,000 dlopen/dlclose cycles: the resident set stops growing' '
	"$PROG" "$PLUG" 10000 >native &&
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t.log "$PROG" "$PLUG" 10000 >traced &&
	cat native traced &&
	early=$(rss traced 1000) && late=$(rss traced 10000) && base=$(rss native 10000) &&
	test $((late - early)) -lt $((4 << 10)) &&
	test $((late - base)) -lt $((16 << 10))
'

test_expect_success 'every cycle is in the trace, charged to the plugin' '
	test "$(grep -c "^@ $PLUG:(plug_work+[0-9a-f]*)\[0x[0-9a-f]*\] + " t.log)" = 20000 &&
	test "$(grep -c "^# unload " t.log)" -ge 10000 &&
	"$MTANALYZE" t.log >report &&
	grep -qx "No memory leaks." report
'

test_expect_success GLIBC_DEBUG 'the caller strings are glibc'"'"'s, before and after the index is given up' '
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/glibc.log "$PROG" "$PLUG" 100 >/dev/null &&
	MTREC_SCOPED=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/ours.log "$PROG" "$PLUG" 100 >/dev/null &&
	strip_ext glibc.log | cut -d" " -f1-3 >expect &&
	strip_ext ours.log | grep -v "^= End\$" | cut -d" " -f1-3 >actual &&
	test "$(grep -c "(plug_work+" actual)" = 300 &&
	test_cmp expect actual
'

test_done
