#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3300-kinds-by-site-report: "# k KIND" lines (other allocators and
# reference counts, issue 10) in --by-site: each kind under its own
# heading after malloc's report, leaks and bad frees per call site per
# kind (a kind's release of a block another kind allocated is that kind's
# bad free), unbalanced reference counts grouped by call path (a thousand
# objects leaked the same way are one entry); malloc's rows are the rows
# of the same trace without the "# k" lines; exit 1 when a kind leaks, 0
# when every kind is balanced; damaged "# k" lines are warned about and
# skipped.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"

if ! need_analyzer || [ ! -x "$KINDS_APP" ]; then
	test_skip 'kinds by site' 'needs the analyzer and tests/helper/ana-kinds'
	test_done; exit
fi
S=$KINDS_SRC

# kind_row KIND BLOCKS BYTES FUNCTION MARKER FILE: the row of a kind's leak
kind_row() {
	grep -E "^  $1 +$2 +$3  $4 at $S:$(kinds_line "$5") in " "$6"
}

test_expect_success 'two allocator kinds: leaks by site under their own headings, exit 1' '
	kinds_events 1000 | kinds_trace >run.log &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 2 run.log >out 2>err &&
	cat out &&
	test_must_be_empty err &&
	grep -q "^Not released, kind .pool., by call site: 3 blocks, 192 bytes, 1 site$" out &&
	kind_row pool 3 192 pool_get_a POOL-GET-A out &&
	grep -q "^Not released, kind .rte., by call site: 1 block, 256 bytes, 1 site$" out &&
	kind_row rte 1 256 rte_alloc RTE-ALLOC out &&
	test "$(grep -c -E "^  (pool|rte) +[0-9]+ +[0-9]+  " out)" = 2 &&
	! grep -q "pool_get_b\|rte_free" out
'

test_expect_success 'a release of a block the kind never allocated is its bad free, even when another kind did' '
	grep -q "^Releases of kind .pool. of blocks it never allocated, by call site: 1 release, 1 site$" out &&
	grep -E "^  pool +1  pool_put_stray at $S:$(kinds_line POOL-PUT-STRAY) in " out &&
	! grep -q "^Releases of kind .rte." out
'

test_expect_success 'unbalanced references: 1,000 objects leaked one way are one entry, with their paths counted' '
	grep -q "^Unbalanced references, kind .dict_t.: 1000 objects above zero, 1 entry$" out &&
	grep -A7 "^  dict_t: 1,000 objects with net count +1, " out >entry &&
	grep -E "^      x1000 +dict_new at $S:$(kinds_line DICT-NEW) in " entry &&
	grep -E "^      x1000 +dict_copy at $S:$(kinds_line DICT-COPY) in " entry &&
	sed -n "/dropped at:/,\$p" entry | grep -E "^      x1000 +dict_unref at $S:$(kinds_line DICT-UNREF) in " &&
	test "$(grep -c "^  dict_t: " out)" = 1
'

test_expect_success 'a drop of a reference no tracked call took is reported apart, by its path' '
	grep -A3 "^Below zero, kind .dict_t.: 1 reference dropped that no tracked call took (taken before the recording began, or by a path not tracked), 1 path, 1 address$" out >neg &&
	grep -E "^  dict_t +x1 +dict_unref_extra at $S:$(kinds_line DICT-UNREF-EXTRA) in " neg
'

test_expect_success 'malloc keeps its place and rows: the same as without the "# k" lines' '
	grep -v "^# k " run.log >plain.log &&
	test_expect_code 1 "$MTANALYZE" --by-site plain.log >plain.out &&
	head -n 4 plain.out >expect &&
	head -n 4 out >actual &&
	test_cmp expect actual &&
	grep -E "^ *[0-9]" plain.out >expect &&
	grep -E "^ *[0-9]" out >actual &&
	test_cmp expect actual &&
	! grep -q "^Kind " plain.out
'

