#!/bin/sh
# t2155-recorder-launcher-truth.sh -- recorder/mtrec tells the truth: it
# refuses bad option values and an unwritable trace before the program
# runs (exit 125, one line naming the problem), names every file a run
# wrote (parts, child processes, the NAME.PID fallback) and no other, and
# says when nothing was recorded and why (static, set-uid, set-gid, scoped
# and never switched on); -q silences it, not the program.
#
# Fixtures: tests/helper/rec-fault.c ("exit S": leaks one block of 1234,
# exits S), rec-fork.c ("fork-exec": three processes' files), rec-handoff.c
# (enough events for several 4 MB parts).
. "$(dirname "$0")/lib.sh"

FAULT="$HELPER/rec-fault"

# in_order ERR: the files ERR says the trace was written to; named ERR:
# the same, sorted.
in_order() {
	sed -n "s/^mtrec: trace written to '\\([^']*\\)'.*/\\1/p" "$1"
}
named() {
	in_order "$1" | sort
}

# not_run: the program ("sh -c ': >ran'") did not run.
not_run() {
	test ! -e ran
}

test_lazy_prereq STATIC 'printf "int main(void){return 3;}\n" >static.c && $CC -static -o static static.c'
test_lazy_prereq SETPRIV '[ "$(id -u)" = 0 ] && command -v setpriv && id nobody'

test_expect_success '--help lists -q and the exit statuses' '
	"$MTREC" --help >out &&
	grep -e "-q, --quiet" out &&
	grep "^  125 " out && grep "^  126 " out && grep "^  127 " out &&
	grep "^  128+N " out
'

# Bad values: refused before the run, with the option named, exit 125.
while read -r name opt; do
	test_expect_success "bad value $opt: exit 125, $name named, not run" "
		test_expect_code 125 \"\$MTREC\" $opt -o never.log sh -c ': >ran' >out 2>err &&
		cat err &&
		test \$(wc -l <err) -eq 2 &&
		head -n 1 err | grep \"^mtrec: invalid $name '.*': .* expected\" &&
		tail -n 1 err | grep -x \"Try 'mtrec --help' for more information.\" &&
		not_run && test ! -e never.log
	"
done <<'EOF'
--rotate -r 12Q
--rotate --rotate=0
--rotate --rotate=4MB
--signal --signal=BOGUS
--signal --signal=KILL
--signal --signal=SIGRTMIN-1
--depth -d x
--depth --depth=65
EOF

test_expect_success 'an empty -o is refused' '
	test_expect_code 125 "$MTREC" -o "" sh -c ": >ran" 2>err &&
	grep "^mtrec: invalid --output .*: an empty file name" err &&
	not_run
'

test_expect_success 'an unknown option: one line, the Try line, exit 125' '
	test_expect_code 125 "$MTREC" --frobnicate sh -c ": >ran" >out 2>err &&
	cat err &&
	test $(wc -l <err) -eq 2 &&
	grep "^mtrec: unknown option .--frobnicate." err &&
	grep -x "Try .mtrec --help. for more information." err &&
	not_run
'

test_expect_success 'good values still run: --signal=SIGRTMIN+2, -r 1g, -d 64' '
	"$MTREC" --signal=SIGRTMIN+2 -r 1g -d 64 -o good.log sh -c ": >ran" 2>err &&
	test -e ran && rm ran &&
	named err >actual && echo good.log >expect && test_cmp expect actual
'

test_expect_success 'a trace in a directory that does not exist: refused, exit 125, not run' '
	test_expect_code 125 "$MTREC" -o /nonexistent/dir/t.log sh -c ": >ran" >out 2>err &&
	cat err &&
	test $(wc -l <err) -eq 1 &&
	grep "^mtrec: cannot write the trace in ./nonexistent/dir.: No such file or directory" err &&
	! grep "written" err &&
	not_run
'

