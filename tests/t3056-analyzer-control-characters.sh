#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3056-analyzer-control-characters: names that come from a trace (the
# objects of callers, the command line, the recorder's reason for
# stopping) reach the terminal with their control characters escaped
# (\x1b), in every text report and message: a trace is data anyone may
# have written, and an escape sequence in it would act on the terminal of
# whoever reads the report (retitle it, clear it, hide lines).  The
# report in the script's format stays byte for byte what /usr/bin/mtrace
# prints, raw bytes included; JSON escapes its strings its own way.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer; then
	test_skip 'control characters' 'needs the analyzer'
	test_done; exit
fi

E=$(printf '\033') BEL=$(printf '\007') C1=$(printf '\302\233')
{
	echo "# mtrec 1"
	echo "# pid 4242 1"
	echo "# exe ./app${E}[2J"
	echo "# cmdline ./app ${E}]0;pwned${BEL}"
	echo "# start 1700000000.000000000"
	echo "= Start"
	echo "# thread 4242 ${E}[31mred"
	echo "# mark ${E}[1mmark"
	echo "@ ./a${E}[31mpp:[0x10] + 0x1000 0x10"
	echo "@ ./c${C1}1m:[0x30] + 0x5000 0x20"
	echo "@ ./b${E}[2J:[0x20] - 0x3000"
	echo "# stopped ${E}[5mreason"
	echo "= End"
} >esc.log
printf '= Start\n= End\n' >se.log

# no_controls FILE...: no ESC, BEL nor C1 CSI byte in any FILE (a
# newline is the only control character a report prints).
no_controls() {
	for f; do
		if LC_ALL=C grep -q "[$E$BEL]" "$f" || LC_ALL=C grep -q "$C1" "$f"; then
			echo "control characters in $f:" && cat -v "$f" && return 1
		fi
	done
}

test_expect_success 'by call site: names escaped on stdout, the reason on stderr too' '
	test_expect_code 1 "$MTANALYZE" --by-site esc.log >out 2>err &&
	no_controls out err &&
	grep -qF "0x10 in ./a\\x1b[31mpp" out &&
	grep -qF "0x30 in ./c\\xc2\\x9b1m" out &&
	grep -qF "1  0x20 in ./b\\x1b[2J" out &&
	grep -qF "the recorder stopped at line 12 (\\x1b[5mreason)" out &&
	grep -qF "the recorder stopped (\\x1b[5mreason)" err
'

test_expect_success '--folded, --db, --html: what they print is escaped' '
	test_expect_code 1 "$MTANALYZE" --folded esc.log >out 2>err &&
	no_controls out err && grep -qF "0x10 [a\\x1b[31mpp] 16" out &&
	test_expect_code 1 "$MTANALYZE" --db esc.db esc.log >out 2>err &&
	no_controls out err && grep -q "^run 1 loaded" out &&
	test_expect_code 1 "$MTANALYZE" --html esc.html esc.log >out 2>err &&
	no_controls out err
'

test_expect_success 'diff and session: escaped' '
	test_expect_code 1 "$MTANALYZE" diff se.log esc.log >out 2>err &&
	no_controls out err && grep -qF "0x10 in ./a\\x1b[31mpp" out &&
	test_expect_code 1 "$MTANALYZE" session esc.log >out 2>err &&
	no_controls out err &&
	grep -qF "pid 4242 ./app \\x1b]0;pwned\\x07" out &&
	grep -qF "recording stopped: \\x1b[5mreason" out
'

test_expect_success PYTHON3 'JSON: escaped as JSON escapes, the names whole' '
	test_expect_code 1 "$MTANALYZE" --json esc.log >out 2>err &&
	no_controls out err &&
	py "d[\"run\"][\"cmdline\"]" out >cmdline &&
	python3 -c "import sys; sys.exit(open(\"cmdline\", \"rb\").read() != b\"./app \\x1b]0;pwned\\x07\\n\")"
'

test_expect_success MTRACE 'the script'"'"'s report: the bytes as /usr/bin/mtrace prints them' '
	printf "= Start\n@ ${E}[5m + 0x4000 0x10\n@ ${E}[2J - 0x5000\n= End\n" >raw.log &&
	same_as_mtrace raw.log -- raw.log &&
	LC_ALL=C grep -q "$E" actual
'

test_done
