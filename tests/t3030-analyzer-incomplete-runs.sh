#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3030-analyzer-incomplete-runs: the recorder never stops in silence
# (issue 18), and the analyzer says so: "# stopped", "# lost" and
# "# freeres" give one warning on stderr in every mode (the default
# report's stdout and status stay /usr/bin/mtrace's), the report by call
# site and the JSON call the blocks live at the stop what they are, the
# --growth gate does not fail on them, the database keeps it all (schema
# v3, older databases migrated), and a "# T" line behind NUL bytes is not
# swallowed.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! command -v python3 >/dev/null || ! command -v sqlite3 >/dev/null; then
	test_skip 'incomplete runs' 'needs the analyzer, python3 and sqlite3'
	test_done; exit
fi
py() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2"; }
MTRACE=/usr/bin/mtrace

# same_as_mtrace [BINARY] TRACE: stdout and exit status are the script's
# (status in st, stderr in ours.err)
same_as_mtrace() {
	st=0 && { "$MTANALYZE" "$@" >ours.out 2>ours.err || st=$?; } &&
	{ [ -x "$MTRACE" ] || return 0; } &&
	mst=0 && { "$MTRACE" "$@" >theirs.out 2>/dev/null || mst=$?; } &&
	test_cmp theirs.out ours.out && test "$st" = "$mst"
}

# A leak every 10 lines from [0x10] (a steady one), blocks that come and
# go from [0x20]; then what the arguments say, and "= End".
gen_trace() {
	echo "= Start" &&
	i=0 &&
	while [ $i -lt 300 ]; do
		printf '@ ./app:[0x10] + 0x%x 0x10\n' $((0x100000 + i * 64)) &&
		printf '@ ./app:[0x20] + 0x%x 0x20\n' $((0x900000 + i * 64)) &&
		printf '@ ./app:[0x30] - 0x%x\n' $((0x900000 + i * 64)) &&
		i=$((i + 1)) || return 1
	done &&
	for l in "$@"; do printf '%s\n' "$l" || return 1; done &&
	echo "= End"
}

gen_trace "# stopped the disk is full: No space left on device" \
	"# lost 2000000 after the stop" >stopped.log
n=$(grep -n "^# stopped" stopped.log | cut -d: -f1)

test_expect_success 'a run that stopped: one warning naming the file and the line' '
	test "$n" = 902 &&
	same_as_mtrace stopped.log && test $st = 1 &&
	echo "mtanalyze: warning: '\''stopped.log'\'' is incomplete from line $n on: the recorder stopped (the disk is full: No space left on device); 2,000,000 events were not recorded" >expect &&
	test_cmp expect ours.err
'

