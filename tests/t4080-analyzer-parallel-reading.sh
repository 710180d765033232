#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4080-analyzer-parallel-reading: the reader splits lines into columns on
# several threads, in blocks of whole lines (trace-blocks.c); every mode's
# output, messages and exit status are those of the serial reader
# (MTANALYZE_THREADS=1), whatever the blocks: 64 bytes (nearly every line
# cut by a block's end, lines longer than a block handing the rest of the
# part to the serial reader), 200 bytes, 4 KiB and the default.  Damaged
# lines in the middle are named by their file and line, on real traces:
# glibc's of a program, mtrec's rotated into parts with its '#' lines.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$GLIBC_DEBUG" ]; then
	test_skip 'parallel reading' 'needs the analyzer and glibc libc_malloc_debug.so'
	test_done; exit
fi

# both_ways NAME ARGS...: mtanalyze ARGS serially, then on two threads in
# blocks of each size: the same stdout, stderr and exit status (NAME.*).
both_ways() {
	name=$1 && shift &&
	st=0 && env MTANALYZE_THREADS=1 "$MTANALYZE" "$@" >$name.out 2>$name.err || st=$?
	echo "$st" >$name.st &&
	for b in 64 200 4096 1048576; do
		st=0 && env MTANALYZE_THREADS=2 MTANALYZE_BLOCK_SIZE=$b "$MTANALYZE" "$@" \
			>$name.$b.out 2>$name.$b.err || st=$?
		echo "$st" >$name.$b.st &&
		test_cmp $name.out $name.$b.out && test_cmp $name.err $name.$b.err &&
		test_cmp $name.st $name.$b.st || return 1
	done
}

test_expect_success 'setup: a glibc trace of 30,000 events' '
	$CC -O1 -g -o gen "$TOP/tests/bench/gen-ana-trace.c" &&
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/good.log ./gen 30000 &&
	test "$(wc -l <good.log)" -gt 30000
'

