#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3318-kinds-compact: `mtanalyze compact` keeps the "# k" lines of other
# allocators and reference counts (issue 10): the compacted trace reports
# the same per kind as the full one.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"

if ! need_analyzer || [ ! -x "$KINDS_APP" ] || ! command -v python3 >/dev/null; then
	test_skip 'kinds and compact' 'needs the analyzer, ana-kinds and python3'
	test_done; exit
fi

test_expect_success 'a compacted trace reports the same kinds and reference counts' '
	kinds_events 50 | kinds_trace >full.log &&
	cp full.log t.log &&
	"$MTANALYZE" compact t.log >/dev/null &&
	test "$(grep -c "^# k " t.log.compact)" = "$(grep -c "^# k " full.log)" &&
	test_expect_code 1 "$MTANALYZE" --json full.log >full.json &&
	test_expect_code 1 "$MTANALYZE" --json t.log.compact >compact.json &&
	py "json.dumps ([d[\"kinds\"], d[\"refcounts\"]], sort_keys = True)" full.json >expect &&
	py "json.dumps ([d[\"kinds\"], d[\"refcounts\"]], sort_keys = True)" compact.json >actual &&
	test_cmp expect actual
'

test_done