test_expect_success 'the warning comes in every mode, once' '
	for mode in "1 --by-site" "1 --json" "1 --db w.db" "0 --growth linear"; do
		code=${mode%% *} && mode=${mode#* } &&
		test_expect_code $code "$MTANALYZE" $mode stopped.log >/dev/null 2>err &&
		test_cmp expect err || return 1
	done
'

test_expect_success 'the report by call site: not freed before the recording stopped' '
	test_expect_code 1 "$MTANALYZE" --by-site stopped.log >report &&
	cat report &&
	grep -q "^Incomplete run: the recorder stopped at line $n (the disk is full: No space left on device); 2,000,000 events were not recorded" report &&
	grep -q "^Blocks not freed are those still live when it stopped, not proven leaks" report &&
	grep -q "^Memory not freed before the recording stopped, by call site: 300 blocks, 4800 bytes, 1 site" report &&
	grep -q "  0x10 in ./app  \[linear\]$" report
'

test_expect_success 'the --growth gate does not fail on a run that stopped, and says why' '
	"$MTANALYZE" --growth linear,exponential stopped.log >gate &&
	grep -q "the --growth gate does not fail on them" gate &&
	gen_trace >whole.log &&
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential whole.log >/dev/null 2>err &&
	test_must_be_empty err
'

test_expect_success 'JSON: the incomplete object, leaks not proven' '
	test_expect_code 1 "$MTANALYZE" --json stopped.log >s.json 2>/dev/null &&
	test "$(py "d[\"incomplete\"]" s.json)" = "{'\''stopped'\'': True, '\''file'\'': '\''stopped.log'\'', '\''line'\'': $n, '\''file_line'\'': $n, '\''reason'\'': '\''the disk is full: No space left on device'\'', '\''lost_events'\'': 2000000, '\''lost_reason'\'': '\''after the stop'\''}" &&
	test "$(py "d[\"run\"][\"leaks_proven\"], d[\"leak_sites\"][0][\"proven\"], d[\"run\"][\"freeres\"]" s.json)" = "False False None" &&
	test_expect_code 1 "$MTANALYZE" --json whole.log >w.json &&
	test "$(py "d[\"incomplete\"], d[\"run\"][\"leaks_proven\"], d[\"leak_sites\"][0][\"proven\"]" w.json)" = "None True True"
'

test_expect_success 'lost events without a stop: leaks of no more blocks may be artefacts' '
	gen_trace "# lost 12 in signal handlers nested too deeply" >lost.log &&
	m=$(grep -n "^# lost" lost.log | cut -d: -f1) &&
	same_as_mtrace lost.log && test $st = 1 &&
	echo "mtanalyze: warning: '\''lost.log'\'' is incomplete: 12 events were not recorded (in signal handlers nested too deeply, line $m); frees of memory never allocated and leaks may be artefacts" >expect.lost &&
	test_cmp expect.lost ours.err &&
	test_expect_code 1 "$MTANALYZE" --by-site lost.log >lr 2>/dev/null &&
	grep -q "^Incomplete run: 12 events were not recorded (in signal handlers nested too deeply)" lr &&
	test_expect_code 1 "$MTANALYZE" --json lost.log >l.json 2>/dev/null &&
	test "$(py "d[\"incomplete\"][\"stopped\"], d[\"incomplete\"][\"line\"], d[\"incomplete\"][\"lost_events\"], d[\"leak_sites\"][0][\"proven\"]" l.json)" = "False $m 12 True" &&
	test_expect_code 1 "$MTANALYZE" --growth linear lost.log >/dev/null 2>&1 &&
	gen_trace "# lost 200 in signal handlers nested too deeply" "# lost 100 again" >lost2.log &&
	test_expect_code 1 "$MTANALYZE" --json lost2.log >l2.json 2>/dev/null &&
	test "$(py "d[\"incomplete\"][\"lost_events\"], d[\"leak_sites\"][0][\"proven\"]" l2.json)" = "300 False" &&
	"$MTANALYZE" --growth linear lost2.log >/dev/null 2>&1
'

test_expect_success 'freeres skipped: libc-internal sites are expected' '
	gen_trace "# freeres skipped: 3 other threads running" >fr.log &&
	same_as_mtrace fr.log && test_must_be_empty ours.err &&
	test_expect_code 1 "$MTANALYZE" --by-site fr.log >fr.out &&
	grep -q "^libc.s caches were not released at exit (__libc_freeres skipped: 3 other threads running)" fr.out &&
	test_expect_code 1 "$MTANALYZE" --json fr.log >fr.json &&
	test "$(py "d[\"run\"][\"freeres\"], d[\"incomplete\"]" fr.json)" = "skipped: 3 other threads running None" &&
	gen_trace "# freeres done" >frd.log &&
	test_expect_code 1 "$MTANALYZE" --by-site frd.log >frd.out &&
	! grep -q "libc.s caches" frd.out
'

test_expect_success 'the database: v3 columns on the run' '
	test_expect_code 1 "$MTANALYZE" --db r.db stopped.log >/dev/null 2>&1 &&
	test_expect_code 1 "$MTANALYZE" --db r.db fr.log >/dev/null 2>&1 &&
	test "$(sqlite3 r.db "PRAGMA user_version")" = 8 &&
	sqlite3 r.db "SELECT id, stopped_line, stop_reason, lost_events, lost_reason, freeres FROM runs ORDER BY id" >rows &&
	printf "1|%s|the disk is full: No space left on device|2000000|after the stop|\n2|||||skipped: 3 other threads running\n" $n >expect.rows &&
	test_cmp expect.rows rows
'

test_expect_success 'a version 2 database is migrated in the load transaction' '
	test_expect_code 1 "$MTANALYZE" --db v2.db whole.log >/dev/null &&
	sqlite3 v2.db "ALTER TABLE runs DROP COLUMN stopped_line; ALTER TABLE runs DROP COLUMN stop_reason;
		ALTER TABLE runs DROP COLUMN lost_events; ALTER TABLE runs DROP COLUMN lost_reason;
		ALTER TABLE runs DROP COLUMN freeres; PRAGMA user_version = 2" &&
	test_expect_code 1 "$MTANALYZE" --db v2.db stopped.log >out 2>/dev/null &&
	grep -q "^run 2 loaded" out &&
	test "$(sqlite3 v2.db "PRAGMA user_version")" = 8 &&
	test "$(sqlite3 v2.db "SELECT id, stopped_line IS NULL FROM runs ORDER BY id" | tr "\n" " ")" = "1|1 2|0 "
'

test_expect_success 'NUL bytes before a "# T" line: the thread is not lost' '
	printf "= Start\n# T 100\n@ ./app:[0x10] + 0x1000 0x10\n\0\0\0\0# T 123\n@ ./app:[0x20] + 0x2000 0x20\n= End\n" >nul.log &&
	same_as_mtrace nul.log && test $st = 1 && test_must_be_empty ours.err &&
	test_expect_code 1 "$MTANALYZE" --json nul.log >nul.json &&
	test "$(py "[(l[\"address\"], l[\"thread\"]) for l in d[\"leaks\"]]" nul.json)" = "[('\''0x1000'\'', 100), ('\''0x2000'\'', 123)]" &&
	test "$(py "d[\"run\"][\"unreadable_lines\"]" nul.json)" = 0
'

test_expect_success 'NUL bytes before "# stopped": still a warning' '
	{ gen_trace; } | sed "\$d" >nulstop.log &&
	printf "\0\0# stopped the disk is full\n= End\n" >>nulstop.log &&
	same_as_mtrace nulstop.log &&
	grep -q "is incomplete from line 902 on: the recorder stopped (the disk is full)" ours.err
'

if [ -x "$HELPER/ana-inflight" ] && [ -f "$LIBMTREC" ]; then
test_expect_success 'a real program that frees everything, its trace cut: no proven leaks' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=inf.log MTREC_DEPTH=4 "$HELPER/ana-inflight" &&
	"$MTANALYZE" inf.log >whole.out && grep -q "^No memory leaks" whole.out &&
	lines=$(wc -l <inf.log) && cut=$((lines * 6 / 10)) &&
	head -n $cut inf.log >cut.log && cp cut.log silent.log &&
	printf "# stopped the disk is full: No space left on device\n# lost 19000 after the stop\n= End\n" >>cut.log &&
	echo "= End" >>silent.log &&
	same_as_mtrace "$HELPER/ana-inflight" cut.log && test $st = 1 &&
	grep -q "incomplete from line $((cut + 1)) on" ours.err &&
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential silent.log >/dev/null &&
	"$MTANALYZE" --growth linear,exponential cut.log >gate 2>/dev/null &&
	test_expect_code 1 "$MTANALYZE" --by-site cut.log >cut.out 2>/dev/null &&
	grep -q "^Memory not freed before the recording stopped, by call site" cut.out &&
	grep -q "request at .*ana-inflight.c" cut.out
'
else
	test_skip 'a real program that frees everything, its trace cut' 'needs the recorder and tests/helper/ana-inflight'
fi

test_done
