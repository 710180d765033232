#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3335-compact-bad-input: a damaged compacted trace is refused with an
# error naming its file and line (exit 2), never a crash nor a wrong
# report; a compacted trace of another process is refused as traces of
# two processes are; two compacted traces of one run are refused; compact
# says what is wrong with what it is given.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-compact.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'compact' 'needs the analyzer and the recorder'
	test_done; exit
fi

test_expect_success 'two rotated runs of the fixture, compacted' '
	record_fixture a.log 40000 && record_fixture b.log 40000 &&
	test -f a.log.part3 && test -f b.log.part3 &&
	"$MTANALYZE" compact -q a.log && "$MTANALYZE" compact -q b.log
'

# damage SED-SCRIPT: a.log.compact edited into bad.log.compact
damage() {
	sed "$1" a.log.compact >bad.log.compact
}

test_expect_success 'a damaged sum: file and line named, exit 2, every mode' '
	n=$(grep -n "^# pathsum" a.log.compact | sed -n "2s/:.*//p") &&
	damage "${n}s/allocs=/allocs=x/" &&
	for mode in --by-site --json; do
		test_expect_code 2 "$MTANALYZE" $mode bad.log.compact >/dev/null 2>err &&
		grep -q "^mtanalyze: bad.log.compact:$n: damaged compacted trace: unreadable .# pathsum. line$" err ||
		exit 1
	done &&
	damage "s/^# runsum events=/# runsum events=-/" &&
	test_expect_code 2 "$MTANALYZE" --by-site bad.log.compact 2>err &&
	grep -q "bad.log.compact:[0-9]*: damaged compacted trace: unreadable .# runsum. line" err &&
	damage "s/^# tstate \\([0-9]*\\) .*/# tstate \\1 0xZZ/" &&
	test_expect_code 2 "$MTANALYZE" --by-site bad.log.compact 2>err &&
	grep -q "unreadable .# tstate. line" err
'

test_expect_success 'a damaged "# at": refused in the script report too' '
	n=$(grep -n "^# at " a.log.compact | sed -n "3s/:.*//p") &&
	damage "${n}s/^# at .*/# at twelve/" &&
	test_expect_code 2 "$MTANALYZE" bad.log.compact >/dev/null 2>err &&
	grep -q "^mtanalyze: bad.log.compact:$n: damaged compacted trace: .# at. needs a line number$" err &&
	n=$(grep -n "^# at " a.log.compact | sed -n "20s/:.*//p") &&
	damage "${n}s/^# at .*/# at 5/" &&
	test_expect_code 2 "$MTANALYZE" --json bad.log.compact >/dev/null 2>err &&
	grep -q "^mtanalyze: bad.log.compact:$n: damaged compacted trace: .# at 5. would number lines out of order" err
'

test_expect_success 'a compacted trace of another process: refused' '
	test_expect_code 2 "$MTANALYZE" a.log.compact b.log.part3 2>err &&
	grep -q "are traces of different processes" err &&
	next=$(($(sed -n "2s/^# compacted 1 //p" a.log.compact) + 1)) &&
	cp b.log.part3 a.log.part$next &&
	test_expect_code 2 "$MTANALYZE" compact a.log 2>err &&
	grep -q "are traces of different processes" err && rm a.log.part$next
'

test_expect_success 'two compacted traces of one run: refused' '
	cp a.log.compact copy.compact &&
	test_expect_code 2 "$MTANALYZE" a.log.compact copy.compact 2>err &&
	grep -q "are both compacted traces of the run: give one" err
'

test_expect_success 'compact: no trace, a file that is not a compacted trace, usage' '
	test_expect_code 2 "$MTANALYZE" compact none.log 2>err &&
	grep -q "cannot read .none.log." err &&
	cp a.log c.log && echo "# mtrec 1" >c.log.compact &&
	test_expect_code 2 "$MTANALYZE" compact c.log 2>err &&
	grep -q "c.log.compact. is not a compacted trace" err &&
	test_expect_code 2 "$MTANALYZE" compact 2>err &&
	grep -q "compact needs a trace" err
'

test_done
