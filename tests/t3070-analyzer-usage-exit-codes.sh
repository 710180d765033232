#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3070-analyzer-usage-exit-codes: mtanalyze's statuses are 0 no leaks, 1
# leaks, 2 trouble (unusable input, usage error, I/O error), for the report
# and its subcommands; a usage error is one line naming what is wrong and
# where to look, never the whole help, with the option or subcommand that
# was probably meant; --version everywhere; -q hides the progress line;
# diff says nothing of source files it cannot read; shrink writes 0600.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'usage and exit codes' 'needs the analyzer and the recorder'
	test_done; exit
fi

# usage_error STDERR-FILE CMD-NAME: exactly the one line and the Try line
usage_error() {
	test "$(wc -l <"$1")" = 2 &&
	sed -n 2p "$1" | grep -qx "Try '$2 --help' for more information."
}

test_expect_success 'record a trace with leaks and one without' '
	"$MTREC" -o leaky.log --depth 4 "$HELPER/ana-growth" 2000 2>/dev/null &&
	"$MTREC" -o clean.log "$HELPER/ana-growth" 2000 0 x 2>/dev/null &&
	test_expect_code 1 "$MTANALYZE" leaky.log >/dev/null &&
	"$MTANALYZE" clean.log >/dev/null
'

test_expect_success 'an option typo: status 2, one line with the option meant, stdout empty' '
	test_expect_code 2 "$MTANALYZE" --bysite leaky.log >out 2>err &&
	test ! -s out && usage_error err mtanalyze &&
	grep -qx "mtanalyze: unknown option .--bysite.: did you mean .--by-site.?" err &&
	test_expect_code 2 "$MTANALYZE" --jsno leaky.log >out 2>err &&
	grep -q "did you mean .--json.?" err &&
	test_expect_code 2 "$MTANALYZE" --zzzzzzzz leaky.log >out 2>err &&
	usage_error err mtanalyze && grep -qx "mtanalyze: unknown option .--zzzzzzzz." err
'

test_expect_success 'bad values and missing arguments are usage errors too' '
	test_expect_code 2 "$MTANALYZE" --frames x leaky.log >out 2>err && usage_error err mtanalyze &&
	head -n 1 err | grep -q "^mtanalyze: [a-z].*.x. for --frames$" &&
	! grep -q "$(printf "\342\200\234")" err &&
	test_expect_code 2 "$MTANALYZE" -qz leaky.log >out 2>err &&
	usage_error err mtanalyze && grep -qx "mtanalyze: unknown option .-z." err &&
	test_expect_code 2 "$MTANALYZE" addr2line >out 2>err && usage_error err "mtanalyze addr2line" &&
	"$MTANALYZE" addr2line --help >out && grep -q "FILE ADDR" out && ! grep -q TRACE out &&
	test_expect_code 2 "$MTANALYZE" --growth quadratic leaky.log >out 2>err &&
	usage_error err mtanalyze && grep -q "unknown growth class .quadratic." err &&
	test_expect_code 2 "$MTANALYZE" --all-events leaky.log >out 2>err && usage_error err mtanalyze &&
	test_expect_code 2 "$MTANALYZE" >out 2>err && usage_error err mtanalyze &&
	test_expect_code 2 "$MTANALYZE" diff leaky.log >out 2>err && usage_error err "mtanalyze diff" &&
	test_expect_code 2 "$MTANALYZE" diff --min-blocks x leaky.log clean.log >out 2>err &&
	usage_error err "mtanalyze diff" &&
	test_expect_code 2 "$MTANALYZE" shrink leaky.log >out 2>err && usage_error err "mtanalyze shrink" &&
	test_expect_code 2 "$MTANALYZE" shrink --frobnicate -o x leaky.log >out 2>err &&
	usage_error err "mtanalyze shrink" && test ! -e x
'

test_expect_success 'a mistyped subcommand: the one meant, status 2' '
	test_expect_code 2 "$MTANALYZE" dif leaky.log clean.log >out 2>err &&
	usage_error err mtanalyze &&
	grep -qx "mtanalyze: .dif. is neither a file nor a subcommand: did you mean .mtanalyze diff.?" err &&
	test_expect_code 2 "$MTANALYZE" shrnk -o x leaky.log >out 2>err &&
	grep -q "did you mean .mtanalyze shrink.?" err &&
	cp leaky.log dif &&
	test_expect_code 1 "$MTANALYZE" dif >out 2>err && test ! -s err
'

test_expect_success 'missing or unreadable files: status 2, naming the file' '
	test_expect_code 2 "$MTANALYZE" no-such.log >out 2>err &&
	grep -qx "mtanalyze: cannot read .no-such.log.: No such file or directory" err &&
	test_expect_code 2 "$MTANALYZE" diff leaky.log no-such.log >out 2>err &&
	grep -q "cannot read .no-such.log." err &&
	test_expect_code 2 "$MTANALYZE" shrink -o s.log no-such.log >out 2>err &&
	grep -q "no-such.log" err && test ! -e s.log
'

test_expect_success 'leaks 1, none 0, in every mode' '
	test_expect_code 1 "$MTANALYZE" --by-site leaky.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --json leaky.log >/dev/null &&
	"$MTANALYZE" --by-site clean.log >/dev/null &&
	"$MTANALYZE" diff leaky.log leaky.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" diff clean.log leaky.log >/dev/null &&
	"$MTANALYZE" shrink -o s.log leaky.log
'

