#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2120-recorder-faults.sh -- when the trace cannot be written (or can no
# longer be), the program runs exactly as it does without the recorder,
# the recorder says once why it is not recording, and whatever trace there
# is stays readable by glibc's mtrace script.
#
# Fixture: tests/helper/rec-fault.c.
. "$(dirname "$0")/lib.sh"

FAULT="$HELPER/rec-fault"

# same_as_plain NAME PATTERN MALLOC_TRACE: rec-fault work 2000 with the
# recorder and MALLOC_TRACE prints what it prints without, exits 3 as
# without, and its stderr is one line matching PATTERN.
same_as_plain() {
	st_=0; "$FAULT" work 2000 >"$1.plain.out" 2>"$1.plain.err" || st_=$?
	echo "plain exit $st_" >>"$1.plain.out"
	st_=0; LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$3" "$FAULT" work 2000 >"$1.out" 2>"$1.err" || st_=$?
	echo "plain exit $st_" >>"$1.out"
	test_cmp "$1.plain.out" "$1.out" &&
	grep "^plain exit 3\$" "$1.out" &&
	test_must_be_empty "$1.plain.err" &&
	cat "$1.err" &&
	test "$(wc -l <"$1.err")" -eq 1 &&
	grep -x "$2" "$1.err"
}

test_expect_success 'a trace path in a missing directory: the program runs as without, one message' '
	same_as_plain nodir "mtrec: .*/no/such/dir/t\.log.*No such file or directory.*not recording" \
		"$OUT/no/such/dir/t.log" &&
	test ! -e "$OUT/no"
'

test_expect_success 'a trace path that is a directory: the program runs as without, one message' '
	mkdir isdir &&
	same_as_plain isdir "mtrec: .*isdir.*Is a directory.*not recording" isdir &&
	test -z "$(ls isdir)"
'

test_expect_success 'a trace path that is not a regular file (/dev/null): runs as without, one message' '
	same_as_plain devnull "mtrec: .*/dev/null.*not recording" /dev/null
'

test_expect_success 'a trace path that is a symbolic link: the link is not followed, the target is intact' '
	echo precious >victim &&
	cp victim victim.orig &&
	ln -s victim link &&
	same_as_plain symlink "mtrec: .*link.*symbolic link.*not recording" link &&
	test -L link &&
	test_cmp victim.orig victim
'

test_expect_success 'a dangling symbolic link: no file is created where it points' '
	ln -s dangling-target dangling &&
	same_as_plain dangling "mtrec: .*dangling.*symbolic link.*not recording" dangling &&
	test ! -e dangling-target
'

test_expect_success 'a small RLIMIT_FSIZE: the program completes, no SIGXFSZ, one "stopped recording"' '
	(ulimit -f 256 && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=fsize.log "$FAULT" big 200000 >fsize.out 2>fsize.err) &&
	cat fsize.out fsize.err &&
	grep -x "done 200000" fsize.out &&
	test "$(wc -l <fsize.err)" -eq 1 &&
	test "$(grep -c "^mtrec: stopped recording" fsize.err)" -eq 1 &&
	limit=$(sed -n "s/^fsize //p" fsize.out) &&
	test "$limit" -gt 0 &&
	size=$(wc -c <fsize.log) &&
	echo "trace $size bytes, limit $limit" &&
	test "$size" -le "$limit" &&
	test "$(strip_ext fsize.log | grep -c " + ")" -gt 100 &&
	mtrace_ok fsize.log
'

test_expect_success 'an RLIMIT_FSIZE smaller than the trace header: the program completes' '
	(ulimit -f 1 && LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=tiny.log "$FAULT" big 2000 >tiny.out 2>tiny.err) &&
	cat tiny.out tiny.err &&
	grep -x "done 2000" tiny.out &&
	test "$(wc -l <tiny.err)" -le 1 &&
	test "$(wc -c <tiny.log)" -le "$(sed -n "s/^fsize //p" tiny.out)" &&
	mtrace_ok tiny.log
'

# The recorder keeps recording: the mapping still writes its file, and
# growth opens the file again by name (issue 18.4).
test_expect_success 'closing every descriptor: the program runs normally, its file is untouched, recording goes on' '
	mkdir closeall && cd closeall &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FAULT" closeall 200000 >out 2>err &&
	cat out err &&
	grep -x "reopened 200" out && grep -x "done 200000" out && grep -x "data ok" out &&
	printf "data\n" >expect && test_cmp expect closeall.dat &&
	test ! -s err &&
	test "$(strip_ext t.log | grep -c " + ")" -ge 200000 &&
	test "$(tail -n 1 t.log)" = "= End" &&
	! grep -a "^# stopped" t.log &&
	mtrace_ok t.log
'

test_expect_success 'closing every descriptor in a short run: the trace is still complete' '
	mkdir closeshort && cd closeshort &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FAULT" closeall 300 >out 2>err &&
	grep -x "done 300" out &&
	{ test "$(strip_ext t.log | grep -c " + ")" -ge 400 ||
		{ test "$(wc -l <err)" -eq 1 && grep "^mtrec: stopped recording" err; }; } &&
	mtrace_ok t.log
'

test_expect_success 'dup2() over every descriptor: the program file is neither extended nor truncated, recording goes on' '
	mkdir dup2 && cd dup2 &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FAULT" dup2 own.dat 200000 >out 2>err &&
	cat out err &&
	grep -x "done 200000" out &&
	printf "payload\n" >expect && test_cmp expect own.dat &&
	test ! -s err &&
	test "$(strip_ext t.log | grep -c " + ")" -ge 200000 &&
	test "$(tail -n 1 t.log)" = "= End" &&
	mtrace_ok t.log
'

test_expect_success 'dup2() over every descriptor in a short run: the program file is untouched' '
	mkdir dup2short && cd dup2short &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FAULT" dup2 own.dat 50 >out 2>err &&
	grep -x "done 50" out &&
	printf "payload\n" >expect && test_cmp expect own.dat &&
	test "$(wc -l <err)" -le 1 &&
	mtrace_ok t.log
'

test_done
