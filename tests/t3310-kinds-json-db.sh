#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3310-kinds-json-db: the tracked kinds (issue 10) in --json ("kinds",
# "refcounts"; malloc's members stay malloc's alone) and in --db (schema
# v5: kinds, kind_stats, kind_leaks, kind_bad_frees, refcounts,
# refcount_paths), naming exactly the run's sites and counts; a version 4
# database made by mtanalyze before the kinds gets the new tables at its
# next load and keeps its runs.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"

if ! need_analyzer || [ ! -x "$KINDS_APP" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'kinds in JSON and the database' 'needs the analyzer, ana-kinds, python3 and sqlite3'
	test_done; exit
fi
S=$KINDS_SRC

test_expect_success 'setup' '
	kinds_events 100 | kinds_trace >run.log &&
	test_expect_code 1 "$MTANALYZE" --json --frames 2 run.log >run.json
'

test_expect_success 'JSON: malloc members unchanged, one "kinds" entry per kind in order of appearance' '
	test "$(py "len(d[\"leak_sites\"]), d[\"run\"][\"leaked_blocks\"], \"kind\" in d[\"leak_sites\"][0]" run.json)" = "1 1 False" &&
	test "$(py "json.dumps ([k[\"kind\"] for k in d[\"kinds\"]])" run.json)" = "[\"rte\", \"pool\", \"dict_t\"]"
'

test_expect_success 'JSON: the pool and rte leaks at their lines, the bad free of pool' '
	py "json.dumps ([(k[\"kind\"], k[\"allocations\"], k[\"releases\"], k[\"leaked_blocks\"], k[\"leaked_bytes\"], k[\"bad_frees\"]) for k in d[\"kinds\"]])" run.json >actual &&
	echo "[[\"rte\", 2, 1, 1, 256, 0], [\"pool\", 5, 2, 3, 192, 1], [\"dict_t\", 0, 0, 0, 0, 0]]" >expect &&
	test_cmp expect actual &&
	py "json.dumps ([(s[\"kind\"], s[\"function\"], s[\"line\"], s[\"leaked_blocks\"], s[\"leaked_bytes\"]) for k in d[\"kinds\"] for s in k[\"leak_sites\"]])" run.json >actual &&
	echo "[[\"rte\", \"rte_alloc\", $(kinds_line RTE-ALLOC), 1, 256], [\"pool\", \"pool_get_a\", $(kinds_line POOL-GET-A), 3, 192]]" >expect &&
	test_cmp expect actual &&
	test "$(py "json.dumps (sorted (l[\"address\"] for l in d[\"kinds\"][1][\"leaks\"]))" run.json)" = "[\"0x7f0000001000\", \"0x7f0000001001\", \"0x7f0000001002\"]" &&
	test "$(py "json.dumps ([(b[\"kind\"], b[\"address\"], d[\"kinds\"][1][\"bad_free_sites\"][b[\"site\"]][\"function\"]) for b in d[\"kinds\"][1][\"bad_free_records\"]])" run.json)" = "[[\"pool\", \"0x7f0000009000\", \"pool_put_stray\"]]"
'

test_expect_success 'JSON: refcounts, one entry for the 100 objects and one below zero' '
	py "json.dumps ([(r[\"kind\"], r[\"objects\"], r[\"net_count\"], r[\"below_zero\"]) for r in d[\"refcounts\"]])" run.json >actual &&
	echo "[[\"dict_t\", 100, 1, false], [\"dict_t\", 1, -1, true]]" >expect &&
	test_cmp expect actual &&
	py "json.dumps (sorted ((p[\"function\"], p[\"line\"], p[\"count\"]) for p in d[\"refcounts\"][0][\"references\"]))" run.json >actual &&
	echo "[[\"dict_copy\", $(kinds_line DICT-COPY), 100], [\"dict_new\", $(kinds_line DICT-NEW), 100]]" >expect &&
	test_cmp expect actual &&
	test "$(py "json.dumps ([(p[\"function\"], p[\"count\"]) for p in d[\"refcounts\"][0][\"unreferences\"]])" run.json)" = "[[\"dict_unref\", 100]]" &&
	test "$(py "json.dumps ([(p[\"function\"], p[\"count\"]) for p in d[\"refcounts\"][1][\"unreferences\"]] + d[\"refcounts\"][1][\"references\"])" run.json)" = "[[\"dict_unref_extra\", 1]]"
'

test_expect_success 'DB: schema 5, the kinds and their sites' '
	test_expect_code 1 "$MTANALYZE" --db runs.db run.log >/dev/null &&
	test "$(q runs.db "PRAGMA user_version")" = 8 &&
	q runs.db "SELECT kind, allocations, releases, leaked_blocks, leaked_bytes, bad_frees,
		references_taken, references_dropped FROM kinds WHERE run_id = 1 ORDER BY kind" >actual &&
	printf "%s\n" "dict_t|0|0|0|0|0|201|102" "pool|5|2|3|192|1|0|0" "rte|2|1|1|256|0|0|0" >expect &&
	test_cmp expect actual &&
	q runs.db "SELECT kind, function, line, leaked_blocks, leaked_bytes FROM kind_leaks_by_site
		ORDER BY kind" >actual &&
	printf "%s\n" "pool|pool_get_a|$(kinds_line POOL-GET-A)|3|192" "rte|rte_alloc|$(kinds_line RTE-ALLOC)|1|256" >expect &&
	test_cmp expect actual &&
	test "$(q runs.db "SELECT count(*) FROM kind_leaks WHERE kind = \"pool\"")" = 3 &&
	q runs.db "SELECT b.kind, printf (\"0x%x\", b.address), s.function FROM kind_bad_frees b
		JOIN sites s ON s.id = b.site_id" >actual &&
	echo "pool|0x7f0000009000|pool_put_stray" >expect &&
	test_cmp expect actual &&
	test "$(q runs.db "SELECT leaked_blocks FROM runs")" = 1 &&
	test "$(q runs.db "SELECT count(*) FROM leaks")" = 1
'

test_expect_success 'DB: refcounts and their paths' '
	q runs.db "SELECT kind, objects, net_count, below_zero, op, count, function, location
		FROM refcount_list ORDER BY entry, op, function" >actual &&
	printf "%s\n" "dict_t|100|1|0|r|100|dict_copy|$S:$(kinds_line DICT-COPY)" \
		"dict_t|100|1|0|r|100|dict_new|$S:$(kinds_line DICT-NEW)" \
		"dict_t|100|1|0|u|100|dict_unref|$S:$(kinds_line DICT-UNREF)" \
		"dict_t|1|-1|1|u|1|dict_unref_extra|$S:$(kinds_line DICT-UNREF-EXTRA)" >expect &&
	test_cmp expect actual
'

test_expect_success 'a version 4 database (made before the kinds) is migrated at its next load' '
	sqlite3 v4.db <"$TOP/tests/kinds-v4-db.sql" &&
	test "$(q v4.db "PRAGMA user_version")" = 4 &&
	! q v4.db "SELECT count(*) FROM kinds" 2>/dev/null &&
	old=$(q v4.db "SELECT id, leaked_blocks, leaked_bytes FROM runs") &&
	test_expect_code 1 "$MTANALYZE" --db v4.db run.log >out &&
	grep -q "^run 2 loaded" out &&
	test "$(q v4.db "PRAGMA user_version")" = 8 &&
	test "$(q v4.db "SELECT id, leaked_blocks, leaked_bytes FROM runs WHERE id = 1")" = "$old" &&
	test "$(q v4.db "SELECT count(*) FROM kinds WHERE run_id = 1")" = 0 &&
	test "$(q v4.db "SELECT group_concat (kind) FROM (SELECT kind FROM kinds WHERE run_id = 2 ORDER BY kind)")" = "dict_t,pool,rte" &&
	test_expect_code 1 "$MTANALYZE" diff v4.db:1 v4.db:2 >diff.out &&
	grep -q "\[pool\] pool_get_a at " diff.out
'

test_done
