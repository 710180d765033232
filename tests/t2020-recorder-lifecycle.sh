#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Allocations at the edges of a process's life are recorded consistently:
# in a library constructor and destructor, in threads starting and exiting,
# in atexit handlers, and in a thread still allocating while the process
# exits.  glibc's mtrace must find no impossible free and only the planned
# leaks, and the program must exit as it does without the recorder.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-lifecycle"
EARLY="$HELPER/librec-early.so"

test_expect_success 'the program exits 0 under the recorder, five times' '
	for i in 1 2 3 4 5; do
		LD_PRELOAD="$EARLY $LIBMTREC" MALLOC_TRACE=$OUT/life$i.log "$PROG" 4 || exit 1
	done
'

# The thread still running at exit may hold the block it just allocated.
# And since a thread is still running, libc's caches are not released
# (__libc_freeres() could free them under it): the trace says so, and the
# TLS blocks glibc keeps for exited threads' cached stacks (dl-tls.c) are
# still live.  Those are the only unfreed blocks besides the planned ones.
busy_line=$(grep -n "malloc(32)" "$TOP/tests/helper/rec-lifecycle.c" | cut -d: -f1)
test_expect_success 'every trace is consistent and has exactly the 4 leaks' '
	for i in 1 2 3 4 5; do
		test_expect_code 1 /usr/bin/mtrace "$PROG" life$i.log >report$i &&
		! grep -q -e "never alloc" -e duplicate report$i &&
		grep -a -x "# freeres skipped: 1 other thread running" life$i.log &&
		test "$(grep -c " 0xd05  at " report$i)" = 4 &&
		test "$(grep "  at " report$i | grep -v -c -e "dl-tls.c" -e "c:$busy_line")" = 4 &&
		test "$(grep -c "c:$busy_line" report$i)" -le 1 || { cat report$i; exit 1; }
	done
'

test_expect_success 'the constructor'"'"'s allocation and the destructor'"'"'s free are recorded' '
	grep -q "^@ [^ ]*libc.so.6:(__strdup+[0-9a-f]*)\[0x[0-9a-f]*\] + 0x[0-9a-f]* 0x1b\$" life1.log
'

test_expect_success 'the preload order does not matter' '
	LD_PRELOAD="$LIBMTREC $EARLY" MALLOC_TRACE=$OUT/rev.log "$PROG" 1 &&
	test_expect_code 1 /usr/bin/mtrace "$PROG" rev.log >report &&
	! grep -q -e "never alloc" -e duplicate report
'

test_expect_success 'two hundred threads left their "# T" lines' '
	test "$(grep "^# T " life1.log | sort -u | wc -l)" -ge 150
'

test_done
