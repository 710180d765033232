#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3410-analyzer-reach-db-diff.sh -- mtanalyze --db stores the recorder's
# reachability verdicts (schema version 6): each leaked block's kind in
# leaks.reach, the scan's line, whether it finished, what it could not
# scan and the --leaks filter in runs, the view leaks_by_reach; a trace
# without verdicts leaves them NULL; a version 5 database is migrated at
# its next load, its runs kept.  mtanalyze diff --leaks KINDS compares
# only the blocks of those kinds, from traces and from a database, and
# refuses a run without verdicts (exit 2).
. "$(dirname "$0")/lib.sh"

q() { sqlite3 -batch -separator '|' "$@"; }

cat >r.log <<\EOF
= Start
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(lost+10)[0x1010] + 0x1040 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
# reach begin 3
# reach 0x1000 definite
# reach 0x1040 indirect
# reach 0x2000 reachable
# reach unscanned registers of 1 other thread: not readable while they run
# reach end 500 2
@ ./app:(late+10)[0x1210] + 0x3000 0x8
= End
EOF
grep -v "^# reach" r.log >plain.log

test_expect_success SQLITE3 'each leaked block with its kind, the run with its scan' '
	test_expect_code 1 "$MTANALYZE" --db r.db r.log >out &&
	test "$(q r.db "PRAGMA user_version")" = 8 &&
	q r.db "SELECT printf (\"0x%x\", address), reach FROM leaks ORDER BY address" >actual &&
	printf "0x1000|definite\n0x1040|indirect\n0x2000|reachable\n0x3000|unknown\n" >expect &&
	test_cmp expect actual &&
	q r.db "SELECT reach_line, reach_finished, reach_notes, leak_kinds IS NULL, all_leaked_blocks,
		all_leaked_bytes FROM runs" >actual &&
	echo "5|1|registers of 1 other thread: not readable while they run|1|4|360" >expect &&
	test_cmp expect actual
'

test_expect_success SQLITE3 'leaks_by_reach: each site'"'"'s blocks by kind; leak_list shows the kind' '
	q r.db "SELECT function, reach, blocks, bytes FROM leaks_by_reach ORDER BY function, reach" >actual &&
	printf "cache+0x10|reachable|1|256\nlate+0x10|unknown|1|8\nlost+0x10|definite|1|48\nlost+0x10|indirect|1|48\n" >expect &&
	test_cmp expect actual &&
	test "$(q r.db "SELECT reach FROM leak_list WHERE address = \"0x2000\"")" = reachable
'

test_expect_success SQLITE3 '--leaks: only those kinds stored as leaks, the filter and every block counted in runs' '
	test_expect_code 1 "$MTANALYZE" --db r.db --leaks definite,indirect r.log >out &&
	q r.db "SELECT leaked_blocks, leak_kinds, all_leaked_blocks FROM runs WHERE id = 2" >actual &&
	echo "2|definite,indirect|4" >expect &&
	test_cmp expect actual &&
	test "$(q r.db "SELECT group_concat (reach) FROM (SELECT reach FROM leaks WHERE run_id = 2 ORDER BY reach)")" = definite,indirect
'

test_expect_success SQLITE3 'a trace without verdicts: NULL, and leaks_by_reach has no rows for it' '
	test_expect_code 1 "$MTANALYZE" --db r.db plain.log >out &&
	test "$(q r.db "SELECT count(*) FROM leaks WHERE run_id = 3 AND reach IS NOT NULL")" = 0 &&
	test "$(q r.db "SELECT reach_line IS NULL, reach_finished IS NULL FROM runs WHERE id = 3")" = "1|1" &&
	test "$(q r.db "SELECT count(*) FROM leaks_by_reach WHERE run_id = 3")" = 0
'