test_expect_success 'a trace name that is a device, a directory or a symlink: refused' '
	test_expect_code 125 "$MTREC" -o /dev/null sh -c ": >ran" 2>err &&
	grep "./dev/null. is not a regular file" err &&
	mkdir adir &&
	test_expect_code 125 "$MTREC" -o adir sh -c ": >ran" 2>err &&
	grep ".adir. is not a regular file" err &&
	ln -s elsewhere.log link.log &&
	test_expect_code 125 "$MTREC" -o link.log sh -c ": >ran" 2>err &&
	grep ".link.log. is a symbolic link" err &&
	not_run && test ! -e elsewhere.log
'

test_expect_success 'a program that exits 127 itself is not "not found": its trace is named' '
	test_expect_code 127 "$MTREC" -o own127.log sh -c "exit 127" >out 2>err &&
	cat err &&
	! grep "cannot run" err &&
	named err >actual && echo own127.log >expect && test_cmp expect actual
'

test_expect_success 'not found: 127 and no trace message; not executable: 126' '
	test_expect_code 127 "$MTREC" -o nf.log ./no-such-program 2>err &&
	grep -x "mtrec: cannot run .\./no-such-program.: No such file or directory" err &&
	! grep -e written -e recorded err && test ! -e nf.log &&
	: >plain-file &&
	test_expect_code 126 "$MTREC" -o ne.log ./plain-file 2>err &&
	grep -x "mtrec: cannot run .\./plain-file.: Permission denied" err &&
	! grep -e written -e recorded err && test ! -e ne.log
'

test_expect_success 'a rotated run: every part is named, in order, and nothing else' '
	"$MTREC" -r 4M -o rot.log "$HELPER/rec-handoff" 2 100000 0 2>err &&
	cat err &&
	test -f rot.log.part3 &&
	in_order err >order &&
	{ echo rot.log && n=2 && while [ -f rot.log.part$n ]; do echo rot.log.part$n && n=$((n + 1)); done; } >expect &&
	test_cmp expect order &&
	grep -x "mtrec: trace written to .rot.log.part2. (part 2)" err &&
	test_when_passed "rm -f rot.log*"
'

test_expect_success 'a stale part of an earlier, longer run is not named' '
	"$MTREC" -r 4M -o stale.log "$HELPER/rec-handoff" 2 100000 0 2>/dev/null &&
	n=2 && while [ -f stale.log.part$n ]; do n=$((n + 1)); done &&
	last=$((n - 1)) && test $last -ge 3 &&
	"$MTREC" -r 4M -o stale.log "$HELPER/rec-handoff" 1 20000 0 2>err &&
	cat err &&
	test -f stale.log.part$last &&
	! grep "stale.log.part$last" err &&
	test_when_passed "rm -f stale.log*"
'

test_expect_success 'forked and exec'\''d processes: each file named with its pid' '
	mkdir fx && cd fx &&
	"$MTREC" -o t.log "$HELPER/rec-fork" fork-exec >out 2>err &&
	cat err &&
	kid=$(sed -n "s/^child //p" out) &&
	ls >all && grep -v -x -e out -e err -e all all | sort >expect &&
	test $(wc -l <expect) -ge 3 &&
	named err >actual && test_cmp expect actual &&
	head -n 1 err | grep -x "mtrec: trace written to .t.log." &&
	grep -x "mtrec: trace written to .t.log.$kid. (pid $kid)" err
'

test_expect_success 'children with -o NAME%p: their own %p names are named' '
	mkdir pp && cd pp &&
	test_expect_code 5 "$MTREC" -o "run-%p.log" sh -c "ls >/dev/null; exit 5" 2>err &&
	cat err &&
	ls run-*.log | sort >expect &&
	test $(wc -l <expect) -eq 2 &&
	named err >actual && test_cmp expect actual
'

test_expect_success 'the file is held by another recording: the NAME.PID it wrote is named' '
	mkdir lk && cd lk &&
	{ LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=lk.log sleep 3 & } && other=$! &&
	n=0 && until grep -q "^# pid $other " lk.log 2>/dev/null; do
		sleep 0.1 && n=$((n + 1)) && test $n -lt 50 || exit 1
	done &&
	"$MTREC" -o lk.log "$FAULT" exit 0 2>err &&
	cat err &&
	kill $other && test_expect_code 143 wait $other &&
	grep "is being written by another recording" err &&
	named err >actual && ls lk.log.* >expect && test_cmp expect actual &&
	! grep -x "mtrec: trace written to .lk.log." err
