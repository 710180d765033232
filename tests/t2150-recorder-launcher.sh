#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2150-recorder-launcher.sh -- recorder/mtrec, the launcher: it runs a
# program with the recorder preloaded, writes the trace where -o says (or
# to mtrec.PROG.PID.log), says where it went, and passes the program's
# exit status through (128+N for a death by signal N).
#
# Fixtures: tests/helper/rec-fault.c ("exit S" and "raise SIG" modes leak
# one block of 1234 bytes first), tests/helper/rec-scoped.c.
. "$(dirname "$0")/lib.sh"

FAULT="$HELPER/rec-fault"

# leak_line FILE: the trace holds the "+" line of the fixture's one leak.
leak_line() {
	strip_ext "$1" | grep "rec-fault.* + 0x[0-9a-f]* 0x4d2\$"
}

test_expect_success '--help exits 0 and describes -o, --scoped and --depth' '
	"$MTREC" --help >out 2>err &&
	test ! -s err &&
	grep -e "^ *-o, --output" out &&
	grep -e "--scoped" out &&
	grep -e "--depth" out
'

test_expect_success '--version prints a version' '
	"$MTREC" --version >out &&
	grep -E "^mtrec [0-9]+\.[0-9]+" out
'

for bad in 0 65 -1 abc 8x; do
	test_expect_success "--depth $bad is refused with a clear message and exit 125" "
		test_expect_code 125 \"\$MTREC\" --depth $bad -o never.log \"\$FAULT\" exit 0 >out 2>err &&
		cat err &&
		grep -e '--depth' err && grep -e '$bad' err &&
		test ! -e never.log
	"
done

test_expect_success 'a misspelt option: exit 125 and the option meant' '
	test_expect_code 125 "$MTREC" --dpeth 3 -o never.log "$FAULT" exit 0 >out 2>err &&
	cat err &&
	grep -e "unknown option .--dpeth.: did you mean .--depth.?" err &&
	test_expect_code 125 "$MTREC" --s -o never.log "$FAULT" exit 0 2>err &&
	grep -e "ambiguous" err && grep -e "--scoped" err && grep -e "--signal" err &&
	test_expect_code 125 "$MTREC" --reach=1 -o never.log "$FAULT" exit 0 2>err &&
	grep -e "--reach. takes no value" err &&
	test ! -e never.log
'

test_expect_success 'a misspelt subcommand: the program is not found, and ctl is suggested' '
	test_expect_code 127 "$MTREC" ctll 1 on >out 2>err &&
	cat err &&
	grep "did you mean .mtrec ctl.?" err
'

test_expect_success 'attach and detach misspelt are suggested too' '
	test_expect_code 127 "$MTREC" atach 1 2>err &&
	grep "did you mean .mtrec attach.?" err &&
	test_expect_code 127 "$MTREC" detatch 1 2>err &&
	grep "did you mean .mtrec detach.?" err
'

# ctl's requests and the options of ctl and attach: the nearest one, as
# for mtrec's own options (getopt's "unrecognized option" alone before)
test_expect_success 'ctl and attach: a misspelt request or option gets the one meant' '
	test_expect_code 125 "$MTREC" ctl 1 rech 2>err &&
	cat err &&
	grep "^mtrec: ctl: unknown request .rech.: did you mean .reach.?" err &&
	test_expect_code 125 "$MTREC" ctl 1 stauts 2>err &&
	grep "did you mean .status.?" err &&
	test_expect_code 125 "$MTREC" ctl 1 xyzzy 2>err &&
	grep "unknown request .xyzzy. (on, off, status, reach or mark LABEL)" err &&
	test_expect_code 125 "$MTREC" ctl --timout=1 1 on 2>err &&
	grep "^mtrec ctl: unknown option .--timout=1.: did you mean .--timeout.?" err &&
	test_expect_code 125 "$MTREC" attach --dpeth 3 1 2>err &&
	grep "^mtrec attach: unknown option .--dpeth.: did you mean .--depth.?" err &&
	test_expect_code 125 "$MTREC" attach -d 2>err &&
	grep "^mtrec attach: option .-d. requires a value" err &&
	grep "^Try .mtrec attach --help." err
'

test_expect_success '--help and mtrec(1) list ctl reach' '
	"$MTREC" --help >out &&
	grep -e "ctl .*reach" out &&
	sed -n "/^\.SH SYNOPSIS/,/^\.SH/p" "$TOP/share/man/mtrec.1" >synopsis &&
	grep "^\.B mtrec ctl\$" -A1 synopsis | grep -F "\fBreach\fR"
'

test_expect_success '--rotate is rounded up to 4 MiB and says so' '
	"$MTREC" --rotate 1M -o rot.log "$FAULT" exit 0 >out 2>err &&
	grep -e "--rotate 1M: .* each will be 4 MiB" err &&
	"$MTREC" --rotate 8M -o rot.log "$FAULT" exit 0 >out 2>err &&
	! grep -e "steps of 4 MiB" err
'

test_expect_success 'no program: exit 125 and a message' '
	test_expect_code 125 "$MTREC" >out 2>err &&
	grep "no program" err
'

test_expect_success 'a program that does not exist: exit 127, a message, no trace file' '
	mkdir nx && cd nx &&
	test_expect_code 127 "$MTREC" no-such-program-here arg >out 2>err &&
	cat err &&
	grep "no-such-program-here" err &&
	test -z "$(ls | grep -v -e "^out\$" -e "^err\$")"
