#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3305-kinds-mtrace-compat: "# k" lines (issue 10) change nothing in the
# mtrace-compatible report (the default mode, --no-inherit):
# with --mtrace-exact or BINARY it prints what /usr/bin/mtrace prints on
# the same file, byte for byte, and exits as it does; and in every mode it
# is what the report of the same trace with those lines turned into plain
# comments (as an older mtanalyze saw them) is.  Damaged "# k" lines only
# add the usual warning on stderr.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"

if ! need_analyzer || [ ! -x "$KINDS_APP" ] || [ ! -x /usr/bin/mtrace ]; then
	test_skip 'kinds and mtrace' 'needs the analyzer, tests/helper/ana-kinds and /usr/bin/mtrace'
	test_done; exit
fi

# the run, with a free of memory never allocated and a duplicate among
# the "# k" lines, so that line numbers show
test_expect_success 'setup' '
	{ kinds_events 5 && cat <<-\END
	m malloc_free - 0x55d0c07c9990
	k pool pool_get_a + 0x55d0c07c5000 0x40
	m malloc_leak + 0x55d0c07c5000 0x30
	# k pool @ ./x:[0x1] x 0x7f0000005000
	# k bad!kind + 0x1
	END
	} | kinds_trace >run.log &&
	grep -c "^# k " run.log &&
	sed "s/^# k .*/# x/" run.log >commented.log &&
	test "$(wc -l <run.log)" = "$(wc -l <commented.log)"
'

for args in "--mtrace-exact" "--mtrace-exact --no-inherit"; do
	test_expect_success "mtanalyze $args TRACE is /usr/bin/mtrace TRACE" '
		same_as_mtrace run.log -- $args run.log &&
		grep -q "never alloc" actual && grep -q "duplicate" actual &&
		grep -q "unreadable line .# k pool @ ./x:\[0x1\] x " err
	'
done

test_expect_success 'mtanalyze BINARY TRACE is /usr/bin/mtrace BINARY TRACE' '
	same_as_mtrace "$KINDS_APP" run.log -- "$KINDS_APP" run.log
'

test_expect_success 'and the report of the trace whose "# k" lines are plain comments' '
	for args in "" "--mtrace-exact" "--no-inherit" "$KINDS_APP"; do
		st=0 && "$MTANALYZE" $args run.log >with 2>/dev/null || st=$?
		test "$st" = 1 &&
		st=0 && "$MTANALYZE" $args commented.log >without 2>/dev/null || st=$?
		test "$st" = 1 &&
		test_cmp without with || return 1
	done
'

test_done
