#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3320-compact-same-reports: `mtanalyze compact TRACE` folds the parts of
# a rotated trace into TRACE.compact, and the compacted trace -- alone, or
# with the parts after those it holds -- gives every report of the full
# trace: the script's report (leaks, bad frees at their line numbers), the
# report by call site with growth classes, totals and peak, --growth and
# --json; /usr/bin/mtrace still reads it; it is far smaller.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-compact.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'compact' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi

test_expect_success 'a rotated run of the fixture: many parts, bad frees, leaks' '
	record_fixture t.log 100000 &&
	test -f t.log.part6 &&
	last=$(ls t.log.part* | sed "s/.*part//" | sort -n | tail -1) &&
	echo $last >last &&
	test_expect_code 1 "$MTANALYZE" $(parts_of t.log 1 $last) >a.out &&
	grep -q "was never alloc" a.out && grep -q "Memory not freed" a.out
'

test_expect_success 'all parts compacted after the exit: same reports, far smaller' '
	last=$(cat last) &&
	"$MTANALYZE" compact t.log >msg &&
	grep -q "^t.log.compact: parts 1-$last, [0-9]* of [0-9]* events kept" msg &&
	head -2 t.log.compact >head &&
	printf "# mtrec 1\n# compacted 1 $last\n" >expect && test_cmp expect head &&
	same_analysis "$(parts_of t.log 1 $last)" t.log.compact &&
	full=$(cat $(parts_of t.log 1 $last) | wc -c) &&
	test $((full / $(wc -c <t.log.compact))) -ge 20 &&
	test -f t.log && test -f t.log.part2
'

test_expect_success 'the first parts compacted, the last ones given after it' '
	last=$(cat last) && mkdir -p first && rm -f first/* &&
	for f in $(parts_of t.log 1 3); do cp $f first/; done &&
	"$MTANALYZE" compact -q first/t.log &&
	grep -q "^# compacted 1 3$" first/t.log.compact &&
	same_analysis "$(parts_of t.log 1 $last)" "first/t.log.compact $(parts_of t.log 4 $last)"
'

test_expect_success 'TRACE*: the parts the compacted file holds are left out' '
	last=$(cat last) &&
	for f in $(parts_of t.log 4 $last); do cp $f first/; done &&
	same_analysis "$(parts_of t.log 1 $last)" "$(ls first/t.log*)" &&
	test_expect_code 1 "$MTANALYZE" first/t.log* >/dev/null 2>err && test_must_be_empty err
'

test_expect_success MTRACE '/usr/bin/mtrace reads the compacted trace: the same blocks not freed' '
	test_expect_code 1 /usr/bin/mtrace t.log.compact >m.small &&
	cat $(parts_of t.log 1 $(cat last)) >full.cat &&
	test_expect_code 1 /usr/bin/mtrace full.cat >m.full &&
	sed -n "/^Memory not freed/,\$p" m.full >nf.full &&
	sed -n "/^Memory not freed/,\$p" m.small >nf.small &&
	test -s nf.full && test_cmp nf.full nf.small &&
	test $(grep -c "was never alloc" m.full) = $(grep -c "was never alloc" m.small)
'

test_expect_success 'a thread line before the header, and no line free for it: every mode reads the result' '
	mkdir early && cd early &&
	printf "# mtrec 1\n# T 100\n# pid 100 1\n# start 1000000000.000000000\n= Start\n@ ./a:[0x10] + 0x1000 0x10\n@ ./a:[0x20] + 0x2000 0x10\n@ ./a:[0x30] - 0x2000\n= End\n" >min.log &&
	"$MTANALYZE" compact -q min.log &&
	test_expect_code 1 "$MTANALYZE" --by-site min.log >full &&
	test_expect_code 1 "$MTANALYZE" --by-site min.log.compact >small &&
	test_cmp full small &&
	test_expect_code 1 "$MTANALYZE" min.log >full &&
	test_expect_code 1 "$MTANALYZE" min.log.compact >small &&
	test_cmp full small
'

test_expect_success 'a pid alive here but started after the trace opened is not its writer: the trace is compacted' '
	mkdir reused && cd reused &&
	holder=$(sh -c "sleep 300 >/dev/null 2>&1 & echo \$!") &&
	printf "# mtrec 1\n# pid %s 1\n# start 1000000000.000000000\n= Start\n@ ./a:[0x10] + 0x1000 0x10\n= End\n" $holder >copied.log &&
	{ "$MTANALYZE" compact -q copied.log; rc=$?; kill $holder; test $rc = 0; } &&
	test_expect_code 1 "$MTANALYZE" copied.log.compact >small &&
	grep -q "^Memory not freed" small
'

test_expect_success 'a trace its writer still writes: compact says so and writes nothing' '
	mkdir writing && cd writing &&
	holder=$(sh -c "sleep 300 >/dev/null 2>&1 & echo \$!") &&
	printf "# mtrec 1\n# pid %s 1\n# start %s.0\n= Start\n@ ./a:[0x10] + 0x1000 0x10\n" $holder $(( $(date +%s) + 60 )) >live.log &&
	{ "$MTANALYZE" compact live.log 2>err; rc=$?; kill $holder; test $rc = 0; } &&
	grep -q "still being written by process $holder: nothing compacted yet" err &&
	test ! -e live.log.compact
'

test_done
