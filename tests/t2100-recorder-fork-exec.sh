#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2100-recorder-fork-exec.sh -- process boundaries: a forked or exec'ed
# child records into a file of its own (named by the rule in
# recorder/file.c) and never touches its parent's trace.
#
# Fixtures: tests/helper/rec-fork.c (each process allocates blocks of a
# size of its own and leaks an exact number of them) and
# tests/helper/rec-atfork.c (fork handlers that allocate).
. "$(dirname "$0")/lib.sh"

FORK="$HELPER/rec-fork"

# rec ENV... PROG ARGS: run with the recorder preloaded, trace t.log.
rec() {
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$@"
}

test_expect_success 'a forked child records into NAME.PID, the parent into NAME' '
	mkdir basic && cd basic &&
	rec "$FORK" basic >out 2>err &&
	test ! -s err &&
	child=$(sed -n "s/^child //p" out) &&
	test -n "$child" &&
	printf "%s\n" t.log "t.log.$child" | sort >expect &&
	ls t.log* | sort >actual && test_cmp expect actual &&
	head -n 1 t.log | grep -x "# mtrec 1" &&
	head -n 1 "t.log.$child" | grep -x "# mtrec 1"
'

test_expect_success 'the parent trace holds only the parent events, the child trace only the child ones' '
	cd basic &&
	child=$(sed -n "s/^child //p" out) &&
	parent=$(sed -n "s/^# pid \([0-9]*\) .*/\1/p" t.log) &&
	test "$(grep -c "^# pid " t.log)" -eq 1 &&
	test "$(grep -c "^# pid " "t.log.$child")" -eq 1 &&
	grep -x "# pid $child $parent" "t.log.$child" &&
	test "$(count_size t.log 1001)" -eq 8 &&
	test "$(count_size t.log 2002)" -eq 0 &&
	test "$(count_size "t.log.$child" 2002)" -eq 5 &&
	test "$(count_size "t.log.$child" 1001)" -eq 0
'

test_expect_success 'mtrace finds exactly each process leaks in its own file' '
	cd basic &&
	child=$(sed -n "s/^child //p" out) &&
	mtrace_leaks t.log 4 1001 &&
	mtrace_leaks "t.log.$child" 2 2002
'

test_expect_success 'with %p in MALLOC_TRACE each process writes NAME-with-its-pid' '
	mkdir pct && cd pct &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=trace.%p.log "$FORK" basic >out 2>err &&
	test ! -s err &&
	child=$(sed -n "s/^child //p" out) &&
	parent=$(ls trace.*.log | grep -v "trace.$child.log" | sed "s/trace\.\([0-9]*\)\.log/\1/") &&
	test -n "$parent" && test "$parent" != "$child" &&
	test "$(ls trace.* | wc -l)" -eq 2 &&
	grep -x "# pid $parent [0-9]*" "trace.$parent.log" &&
	grep -x "# pid $child $parent" "trace.$child.log" &&
	mtrace_leaks "trace.$parent.log" 4 1001 &&
	mtrace_leaks "trace.$child.log" 2 2002
'

test_expect_success 'a program exec()ed without fork gets its own file; the first stays intact' '
	mkdir exec && cd exec &&
	rec "$FORK" exec >out 2>err &&
	test ! -s err &&
	pid=$(sed -n "s/^pid //p" out) &&
	test "$(ls t.log* | wc -l)" -eq 2 &&
	test -f "t.log.$pid" &&
	grep -a -x "# pid $pid [0-9]*" t.log &&
	grep -x "# pid $pid [0-9]*" "t.log.$pid" &&
	test "$(count_size t.log 3003)" -eq 5 &&
	test "$(count_size t.log 4004)" -eq 0 &&
	test "$(count_size "t.log.$pid" 4004)" -eq 7 &&
	test "$(count_size "t.log.$pid" 3003)" -eq 0 &&
	grep -a -x "# cmdline $FORK exec" t.log &&
	grep -x "# cmdline rec-fork leaf" "t.log.$pid" &&
	mtrace_leaks t.log 3 3003 &&
	mtrace_leaks "t.log.$pid" 2 4004
'

test_expect_success 'fork+exec: the exec()ed child records into a file of its own' '
	mkdir forkexec && cd forkexec &&
	rec "$FORK" fork-exec >out 2>err &&
	test ! -s err &&
	child=$(sed -n "s/^child //p" out) &&
	mtrace_leaks t.log 4 3003 &&
	test "$(count_size t.log 4004)" -eq 0 &&
	leaf=$(grep -l -x "# cmdline rec-fork leaf" t.log.*) &&
	test "$(echo "$leaf" | wc -w)" -eq 1 &&
	case "$leaf" in t.log.$child|t.log.$child.[0-9]*) ;; *) false ;; esac &&
	test "$(count_size "$leaf" 4004)" -eq 7 &&
	mtrace_leaks "$leaf" 2 4004 &&
	for f in t.log.*; do
		mtrace_ok "$f" || exit 1
	done
'

test_expect_success 'posix_spawn: the spawned program records into NAME.PID' '
	mkdir spawn && cd spawn &&
	rec "$FORK" spawn >out 2>err &&
	test ! -s err &&
	child=$(sed -n "s/^child //p" out) &&
	mtrace_leaks t.log 4 3003 &&
	grep -x "# cmdline rec-fork leaf" "t.log.$child" &&
	mtrace_leaks "t.log.$child" 2 4004
'

test_expect_success 'the recorder never overwrites an existing file: NAME.PID taken gives NAME.PID.1' '
	# The forked child takes t.log.PID; the program it then execs (same
	# pid, new image) must not reuse that name.
	cd forkexec &&
	child=$(sed -n "s/^child //p" out) &&
	test -f "t.log.$child" && test -f "t.log.$child.1" &&
	grep -x "# cmdline rec-fork leaf" "t.log.$child.1"
