#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4085-analyzer-plain-events: the plain report takes well-formed events in
# runs of a few hundred (mta_reader_set_events, mta_compat_events); an
# event the run cannot take -- a duplicate allocation, a free or realloc
# of memory never allocated, a realloc's duplicate -- stops it and goes
# to the report as a line, numbered as it was.  Such events all through a
# glibc trace of 30,000, among lines of other forms (addresses in capitals
# or with leading zeros, which the script keys by their text; doubled and
# trailing spaces, a size of 0, a trailing column, callers of 80 bytes
# and more), give what
# /usr/bin/mtrace prints, read serially and on threads in blocks of 200
# bytes, 4 KiB and the default.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -x /usr/bin/mtrace ] || [ ! -f "$GLIBC_DEBUG" ]; then
	test_skip 'plain events in runs' 'needs analyzer, /usr/bin/mtrace and libc_malloc_debug.so'
	test_done; exit
fi

test_expect_success 'setup: a glibc trace with what the script reports all through it' '
	$CC -O1 -g -o gen "$TOP/tests/bench/gen-ana-trace.c" &&
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/good.log ./gen 30000 &&
	awk "{ print }
		/ \\+ 0x/ && NR % 613 == 0 { print }
		/ \\+ 0x/ && NR % 1503 == 0 { sub(/ \\+ /, \" > \"); print }
		NR % 701 == 0 { printf \"@ ./gen:[0x11e5] - 0x7f00dead%x\\n\", NR }
		NR % 911 == 0 { printf \"@ ./gen:[0x11e5] < 0x7f00beef%x\\n@ ./gen:[0x11e5] > 0x7f00beef%x 0x20\\n\", NR, NR }
		NR % 1301 == 0 { printf \"@ ./gen:[0x123f] + 0x7F00ABC%x 0x30\\n@ ./gen:[0x1270] - 0x7f00abc%x\\n\", NR, NR }
		NR % 1409 == 0 { printf \"@ ./gen:[0x11e5] + 0x00007f00aaaa%x 0x10\\n- 0x7f00aaaa%x\\n\", NR, NR }
		NR % 1511 == 0 { printf \"@ ./gen:[0x11e5]  + 0x7f00cafe%x 0x1A\\n- 0x7f00cafe%x \\n\", NR, NR }
		NR % 1601 == 0 { printf \"@ ./gen:[0x11e5] + 0x7f00bbbb%x 0\\n+ 0x7f00dddd%x 0x10 s=12\\n\", NR, NR }
		NR % 1709 == 0 { printf \"@ %s[0x%x] + 0x7f00eeee%x 0x10\\n@ %s[0x%x] - 0x7f00eeee%x\\n\", lib, NR, NR, lib, NR, NR }
		NR % 1801 == 0 { printf \"@ %s[0x%x] + 0x7f00ffff%x 0x10\\n@ %s[0x%x]  + 0x7f00ffff%x 0x10\\n\", lib, NR, NR, lib, NR, NR }" \
		lib=/usr/lib/x86_64-linux-gnu/libnot-there-for-a-long-caller.so.1:\(nt_alloc+0x1e\) \
		good.log >odd.log &&
	test "$(grep -c " - 0x7f00dead" odd.log)" -gt 40
'

test_expect_success 'serially: what mtrace prints, duplicates and frees never allocated among them' '
	MTANALYZE_THREADS=1 && export MTANALYZE_THREADS &&
	same_as_mtrace ./gen odd.log -- ./gen odd.log &&
	test "$(grep -c "Alloc [0-9]* duplicate" actual)" -gt 10 &&
	test "$(grep -c "Realloc [0-9]* duplicate" actual)" -gt 5 &&
	test "$(grep -c "Free [0-9]* was never" actual)" -gt 40 &&
	test "$(grep -c "Realloc [0-9]* was never" actual)" -gt 20 &&
	grep -q "^0x000007f00beef" actual && grep -q "^0x0000007f00abc" actual &&
	grep -q "^- 0x0*7f00aaaa.* was never" actual && grep -q "^0x0*7f00aaaa" actual &&
	grep -q "^0x0*7f00bbbb[0-9a-f]*        0  at " actual && grep -q "^0x0*7f00dddd" actual &&
	! grep -q "cafe" actual && ! grep -q eeee actual &&
	grep -q "^+ 0x0*7f00ffff[0-9a-f]* Alloc [0-9]* duplicate: 0x" actual
'

test_expect_success 'on threads, in blocks of any size: the same' '
	for b in 200 4096 1048576; do
		st=0 && MTANALYZE_THREADS=2 MTANALYZE_BLOCK_SIZE=$b "$MTANALYZE" ./gen odd.log \
			>actual.$b 2>err.$b || st=$?
		echo "exit $st" >>actual.$b &&
		test_cmp expect actual.$b || return 1
	done
'

test_done
