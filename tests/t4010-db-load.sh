#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4010-db-load: --db loads a run into SQLite: its totals are the text
# reports', each load adds one run (atomically: a killed load leaves
# none), two loads at once both succeed, every ready query of
# share/queries runs on a real database, and a file that is not a SQLite
# database (or not ours, or read-only) is refused and left untouched.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v sqlite3 >/dev/null; then
	test_skip 'SQLite loading' 'needs the analyzer, the recorder and sqlite3'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-wrappers.c"
APP="$TOP/tests/helper/ana-wrappers"

test_expect_success 'record the fixture, with and without leaks' '
	"$MTREC" -o deep.log --depth 16 "$APP" &&
	"$MTREC" -o clean.log --depth 16 "$APP" free
'

test_expect_success 'a missing database is created; the load says what it added' '
	test_expect_code 1 "$MTANALYZE" --db run.db deep.log >out &&
	grep -q "^run 1 loaded into .run.db.: 8 leaked blocks, 231 bytes" out &&
	test "$(q run.db "PRAGMA application_id")" = 1836348003 &&
	test "$(q run.db "SELECT count(*) FROM runs")" = 1
'

test_expect_success 'the database totals equal the text reports' '
	test_expect_code 1 "$MTANALYZE" deep.log >mtrace.out &&
	n=$(grep -c "^0x" mtrace.out) &&
	sum=0 && for s in $(grep "^0x" mtrace.out | awk "{ print \$2 }"); do sum=$((sum + s)); done &&
	echo "$n|$sum" >expect &&
	q run.db "SELECT leaked_blocks, leaked_bytes FROM runs WHERE id = 1" >actual &&
	test_cmp expect actual &&
	q run.db "SELECT count(*), sum(size) FROM leaks WHERE run_id = 1" >actual &&
	test_cmp expect actual &&
	q run.db "SELECT sum(leaked_blocks), sum(leaked_bytes) FROM site_stats WHERE run_id = 1" >actual &&
	test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" --by-site deep.log >sites.out &&
	grep "^ *[0-9]" sites.out | awk "{ print \$1 \"|\" \$2 }" >expect &&
	q run.db "SELECT leaked_blocks, leaked_bytes FROM leaks_by_site WHERE run_id = 1
		ORDER BY leaked_bytes DESC, leaked_blocks DESC, first_line" >actual &&
	test_cmp expect actual &&
	q run.db "SELECT allocations, frees FROM runs WHERE id = 1" >actual &&
	echo "$(grep -c " [+>] 0x" deep.log)|$(grep -c " [-<] 0x" deep.log)" >expect &&
	test_cmp expect actual
'

test_expect_success 'sites are stored by function, file and line, wrappers skipped' '
	q run.db "SELECT function, line, leaked_blocks FROM site_summary
		WHERE run_id = 1 AND leaked_blocks > 0 ORDER BY line" >actual &&
	{ echo "pool_get|$(line_of POOL-CALL)|1"
	  echo "load_config|$(line_of LEAK-A)|1"
	  echo "parse_args|$(line_of LEAK-B)|2"
	  echo "main|$(line_of LEAK-C)|3"
	  echo "main|$(line_of LEAK-DUP)|1"; } | sort -t"|" -k2n >expect &&
	test_cmp expect actual &&
	test "$(q run.db "SELECT DISTINCT file FROM leaks_by_site")" = "$SRC"
'

test_expect_success 'loading twice gives two runs that share their sites' '
	sites=$(q run.db "SELECT count(*) FROM sites") &&
	test_expect_code 1 "$MTANALYZE" --db run.db deep.log >out &&
	grep -q "^run 2 loaded" out &&
	test "$(q run.db "SELECT count(*) FROM runs")" = 2 &&
	test "$(q run.db "SELECT count(*) FROM sites")" = "$sites" &&
	test "$(q run.db "SELECT count(DISTINCT run_id) FROM leaks")" = 2 &&
	q run.db "SELECT site_id, leaked_bytes FROM site_stats WHERE run_id = 1" >one &&
	q run.db "SELECT site_id, leaked_bytes FROM site_stats WHERE run_id = 2" >two &&
	test_cmp one two
'