'

test_expect_success 'a file that is not executable: exit 126 and a message' '
	: >not-exec &&
	test_expect_code 126 "$MTREC" ./not-exec >out 2>err &&
	cat err &&
	grep "not-exec" err
'

test_expect_success '-o FILE writes FILE and passes exit status 3 through' '
	test_expect_code 3 "$MTREC" -o three.log "$FAULT" exit 3 >out 2>err &&
	cat err &&
	grep "three.log" err &&
	leak_line three.log &&
	tail -n 1 three.log | grep -x "= End"
'

test_expect_success 'exit status 0 and --output=FILE' '
	"$MTREC" --output=zero.log "$FAULT" exit 0 2>err &&
	leak_line zero.log
'

test_expect_success 'a death by SIGTERM gives 143, the trace holds what was done' '
	test_expect_code 143 "$MTREC" -o term.log "$FAULT" raise 15 >out 2>err &&
	cat err &&
	leak_line term.log
'

test_expect_success 'a death by SIGSEGV gives 139' '
	test_expect_code 139 "$MTREC" -o segv.log "$FAULT" raise 11 >out 2>err &&
	leak_line segv.log
'

test_expect_success 'options after the program name are the program arguments' '
	test_expect_code 4 "$MTREC" -o args.log -- "$FAULT" exit 4 --depth 0 -o x >out 2>err &&
	cat err &&
	leak_line args.log &&
	test ! -e x &&
	grep -x "# cmdline $FAULT exit 4 --depth 0 -o x" args.log
'

test_expect_success 'the default output is mtrec.PROG.PID.log, and the launcher says so' '
	mkdir default && cd default &&
	"$MTREC" "$FAULT" exit 0 >out 2>err &&
	cat err &&
	test "$(ls mtrec.*.log | wc -l)" -eq 1 &&
	f=$(ls mtrec.*.log) &&
	pid=$(echo "$f" | sed -n "s/^mtrec\.rec-fault\.\([0-9][0-9]*\)\.log\$/\1/p") &&
	test -n "$pid" &&
	grep -x "# pid $pid [0-9]*" "$f" &&
	grep -F "$f" err &&
	leak_line "$f"
'

test_expect_success '-o with %p names the file by the program pid' '
	mkdir pct && cd pct &&
	"$MTREC" -o "run-%p.log" "$FAULT" exit 0 2>err &&
	f=$(ls run-*.log) &&
	pid=${f#run-} && pid=${pid%.log} &&
	grep -x "# pid $pid [0-9]*" "$f" &&
	grep -F "$f" err
'

test_expect_success '--depth 8 writes "# stack" lines and s=ID columns, every ID defined' '
	"$MTREC" --depth 8 -o deep.log "$FAULT" exit 0 2>err &&
	grep -x "# depth 8" deep.log &&
	grep "^# stack [0-9]* 0x" deep.log >stacks &&
	test -s stacks &&
	grep "^@ .* s=[0-9]*\$" deep.log >with-ids &&
	test "$(wc -l <with-ids)" -ge 11 &&
	! grep "^@ " deep.log | grep -v " s=[0-9]*\$" &&
	sed "s/.* s=//" with-ids | sort -u >used &&
	awk "{ print \$3 }" stacks | sort -u >defined &&
	comm -23 used defined >undefined &&
	test ! -s undefined &&
	awk "NF - 3 > 8 { bad = 1 } END { exit bad }" stacks
'

test_expect_success '--depth 8 trace: mtrace reads it and finds the one leak' '
	test_expect_code 1 mtrace deep.log >mt &&
	cat mt &&
	! grep -e "never alloc" -e duplicate mt &&
	test "$(grep -c "^0x" mt)" -eq 1 &&
	grep "^0x[0-9a-f]* *0x4d2 " mt
'

test_expect_success '--depth 8 trace: the standard lines equal those of a depth-1 trace' '
	strip_ext deep.log | grep rec-fault | sed "s/ 0x[0-9a-f]\{9,\}/ P/" >deep.std &&
	strip_ext zero.log | grep rec-fault | sed "s/ 0x[0-9a-f]\{9,\}/ P/" >zero.std &&
	test_cmp zero.std deep.std
'

test_expect_success '--scoped records only the spans' '
	"$MTREC" --scoped -o scoped.log "$HELPER/rec-scoped" >out 2>err &&
	grep -x "scoped ok" out &&
	test "$(grep -c "^= Start\$" scoped.log)" -eq 4 &&
	! grep " 0x101\$" scoped.log &&
	grep " 0x111\$" scoped.log &&
	grep -x "# mark first" scoped.log
'

test_expect_success 'SIGTERM sent to the launcher reaches the program (exit 143)' '
	{ "$MTREC" -o "$OUT/term.log" sleep 30 2>err & } &&
	pid=$! && sleep 0.5 && kill -TERM $pid &&
	test_expect_code 143 wait $pid &&
	grep -q "trace written to .*term.log" err
'

test_expect_success 'MTREC_QUIET=1: no message even when the trace cannot be opened' '
	MTREC_QUIET=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=/nonexistent/dir/t.log /bin/true 2>err &&
	test ! -s err &&
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=/nonexistent/dir/t.log /bin/true 2>err &&
	grep -q "mtrec: cannot open trace file ./nonexistent/dir/t.log." err
'

test_done
