#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2620-recorder-parts-complete.sh -- with MTREC_ROTATE, a part is complete
# soon after the next one begins, while the program runs (issue 12.3): its
# file is no longer mapped, its content is final, and deleting it frees the
# disk without disturbing the program or the rest of the trace.  The rule
# the outside world uses (share/trace-format.md): part N is complete when
# part N+1's file exists and /proc/PID/maps lists no mapping of part N's
# file.  The fixture has an idle thread that allocated once at start (its
# chunk lies in part 1 until the recorder closes it) and a busy one.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-parts"
RATE=150	# malloc/free pairs a millisecond: about 10 MB of trace a second

# name_of N: part N's file name.
name_of() {
	if [ "$1" = 1 ]; then echo rot.log; else echo "rot.log.part$1"; fi
}

# latest: the highest part number whose file exists (1 when only the
# first part's does, or none: parts before it may have been deleted).
latest() {
	ls | sed -n 's/^rot\.log\.part\([0-9][0-9]*\)$/\1/p' | sort -n | tail -n 1 | grep . || echo 1
}

# mapped PID FILE: /proc/PID/maps lists a mapping of $OUT/FILE.
mapped() {
	awk -v f="$OUT/$2" '$6 == f { found = 1 } END { exit !found }' "/proc/$1/maps"
}


# unmapped PID N...: no part N... is mapped by PID any more.
unmapped() {
	p=$1; shift
	for k in "$@"; do
		! mapped "$p" "$(name_of "$k")" || return 1
	done
}

# start: run the fixture in the background, recorded in 1 MB parts (which
# the recorder rounds to 4 MB); its pid in $pid.
start() {
	rm -f stop wake woke &&
	MTREC_ROTATE=1M LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/rot.log" \
		"$PROG" "$OUT" 60 $RATE >out 2>err &
	pid=$!
}

# finish: stop the fixture; it must exit as it does natively (status 3).
finish() {
	touch stop &&
	test_expect_code 3 wait "$pid"
}

# parts_in_order: the existing part files, in order.
parts_in_order() {
	n=1
	while [ "$n" -le "$(latest)" ]; do
		f=$(name_of $n)
		[ -f "$f" ] && echo "$f"
		n=$((n + 1))
	done
}

test_expect_success 'the program exits 3 and says so natively' '
	mkdir -p native && touch native/wake &&
	test_expect_code 3 "$PROG" "$OUT/native" 0.5 10 >native.out &&
	echo "rec-parts: 1 wake-ups" >expect && test_cmp expect native.out
'

test_expect_success 'parts older than the active one are unmapped soon after it begins' '
	start &&
	within 1200 test -f rot.log.part4 &&
	within 300 unmapped $pid 1 2 &&
	{ mapped $pid "$(name_of "$(latest)")" || mapped $pid "$(name_of $(($(latest) - 1)))"; } &&
	md5sum rot.log rot.log.part2 >sums.1 &&
	sleep 1 &&
	md5sum rot.log rot.log.part2 >sums.2 &&
	test_cmp sums.1 sums.2 &&
	echo $(latest) >before-wake &&
	touch wake && within 600 test -f woke &&
	finish &&
	echo "rec-parts: 1 wake-ups" >expect && test_cmp expect out
'

test_expect_success 'the idle thread began in part 1 and wrote again in the current part' '
	grep -q "^@ .* + 0x[0-9a-f]* 0x457\$" rot.log &&
	for f in $(parts_in_order); do
		c=$(grep -c "^@ .* + 0x[0-9a-f]* 0x10e1\$" "$f") || :
		[ "$c" = 0 ] || echo "$f $c"
	done >woke-in &&
	cat woke-in &&
	test "$(wc -l <woke-in)" -ge 1 &&
	awk "{ sum += \$2 } END { exit sum != 50 }" woke-in &&
	first=$(head -n 1 woke-in | sed "s/ .*//; s/rot.log.part//") &&
	test "$first" -ge $(($(cat before-wake) - 1))
'

test_expect_success ANALYZER 'the parts in order are one trace: one leak, the wake-up'"'"'s' '
	test_expect_code 1 "$MTANALYZE" $(parts_in_order) >report &&
	grep -c "^0x[0-9a-f]* *0x10e1 *at .*rec-parts.c" report >count &&
	echo 1 >expect && test_cmp expect count &&
	! grep -q -e "never alloc" -e duplicate report
'

# delete_complete PID: remove every part that the rule says is complete;
# the total size of the parts left up to the latest one looked at, in
# bytes, appended to sizes (not of those begun since: on a loaded machine
# this script may wait a second while the program writes 10 MB).
delete_complete() {
	top=$(latest)
	n=1
	while [ $n -lt "$top" ]; do
		f=$(name_of $n)
		if [ -f "$f" ] && [ -f "$(name_of $((n + 1)))" ] && ! mapped "$1" "$f"; then
			rm -f "$f"
		fi
		n=$((n + 1))
	done
	n=1
	while [ $n -le "$top" ]; do
		f=$(name_of $n)
		[ ! -f "$f" ] || echo "$f"
		n=$((n + 1))
	done | xargs -r cat 2>/dev/null | wc -c >>sizes
}

test_expect_success 'deleting complete parts while it runs disturbs neither it nor the trace' '
	rm -f rot.log* sizes &&
	start &&
	within 1200 test -f rot.log.part3 &&
	touch wake &&
	while [ "$(latest)" -lt 12 ] && kill -0 $pid; do
		delete_complete $pid || exit 1
		sleep 0.05
	done &&
	test -f woke &&
	finish &&
	test_cmp native.out out &&
	test ! -s err &&
	test ! -f rot.log && test ! -f rot.log.part2 &&
	peak=$(sort -n sizes | tail -n 1) &&
	echo "peak disk use $peak bytes" &&
	test "$peak" -le $((4 * 4194304)) &&
	last=$(name_of "$(latest)") &&
	tail -n 1 "$last" | grep -qx "= End" &&
	if test_have_prereq ANALYZER; then
		{ "$MTANALYZE" $(parts_in_order) >report 2>report.err; echo $? >status; } &&
		cat report.err &&
		test "$(cat status)" -le 1
	fi
'

test_expect_success 'exit while a thread allocates: status kept, trace ends' '
	for i in 1 2 3; do
		rm -f rot.log* &&
		test_expect_code 3 env MTREC_ROTATE=1M LD_PRELOAD="$LIBMTREC" \
			MALLOC_TRACE="$OUT/rot.log" "$PROG" "$OUT" 60 $RATE exit >out 2>err &&
		test ! -s err &&
		grep -qx "= End" "$(name_of "$(latest)")" || exit 1
	done
'

test_done
