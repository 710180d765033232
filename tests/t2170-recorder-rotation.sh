#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# MTREC_ROTATE cuts the trace into parts FILE, FILE.part2, ...: each part
# starts with its own header, object list and the stacks it uses, and the
# parts in order are one consistent trace.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-handoff"

# parts: the part files in numeric order.
parts() {
	echo rot.log
	n=2
	while [ -f rot.log.part$n ]; do echo rot.log.part$n; n=$((n + 1)); done
}

test_expect_success 'a 4-thread run with 4 MB parts makes several parts' '
	MTREC_ROTATE=4M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/rot.log \
		"$PROG" 4 200000 3 &&
	test "$(parts | wc -l)" -ge 5 &&
	for f in $(parts | sed 1d); do
		test "$(wc -c <$f)" -le 4194304 || exit 1
	done
'

test_expect_success 'every part starts with "# mtrec 1" and its number' '
	n=2 &&
	for f in $(parts | sed 1d); do
		printf "# mtrec 1\n# part %d\n" $n >expect &&
		head -n 2 $f >actual && test_cmp expect actual || exit 1
		n=$((n + 1))
	done
'

test_expect_success 'every part has the header and the loaded objects' '
	for f in $(parts); do
		grep -q "^# pid " $f && grep -q "^# exe " $f &&
		grep -q "^# object .*libc.so.6\$" $f || { echo "$f"; exit 1; }
	done
'

test_expect_success 'every stack a part uses is defined in that part' '
	for f in $(parts); do
		grep -o " s=[0-9]*\$" $f | sed "s/ s=//" | sort -u >used
		grep "^# stack " $f | cut -d" " -f3 | sort -u >defined
		comm -23 used defined >missing
		test -s used && test ! -s missing || { echo "$f"; cat missing; exit 1; }
	done
'

test_expect_success 'the parts in order are one consistent trace' '
	cat $(parts) >all.log &&
	test_expect_code 1 /usr/bin/mtrace all.log >report &&
	! grep -q -e "never alloc" -e duplicate report &&
	test "$(grep -c "  at " report)" = 3
'

test_expect_success 'mtrec --rotate sets the part size' '
	"$MTREC" --rotate 4M -o "$OUT/launch.log" "$PROG" 2 100000 0 2>err &&
	test -f launch.log.part2
'

test_expect_success 'a bad size is reported and the trace is not cut' '
	MTREC_ROTATE=lots LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/bad.log "$PROG" 2 100000 0 2>err &&
	grep -q "mtrec: MTREC_ROTATE: not a size: .lots." err &&
	test ! -f bad.log.part2
'

test_done