test_expect_success 'every ready query runs on a real database' '
	"$MTANALYZE" --db q.db clean.log &&
	test_expect_code 1 "$MTANALYZE" --db q.db deep.log >/dev/null &&
	ls "$TOP"/share/queries/*.sql >queries && test -s queries &&
	for f in $(cat queries); do
		head -n 1 "$f" | grep -q "^-- $(basename "$f") -- " &&
		q -header q.db <"$f" >"$(basename "$f" .sql).out" || exit 1
	done &&
	grep -q "^load_config|$SRC:$(line_of LEAK-A)|.*|1|100|" top-leaking-lines.out &&
	test "$(grep -c . runs.out)" = 3 &&
	test $(grep -c "|0|1|0|" compare-runs.out) = 3 &&
	grep -q "^parse_args|$SRC:$(line_of LEAK-B)|0|2|0|40|40$" compare-runs.out &&
	grep -q "^main|$SRC:$(line_of LEAK-C)|0|3|0|21|21$" compare-runs.out &&
	grep -q "|load_config|$SRC:$(line_of LEAK-A)|1|100$" leaks-in-library.out &&
	grep -q "|1|parse_args|$SRC:$(line_of LEAK-B)|" leak-stacks.out &&
	grep -q "|2|main|$SRC:$(line_of "parse_args ();")|" leak-stacks.out
'

test_expect_success 'ready queries take parameters: leaks inside libc, one run' '
	q -cmd ".param set :lib '"'"'%libc.so%'"'"'" q.db <"$TOP/share/queries/leaks-in-library.sql" >libc.out &&
	test "$(wc -l <libc.out)" = 1 &&
	grep -q "|main|$SRC:$(line_of LEAK-DUP)|1|20$" libc.out &&
	q -cmd ".param set :run 1" q.db <"$TOP/share/queries/top-leaking-lines.sql" >none.out &&
	! test -s none.out
'

test_expect_success 'bad frees are stored and queried by site' '
	caller=$(grep " + " deep.log | sed -n "2p" | cut -d" " -f2) &&
	s=$(grep " + " deep.log | sed -n "2p" | sed "s/.* s=//") &&
	cp deep.log bad.log &&
	for a in 0x10 0x20; do echo "@ $caller - $a s=$s" >>bad.log; done &&
	echo "@ $caller < 0x40 s=$s" >>bad.log &&
	test_expect_code 1 "$MTANALYZE" --db bad.db bad.log >/dev/null &&
	test "$(q bad.db "SELECT bad_frees FROM runs")" = 3 &&
	test "$(q bad.db "SELECT count(*) FROM bad_frees")" = 3 &&
	q bad.db <"$TOP/share/queries/bad-frees.sql" >bad.out &&
	grep -q "^load_config|$SRC:$(line_of LEAK-A)|.*|3|[0-9]*|free,realloc$" bad.out
'

test_expect_success '--all-events stores every event' '
	test_expect_code 1 "$MTANALYZE" --db ev.db --all-events deep.log >/dev/null &&
	test "$(q ev.db "SELECT count(*) FROM events")" = "$(q ev.db "SELECT events FROM runs")" &&
	test "$(q ev.db "SELECT count(*) FROM events")" = "$(grep -c "^@ .* [-+<>!] " deep.log)" &&
	test "$(q ev.db "SELECT count(*) FROM events e LEFT JOIN stacks s ON s.id = e.stack_id
		WHERE s.id IS NULL")" = 0 &&
	test "$(q ev.db "SELECT all_events FROM runs")" = 1
'

test_expect_success 'two loads into one database at the same time both succeed' '
	{ "$MTANALYZE" --db two.db --all-events deep.log >a.out & } && a=$! &&
	{ "$MTANALYZE" --db two.db deep.log >b.out & } && b=$! &&
	test_expect_code 1 wait $a &&
	test_expect_code 1 wait $b &&
	test "$(q two.db "SELECT count(*) FROM runs")" = 2 &&
	test "$(q two.db "SELECT group_concat(leaked_bytes) FROM runs")" = "231,231"
'

# a trace long enough for a load to be caught in the middle
big_trace() {
	awk "BEGIN { print \"= Start\"
		for (i = 0; i < 400000; i++) {
			printf \"@ ./big:[0x%x] + 0x%x 0x10\n\", 4096 + i % 64, 65536 + 16 * i
			if (i % 3) printf \"@ ./big:[0x99] - 0x%x\n\", 65536 + 16 * i
		}
		print \"= End\" }"
}

test_expect_success 'a load killed in the middle leaves no partial run' '
	big_trace >big.log &&
	test_expect_code 1 "$MTANALYZE" --db kill.db deep.log >/dev/null &&
	cp kill.db before.db &&
	# In braces: "a && b &" would put the whole list aside and $! would
	# be the subshell, not mtanalyze.
	{ "$MTANALYZE" --db kill.db --all-events big.log >/dev/null & } &&
	pid=$! &&
	i=0 && while [ ! -f kill.db-journal ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done &&
	sleep 0.2 && kill -9 $pid &&
	test_expect_code 137 wait $pid &&
	test "$(q kill.db "PRAGMA integrity_check")" = ok &&
	test "$(q kill.db "SELECT count(*) FROM runs")" = 1 &&
	test "$(q kill.db "SELECT count(*) FROM events")" = 0 &&
	q before.db "SELECT * FROM leaks" >expect &&
	q kill.db "SELECT * FROM leaks" >actual && test_cmp expect actual
'

test_expect_success 'not a SQLite database: a clear error, file untouched' '
	cp deep.log notdb && cp notdb notdb.orig &&
	test_expect_code 2 "$MTANALYZE" --db notdb deep.log >out 2>err &&
	grep -q "^mtanalyze: cannot load into .notdb.: not a SQLite database" err &&
	cmp notdb notdb.orig && ! test -s out && ! test -e notdb-journal
'

test_expect_success 'another program'"'"'s SQLite database: refused, untouched' '
	q other.db "CREATE TABLE t (x); INSERT INTO t VALUES (1)" && cp other.db other.orig &&
	test_expect_code 2 "$MTANALYZE" --db other.db deep.log 2>err &&
	grep -q "not one of mtanalyze" err && cmp other.db other.orig
'

test_expect_success 'a read-only database: a clear error, file untouched' '
	test_expect_code 1 "$MTANALYZE" --db ro.db deep.log >/dev/null &&
	chmod 444 ro.db && cp ro.db ro.orig &&
	test_expect_code 2 "$MTANALYZE" --db ro.db deep.log 2>err &&
	grep -q "^mtanalyze: cannot load into .ro.db.: the file is read-only" err &&
	cmp ro.db ro.orig
'

test_expect_success 'a load that cannot start leaves no new file behind' '
	test_expect_code 2 "$MTANALYZE" --db new.db missing.log 2>err &&
	! test -e new.db &&
	test_expect_code 2 env MTA_PKGDATADIR=/nonexistent "$MTANALYZE" --db new.db deep.log 2>err && grep -q "cannot find .wrappers.txt." err && ! test -e new.db &&
	test_expect_code 2 "$MTANALYZE" --no-skip --db /nonexistent/dir/x.db deep.log 2>err && grep -q "cannot load into ./nonexistent/dir/x.db." err
'

test_done