'

test_expect_success 'files of another recording beside ours, stale or concurrent, are not named' '
	mkdir other && cd other &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=f.log MTREC_SESSION="$PWD/f.log" "$FAULT" exit 0 &&
	{ "$MTREC" -o f.log sleep 1 2>err & } && ours=$! &&
	sleep 0.3 &&
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=f.log MTREC_SESSION="$PWD/f.log" "$FAULT" exit 0 &&
	wait $ours &&
	cat err &&
	ls f.log.* >files && test $(wc -l <files) -eq 2 &&
	named err >actual && echo f.log >expect && test_cmp expect actual
'

test_expect_success STATIC 'a static program: "nothing was recorded", why, its status passed' '
	test_expect_code 3 "$MTREC" -o st.log ./static >out 2>err &&
	cat err &&
	test $(wc -l <err) -eq 1 &&
	grep -x "mtrec: nothing was recorded: .\./static. is statically linked: .*" err &&
	test ! -e st.log
'

test_expect_success STATIC '-q: no message from mtrec nor the recorder, the program still talks' '
	test_expect_code 3 "$MTREC" -q -o st.log ./static 2>err &&
	test_must_be_empty err &&
	"$MTREC" -q -o q.log sh -c "echo to-stderr >&2" 2>err &&
	echo to-stderr >expect && test_cmp expect err &&
	test -f q.log &&
	test_expect_code 125 "$MTREC" -q -o /nonexistent/dir/q.log -- sh -c ": >ran" 2>err &&
	grep "cannot write the trace" err && not_run
'

test_expect_success 'scoped and never switched on: nothing was recorded, and why' '
	"$MTREC" --scoped -o sc.log "$FAULT" exit 0 2>err &&
	cat err &&
	grep -x "mtrec: nothing was recorded: recording never started (scoped: .*)" err &&
	test ! -e sc.log
'

test_expect_success 'a library under a directory with a blank records; with a colon, refused' '
	mkdir "lib dir" "lib:dir" &&
	cp "$LIBMTREC" "lib dir/libmtrec.so" && cp "$LIBMTREC" "lib:dir/libmtrec.so" &&
	MTREC_LIB="$PWD/lib dir/libmtrec.so" "$MTREC" -o blank.log "$FAULT" exit 0 2>err &&
	cat err &&
	grep -q "^# object .*/lib dir/libmtrec.so\$" blank.log &&
	named err >actual && echo blank.log >expect && test_cmp expect actual &&
	test_expect_code 125 env MTREC_LIB="$PWD/lib:dir/libmtrec.so" "$MTREC" -o colon.log \
		sh -c ": >ran" 2>err &&
	grep "cannot preload .*lib:dir/libmtrec.so.: its directory holds a .:." err &&
	not_run && test ! -e colon.log
'

# Set-uid and set-gid: the dynamic linker ignores LD_PRELOAD for them.
# Run as nobody from a directory nobody can reach (the test tree's parents
# may be closed to others), with mtrec and the library beside each other.
if test_have_prereq SETPRIV; then
	pub=$(mktemp -d /tmp/mtrec-launch.XXXXXX) && chmod 1777 "$pub" &&
	trap 'rm -rf "$pub"' EXIT &&
	cp "$MTREC" "$LIBMTREC" "$FAULT" "$pub/" && chmod 755 "$pub"/*
fi
for bit in 4755:set-user-ID 2755:set-group-ID; do
	test_expect_success SETPRIV "a ${bit#*:} program: nothing was recorded, and why" "
		cp \"\$pub/rec-fault\" \"\$pub/id-${bit%:*}\" && chown root:root \"\$pub/id-${bit%:*}\" &&
		chmod ${bit%:*} \"\$pub/id-${bit%:*}\" &&
		test_expect_code 7 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			\"\$pub/mtrec\" -o \"\$pub/id.log\" \"\$pub/id-${bit%:*}\" exit 7 2>err &&
		cat err &&
		grep -x \"mtrec: nothing was recorded: .*id-${bit%:*}. is ${bit#*:}: .*\" err &&
		test ! -e \"\$pub/id.log\"
	"
done

test_done
