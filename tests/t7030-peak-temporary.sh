#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7030-peak-temporary: the run's peak (how much, when, the sites that held
# it then -- not the sites that held most at some other time) and the
# temporary allocations (freed before any other allocation in their
# thread, as heaptrack counts them), in the report by call site, the JSON
# and the database.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'peak and temporary allocations' 'needs the analyzer, the recorder, python3 and sqlite3'
	test_done; exit
fi
SRC="$HELPER/ana-peak.c"
# marker_line NAME: the line of the fixture marked /* NAME */
marker_line() { line_of "/\* $1 \*/"; }

test_expect_success 'record the fixture' '
	"$MTREC" -o pk.log --depth 4 "$HELPER/ana-peak" 2>/dev/null &&
	"$MTANALYZE" --by-site pk.log >report &&
	"$MTANALYZE" --json pk.log >pk.json &&
	"$MTANALYZE" --db pk.db pk.log >/dev/null
'

test_expect_success 'the peak: 110000 bytes, at the last block of phase 2' '
	n=$(sed -n "s/^Peak: 110000 bytes live at line \([0-9]*\),.*/\1/p" report) && test -n "$n" &&
	sed -n "${n}p" pk.log | grep -q " + 0x[0-9a-f]* 0x3e8 s=" &&
	test "$(sed -n "$((n + 1)),\$p" pk.log | grep -c " + .* 0x3e8 s=")" = 100 &&
	test "$(py "d[\"peak\"][\"bytes\"], d[\"peak\"][\"line\"]" pk.json)" = "110000 $n" &&
	test "$(sqlite3 pk.db "SELECT peak_live_bytes, peak_line FROM runs")" = "110000|$n"
'

test_expect_success 'the sites holding the peak: phase_b and phase_c, not phase_a' '
	grep -A3 "^Peak:" report >peak &&
	grep -q "^  - 60000 bytes (54.5%) in phase_b at $SRC:$(marker_line PEAK-B) " peak &&
	grep -q "^  - 50000 bytes (45.5%) in phase_c at $SRC:$(marker_line PEAK-C) " peak &&
	! grep -q phase_a peak &&
	test "$(py "[(s[\"function\"], s[\"bytes\"]) for s in d[\"peak\"][\"sites\"]]" pk.json)" = \
		"[('"'"'phase_b'"'"', 60000), ('"'"'phase_c'"'"', 50000)]" &&
	sqlite3 pk.db "SELECT function, peak_share_bytes, peak_live_bytes FROM site_summary
		WHERE peak_live_bytes >= 50000 ORDER BY function" >actual &&
	printf "phase_a|0|100000\nphase_b|60000|60000\nphase_c|50000|50000\n" >expect &&
	test_cmp expect actual
'

test_expect_success 'temporary allocations: freed before any other allocation in their thread' '
	grep -q "^  - 10 of 10 in temp_one at $SRC:$(marker_line TEMP-ONE) " report &&
	grep -q "^  - 1 of 1 in temp_pair at $SRC:$(marker_line TEMP-PAIR-2) " report &&
	! grep -q "in temp_pair at $SRC:$(marker_line TEMP-PAIR-1) " report &&
	grep -q "^  - 1 of 1 in temp_realloc at $SRC:$(marker_line TEMP-REALLOC) " report &&
	grep -q "^  - 2 of 200 in phase_a at " report &&
	sqlite3 pk.db "SELECT function, line, temporary_allocations FROM site_summary
		WHERE temporary_allocations > 0 AND function LIKE '"'"'temp_%'"'"' ORDER BY line" >actual &&
	printf "temp_one|%s|10\ntemp_pair|%s|1\ntemp_realloc|%s|1\ntemp_realloc|%s|1\n" \
		$(marker_line TEMP-ONE) $(marker_line TEMP-PAIR-2) $(marker_line TEMP-REALLOC) $(($(marker_line TEMP-REALLOC) + 1)) >expect &&
	test_cmp expect actual &&
	total=$(sed -n "s/^Temporary allocations: \([0-9]*\) of .*/\1/p" report) &&
	test "$(py "d[\"temporary\"][\"allocations\"], d[\"run\"][\"temporary_allocations\"]" pk.json)" = "$total $total" &&
	test "$(sqlite3 pk.db "SELECT temporary_allocations FROM runs")" = "$total"
'

test_expect_success 'a database of schema version 1 is migrated at the next load' '
	sqlite3 v1.db "PRAGMA application_id = 1836348003; PRAGMA user_version = 1;
		CREATE TABLE runs (id INTEGER PRIMARY KEY, loaded_at TEXT NOT NULL, traces TEXT NOT NULL,
		binary TEXT, pid INTEGER, ppid INTEGER, exe TEXT, cmdline TEXT, start_time TEXT,
		start_epoch REAL, stack_depth INTEGER, skip_wrappers INTEGER NOT NULL,
		all_events INTEGER NOT NULL, analyzer_version TEXT NOT NULL, lines INTEGER NOT NULL,
		unreadable_lines INTEGER NOT NULL, events INTEGER NOT NULL, allocations INTEGER NOT NULL,
		frees INTEGER NOT NULL, reallocations INTEGER NOT NULL, failed_allocations INTEGER NOT NULL,
		duplicate_allocations INTEGER NOT NULL, bytes_allocated INTEGER NOT NULL,
		peak_live_bytes INTEGER NOT NULL, leaked_blocks INTEGER NOT NULL,
		leaked_bytes INTEGER NOT NULL, bad_frees INTEGER NOT NULL);
		CREATE TABLE site_stats (run_id INTEGER NOT NULL, site_id INTEGER NOT NULL,
		allocations INTEGER NOT NULL, frees INTEGER NOT NULL, bytes_allocated INTEGER NOT NULL,
		peak_live_bytes INTEGER NOT NULL, leaked_blocks INTEGER NOT NULL,
		leaked_bytes INTEGER NOT NULL, bad_frees INTEGER NOT NULL, first_line INTEGER NOT NULL,
		PRIMARY KEY (run_id, site_id)) WITHOUT ROWID;
		CREATE VIEW site_summary AS SELECT run_id FROM site_stats;
		INSERT INTO runs VALUES (1, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);" &&
	"$MTANALYZE" --db v1.db pk.log >out &&
	grep -q "^run 2 loaded" out &&
	test "$(sqlite3 v1.db "PRAGMA user_version")" = 8 &&
	test "$(sqlite3 v1.db "SELECT id, peak_line IS NULL FROM runs ORDER BY id" | tr "\n" " ")" = "1|1 2|0 " &&
	sqlite3 v1.db "SELECT count(*) FROM site_summary WHERE temporary_allocations > 0" | grep -q "^[1-9]"
'

test_expect_success 'a database of a newer schema is refused' '
	sqlite3 v9.db "PRAGMA application_id = 1836348003; PRAGMA user_version = 9; CREATE TABLE runs (id);" &&
	test_expect_code 2 "$MTANALYZE" --db v9.db pk.log 2>err &&
	grep -q "newer than this mtanalyze" err
'

test_done
