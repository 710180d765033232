#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7000-growth-classes: each leaking site is classified by how its leak grew
# over the run (share/growth.md): the fixture's one-off at start-up is
# constant, its cache logarithmic, its steady leak linear and its faster
# and faster leak exponential -- on the line axis (a short run) and on the
# recorder's clock (a run of about a second), three runs each, since runs
# vary; --growth keeps only the classes named, for the report and the exit
# status; the class is in the JSON and the database.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null ||
   ! command -v sqlite3 >/dev/null; then
	test_skip 'growth classes' 'needs the analyzer, the recorder, python3 and sqlite3'
	test_done; exit
fi
APP="$HELPER/ana-growth"

# classes FILE: "function class" of each leaking site, by function
classes() {
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 "$1" >"$1.sites" &&
	sed -n 's/^ *[0-9][0-9]* *[0-9][0-9]*  \([a-z_]*\) at .*  \[\([a-z]*\)\]$/\1 \2/p' "$1.sites" | sort
}

cat >expect <<EOF_
cache_add logarithmic
faster_leak exponential
startup constant
steady_leak linear
EOF_

# Without its "# time" lines a trace of ours is read on the line axis, as
# glibc's: the classes then depend on the order of the events only, not on
# how a loaded machine scheduled a short run (every run of ours has a clock).
test_expect_success 'event order: one-off constant, cache logarithmic, steady linear, faster exponential (3 runs)' '
	for i in 1 2 3; do
		"$MTREC" -o short$i.log --depth 8 "$APP" 20000 2>/dev/null &&
		grep -v "^# time " short$i.log >lines$i.log &&
		classes lines$i.log >actual && test_cmp expect actual || exit 1
	done
'

test_expect_success 'recorder clock: the same classes over a run of about a second (3 runs)' '
	for i in 1 2 3; do
		"$MTREC" -o timed$i.log --depth 8 "$APP" 20000 13 2>/dev/null &&
		test "$(grep -c "^# time" timed$i.log)" -ge 8 &&
		classes timed$i.log >actual && test_cmp expect actual || exit 1
	done &&
	grep -q "^Peak: .* s into the run" timed1.log.sites
'

test_expect_success GLIBC_DEBUG 'a glibc trace (no clock, no stacks) is classified by event order' '
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=glibc.log "$APP" 20000 &&
	! grep -q "^#" glibc.log &&
	classes glibc.log >actual && test_cmp expect actual
'

test_expect_success '--growth keeps the real leaks: report, exit status' '
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential lines1.log >real &&
	grep -q "^Only the leaks that grow as linear, exponential: 2 of the 4 sites" real &&
	grep -q "steady_leak at .*\[linear\]" real && grep -q "faster_leak at .*\[exponential\]" real &&
	! grep -q "startup at .*\[" real && ! grep -q "cache_add at .*\[" real
'

test_expect_success '--growth with no such leak: exit 0, and says what else leaks' '
	"$MTREC" -o benign.log --depth 8 "$APP" 20000 0 oc 2>/dev/null &&
	"$MTANALYZE" --growth linear,exponential benign.log >none &&
	grep -q "^No leaks that grow as linear, exponential (2 sites leak otherwise" none &&
	test_expect_code 1 "$MTANALYZE" --growth constant benign.log >/dev/null
'

test_expect_success '--growth rejects an unknown class (usage error)' '
	test_expect_code 2 "$MTANALYZE" --growth linear,quadratic short1.log 2>err &&
	grep -q "unknown growth class .quadratic." err
'

test_expect_success 'JSON: growth per leak site, the timeline, --growth filters sites and leaks' '
	test_expect_code 1 "$MTANALYZE" --json timed1.log >all.json &&
	py "\"\\n\".join(sorted(s[\"function\"] + \" \" + s[\"growth\"] for s in d[\"leak_sites\"]))" all.json >actual &&
	test_cmp expect actual &&
	test "$(py "d[\"run\"][\"timeline\"][\"axis\"]" all.json)" = time &&
	py "len(d[\"run\"][\"timeline\"][\"lines\"]) == len(d[\"leak_sites\"][0][\"live_bytes_over_time\"]) == len(d[\"run\"][\"timeline\"][\"times_ns\"]) >= 32" all.json | grep -q True &&
	py "all(s[\"live_bytes_over_time\"][-1] == s[\"leaked_bytes\"] for s in d[\"leak_sites\"])" all.json | grep -q True &&
	test_expect_code 1 "$MTANALYZE" --json --growth linear lines1.log >lin.json &&
	test "$(py "[s[\"function\"] for s in d[\"leak_sites\"]], d[\"run\"][\"growth_filter\"]" lin.json)" = "[${q:-}'"'"'steady_leak'"'"'] ['"'"'linear'"'"']" &&
	test "$(py "len(d[\"leaks\"])" lin.json)" = 400
'

test_expect_success 'database: site_stats.growth, leaks_by_site.growth, leak_growth over time' '
	test_expect_code 1 "$MTANALYZE" --db run.db timed1.log >/dev/null &&
	sqlite3 run.db "SELECT function || \" \" || growth FROM leaks_by_site ORDER BY function" >actual &&
	test_cmp expect actual &&
	test "$(sqlite3 run.db "SELECT timeline_axis FROM runs")" = time &&
	test "$(sqlite3 run.db "SELECT live_bytes FROM leak_growth WHERE function = '"'"'steady_leak'"'"'
		ORDER BY seq DESC LIMIT 1")" = 25600 &&
	test "$(sqlite3 run.db "SELECT count(DISTINCT seq) FROM leak_growth")" -ge 32
'

test_done
