#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2710-recorder-reach-roots: MTREC_REACH=1 scans, as roots, the memory the
# program mapped itself, as valgrind's leak check does (every readable and
# writable mapping but its own heap and devices): a block pointed to only
# from an anonymous mapping, a shared one, a file of /dev/shm, /dev/zero,
# 64 kB the kernel merged with malloc's mapping of a large block, or a
# page touched 200 MB into a reservation of 256 MB is "reachable", as in
# valgrind; one pointed to only from malloc's free memory (the main
# arena's, a thread arena's, or the memory malloc mapped when brk() failed),
# from the stale part of a thread's stack (one that ended, one that runs
# and that the recorder does not know), or from a mapping made read-only or
# PROT_NONE stays "definite", as in valgrind.  The reservation is not read
# page after page: only the pages that hold data.  Under another malloc
# (jemalloc), whose free memory cannot be told from the program's, no
# anonymous mapping is read.
#
# Fixture: tests/helper/rec-reach-roots.c.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-reach-roots"

test_lazy_prereq VALGRIND 'command -v valgrind'

. "$TOP/tests/lib-reach.sh"

# vg_verdicts LOG: the same from valgrind's loss records (one block each,
# of the fixture's sizes).
vg_verdicts() {
	tr -d , <"$1" | awk '$3 == "bytes" && $4 == "in" && $5 == "1" && $7 == "are" {
		k = $8 == "still" ? "reachable" : $8 == "possibly" ? "possible" : $8 == "definitely" ? "definite" : $8 == "indirectly" ? "indirect" : $8
		if (($2 >= 257 && $2 <= 271) || $2 == 1048576) printf "0x%x %s\n", $2, k }' | sort
}

test_expect_success 'the fixture runs without the recorder' '
	"$PROG" &&
	"$PROG" nobrk
'

test_expect_success 'MTREC_REACH=1: the program'\''s own mappings are roots, malloc'\''s free memory and stale stacks are not' '
	cat >expect.kinds <<-\EOF &&
	0x100000 reachable
	0x101 reachable
	0x102 reachable
	0x103 reachable
	0x104 reachable
	0x105 reachable
	0x106 reachable
	0x107 possible
	0x108 definite
	0x109 definite
	0x10a definite
	0x10b definite
	0x10c definite
	0x10f definite
	EOF
	record t.log &&
	verdicts t.log >actual &&
	test_cmp expect.kinds actual &&
	tail -n 1 t.log | grep "^= End\$" &&
	! grep -a "^# reach unscanned mapping" t.log
'

test_expect_success 'the running thread the recorder does not know: its stack named unscanned, not read whole' '
	grep -a "^# reach unscanned stack of thread [0-9]*: not found" t.log
'

test_expect_success 'the reservation of 256 MB is read only where its pages hold data' '
	bytes=$(sed -n "s/^# reach end \([0-9]*\) [0-9]*\$/\1/p" t.log) &&
	test -n "$bytes" &&
	test "$bytes" -lt 67108864
'

test_expect_success VALGRIND 'valgrind --leak-check=full: the same kind for each block' '
	valgrind --leak-check=full --show-leak-kinds=all --log-file=vg.log "$PROG" &&
	vg_verdicts vg.log >vg &&
	test_cmp expect.kinds vg
'

test_expect_success 'brk() blocked: the memory malloc mapped for its main arena is left out, and said so' '
	record nobrk.log nobrk &&
	verdicts nobrk.log >actual &&
	grep "^0x10d reachable\$" actual &&
	grep "^0x10e definite\$" actual &&
	grep -v "^0x10[de] " actual >rest &&
	test_cmp expect.kinds rest &&
	grep -a "^# reach unscanned mapping 0x[0-9a-f]*-0x[0-9a-f]*: holds chunks of malloc'\''s main arena" nobrk.log
'

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
test_lazy_prereq JEMALLOC '[ -r "$JEMALLOC" ]'

# Another allocator's free memory and tables lie in anonymous mappings of
# its own, which cannot be told from the program's: none is read, the
# shared and file mappings are.
test_expect_success JEMALLOC 'malloc is jemalloc: no anonymous mapping is a root, and that is said' '
	rm -f je.log &&
	timeout 120 env LD_PRELOAD="$LIBMTREC $JEMALLOC" MALLOC_TRACE="$PWD/je.log" MTREC_REACH=1 "$PROG" &&
	verdicts je.log >actual &&
	grep "^0x101 definite\$" actual &&
	grep "^0x102 reachable\$" actual &&
	grep "^0x103 reachable\$" actual &&
	grep "^0x108 definite\$" actual &&
	grep "^0x109 definite\$" actual &&
	grep -a "^# reach unscanned anonymous mappings: malloc is not glibc" je.log
'

test_done