# Damaged lines among the events: junk, a control byte, a NUL, a tab, a line of
# 10,000 bytes, and a last line without its newline; and a compacted
# trace's "# at N", from which the run's lines are numbered from N.
test_expect_success 'setup: the same trace damaged in the middle' '
	long=$(printf "%010000d" 7) &&
	awk -v long="$long" "{ print }
		NR == 1000 { print \"garbage line here\" }
		NR == 5000 { printf \"@ x + 0x12\\0034 0x10\\n\" }
		NR == 9000 { print \"@ ./gen:[0x11e5]\\t+ 0x99 0x10\" }
		NR == 12000 { print \"@ \" long \" + 0x1_0\" }
		NR == 15000 { print \"# at 50000\" }" good.log >tmp.log &&
	{ head -n 7000 tmp.log && printf "@ x + 0x1\000 0x10\n" && tail -n +7001 tmp.log; } >bad.log &&
	printf "@ ./gen:[0x11e5] + 0x5620" >>bad.log &&
	grep -c "garbage line here" bad.log >n && test "$(cat n)" = 1
'

test_expect_success 'a glibc trace: the same report in every mode' '
	both_ways plain ./gen good.log &&
	both_ways sites --by-site ./gen good.log &&
	both_ways json --json ./gen good.log &&
	cat plain.st sites.st json.st >st && printf "1\n1\n1\n" >expect &&
	test_cmp expect st && test -s plain.out && test -s sites.out && test -s json.out
'

test_expect_success 'damaged lines: the same reports and messages' '
	both_ways bplain ./gen bad.log &&
	both_ways bsites --by-site ./gen bad.log &&
	both_ways bjson --json ./gen bad.log &&
	cat bplain.st bsites.st bjson.st >st && printf "1\n1\n1\n" >expect &&
	test_cmp expect st && grep -q unreadable bplain.64.err
'

test_expect_success 'damaged lines are named by their file and line' '
	n=$(grep -a -n "^garbage line here\$" bad.log | cut -d: -f1) &&
	grep -q "^mtanalyze: bad.log:$n: unreadable line .garbage line here." bplain.64.err &&
	n=$(grep -a -n "^@ 0000" bad.log | cut -d: -f1) &&
	grep -q "bad.log:$n: unreadable line .@ 0000" bplain.64.err &&
	n=$(wc -l <bad.log) &&
	grep -q "bad.log:$((n + 1)): unreadable line .@ ./gen:.0x11e5. + 0x5620.\$" bplain.64.err
'

test_expect_success 'compressed: the same as the plain file' '
	gzip -c bad.log >bad.log.gz &&
	both_ways gz ./gen bad.log.gz &&
	test_cmp bplain.out gz.out && test "$(cat gz.st)" = 1
'

test_expect_success 'setup: an mtrec trace at depth 4 rotated into parts' '
	MTREC_ROTATE=4M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/rot.log \
		"$HELPER/rec-handoff" 2 100000 3 &&
	test -f rot.log.part2 &&
	grep -q "^# stack " rot.log
'

test_expect_success 'a rotated trace: the same report in every mode' '
	both_ways rplain "$HELPER/rec-handoff" rot.log* &&
	both_ways rsites --by-site "$HELPER/rec-handoff" rot.log* &&
	both_ways rjson --json "$HELPER/rec-handoff" rot.log* &&
	test -s rplain.out && test -s rsites.out && test -s rjson.out
'

test_expect_success 'an error in the middle stops both at the same line' '
	awk "{ print } NR == 20000 { print \"# at 5\" }" good.log >stop.log &&
	both_ways stop ./gen stop.log &&
	test "$(cat stop.st)" = 2 &&
	n=$(grep -n "^# at 5\$" stop.log | cut -d: -f1) &&
	grep -q "stop.log:$n: " stop.64.err
'

test_expect_success SQLITE3 '--db: the same run stored' '
	for t in 1 2; do
		rm -f run$t.db &&
		st=0 && env MTANALYZE_THREADS=$t MTANALYZE_BLOCK_SIZE=200 \
			"$MTANALYZE" --db run$t.db ./gen bad.log >db$t.out 2>db$t.err || st=$?
		test "$st" = 1 &&
		sqlite3 run$t.db .dump |
			sed -E "s/'"'"'[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]*Z'"'"'/TIME/" >dump$t || exit 1
	done &&
	test_cmp db1.err db2.err &&
	test_cmp dump1 dump2 && grep -q "^INSERT INTO runs VALUES(1,TIME," dump1
'

# The default looks at what runs now (/proc/loadavg's runnable threads),
# not at the 1-minute average: with a busy loop on every processor it
# reads on the main thread alone, where two threads would only take CPU
# from the loops.  (That an idle machine gets the threads cannot be
# asserted on a shared one; make bench shows it.)  A thread is a clone
# with CLONE_THREAD: LeakSanitizer's clone at exit, in the sanitizer
# build, is not one; and LeakSanitizer does not work under ptrace (it
# says so and fails), so it is off for these two runs.
test_lazy_prereq STRACE 'strace -f -qq -e trace=clone,clone3 -o /dev/null true'
test_expect_success STRACE 'every processor busy: by default one thread reads; MTANALYZE_THREADS=2 makes them' '
	nolsan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" &&
	test_expect_code 1 strace -f -qq -e trace=clone,clone3 -o forced.st \
		env ASAN_OPTIONS="$nolsan" MTANALYZE_THREADS=2 "$MTANALYZE" ./gen good.log >forced.out &&
	grep -q CLONE_THREAD forced.st &&
	busy= &&
	for i in $(seq "$(getconf _NPROCESSORS_ONLN)"); do
		busy="$busy $(sh -c "timeout 60 sh -c \"while :; do :; done\" >/dev/null 2>&1 & echo \$!")" ||
			return 1
	done &&
	test_expect_code 1 strace -f -qq -e trace=clone,clone3 -o default.st \
		env ASAN_OPTIONS="$nolsan" "$MTANALYZE" ./gen good.log >default.out &&
	kill $busy &&
	! grep CLONE_THREAD default.st &&
	test_cmp forced.out default.out
'

test_done
