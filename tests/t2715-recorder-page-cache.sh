#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2715-recorder-page-cache.sh -- the trace's written pages leave the page
# cache once they are on disk (file.c, let_cache_go), so that the pages
# the trace takes next are ones freed just now: on this VM a page freed
# long ago cost 5-20 times more to fault in, and zeroing them was half a
# depth-1 run's CPU time (issue 30).  The trace stays whole, and survives
# a SIGKILL after its pages left the cache.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/bench-alloc"
CRASH="$HELPER/rec-crash"

test_lazy_prereq FINCORE 'command -v fincore'

# cached FILE: the bytes of FILE in the page cache.
cached() {
	fincore --bytes --noheadings --output RES "$1"
}

# ops TRACE: how many standard lines of each kind (+ - < > !).
ops() {
	strip_ext "$1" | awk '/^@ / { n[$3]++ } END { for (k in n) print k, n[k] }' | sort
}

# What the recorder does is deterministic: it advises the kernel to drop
# each 2 MiB it wrote once the program no longer maps it (fadvise64
# POSIX_FADV_DONTNEED on the trace, seen by strace), up to the pages kept
# at the tail.  What the kernel then drops depends on the disk (a dirty
# page stays until it is written back): measured here, 9-15 MB of 323 MB
# left, beside a dd writer too, and without the advice all of it; a slow
# disk keeps more, so the bound is only that some of it left.
test_lazy_prereq STRACE 'strace -f --seccomp-bpf -e trace=none true'
test_expect_success FINCORE,STRACE 'a 300 MB trace: its written range advised out of the page cache' '
	strace -f --seccomp-bpf -e trace=fadvise64 -o advice \
		env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/big.log" "$PROG" 2 1000000 &&
	size=$(stat -c %s big.log) && res=$(cached big.log) &&
	upto=$(sed -n "s/.*fadvise64([0-9]*, \([0-9]*\), \([0-9]*\), POSIX_FADV_DONTNEED) = 0\$/\1 \2/p" advice |
		awk "{ e = \$1 + \$2; if (e > m) m = e } END { print m + 0 }") &&
	echo "trace $size bytes, advised up to $upto, $res in the page cache" &&
	test "$size" -gt $((200 << 20)) &&
	test "$upto" -gt $((size - (40 << 20))) &&
	test "$res" -lt $((size - (16 << 20))) &&
	test_when_passed "rm -f big.log"
'

# Beyond the pages kept (32 MB offered again, 3 MB behind the tail), the
# run's events as glibc's mtrace writes them: the same lines of each kind.
test_expect_success GLIBC_DEBUG 'a trace whose pages left the cache holds every event glibc sees' '
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/ours.log" "$PROG" 2 300000 &&
	env LD_PRELOAD="$GLIBC_DEBUG" MALLOC_TRACE="$OUT/glibc.log" "$PROG" 2 300000 &&
	test "$(stat -c %s ours.log)" -gt $((64 << 20)) &&
	ops ours.log >ours.ops && ops glibc.log >glibc.ops &&
	cat ours.ops &&
	test_cmp glibc.ops ours.ops &&
	mtrace_leaks ours.log 0 &&
	test_when_passed "rm -f ours.log glibc.log"
'

# rec-crash loop: each thread counts its returned allocations in a file
# that survives the kill.  Killed once the trace is past 128 MB and some
# of its pages left the cache: every counted allocation is in the trace.
test_expect_success FINCORE 'SIGKILL after pages left the cache: every returned allocation is there' '
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=k.log "$CRASH" loop counts 2 >out 2>err & } &&
	pid=$! &&
	i=0 &&
	# past 128 MB, and (at the pace of the disk) 16 MB of it out of the cache
	while size=$(stat -c %s k.log 2>/dev/null || echo 0) &&
	      { [ "$size" -lt $((128 << 20)) ] || [ "$(cached k.log)" -gt $((size - (16 << 20))) ]; }; do
		i=$((i + 1)) &&
		{ [ $i -lt 1200 ] || { kill -9 $pid; echo "trace never reached 128 MB, 16 MB of it uncached"; exit 1; }; } &&
		sleep 0.05 || exit 1
	done &&
	res=$(cached k.log) && size=$(stat -c %s k.log) &&
	kill -KILL $pid &&
	st=0 && { wait $pid || st=$?; } &&
	test "$st" -eq 137 &&
	test_must_be_empty err &&
	echo "at the kill: $size bytes mapped, $res in the page cache" &&
	test "$res" -lt $((size - (16 << 20))) &&
	t=0 &&
	for c in $(od -An -t u8 -N 16 counts); do
		n=$(strip_ext k.log | grep -c " + 0x[0-9a-f]* $(printf "%#x" $((3000 + t)))\$") &&
		echo "thread $t: $c allocations returned, $n in the trace" &&
		test "$c" -gt 0 && test "$n" -ge "$c" && test "$n" -le $((c + 1)) &&
		t=$((t + 1)) || exit 1
	done &&
	test $t -eq 2 &&
	mtrace_ok k.log &&
	test_when_passed "rm -f k.log"
'

test_done
