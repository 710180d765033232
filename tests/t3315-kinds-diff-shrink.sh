#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3315-kinds-diff-shrink: `mtanalyze diff` keys sites by kind (issue 10):
# a new leak of one kind is reported alone, even at a line where another
# kind already leaked, from traces and from databases, and the sites that
# took the references of more unbalanced objects show as grown; `shrink`
# keeps the "# k" lines of blocks not released, of bad frees and of
# reference counts, drops the other pairs, and the kept file reports the
# same per kind (and /usr/bin/mtrace the same).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"

if ! need_analyzer || [ ! -x "$KINDS_APP" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'kinds in diff and shrink' 'needs the analyzer, ana-kinds, python3 and sqlite3'
	test_done; exit
fi
S=$KINDS_SRC

test_expect_success 'setup: a base run, and a feature run with a new pool leak and more references' '
	kinds_events 10 | kinds_trace >base.log &&
	{ kinds_events 20 && cat <<-\END
	k pool pool_get_b + 0x7f0000007000 0x40
	k pool rte_alloc + 0x7f0000008000 0x20
	END
	} | kinds_trace >feature.log
'

test_expect_success 'diff of two traces: the new pool leaks, each of its kind, nothing of rte' '
	test_expect_code 1 "$MTANALYZE" diff base.log feature.log >out &&
	cat out &&
	grep -E "^  new +0 -> 1 \(\+1\) +0 -> 64 \(\+64\)  \[pool\] pool_get_b at $S:$(kinds_line POOL-GET-B) in " out &&
	grep -E "^  new +0 -> 1 \(\+1\) +0 -> 32 \(\+32\)  \[pool\] rte_alloc at $S:$(kinds_line RTE-ALLOC) in " out &&
	grep -E "^  grew +10 -> 20 \(\+10\) .*\[dict_t references\] dict_new at " out &&
	grep -E "^  grew +10 -> 20 \(\+10\) .*\[dict_t references\] dict_copy at " out &&
	grep -q "^New or grown leaks in FEATURE: 4 sites" out &&
	! grep -q "\[rte\]" out &&
	! grep -q "smaller or gone" out
'

test_expect_success 'diff of a run with itself: nothing, exit 0' '
	"$MTANALYZE" diff base.log base.log >same &&
	grep -q "^No new or grown leaks in FEATURE\.$" same
'

test_expect_success 'diff of the same runs loaded into a database, and --json' '
	test_expect_code 1 "$MTANALYZE" --db runs.db -q base.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --db runs.db -q feature.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" diff runs.db:1 runs.db:2 >dbout &&
	sed 1,2d out >expect &&
	sed 1,2d dbout >actual &&
	test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" diff --json base.log feature.log >d.json &&
	py "json.dumps (sorted ((c.get (\"kind\"), c[\"function\"], c[\"delta_blocks\"]) for c in d[\"new_or_grown\"]))" d.json >actual &&
	echo "[[\"dict_t references\", \"dict_copy\", 10], [\"dict_t references\", \"dict_new\", 10], [\"pool\", \"pool_get_b\", 1], [\"pool\", \"rte_alloc\", 1]]" >expect &&
	test_cmp expect actual
'

# the facts a per-kind report is made of, without the totals (shrink
# leaves those to the full trace)
facts() {
	python3 -c "
import json, sys
d = json.load (open (sys.argv[1]))
for k in d[\"kinds\"]:
    print (k[\"kind\"], k[\"leaked_blocks\"], k[\"leaked_bytes\"], k[\"bad_frees\"])
    print (json.dumps ([k[\"leak_sites\"], k[\"bad_free_sites\"], k[\"leaks\"], k[\"bad_free_records\"]]))
print (json.dumps (d[\"refcounts\"]))
print (json.dumps ([d[\"leak_sites\"][0][\"function\"], d[\"leaks\"], d[\"bad_frees\"]]))
" "$1"
}

test_expect_success 'shrink drops the released pairs of every kind, keeps the rest' '
	{ kinds_events 10 && echo "k dict_t pool_get_a r 0x7f0000001000"; } | kinds_trace >run.log &&
	"$MTANALYZE" shrink -q run.log -o small.log &&
	test "$(wc -l <small.log)" = "$(wc -l <run.log)" &&
	test "$(grep -c "^# k pool @ .* - 0x7f00000020[04]0$" small.log)" = 0 &&
	test "$(grep -c "^# k pool @ .* + 0x7f00000020[04]0 " small.log)" = 0 &&
	test "$(grep -c "^# k rte @ .* 0x7f000000a000" small.log)" = 0 &&
	test "$(grep -c "^# k pool @ .* + 0x7f000000100[012] 0x40$" small.log)" = 3 &&
	grep -q "^# k pool @ .* - 0x7f0000009000$" small.log &&
	test "$(grep -c "^# k dict_t " run.log)" = "$(grep -c "^# k dict_t " small.log)"
'

test_expect_success 'the kept file reports the same per kind, and the same to /usr/bin/mtrace' '
	test_expect_code 1 "$MTANALYZE" --json run.log >full.json &&
	test_expect_code 1 "$MTANALYZE" --json small.log >small.json &&
	facts full.json >expect &&
	facts small.json >actual &&
	test_cmp expect actual &&
	if [ -x /usr/bin/mtrace ]; then
		/usr/bin/mtrace run.log >m.full || test $? = 1
		/usr/bin/mtrace small.log >m.small || test $? = 1
		test_cmp m.full m.small
	fi
'

test_expect_success 'shrink keeps the allocation and release of a block that had references' '
	kinds_trace >obj.log <<-\END &&
	k GObject pool_get_a + 0x7f0000003000 0
	k GObject dict_new r 0x7f0000003000
	k GObject dict_unref u 0x7f0000003000
	k GObject dict_unref u 0x7f0000003000
	k GObject pool_put - 0x7f0000003000
	k GObject pool_get_b + 0x7f0000004000 0
	k GObject pool_put - 0x7f0000004000
	END
	"$MTANALYZE" --by-site obj.log >full.out &&
	"$MTANALYZE" shrink -q obj.log -o obj.small &&
	"$MTANALYZE" --by-site obj.small >small.out &&
	grep -q "^Every reference of kind .GObject. was dropped\.$" small.out &&
	test "$(grep -c "^# k GObject" obj.small)" = 5
'

test_done
