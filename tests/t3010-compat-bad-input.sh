#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3010-compat-bad-input: damaged traces never crash mtanalyze; its stdout
# and status stay those of /usr/bin/mtrace on the same bytes, unreadable
# lines are reported on stderr with file and line, and files it cannot read
# at all end it with status 2 and a message naming them.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -x /usr/bin/mtrace ]; then
	test_skip 'bad input' 'needs analyzer and /usr/bin/mtrace'
	test_done; exit
fi

# like_mtrace TRACE: stdout and status as the script's (no BINARY: both
# leave every location unresolved, so compare in exact mode).
like_mtrace() {
	same_as_mtrace "$1" -- --mtrace-exact "$1"
}

good='@ ./app:[0x1195] + 0x55d0c07c52a0 0xa
@ ./app:(main+3f)[0x1232] + 0x55d0c07c54a0 0x64
@ ./app:[0x12df] - 0x55d0c07c54a0'

test_expect_success 'garbage, truncated and odd lines' '
	{
		echo "= Start"
		echo "$good"
		echo "garbage line here"
		echo "@ ./app:[0x11"
		echo "@ ./app:[0x1195] +"
		echo "@ ./app:[0x1195] + 0x55d0c07c5"
		echo "+ 0x1000 0x20"
		echo "@ ./app:[0x10] - 0x999999"
		echo "@ ./app:[0x10] < 0x999998"
		echo "@ ./app:[0x10] > 0x999998 0x30"
		echo "@ ./app:[0x11] > 0x999998 0x40"
		echo "@ x + (nil) 0x10"
		echo "@ x > (nil) 0x10"
		echo "@ x + (nil) 0x10"
		echo "@ x + 0X1F 0x5"
		echo "@ x + 0x0001f 0x5"
		echo "@ x + 0x1f 0x5"
		echo "@ x + 0x1ffffffffffffffffff 0x123456789abcdef012"
		echo "@ x + 0x1_0 0x5_5"
		echo "@ x - 0x1_0"
		echo "@ x >"
		echo "@ y - "
		echo "@"
		echo "- 0x77"
		echo "@ ./o:[0x5]:junk - 0x78"
		echo "@ [0x5]:q - 0x79"
		echo "@ a:b:[0x7] - 0x7a"
		echo "@ [0x8 - 0x7b"
		echo "@ ./o:(f+1)[0x9] ! 0x55d0c07c52a0 0x10"
		echo "# object 0x0 0x0-0x1 - ./o"
		echo "= End"
	} >odd.log &&
	like_mtrace odd.log &&
	grep -q "odd.log:5: unreadable line .garbage line here." err
'

test_expect_success 'CRLF line ends, blank lines, tabs' '
	printf "%s\n" "$good" | sed "s/\$/\r/" >crlf.log &&
	printf "\n\n   \n\t\n" >>crlf.log &&
	printf "@\t./app:[0x1]\t+\t0x5000\t0x1\r\n" >>crlf.log &&
	like_mtrace crlf.log
'

test_expect_success 'NUL padding after a crash and a cut last line' '
	{ printf "%s\n" "$good"; head -c 300 /dev/zero; printf "\n"; head -c 64 /dev/zero;
	  printf "\n@ ./app:[0x1195] + 0x55d0c07c9\0\0\0 0x10\n"; printf "@ ./app:[0x1195] + 0x55d0c07c7000 0x1"; } >nul.log &&
	like_mtrace nul.log &&
	grep -q "unreadable line" err &&
	{ printf "%s\n" "$good"; head -c 4096 /dev/zero; } >tail.log &&
	like_mtrace tail.log
'

test_expect_success 'binary junk' '
	awk "BEGIN { srand(7); for (i = 0; i < 20000; i++) printf \"%c\", int(rand() * 256) }" >junk.bin &&
	{ printf "%s\n" "$good"; cat junk.bin; printf "\n%s\n" "$good"; } >junk.log &&
	like_mtrace junk.log &&
	grep -q "unreadable lines in all" err
'

test_expect_success 'empty trace: unusable, status 2 (the script says no leaks)' '
	: >empty.log &&
	test_expect_code 2 "$MTANALYZE" empty.log >out 2>err && test_must_be_empty out &&
	echo "mtanalyze: empty.log: empty file" >expect &&
	test_cmp expect err
'

test_expect_success 'missing file, directory: status 2 and a message, no report' '
	test_expect_code 2 "$MTANALYZE" nosuch.log >out 2>err && ! test -s out &&
	grep -q "^mtanalyze: cannot read .nosuch.log.: No such file or directory$" err &&
	mkdir adir &&
	test_expect_code 2 "$MTANALYZE" odd.log adir >out 2>err && ! test -s out &&
	grep -q "^mtanalyze: cannot read .adir.: Is a directory$" err
'

test_expect_success 'usage errors: status 2, one line and where to look (t3070 for more)' '
	test_expect_code 2 "$MTANALYZE" >out 2>err && grep -q "^mtanalyze: no trace given$" err &&
	test_expect_code 2 "$MTANALYZE" --no-such-option x 2>err &&
	grep -q "^Try .mtanalyze --help. for more information.$" err &&
	"$MTANALYZE" --help | grep -q sysroot &&
	"$MTANALYZE" --version | grep -q "^mtanalyze "
'

test_expect_success 'a long trace: every line counted, memory stays small' '
	awk "BEGIN { for (i = 0; i < 300000; i++) { printf \"@ ./a:[0x%x] + 0x%x 0x10\n\", i % 7, 4096 + (i % 100) * 16;
		printf \"@ ./a:[0x9] - 0x%x\n\", 4096 + (i % 100) * 16 } }" >long.log &&
	echo "@ ./a:[0x9] - 0x5" >>long.log &&
	like_mtrace long.log &&
	grep -q "Free 600001 was never" actual
'

test_done