test_expect_success '--version for mtanalyze, diff and shrink: the same line' '
	"$MTANALYZE" --version >v1 &&
	"$MTANALYZE" diff --version >v2 &&
	"$MTANALYZE" shrink --version >v3 &&
	grep -qx "mtanalyze [0-9][0-9.]*" v1 &&
	test_cmp v1 v2 && test_cmp v1 v3
'

test_expect_success 'the help states the exit statuses, for each command' '
	"$MTANALYZE" --help >h && grep -q "2 trouble" h &&
	"$MTANALYZE" diff --help >h && grep -q "2 trouble" h &&
	"$MTANALYZE" shrink --help >h && grep -q "2 trouble" h &&
	grep -q "^\.SH \"EXIT STATUS\"" "$TOP/share/man/mtanalyze.1"
'

test_expect_success 'shrink writes its output 0600, as the recorder writes traces' '
	rm -f s.log && (umask 022 && "$MTANALYZE" shrink -o s.log leaky.log) &&
	test "$(stat -c %a s.log)" = 600 &&
	(umask 022 && "$MTANALYZE" shrink -o s.log.gz leaky.log) &&
	test "$(stat -c %a s.log.gz)" = 600
'

test_expect_success 'shrink: an existing OUT keeps its mode; a stale OUT.tmp is not followed' '
	chmod 644 s.log && "$MTANALYZE" shrink -q -o s.log leaky.log &&
	test "$(stat -c %a s.log)" = 644 &&
	echo precious >target && chmod 644 target && ln -s target s2.log.tmp &&
	(umask 022 && "$MTANALYZE" shrink -q -o s2.log leaky.log) &&
	test "$(stat -c %a s2.log)" = 600 && test "$(cat target)" = precious &&
	test ! -e s2.log.tmp && test "$(stat -c %a target)" = 644
'

# A FIFO (as /dev/stdout or a device) is written in place: renamed over,
# it would be replaced by a file (and the reader would wait forever,
# hence the timeout).
test_expect_success 'shrink: an OUT that is not a regular file is written in place' '
	mkfifo fifo &&
	{ timeout 60 cat fifo >from-fifo & } &&
	"$MTANALYZE" shrink -q -o fifo leaky.log &&
	wait &&
	test -p fifo && test ! -e fifo.tmp &&
	"$MTANALYZE" shrink -q -o s.log leaky.log && test_cmp s.log from-fifo
'

test_expect_success 'a report, JSON or diff that cannot be written: status 2' '
	test_expect_code 2 "$MTANALYZE" leaky.log >/dev/full 2>err &&
	grep -q "No space left" err &&
	test_expect_code 2 "$MTANALYZE" --json clean.log >/dev/full 2>err &&
	test_expect_code 2 "$MTANALYZE" diff clean.log leaky.log >/dev/full 2>err &&
	test_expect_code 2 "$MTANALYZE" shrink -o - leaky.log >/dev/full 2>err &&
	grep -q "No space left" err
'

# A source file named in the debug info that diff cannot read: built from
# a copy of the fixture's source, then the copy is removed.
test_expect_success 'diff: no GLib criticals for source files it cannot read' '
	mkdir -p gone && cp "$TOP/tests/helper/ana-growth.c" "$TOP/tests/helper/pace.h" gone/ &&
	$CC -O0 -g -o gone-app gone/ana-growth.c &&
	"$MTREC" -o g1.log --depth 4 ./gone-app 1000 2>/dev/null &&
	"$MTREC" -o g2.log --depth 4 ./gone-app 3000 2>/dev/null &&
	rm -r gone &&
	test_expect_code 1 env G_DEBUG=fatal-criticals "$MTANALYZE" diff ./gone-app:g1.log ./gone-app:g2.log \
		>out 2>err &&
	! grep -q "CRITICAL\|WARNING" err
'

# The progress line shows only for inputs over 64 MB on a terminal: a
# 70 MB trace, read under script(1)'s pseudo-terminal.
if command -v script >/dev/null 2>&1; then
test_expect_success 'progress on a terminal; -q hides it, in the report, diff and shrink' '
	awk "BEGIN { print \"= Start\"; for (i = 0; i < 1100000; i++) {
		printf \"@ ./app:[0x1234] + 0x%x 0x20\\n@ ./app:[0x1234] - 0x%x\\n\", 4096 + i * 32, 4096 + i * 32 }
		print \"= End\" }" >big.log &&
	test "$(stat -c %s big.log)" -gt $((64 << 20)) &&
	script -qec "\"$MTANALYZE\" big.log" /dev/null >tty.out &&
	grep -q "reading .big.log." tty.out &&
	script -qec "\"$MTANALYZE\" -q big.log" /dev/null >tty.out &&
	! grep -q "reading" tty.out && grep -q "No memory leaks" tty.out &&
	script -qec "\"$MTANALYZE\" diff big.log big.log" /dev/null >tty.out &&
	grep -q "reading .big.log." tty.out &&
	script -qec "\"$MTANALYZE\" diff -q big.log big.log" /dev/null >tty.out &&
	! grep -q "reading" tty.out &&
	script -qec "\"$MTANALYZE\" shrink -o small.log big.log" /dev/null >tty.out &&
	grep -q "reading .big.log." tty.out &&
	script -qec "\"$MTANALYZE\" shrink -q -o small.log big.log" /dev/null >tty.out &&
	! grep -q "reading" tty.out
'
else
test_skip 'progress on a terminal; -q hides it' 'script(1) (bsdutils) is not installed'
fi

test_done
