#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The trace is written through large page-cache folios: recording maps up
# to 2 MiB per page fault, not 4 KiB.  Faulting each 4 KiB page made
# recording three times slower, and nothing else noticed: this test does.
. "$(dirname "$0")/lib.sh"

thp=/sys/kernel/mm/transparent_hugepage/enabled
if [ ! -x /usr/bin/time ]; then
	test_skip 'a 150 MB trace takes far fewer page faults than 4 KiB pages' \
		'/usr/bin/time is not installed (package time)'
elif [ ! -r $thp ] || grep -q '\[never\]' $thp; then
	test_skip 'a 150 MB trace takes far fewer page faults than 4 KiB pages' \
		'transparent huge pages are off on this machine'
else
test_expect_success 'a 150 MB trace takes far fewer page faults than 4 KiB pages' '
	/usr/bin/time -f "%R" -o faults env LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/pf.log \
		"$HELPER/bench-alloc" 2 500000 &&
	pages=$(( $(wc -c <pf.log) / 4096 )) &&
	echo "$(cat faults) faults for $pages pages" &&
	test "$(cat faults)" -lt $((pages / 4)) &&
	test_when_passed "rm -f pf.log"
'
fi

test_done
