#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2186-recorder-service-forking: a unit of Type=forking started through
# 'bash -c', as Debian's nfs-ganesha.service starts ganesha.nfsd: bash
# execs the daemon, which forks and its first process exits; systemd's
# $MAINPID is the child.  'mtrec-service files' names the child's own
# trace (NAME.CHILD.log), not the .log.1 that the daemon wrote before
# its fork in bash's process, and 'follow' (what --compact runs) folds
# the child's parts into its .compact.  Without systemd, as t2185 does:
# the drop-in's environment by hand, the main process given with --pid.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'mtrec-service with a forking daemon' 'needs the analyzer and the recorder'
	test_done; exit
fi
SVC="$TOP/recorder/mtrec-service"
mkdir -p units && printf '[Unit]\nDescription=demo\n[Service]\nType=forking\nExecStart=/bin/bash -c "/bin/true"\n' >units/fk.service

test_expect_success 'install a drop-in with --rotate and --compact' '
	"$SVC" install fk --unit-dir "$OUT/units" --dir "$OUT/traces" --depth 8 --rotate 4M --compact \
		--no-reload >out &&
	sed -n "s/^Environment=\"\\(.*\\)\"\$/\\1/p" units/fk.service.d/50-mtrec.conf |
		sed "s/%%/%/g" >env.list &&
	grep -q "^MTREC_ROTATE=4M\$" env.list
'

# The unit's start command: bash execs the daemon, which daemonizes; the
# command returns when the first process has exited, as systemd waits.
test_expect_success 'bash -c execs the daemon; it forks and its first process exits' '
	env $(cat env.list) bash -c "exec \"$HELPER/rec-sigwait-daemon\" daemon" >daemon.out 2>&1 &&
	i=0 && while ! grep -q "^ready " daemon.out && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done &&
	sed -n "s/^ready //p" daemon.out >mainpid &&
	kill -0 "$(cat mainpid)"
'

test_expect_success 'files names the child'"'"'s trace, not the first process'"'"'s .log.1' '
	pid=$(cat mainpid) &&
	"$SVC" files fk --dir "$OUT/traces" --pid "$pid" >files 2>files.err &&
	cat files files.err &&
	echo "$OUT/traces/fk.$pid.log" >expect &&
	test_cmp expect files &&
	ls traces/fk.*.log.1 >first &&
	! grep -q "fk.$pid.log.1" first
'

test_expect_success 'follow compacts the child'"'"'s trace once it ends' '
	pid=$(cat mainpid) &&
	{ "$SVC" follow fk.service --dir "$OUT/traces" --pid="$pid" >follow.out 2>&1 & } &&
	echo $! >follow.pid &&
	sleep 1 &&
	kill -TERM "$pid" &&
	fpid=$(cat follow.pid) &&
	i=0 && while kill -0 "$fpid" 2>/dev/null && [ $i -lt 1800 ]; do sleep 0.1; i=$((i + 1)); done &&
	! kill -0 "$fpid" 2>/dev/null &&
	cat follow.out &&
	grep -q "compacting .$OUT/traces/fk.$pid.log. (process $pid)" follow.out &&
	test -s "traces/fk.$pid.log.compact" &&
	! ls traces/fk.$pid.log.part* 2>/dev/null &&
	test_expect_code 1 "$MTANALYZE" --by-site "traces/fk.$pid.log.compact" >report &&
	grep -q "skipped: a forked child" report
'

test_done
