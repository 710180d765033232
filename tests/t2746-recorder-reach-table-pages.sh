#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2746-recorder-reach-table-pages.sh -- MTREC_REACH=1's table of live
# blocks is carved from one reservation of address space backed by 2 MiB
# pages (issue 30, point 5): its 64 stripes' tables, 512 KB each for a
# million blocks, share huge pages, where each 4 KiB page of them took a
# fault and each window of entries a TLB miss.  The verdicts are the
# same with the reservation and without it (under a limit on the address
# space, RLIMIT_AS, the recorder takes none: each table is a mapping of
# its own, as before), after tables grown through many generations; and
# a million blocks take a few hundred page faults more than a run
# without MTREC_REACH, not 17,000 (a count, not a time: the machine's
# load does not change it).  Where the kernel gives no huge pages
# (transparent_hugepage "never"), the count is not asserted.
#
# Fixture: tests/helper/rec-reach.c (many N, lost N).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach"

. "$TOP/tests/lib-reach.sh"

test_lazy_prereq THP 'grep -q "\[always\]\|\[madvise\]" /sys/kernel/mm/transparent_hugepage/enabled'

# limited TRACE ARGS...: record, under a limit on the address space.
limited() {
	(ulimit -v 8000000 && record "$@")
}

test_expect_success 'lost blocks: the same verdicts with the reservation and without it' '
	record r.log lost 200000 &&
	verdicts r.log | uniq -c >with &&
	limited l.log lost 200000 &&
	verdicts l.log | uniq -c >without &&
	test_cmp with without &&
	grep "^ 100000 0x20 definite\$" with &&
	grep "^ 100000 0x20 indirect\$" with
'

test_expect_success 'reachable blocks: the same verdicts with the reservation and without it' '
	record m.log many 300000 &&
	verdicts m.log | uniq -c >with &&
	limited n.log many 300000 &&
	verdicts n.log | uniq -c >without &&
	test_cmp with without &&
	grep "^ 300002 0x20 reachable\$" with &&
	grep "^      1 0x249f00 reachable\$" with
'

# faults REACH: the minor page faults of "rec-reach many 1000000" under the
# recorder, with MTREC_REACH=REACH.
faults() {
	python3 -c '
import os, resource, subprocess, sys
env = dict(os.environ, LD_PRELOAD=sys.argv[1], MALLOC_TRACE=sys.argv[2], MTREC_REACH=sys.argv[3])
subprocess.run([sys.argv[4], "many", "1000000"], env=env, check=True, timeout=120)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt)' "$LIBMTREC" "$PWD/f.log" "$1" "$PROG"
}

test_expect_success THP 'a million blocks: the table takes few page faults' '
	with=$(faults 1) && without=$(faults 0) &&
	echo "with $with without $without" &&
	test $((with - without)) -lt 6000
'

test_done
