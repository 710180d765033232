#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2110-recorder-crash-safety.sh -- nothing recorded is lost when the
# program is killed with SIGKILL, aborts or crashes: every event whose call
# returned before the end is in the file, and the file stays readable by
# glibc's mtrace script.
#
# Fixture: tests/helper/rec-crash.c.  In "loop" mode its threads count, in
# a MAP_SHARED file that survives the kill, the allocations that returned.
. "$(dirname "$0")/lib.sh"

CRASH="$HELPER/rec-crash"

# plus_lines FILE SIZE: the number of "+" lines for blocks of SIZE bytes.
plus_lines() {
	strip_ext "$1" | grep -c " + 0x[0-9a-f]* $(printf '%#x' "$2")\$" || true
}

# whole_lines FILE [THREADS]: every line that is not padding (NULs, blanks,
# "#" lines) is a complete standard line, but for at most one line per
# thread cut short by the kill: the event of a call that had not returned,
# being written when the process died.  The recorder writes an event's
# first byte last, so such a line still starts with a NUL (here removed:
# it starts with the space after the missing "@") and no reader takes it
# for an event.
whole_lines() {
	strip_ext "$1" | grep -v -e "^= Start\$" -e "^= End\$" \
		-e "^@ [^ ]* [-+<>!] \(0x[0-9a-f]*\|(nil)\)\( \(0x[0-9a-f]*\|0\)\)\?\$" >"$1.bad" || true
	if [ "$(wc -l <"$1.bad")" -gt "${2:-0}" ] || grep -v "^ " "$1.bad" >/dev/null; then
		head "$1.bad"; echo "$1: damaged lines"; return 1
	fi
}

# kill_run DIR DELAY THREADS: start the loop, SIGKILL it DELAY seconds
# after it is ready, then check every thread's count against the trace.
kill_run() {
	mkdir "$1" && cd "$1" || return 1
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$CRASH" loop counts "$3" >out 2>err &
	pid=$!
	i=0
	while ! grep -q ready out 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 500 ] || { kill -9 $pid; echo "never ready"; return 1; }
		sleep 0.01
	done
	sleep "$2"
	kill -KILL $pid
	wait $pid && st=0 || st=$?
	[ $st -eq 137 ] || { echo "exit status $st, not killed"; cat err; return 1; }
	[ ! -s err ] || { cat err; return 1; }
	t=0
	for c in $(od -An -t u8 -N $((8 * $3)) counts); do
		n=$(plus_lines t.log $((3000 + t)))
		echo "thread $t: $c allocations returned, $n in the trace (killed after ${2}s)"
		[ "$c" -gt 0 ] || return 1
		# At least every one that returned; at most one more (in flight).
		[ "$n" -ge "$c" ] && [ "$n" -le $((c + 1)) ] || return 1
		t=$((t + 1))
	done
	[ $t -eq "$3" ] || return 1
	ls -l t.log | awk "{ print \"trace size\", \$5 }"  || return 1
	mtrace_ok t.log || return 1
	whole_lines t.log "$3" || return 1
	# Each thread keeps 8 blocks (9 while one is in flight).
	t=0
	while [ $t -lt "$3" ]; do
		l=$(grep -c "^0x[0-9a-f]* *$(printf '%#x' $((3000 + t))) " mt_t.log || true)
		[ "$l" -ge 8 ] && [ "$l" -le 9 ] || { echo "thread $t: $l leaks"; return 1; }
		t=$((t + 1))
	done
	rm -f t.log
}

test_expect_success 'SIGKILL after 0.15 s: every returned allocation is in the trace' '
	kill_run k1 0.15 1
'

# Written pages leave the resident set as the trace grows (file.c,
# shed_written): past the first few MB, what the threads wrote is in the
# page cache only, and must still be in the file after SIGKILL.
test_expect_success 'SIGKILL after 0.3 s of 4 threads, written pages shed: nothing lost' '
	kill_run k-shed 0.3 4 >"$OUT/shed.out" &&
	cat "$OUT/shed.out" &&
	test "$(sed -n "s/^trace size //p" "$OUT/shed.out")" -gt $((16 << 20))
'

# Kill times drawn at random (logged), two threads each: with the run
# above, SIGKILL at 20 moments.
delays=$(awk -v seed="$$" "BEGIN { srand(seed); for (i = 0; i < 19; i++) printf \"%.3f \", 0.01 + rand() * 0.07 }")
n=0
for d in $delays; do
	n=$((n + 1))
	test_expect_success "SIGKILL after $d s, 2 threads: nothing that returned is lost, mtrace reads the file" "
		kill_run k2-$n $d 2
	"
done

test_expect_success 'the reference run: exit after 100 allocations, 50 leaked' '
	mkdir exit && cd exit &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$CRASH" exit 100 &&
	test "$(plus_lines t.log 9029)" -eq 100 &&
	mtrace_ok t.log &&
	test "$(grep -c "^0x[0-9a-f]* *0x2345 " mt_t.log)" -eq 50
'

for sig in abort:134 segv:139; do
	mode=${sig%:*} status=${sig#*:}
	test_expect_success "$mode: all 100 allocations and 50 frees before the crash are in the trace" "
		mkdir $mode && cd $mode &&
		test_expect_code $status env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=t.log \"\$CRASH\" $mode 100 2>err &&
		test \"\$(plus_lines t.log 9029)\" -eq 100 &&
		test \"\$(grep -a -c \" - 0x\" t.log)\" -ge 50 &&
		mtrace_ok t.log &&
		test \"\$(grep -c \"^0x[0-9a-f]* *0x2345 \" mt_t.log)\" -eq 50 &&
		whole_lines t.log
	"
done

test_done
