#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2625-recorder-parts-reuse-range.sh -- with MTREC_ROTATE, a part takes the
# place of a retired one in the recorder's reserved range, so a rotated
# trace never stops for lack of address space, however much it writes in
# all (a daemon traced for days).  Under ulimit -v the recorder reserves an
# eighth of the limit: here 64 MB, 16 parts of 4 MB, and the fixture writes
# more than four times that.  Unmapping the retired parts is what frees
# their places, not deleting their files: the trace goes on both ways.
# The fixture (tests/helper/rec-wrap.c) hands blocks from one thread to
# another, so that events on one address come from both in every part, and
# has an idle thread that allocated in part 1, frees at the end, and leaks
# one block at each of two wake-ups far apart.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-wrap"
AS_KB=524288	# ulimit -v: 512 MB, so the recorder reserves 64 MB
PART=4194304	# MTREC_ROTATE=4M
PLACES=16	# parts the reservation holds at once
COUNT=1000000	# hand-offs: about 280 MB of trace, 70 parts
RATE=200	# hand-offs a millisecond at most (60 MB of trace a second)

# name_of N: part N's file name.
name_of() {
	if [ "$1" = 1 ]; then echo w.log; else echo "w.log.part$1"; fi
}

# latest [DIR]: the highest part number whose file exists in DIR (.).
latest() {
	ls "${1:-.}" | sed -n 's/^w\.log\.part\([0-9][0-9]*\)$/\1/p' | sort -n |
		tail -n 1 | grep . || echo 1
}

# mapped PID FILE: /proc/PID/maps lists a mapping of $OUT/FILE.
mapped() {
	awk -v f="$OUT/$2" '$6 == f { found = 1 } END { exit !found }' "/proc/$1/maps"
}

# record DIR [RATE]: run the fixture under the limit, recorded with stacks
# into DIR in parts of 4 MB, in the background; its pid in $pid (the
# subshell execs it).
record() {
	rm -rf "$1" && mkdir "$1" || return 1
	(ulimit -v $AS_KB && cd "$1" &&
	 exec env MTREC_ROTATE=4M MTREC_DEPTH=4 LD_PRELOAD="$LIBMTREC" \
		MALLOC_TRACE="$OUT/$1/w.log" "$PROG" $COUNT ${2:-}) >"$1.out" 2>"$1.err" &
	pid=$!
}

# save_complete PID: move every part the rule of share/trace-format.md says
# is complete (the next part's file exists, this one is not mapped) from
# run/ to saved/: copied, then deleted.  $next is the first part not moved.
save_complete() {
	top=$(latest run)
	while [ "$next" -lt "$top" ]; do
		f=$(name_of $next)
		[ -f "run/$f" ] && ! mapped "$1" "run/$f" || return 0
		cp "run/$f" saved/ && rm "run/$f" || return 1
		next=$((next + 1))
	done
}

# parts_of DIR: DIR's part files in order.
parts_of() {
	n=1
	top=$(latest "$1")
	while [ "$n" -le "$top" ]; do
		echo "$1/$(name_of $n)"
		n=$((n + 1))
	done
}

# whole DIR: every part from 1 on is there, no larger than a part, with its
# own header; none says the recorder stopped; the last one ends the trace;
# and there are more than three times as many as the range holds at once.
whole() {
	top=$(latest "$1") &&
	echo "$top parts" &&
	test "$top" -gt $((3 * PLACES)) &&
	for f in $(parts_of "$1"); do
		test -f "$f" &&
		test "$(wc -c <"$f")" -le $PART &&
		head -n 1 "$f" | grep -qx "# mtrec 1" &&
		! grep -a -q "^# stopped" "$f" || { echo "bad part $f"; return 1; }
	done &&
	n=2 &&
	while [ $n -le "$top" ]; do
		sed -n 2p "$1/$(name_of $n)" | grep -qx "# part $n" || { echo "part $n: no '# part' line"; return 1; }
		n=$((n + 1))
	done &&
	tail -n 1 "$1/$(name_of "$top")" | grep -qx "= End"
}

# stacks_defined DIR: every part defines each stack its events use
# (share/trace-format.md), the parts after a place was taken again too.
stacks_defined() {
	awk '/^# stack / { def[FILENAME " " $3] = 1; next }
	     / s=[0-9]+$/ { id = $NF; sub(/^s=/, "", id); use[FILENAME " " id] = 1; n++ }
	     END { for (k in use) if (!(k in def)) { print "undefined: " k; bad = 1 }
		   exit bad || n == 0 }' $(parts_of "$1")
}

# leaks DIR: the parts in order are one trace, with the two wake-ups' leaks
# and nothing amiss.
leaks() {
	test_expect_code 1 "$MTANALYZE" $(parts_of "$1") >"$1.report" 2>"$1.report.err" &&
	test_must_be_empty "$1.report.err" &&
	grep -c "^0x[0-9a-f]* *0x10e1 *at .*rec-wrap.c" "$1.report" >"$1.count" &&
	echo 2 >expect && test_cmp expect "$1.count" &&
	! grep -q -e "never alloc" -e duplicate "$1.report"
}

test_expect_success 'the program exits 3 and says so natively' '
	test_expect_code 3 "$PROG" 3000 >native.out &&
	echo "rec-wrap: 2 wake-ups" >expect && test_cmp expect native.out
'

test_expect_success 'parts deleted as they complete: the trace goes on past the range' '
	rm -rf saved && mkdir saved &&
	record run $RATE &&
	next=1 &&
	moved=0 &&
	while kill -0 $pid 2>/dev/null; do
		save_complete $pid || exit 1
		sleep 0.05
	done &&
	moved=$((next - 1)) &&
	echo "$moved parts deleted while it ran" &&
	test_expect_code 3 wait $pid &&
	test_cmp native.out run.out &&
	test_must_be_empty run.err &&
	test "$moved" -gt $PLACES &&
	mv run/w.log* saved/ &&
	whole saved &&
	stacks_defined saved
'

test_expect_success ANALYZER 'the parts deleted while it ran make one trace' '
	leaks saved
'

test_expect_success 'parts kept on disk: the trace goes on all the same' '
	record kept &&
	test_expect_code 3 wait $pid &&
	test_cmp native.out kept.out &&
	test_must_be_empty kept.err &&
	whole kept &&
	stacks_defined kept
'

test_expect_success ANALYZER 'the parts kept make one trace' '
	leaks kept
'

test_expect_success 'a range that holds one part only still stops, and says so' '
	rm -rf one && mkdir one && st=0 &&
	{ (ulimit -v $AS_KB && cd one &&
	   exec env MTREC_ROTATE=40M LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/one/w.log" \
		"$PROG" 300000) >one.out 2>one.err || st=$?; } &&
	test $st = 3 &&
	test_cmp native.out one.out &&
	cat one.err &&
	grep -q "the address-space limit" one.err &&
	test ! -f one/w.log.part2 &&
	grep -a -q "^# stopped the trace reached the size the address-space limit" one/w.log
'

test_done
