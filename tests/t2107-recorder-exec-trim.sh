#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# A process that execs without forking leaves its trace cut at what it
# wrote: no run of NUL bytes from the file's growth ahead (the new image
# never runs the recorder's exit code).  An exec that fails leaves
# recording going on, in every thread.  A process that execs while other
# threads run keeps the growth ahead (documented): its file is read all
# the same, and nothing hangs.
#
# Fixture: tests/helper/rec-exec-trim.c (20 blocks of 1234 bytes, 3 not
# freed, then an exec of itself by the given function).
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-exec-trim"

# no_nul FILE: FILE holds no NUL byte and ends with a newline.
no_nul() {
	test "$(tr -d '\000' <"$1" | wc -c)" = "$(wc -c <"$1")" &&
	test "$(tail -c 1 "$1" | od -An -c | tr -d " ")" = '\n'
}

# leaks_of FILE SIZE: blocks of SIZE bytes /usr/bin/mtrace finds not freed.
leaks_of() {
	grep -c "^0x[0-9a-f]* *$(printf '%#x' "$2") " "$(dirname "$1")/mt_$(basename "$1")" || true
}

for how in execv execvp execve execl execlp execle fexecve; do
	test_expect_success "$how without fork: the file is cut at what was written" '
		mkdir '$how' && cd '$how' &&
		env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$PROG" '$how' 2>err &&
		test_must_be_empty err &&
		ls t.log* >files && test "$(wc -l <files)" = 2 &&
		no_nul t.log &&
		test "$(wc -c <t.log)" -lt 65536 &&
		mtrace_ok t.log &&
		test "$(leaks_of t.log 1234)" = 3 &&
		test "$(count_size t.log 1234)" = 20
	'
done

test_expect_success 'the new image records into its own file, as before' '
	cd execv &&
	child=$(ls t.log.* | sed "s/^t\.log\.//") &&
	grep -q "^# cmdline .* child$" "t.log.$child" &&
	pid=$(sed -n "s/^# pid \([0-9]*\) .*/\1/p" t.log) &&
	test "$pid" = "$child"
'

test_expect_success 'failed execs: recording goes on, the file ends cleanly at exit' '
	mkdir fail && cd fail &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$PROG" fail 2>err &&
	test_must_be_empty err &&
	test "$(ls t.log*)" = t.log &&
	no_nul t.log &&
	tail -n 1 t.log | grep -x "= End" &&
	mtrace_ok t.log &&
	test "$(leaks_of t.log 1234)" = 3 &&
	test "$(leaks_of t.log 4321)" = 2 &&
	test "$(count_size t.log 4321)" = 20
'

test_expect_success 'threads allocating through failed execs, joined, then an exec: cut, whole' '
	mkdir threads && cd threads &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$PROG" threads 2>err &&
	test_must_be_empty err &&
	no_nul t.log &&
	mtrace_ok t.log &&
	test "$(leaks_of t.log 1234)" = 3 &&
	test "$(leaks_of t.log 4321)" = 2 &&
	test "$(leaks_of t.log 555)" = 0 &&
	test "$(count_size t.log 555)" -gt 1000 &&
	test_when_passed "rm -f t.log"
'

test_expect_success 'an exec with threads still running: not cut, still read, nothing hangs' '
	mkdir running && cd running &&
	timeout 60 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$PROG" running 2>err &&
	test_must_be_empty err &&
	test "$(ls t.log* | wc -l)" = 2 &&
	mtrace_ok t.log &&
	test "$(leaks_of t.log 1234)" = 3 &&
	test "$(leaks_of t.log 4321)" = 2 &&
	test_when_passed "rm -f t.log"
'

test_done
