#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3075-analyzer-one-output: standard output gets one report, the first
# asked for of --folded, --json, --by-site, --db, the files' lines and
# --growth's report by call site (mtanalyze(1), OPTIONS; cmd/outputs.c);
# the files of --html and --pprof are written whatever stdout gets, and
# before it: when one cannot be written, nothing is printed.  diff too.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'one output' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
APP="$TOP/tests/helper/ana-wrappers"

test_expect_success 'record the fixture twice' '
	"$MTREC" -o t.log --depth 16 "$APP" &&
	"$MTREC" -o u.log --depth 16 "$APP" &&
	grep -q " + " t.log
'

# The report each option prints alone, for the comparisons below.
test_expect_success 'each report alone' '
	test_expect_code 1 "$MTANALYZE" --folded t.log >folded &&
	test_expect_code 1 "$MTANALYZE" --json t.log >json &&
	test_expect_code 1 "$MTANALYZE" --by-site t.log >by-site &&
	test_expect_code 1 "$MTANALYZE" --by-site --growth all t.log >growth &&
	test_expect_code 1 "$MTANALYZE" t.log >script &&
	test -s folded && test -s json && test -s by-site && test -s growth && test -s script
'

test_expect_success '--folded wins over --db and the files, which are written too' '
	test_expect_code 1 "$MTANALYZE" --folded --db a.db --html a.html --pprof a.pb.gz \
		--growth all t.log >out &&
	test_cmp folded out &&
	test -s a.db && test -s a.html && test -s a.pb.gz
'

test_expect_success '--folded with --json or --by-site is a usage error, nothing written' '
	test_expect_code 2 "$MTANALYZE" --folded --json --html b.html t.log >out 2>err &&
	grep -q "not with --json" err && test_must_be_empty out && ! test -e b.html &&
	test_expect_code 2 "$MTANALYZE" --folded --by-site t.log >out 2>err &&
	grep -q "not with --by-site" err && test_must_be_empty out
'

test_expect_success '--json wins over --by-site, --db and the files' '
	test_expect_code 1 "$MTANALYZE" --json --by-site --db c.db --html c.html t.log >out &&
	py "d[\"format\"]" out >format && echo mtanalyze >want && test_cmp want format &&
	py "d[\"run\"][\"leaked_blocks\"]" out >got &&
	py "d[\"run\"][\"leaked_blocks\"]" json >want && test_cmp want got &&
	test -s c.db && test -s c.html
'

test_expect_success '--by-site wins over --db and the files' '
	test_expect_code 1 "$MTANALYZE" --by-site --db d.db --pprof d.pb.gz t.log >out &&
	test_cmp by-site out && test -s d.db && test -s d.pb.gz
'

test_expect_success '--db prints the line with the run id, not the files lines nor --growth report' '
	test_expect_code 1 "$MTANALYZE" --db e.db --html e.html --growth all t.log >out &&
	test "$(wc -l <out)" -eq 1 && grep -q "^run 1 loaded into .e.db.: " out && test -s e.html
'

test_expect_success '--html and --pprof alone: a line naming each file, in that order' '
	test_expect_code 1 "$MTANALYZE" --pprof f.pb.gz --html f.html t.log >out &&
	test "$(wc -l <out)" -eq 2 &&
	sed -n 1p out | grep -q "^report written to .f.html.: " &&
	sed -n 2p out | grep -q "^report written to .f.pb.gz.: " &&
	test_expect_code 1 "$MTANALYZE" --html g.html --growth all t.log >out &&
	test "$(wc -l <out)" -eq 1 && grep -q "^report written to .g.html.: " out
'

test_expect_success '--growth alone is the report by call site it filters; no option, the script' '
	test_expect_code 1 "$MTANALYZE" --growth all t.log >out && test_cmp growth out &&
	if command -v mtrace >/dev/null; then
		mtrace "$APP" t.log >want; test_expect_code 1 "$MTANALYZE" "$APP" t.log >out &&
		test_cmp want out
	fi &&
	! grep -q "^run \|written to" script
'

test_expect_success 'a file that cannot be written: status 2, nothing printed, whatever stdout was to get' '
	mkdir dir.html &&
	for o in --json --by-site --folded "--db h.db" ""; do
		test_expect_code 2 "$MTANALYZE" $o --html dir.html t.log >out 2>err &&
		test_must_be_empty out && grep -q "dir.html" err || { echo "with [$o]"; exit 1; }
	done
'

test_expect_success 'diff: --json wins over --html, which is written; --html alone, its line' '
	test_expect_code 0 "$MTANALYZE" diff --json --html h1.html t.log u.log >out &&
	py "d[\"format\"]" out >format && echo mtanalyze-diff >want && test_cmp want format &&
	test -s h1.html &&
	test_expect_code 0 "$MTANALYZE" diff --html h2.html t.log u.log >out &&
	test "$(wc -l <out)" -eq 1 && grep -q "^comparison written to .h2.html.: 0 sites new or grown" out &&
	test_expect_code 0 "$MTANALYZE" diff t.log u.log >out &&
	grep -q "^BASE " out && ! grep -q "written to" out &&
	test_expect_code 2 "$MTANALYZE" diff --json --html dir.html t.log u.log >out 2>err &&
	test_must_be_empty out
'

test_done