test_expect_success SQLITE3 'a version 5 database is migrated at its next load, its run kept' '
	sqlite3 v5.db <"$TOP/tests/reach-v5-db.sql" &&
	test "$(q v5.db "PRAGMA user_version")" = 5 &&
	! q v5.db "SELECT reach FROM leaks" 2>/dev/null &&
	old=$(q v5.db "SELECT id, leaked_blocks, leaked_bytes FROM runs") &&
	test_expect_code 1 "$MTANALYZE" --db v5.db r.log >out &&
	grep -q "^run 2 loaded" out &&
	test "$(q v5.db "PRAGMA user_version")" = 8 &&
	test "$(q v5.db "SELECT id, leaked_blocks, leaked_bytes FROM runs WHERE id = 1")" = "$old" &&
	test "$(q v5.db "SELECT count(*) FROM leaks WHERE run_id = 1 AND reach IS NULL")" = 2 &&
	test "$(q v5.db "SELECT count(*) FROM leak_list WHERE run_id = 2 AND reach = \"definite\"")" = 1
'

# A feature that adds a leak (definite) and a cache (still reachable).
cat >base.log <<\EOF
= Start
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
# reach begin 2
# reach 0x1000 definite
# reach 0x2000 reachable
# reach end 10 0
= End
EOF
cat >feature.log <<\EOF
= Start
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
@ ./app:(newleak+10)[0x1310] + 0x3000 0x20
@ ./app:(newcache+10)[0x1410] + 0x4000 0x40
# reach begin 4
# reach 0x1000 definite
# reach 0x2000 reachable
# reach 0x3000 definite
# reach 0x4000 reachable
# reach end 10 0
= End
EOF

# new_sites OUT: the functions of the new or grown sites of a text diff.
new_sites() {
	sed -n "s/^  new .*  \([a-z]*\)+0x10 in .*/\1/p" "$1" | sort | tr "\n" " "
}

test_expect_success 'diff: without --leaks every new block not freed, the cache too' '
	test_expect_code 1 "$MTANALYZE" diff base.log feature.log >out &&
	test "$(new_sites out)" = "newcache newleak " &&
	! grep "(--leaks)" out
'

test_expect_success 'diff --leaks definite,indirect: only the leak, said in the header' '
	test_expect_code 1 "$MTANALYZE" diff --leaks definite,indirect base.log feature.log >out &&
	test "$(new_sites out)" = "newleak " &&
	grep "^BASE     base.log: 1 leaked block, 48 bytes\$" out &&
	grep "^Only the blocks definitely lost or indirectly lost are compared (--leaks)\.\$" out &&
	test_expect_code 1 "$MTANALYZE" diff --json --leaks reachable base.log feature.log >d.json &&
	python3 -c "import json; d = json.load(open(\"d.json\")); assert d[\"leak_kinds\"] == [\"reachable\"]; assert [c[\"function\"] for c in d[\"new_or_grown\"]] == [\"newcache+0x10\"], d"
'

test_expect_success 'diff --leaks possible: nothing new of that kind, exit 0' '
	"$MTANALYZE" diff --leaks possible base.log feature.log >out &&
	grep "^No new or grown leaks in FEATURE\.\$" out
'

test_expect_success SQLITE3 'diff --leaks between runs of a database, and a database run against a trace' '
	test_expect_code 1 "$MTANALYZE" --db d.db base.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --db d.db feature.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" diff --leaks definite d.db:1 d.db:2 >out &&
	test "$(new_sites out)" = "newleak " &&
	grep "^FEATURE  d.db:2 (run 2): 2 leaked blocks, 80 bytes\$" out &&
	test_expect_code 1 "$MTANALYZE" diff --leaks reachable d.db:1 feature.log >out &&
	test "$(new_sites out)" = "newcache "
'

test_expect_success SQLITE3 'diff --leaks on a run without verdicts: exit 2, naming it' '
	grep -v "^# reach" base.log >base-plain.log &&
	test_expect_code 2 "$MTANALYZE" diff --leaks definite base-plain.log feature.log 2>err &&
	grep "^mtanalyze: --leaks: .base-plain.log. has no reachability verdicts" err &&
	test_expect_code 2 "$MTANALYZE" diff --leaks definite v5.db:1 feature.log 2>err &&
	grep "^mtanalyze: --leaks: .v5.db:1 (run 1). has no reachability verdicts" err &&
	test_expect_code 2 "$MTANALYZE" diff --leaks sometimes base.log feature.log 2>err &&
	grep "unknown kind .sometimes." err
'

test_done
