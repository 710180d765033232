#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4075-db-timeline-ranges: the database keeps each leaking site's
# timeline as the ranges of samples over which it stays the same
# (site_timeline_ranges, schema v8), and site_timeline is the view of them
# a row a sample -- the same values as the JSON's timelines; a site that
# leaked at one moment takes two rows, not one a sample (2 million such
# sites took 100 million rows and most of --db's time).  A version 7
# database's table becomes ranges of one sample each at its next load:
# its runs read back the same through site_timeline and leak_growth.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'timeline ranges' 'needs the analyzer, the recorder, python3 and sqlite3'
	test_done; exit
fi

# sums FILE.json: for each sample, the live bytes of all leaking sites
sums() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
tl = [s["live_bytes_over_time"] for s in d["leak_sites"]]
print("\n".join("%d|%d" % (i, sum(t[i] for t in tl)) for i in range(len(tl[0]))))' "$1"
}

test_expect_success 'setup: a recorded run whose leaks grow, and 3000 callers that leak once' '
	"$MTREC" -o grow.log --depth 8 "$HELPER/ana-growth" 20000 2>/dev/null &&
	gen_callers 3000 >callers.log &&
	test_expect_code 1 "$MTANALYZE" --json grow.log >grow.json &&
	test_expect_code 1 "$MTANALYZE" --json callers.log >callers.json
'

test_expect_success 'site_timeline: the JSON timelines, a row a sample and leaking site' '
	for t in grow callers; do
		rm -f $t.db &&
		test_expect_code 1 "$MTANALYZE" --db $t.db $t.log >/dev/null &&
		sums $t.json >expect.$t &&
		sqlite3 $t.db "SELECT seq, sum(live_bytes) FROM site_timeline GROUP BY seq ORDER BY seq" >actual.$t &&
		test_cmp expect.$t actual.$t &&
		samples=$(sqlite3 $t.db "SELECT count(*) FROM timeline") &&
		sites=$(py "len(d[\"leak_sites\"])" $t.json) &&
		test "$(sqlite3 $t.db "SELECT count(*) FROM site_timeline")" = $((samples * sites)) &&
		test "$(sqlite3 $t.db "SELECT count(*) FROM leak_growth")" = $((samples * sites)) || return 1
	done
'

test_expect_success 'a site that leaked once: at most two ranges, and every sample in one' '
	test "$(sqlite3 callers.db "SELECT count(*) FROM timeline")" -ge 32 &&
	test "$(sqlite3 callers.db "SELECT max(n) FROM (SELECT count(*) AS n FROM site_timeline_ranges
		GROUP BY site_id)")" = 2 &&
	test "$(sqlite3 callers.db "SELECT count(*) FROM (SELECT site_id FROM site_timeline_ranges
		GROUP BY site_id HAVING min(seq) <> 0 OR max(until_seq) <> (SELECT count(*) FROM timeline)
		OR sum(until_seq - seq) <> (SELECT count(*) FROM timeline))")" = 0
'

# A version 7 database, made from one of version 8 as that version made
# it: site_timeline a table of a row a sample, without leak_growth (its
# definition read the table; the load makes it again).
test_expect_success 'a version 7 database: its run kept, site_timeline and leak_growth as before' '
	cp grow.db v7.db &&
	sqlite3 v7.db "SELECT * FROM leak_growth ORDER BY run_id, site_id, seq" >growth.before &&
	sqlite3 v7.db "CREATE TABLE t7 (run_id INTEGER NOT NULL, site_id INTEGER NOT NULL,
			seq INTEGER NOT NULL, live_blocks INTEGER NOT NULL, live_bytes INTEGER NOT NULL,
			PRIMARY KEY (run_id, site_id, seq)) WITHOUT ROWID;
		INSERT INTO t7 SELECT * FROM site_timeline;
		DROP VIEW leak_growth; DROP VIEW site_timeline; DROP TABLE site_timeline_ranges;
		ALTER TABLE t7 RENAME TO site_timeline; PRAGMA user_version = 7" &&
	test "$(sqlite3 v7.db "SELECT type FROM sqlite_master WHERE name = '"'"'site_timeline'"'"'")" = table &&
	test_expect_code 1 "$MTANALYZE" --db v7.db grow.log >out &&
	grep -q "^run 2 loaded" out &&
	test "$(sqlite3 v7.db "PRAGMA user_version")" = 8 &&
	test "$(sqlite3 v7.db "SELECT type FROM sqlite_master WHERE name = '"'"'site_timeline'"'"'")" = view &&
	test "$(sqlite3 v7.db "SELECT count(*) FROM sqlite_master WHERE name = '"'"'site_timeline_v7'"'"'")" = 0 &&
	sqlite3 v7.db "SELECT * FROM leak_growth WHERE run_id = 1 ORDER BY run_id, site_id, seq" >growth.after &&
	test_cmp growth.before growth.after &&
	sqlite3 v7.db "SELECT function, seq, line, live_blocks, live_bytes FROM leak_growth
		WHERE run_id = 2 ORDER BY 1, 2" >run2 &&
	sqlite3 grow.db "SELECT function, seq, line, live_blocks, live_bytes FROM leak_growth ORDER BY 1, 2" >fresh &&
	test_cmp fresh run2 &&
	test "$(sqlite3 v7.db "PRAGMA integrity_check")" = ok
'

test_done
