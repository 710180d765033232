#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4020-json: --json is valid JSON with the field names of
# share/json-format.md, and says what the text report and the database say.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'JSON output' 'needs the analyzer, the recorder, python3 and sqlite3'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-wrappers.c"
APP="$TOP/tests/helper/ana-wrappers"

test_expect_success 'record the fixture' '
	"$MTREC" -o deep.log --depth 16 "$APP" &&
	caller=$(grep " + " deep.log | sed -n "2p" | cut -d" " -f2) &&
	s=$(grep " + " deep.log | sed -n "2p" | sed "s/.* s=//") &&
	echo "@ $caller - 0x10 s=$s" >>deep.log
'

test_expect_success '--json is valid JSON, exit status as the reports' '
	test_expect_code 1 "$MTANALYZE" --json deep.log >out.json &&
	test "$(py "d[\"format\"], d[\"version\"]" out.json)" = "mtanalyze 1"
'

test_expect_success 'every documented field is there' '
	for f in traces binary pid exe cmdline start stack_depth wrappers_skipped lines \
		unreadable_lines events allocations frees reallocations failed_allocations \
		duplicate_allocations bytes_allocated peak_live_bytes leaked_blocks leaked_bytes bad_frees; do
		grep -q "^| *\`$f\`" "$TOP/share/json-format.md" &&
		py "\"$f\" in d[\"run\"]" out.json | grep -q True || { echo "run.$f"; exit 1; }
	done &&
	for f in function file line object leaked_blocks leaked_bytes allocations frees \
		bytes_allocated peak_live_bytes first_line stacks; do
		py "\"$f\" in d[\"leak_sites\"][0]" out.json | grep -q True || { echo "leak_sites.$f"; exit 1; }
	done &&
	for f in address size line thread site; do
		py "\"$f\" in d[\"leaks\"][0]" out.json | grep -q True || { echo "leaks.$f"; exit 1; }
	done
'

test_expect_success 'the leak sites are the report'"'"'s, largest first' '
	py "\"\\n\".join(\"%d %d %s %d\" % (s[\"leaked_blocks\"], s[\"leaked_bytes\"], s[\"function\"], s[\"line\"]) for s in d[\"leak_sites\"])" out.json >actual &&
	{ echo "1 100 load_config $(line_of LEAK-A)"
	  echo "1 50 pool_get $(line_of POOL-CALL)"
	  echo "2 40 parse_args $(line_of LEAK-B)"
	  echo "3 21 main $(line_of LEAK-C)"
	  echo "1 20 main $(line_of LEAK-DUP)"; } >expect &&
	test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" --by-site deep.log >sites.out &&
	grep "^ *[0-9]" sites.out | sed -n "/^ *[0-9]* *[0-9]*  [a-z_]* at /p" | head -5 |
		awk "{ print \$1, \$2, \$3 }" >expect &&
	py "\"\\n\".join(\"%d %d %s\" % (s[\"leaked_blocks\"], s[\"leaked_bytes\"], s[\"function\"]) for s in d[\"leak_sites\"])" out.json >actual &&
	test_cmp expect actual
'

test_expect_success 'totals, leaks and bad frees equal the database'"'"'s' '
	test_expect_code 1 "$MTANALYZE" --db run.db --json deep.log >db.json &&
	test "$(py "d[\"run\"][\"db_run_id\"]" db.json)" = 1 &&
	for f in events allocations frees bytes_allocated peak_live_bytes leaked_blocks leaked_bytes bad_frees; do
		test "$(py "d[\"run\"][\"$f\"]" out.json)" = "$(sqlite3 run.db "SELECT $f FROM runs")" ||
			{ echo "$f"; exit 1; }
	done &&
	py "\"\\n\".join(\"%s %d\" % (l[\"address\"], l[\"size\"]) for l in d[\"leaks\"])" out.json >actual &&
	sqlite3 run.db "SELECT address, size FROM leak_list ORDER BY size DESC" | tr "|" " " | sort >expect &&
	sort actual >actual.sorted && test_cmp expect actual.sorted &&
	test "$(py "len(d[\"bad_frees\"]), d[\"bad_free_sites\"][0][\"function\"], d[\"bad_free_sites\"][0][\"bad_frees\"]" out.json)" = "1 load_config 1"
'

test_expect_success 'each leak names its site by index' '
	py "sorted(set(d[\"leak_sites\"][l[\"site\"]][\"function\"] for l in d[\"leaks\"]))" out.json >actual &&
	python3 -c "print(sorted([\"load_config\", \"main\", \"parse_args\", \"pool_get\"]))" >expect &&
	test_cmp expect actual
'

test_expect_success 'strings are escaped' '
	sed "s|^# exe .*|# exe /tmp/a \"quoted\" \\\\ name|" deep.log >esc.log &&
	test_expect_code 1 "$MTANALYZE" --json esc.log >esc.json &&
	test "$(py "d[\"run\"][\"exe\"]" esc.json)" = "/tmp/a \"quoted\" \\ name"
'

test_done
