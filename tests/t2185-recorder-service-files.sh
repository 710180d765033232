#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2185-recorder-service-files: mtrec-service takes every recording option
# (--reach, --track, --compact with --rotate, --depth) into its drop-in,
# and names the file the daemon really writes: a unit that starts its
# daemon through 'bash -c' has bash write NAME.PID.log and the daemon,
# after the exec, NAME.PID.log.1.  'files' names the daemon's from the
# process's memory map; 'follow' (what --compact runs) compacts the
# daemon's trace, not bash's.  Without systemd: the drop-in's environment
# is run by hand and the main process given with --pid, as t2180 does.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'mtrec-service files and follow' 'needs the analyzer and the recorder'
	test_done; exit
fi
SVC="$TOP/recorder/mtrec-service"
mkdir -p units && printf '[Unit]\nDescription=demo\n[Service]\nExecStart=/bin/bash -c "exec /bin/sleep 1000"\n' >units/demo.service

test_expect_success 'install takes --reach, --track (repeated), --rotate with --compact' '
	"$SVC" install demo --unit-dir "$OUT/units" --dir "$OUT/traces" --depth 4 --reach \
		--track @glib --track pool_get:alloc --rotate 4M --compact --no-reload >out &&
	cat out &&
	f=units/demo.service.d/50-mtrec.conf &&
	grep -q "^Environment=\"MTREC_REACH=1\"\$" $f &&
	grep -q "^Environment=\"MTREC_TRACK=@glib;pool_get:alloc\"\$" $f &&
	grep -q "^Environment=\"MTREC_ROTATE=4M\"\$" $f &&
	grep -q "^Environment=\"MTREC_DEPTH=4\"\$" $f &&
	grep -q "^ExecStartPost=-/usr/bin/systemd-run --unit=mtrec-compact-demo --collect --quiet $SVC follow demo.service --dir \"$OUT/traces\" --pid=\\\$MAINPID\$" $f &&
	grep -q "writes demo.PID.log.1 (.2, ...): .mtrec-service files demo. names the daemon" out
'

if command -v systemd-analyze >/dev/null 2>&1 && [ -x /usr/bin/systemd-run ]; then
test_expect_success 'systemd-analyze verify reads the drop-in with its ExecStartPost' '
	SYSTEMD_UNIT_PATH="$OUT/units:" systemd-analyze verify demo.service >verify.out 2>&1 &&
	! grep "50-mtrec.conf" verify.out
'
else
test_skip 'systemd-analyze verify reads the drop-in with its ExecStartPost' \
	'needs systemd-analyze and systemd-run'
fi

# the recorder grows parts in steps of 4 MiB: install says what a size
# between them gives, as mtrec does, and refuses what MTREC_ROTATE is not
test_expect_success 'install --rotate: a size between 4 MiB steps is said, a bad one refused' '
	! grep -q "steps of 4 MiB" out &&
	"$SVC" install rot --force --unit-dir "$OUT/units" --dir "$OUT/traces" --rotate 1M --no-reload >r1 &&
	grep -q "^mtrec-service: --rotate 1M: parts are made in steps of 4 MiB; each will be 4 MiB\$" r1 &&
	"$SVC" install rot --force --unit-dir "$OUT/units" --dir "$OUT/traces" --rotate 9M --no-reload >r9 &&
	grep -q "each will be 12 MiB\$" r9 &&
	for bad in 0M 1.5M 1MM abc 1048577G; do
		test_must_fail "$SVC" install rot --force --unit-dir "$OUT/units" --dir "$OUT/traces" \
			--rotate $bad --no-reload 2>err &&
		grep -q "^mtrec-service: --rotate" err || exit 1
	done &&
	grep -q "^Environment=\"MTREC_ROTATE=9M\"\$" units/rot.service.d/50-mtrec.conf
'

test_expect_success '--compact without --rotate is refused, with the reason' '
	test_must_fail "$SVC" install demo --unit-dir "$OUT/units" --dir "$OUT/traces" --compact \
		--no-reload 2>err &&
	grep -q "compact needs --rotate" err
'

test_expect_success 'without --reach, --track, --compact: none of them' '
	"$SVC" install plain --force --unit-dir "$OUT/units" --dir "$OUT/traces" --no-reload >/dev/null &&
	f=units/plain.service.d/50-mtrec.conf &&
	grep -q "^Environment=\"MTREC_REACH=0\"\$" $f &&
	grep -q "^Environment=\"MTREC_TRACK=\"\$" $f &&
	! grep -q "^ExecStart" $f
'

# The unit's start command, by hand: bash runs a while (its own trace),
# then execs the daemon in the same process.  The daemon runs until the
# file 'go' exists.
test_expect_success 'a daemon started through bash -c: bash writes .log, the daemon .log.1' '
	sed -n "s/^Environment=\"\\(.*\\)\"\$/\\1/p" units/demo.service.d/50-mtrec.conf |
		sed "s/%%/%/g" >env.list &&
	{ env $(cat env.list) bash -c "sleep 2; exec \"$HELPER/ana-compact\" 100000 100 go" >daemon.out 2>&1 & } &&
	echo $! >pid &&
	pid=$(cat pid) &&
	i=0 && while [ ! -e "traces/demo.$pid.log" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	test -e "traces/demo.$pid.log"
'

test_expect_success 'follow starts on bash'"'"'s trace and moves to the daemon'"'"'s at the exec' '
	pid=$(cat pid) &&
	{ "$SVC" follow demo --dir "$OUT/traces" --pid "$pid" >follow.out 2>&1 & } &&
	echo $! >follow.pid &&
	i=0 && while ! grep -q "^waiting" daemon.out && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done &&
	grep -q "^waiting" daemon.out
'

test_expect_success 'files names the daemon'"'"'s trace, and bash'"'"'s as an earlier program' '
	pid=$(cat pid) &&
	"$SVC" files demo --dir "$OUT/traces" --pid "$pid" >files 2>files.err &&
	cat files files.err &&
	echo "$OUT/traces/demo.$pid.log.1" >expect &&
	test_cmp expect files &&
	grep -q "^mtrec-service: .$OUT/traces/demo.$pid.log.: an earlier program of process $pid" files.err
'

test_expect_success 'the daemon'"'"'s parts end in its .compact, bash'"'"'s trace is left alone' '
	pid=$(cat pid) && fpid=$(cat follow.pid) &&
	touch go &&
	i=0 && while kill -0 "$fpid" 2>/dev/null && [ $i -lt 1800 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 "$fpid" 2>/dev/null &&
	cat follow.out &&
	grep -q "compacting .$OUT/traces/demo.$pid.log. (process $pid)" follow.out &&
	grep -q "compacting .$OUT/traces/demo.$pid.log.1. (process $pid)" follow.out &&
	test -s "traces/demo.$pid.log.1.compact" &&
	! ls traces/demo.$pid.log.1.part* 2>/dev/null &&
	test ! -e "traces/demo.$pid.log.compact" &&
	test_expect_code 1 "$MTANALYZE" --by-site "traces/demo.$pid.log.1.compact" >report &&
	grep -q "ana-compact.c" report
'

test_expect_success 'files: a process without a trace, and no process, are errors' '
	{ sleep 30 & } && spid=$! &&
	test_must_fail "$SVC" files demo --dir "$OUT/traces" --pid "$spid" 2>err &&
	kill $spid &&
	grep -q "process $spid has no trace of" err &&
	test_must_fail "$SVC" files demo --dir "$OUT/traces" --pid 999999999 2>err &&
	grep -q "cannot read the memory map" err
'

test_done