'

test_expect_success 'a child forked after chdir() writes its file beside the parent trace' '
	mkdir chdir chdir/sub && cd chdir &&
	rec "$FORK" chdir sub >out 2>err &&
	child=$(sed -n "s/^child //p" out) &&
	ls -R >files && cat files &&
	test -f "t.log.$child" &&
	test ! -e "sub/t.log.$child" &&
	mtrace_leaks "t.log.$child" 2 2002
'

test_expect_success '200 forks while 3 threads allocate: no child deadlocks' '
	mkdir threads && cd threads &&
	{ timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FORK" threads 3 200 >out 2>err ||
		{ echo "exit $?"; cat err; false; }; } &&
	grep -x "children 200" out &&
	test ! -s err &&
	test "$(ls t.log.* | wc -l)" -eq 200 &&
	test "$(count_size t.log 6006)" -eq 0 &&
	test "$(count_size t.log 5005)" -gt 0 &&
	mtrace_leaks t.log 1 7007
'

test_expect_success 'every forked child file holds its own events: 11 blocks of 6006, 1 leaked' '
	cd threads &&
	for f in t.log.*; do
		test "$(count_size "$f" 6006)" -eq 11 || { echo "$f"; exit 1; }
		test "$(count_size "$f" 5005)" -eq 0 || { echo "$f: parent events"; exit 1; }
		mtrace "$f" >"mt_$f" 2>&1 && rc=0 || rc=$?
		test $rc -eq 1 || { echo "$f: mtrace exit $rc"; exit 1; }
		test "$(grep -c "^0x[0-9a-f]* *0x1776 " "mt_$f")" -eq 1 ||
			{ cat "mt_$f"; echo "$f: not exactly the 1 leak"; exit 1; }
	done
'

# A child that exit()s runs __libc_freeres, which frees blocks the parent
# allocated before the fork (the TLS of the parent threads); a child trace
# must still be consistent on its own.
test_expect_success 'every forked child file is consistent (no free of memory never allocated)' '
	cd threads &&
	bad=0 &&
	for f in t.log.*; do
		if grep -e "never alloc" -e duplicate "mt_$f" >/dev/null; then
			bad=$((bad + 1)); first=${first:-$f}
		fi
	done &&
	if [ $bad -ne 0 ]; then
		echo "$bad of 200 child traces are inconsistent; first: $first"
		cat "mt_$first"; tr -d "\000" <"$first" | grep -a -e "never" -e "^@.* - " | head
		false
	fi
'

test_expect_success 'children that fork and _exit() leave the parent trace intact' '
	mkdir forkexit && cd forkexit &&
	timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$FORK" fork-exit 20 >out 2>err &&
	grep -x "children 20" out &&
	test ! -s err &&
	head -n 1 t.log | grep -x "# mtrec 1" &&
	test "$(grep -c "^# pid " t.log)" -eq 1 &&
	test "$(count_size t.log 8008)" -eq 40 &&
	mtrace_leaks t.log 20 8008 &&
	tail -c 6 t.log | grep -x "= End"
'

test_expect_success 'fork handlers registered after the recorder may allocate' '
	mkdir atfork && cd atfork &&
	timeout 20 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$HELPER/rec-atfork" 3 >out 2>err &&
	grep -x "rounds 3" out &&
	test "$(count_size t.log 9009)" -eq 6 &&
	mtrace_leaks t.log 3 1001 &&
	test "$(ls t.log.* | wc -l)" -eq 3 &&
	for f in t.log.*; do
		test "$(count_size "$f" 9009)" -eq 1 && mtrace_leaks "$f" 1 2002 || exit 1
	done
'

# Libraries a program links are initialised before the preloaded
# recorder, so their pthread_atfork() handlers are registered first: their
# prepare handler runs after the recorder's, their child handler before.
test_expect_success 'build a program whose linked library registers allocating fork handlers' '
	$CC -O1 -g -D_GNU_SOURCE -fPIC -shared -DREC_ATFORK_LIB -o librecatfork.so \
		"$HELPER/rec-atfork.c" -pthread &&
	$CC -O1 -g -D_GNU_SOURCE -DREC_ATFORK_USE_LIB -o rec-atfork-linked \
		"$HELPER/rec-atfork.c" -Wl,--no-as-needed -L. -lrecatfork -Wl,-rpath,"$OUT" -pthread &&
	./rec-atfork-linked 2 | grep -x "rounds 2"
'

test_expect_success 'fork handlers of a linked library may allocate: no deadlock' '
	mkdir atfork-lib && cd atfork-lib &&
	{ timeout 10 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log ../rec-atfork-linked 3 >out 2>err ||
		{ echo "exit $? (124: timed out, deadlock)"; cat err; false; }; } &&
	grep -x "rounds 3" out &&
	test "$(count_size t.log 9009)" -eq 6 &&
	mtrace_leaks t.log 3 1001 &&
	for f in t.log.*; do
		test "$(count_size "$f" 9009)" -eq 1 && mtrace_leaks "$f" 1 2002 || exit 1
	done
'

test_expect_success 'a child made by _Fork() (no fork handlers) never writes into the parent trace' '
	mkdir rawfork && cd rawfork &&
	rec "$FORK" raw-fork >out 2>err &&
	child=$(sed -n "s/^child //p" out) &&
	test "$(count_size t.log 1001)" -eq 3 &&
	test "$(count_size t.log 2002)" -eq 0 &&
	test "$(grep -a -c "^# pid " t.log)" -eq 1
'

test_done