test_expect_success 'exit 0 when every kind is balanced and malloc does not leak' '
	kinds_trace >ok.log <<-\END &&
	k pool pool_get_b + 0x7f0000002000 0x40
	k pool pool_put - 0x7f0000002000
	k dict_t dict_new r 0x55d0d0000000
	k dict_t dict_unref u 0x55d0d0000000
	END
	"$MTANALYZE" --by-site ok.log >out2 &&
	grep -q "^Every block of kind .pool. was released\.$" out2 &&
	grep -q "^Every reference of kind .dict_t. was dropped\.$" out2 &&
	"$MTANALYZE" --json ok.log >/dev/null
'

test_expect_success 'exit 1 on a kind leak alone, and on unbalanced references alone' '
	kinds_trace >k1.log <<-\END &&
	k rte rte_alloc + 0x7f0000009000 0x100
	END
	test_expect_code 1 "$MTANALYZE" --by-site k1.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --json k1.log >/dev/null &&
	kinds_trace >k2.log <<-\END &&
	k dict_t dict_new r 0x55d0d0000000
	END
	test_expect_code 1 "$MTANALYZE" --by-site k2.log >/dev/null
'

test_expect_success 'an object its kind allocated starts at one reference, and its release ends it' '
	kinds_trace >obj.log <<-\END &&
	k GObject pool_get_a + 0x7f0000003000 0
	k GObject dict_new r 0x7f0000003000
	k GObject dict_unref u 0x7f0000003000
	k GObject dict_unref u 0x7f0000003000
	k GObject pool_put - 0x7f0000003000
	k GObject pool_get_b + 0x7f0000004000 0
	k GObject dict_copy r 0x7f0000004000
	k GObject dict_unref u 0x7f0000004000
	END
	test_expect_code 1 "$MTANALYZE" --by-site obj.log >out3 &&
	cat out3 &&
	grep -q "^Unbalanced references, kind .GObject.: 1 object above zero, 1 entry$" out3 &&
	grep -A2 "^  GObject: 1 object with net count +1, e.g. 0x7f0000004000$" out3 >e &&
	grep -E "x1 +pool_get_b at " e &&
	kind_row GObject 1 0 pool_get_b POOL-GET-B out3
'

test_expect_success 'a run the recorder stopped: kinds report what was live or unbalanced then' '
	kinds_trace >stopped.log <<-\END &&
	k pool pool_get_a + 0x7f0000001000 0x40
	k dict_t dict_new r 0x55d0d0000000
	# stopped the disk is full: ENOSPC
	# lost 12 events after recording stopped
	END
	test_expect_code 1 "$MTANALYZE" --by-site stopped.log >out5 2>err5 &&
	grep -q "^Not released before the recording stopped, kind .pool., by call site: 1 block, 64 bytes" out5 &&
	grep -q "^Unbalanced references when the recording stopped, kind .dict_t.: 1 object above zero, 1 entry$" out5 &&
	grep -q "incomplete" err5
'

test_expect_success 'damaged "# k" lines are warned about like other damaged lines, and skipped' '
	{ kinds_events 2 && cat <<-\END
	# k bad!kind @ ./x:[0x1] + 0x7f0000005000 0x10
	# k pool + 0x7f0000005000
	# k pool @ ./x:[0x1] x 0x7f0000005000
	# k pool @ ./x:[0x1] - nil
	# k pool @ ./x:[0x1] r 0x7f0000005000 0x10
	# k
	END
	} | kinds_trace >bad.log &&
	test_expect_code 1 "$MTANALYZE" --by-site bad.log >out4 2>err4 &&
	cat err4 &&
	test "$(grep -c "^mtanalyze: bad.log:[0-9]*: unreadable line .# k" err4)" = 5 &&
	grep -q "^mtanalyze: 6 unreadable lines in all, 5 shown$" err4 &&
	kind_row pool 3 192 pool_get_a POOL-GET-A out4 &&
	test_expect_code 1 "$MTANALYZE" --json bad.log >bad.json 2>/dev/null &&
	grep -q "\"unreadable_lines\": 6," bad.json
'

test_done
