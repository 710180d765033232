#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3091-analyzer-fork-handover.sh -- a parent's blocks are handed to a
# child only when the parent ended while the child lived on (a daemonizing
# parent), never to a child that exec'd, never when the parent waited for
# the child; the plain report is /usr/bin/mtrace's on every trace, ours
# included (issue 26, point 4; share/analyzer.md, "Forks and daemons").
#
# Fixture: tests/helper/ana-lineage.c.  In every mode the first process
# allocates 3 blocks of 1001 bytes (0x3e9) and never frees them; the
# daemon of daemon, double and gluster leaks 1 block of 1004 (0x3ec).
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null ||
   [ ! -x /usr/bin/mtrace ]; then
	test_skip 'fork hand-over' 'needs the analyzer, the recorder, python3 and /usr/bin/mtrace'
	test_done; exit
fi
LINEAGE="$HELPER/ana-lineage"

# run MODE: record ana-lineage MODE in the directory MODE (t.log), and wait
# (60 s at most) for the process that writes its pid into pid to be gone.
run() {
	mkdir "$1" && (
		cd "$1" &&
		env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$LINEAGE" "$1" pid >out 2>err &&
		test_must_be_empty err &&
		i=0 && while [ ! -s pid ] && [ $i -lt 6000 ]; do sleep 0.01; i=$((i + 1)); done &&
		i=0 && while kill -0 "$(cat pid)" 2>/dev/null && [ $i -lt 6000 ]; do
			sleep 0.01; i=$((i + 1))
		done &&
		! kill -0 "$(cat pid)" 2>/dev/null
	)
}

# leaks_are JSON SIZES...: the blocks not freed in the --json report JSON
# have exactly these sizes (hex), in any order; no bad free.
leaks_are() {
	test "$(py "len(d[\"bad_frees\"])" "$1")" = 0 &&
	py "\"\\n\".join(\"%#x\" % l[\"size\"] for l in d[\"leaks\"])" "$1" | sed "/^$/d" | sort >leaks.actual &&
	shift && printf "%s\n" "$@" | sed "/^$/d" | sort >leaks.expect &&
	test_cmp leaks.expect leaks.actual
}

# handed JSON: the lineage's handed_to_child of JSON, "pid blocks bytes" or None.
handed() {
	py "(lambda h: h and \"%d %d %d\" % (h[\"pid\"], h[\"blocks\"], h[\"bytes\"]))((d[\"lineage\"] or {}).get(\"handed_to_child\"))" "$1"
}

test_expect_success 'record fork + wait, fork + exec, daemon(3), a double fork, glusterd'"'"'s start' '
	for m in wait exec daemon double execfail spawn gluster; do
		run $m || return 1
	done &&
	ls */t.log* >files && cat files &&
	test "$(grep -c "^exec/t.log.[0-9]*\.1$" files)" = 3
'

test_expect_success 'the plain report is /usr/bin/mtrace'"'"'s on every trace, forks or not' '
	for t in $(cat files); do
		same_as_mtrace "$LINEAGE" "$t" -- "$LINEAGE" "$t" || return 1
	done &&
	same_as_mtrace "$LINEAGE" exec/t.log -- "$LINEAGE" exec/t.log &&
	grep -c "^0x.* 0x3e9 " actual | grep -x 3 &&
	grep "exit 1" actual
'

test_expect_success 'fork + wait: the parent outlived its children, its 3 blocks are its leaks' '
	test_expect_code 1 "$MTANALYZE" --json wait/t.log >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 &&
	test "$(handed report)" = None &&
	grep "note: the blocks this process had at its last fork (.# fork 3.) and still had at its end are reported as its leaks, not handed to its child: the child whose trace is .wait/t.log.$(cat wait/pid). ended before this process did (it waited for its child)" err &&
	test_expect_code 1 "$MTANALYZE" --by-site wait/t.log >sites 2>/dev/null &&
	grep "^Memory not freed, by call site: 3 blocks, 3003 bytes" sites
'

test_expect_success 'fork + wait: each child leaks its own copy of what it did not free' '
	test_expect_code 1 "$MTANALYZE" --json "wait/t.log.$(cat wait/pid)" >report 2>/dev/null &&
	leaks_are report 0x3e9 0x3e9
'

test_expect_success 'fork + exec: the child'"'"'s copy went with the exec, the parent keeps its leaks' '
	test_expect_code 1 "$MTANALYZE" --json exec/t.log >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 &&
	test "$(handed report)" = None &&
	grep "the child whose trace is .exec/t.log.$(cat exec/pid). exec.d, and its copy of the heap went with the exec" err &&
	grep -a "^# exec /bin/true$" "exec/t.log.$(cat exec/pid)"
'

test_expect_success 'daemon(3): the parent ended while the daemon lived on, its blocks are the daemon'"'"'s' '
	"$MTANALYZE" --json daemon/t.log >report 2>err &&
	leaks_are report &&
	test "$(handed report)" = "$(cat daemon/pid) 3 3003" &&
	test_expect_code 1 "$MTANALYZE" --json "daemon/t.log.$(cat daemon/pid)" >child 2>/dev/null &&
	leaks_are child 0x3e9 0x3e9 0x3e9 0x3ec
'

test_expect_success 'double fork (the parent waits for the middle process): the daemon holds the blocks' '
	"$MTANALYZE" --by-site double/t.log >report 2>err &&
	grep -x "No memory leaks." report &&
	grep "note: this process ended while process $(cat double/pid), which holds a copy of its heap" err &&
	test_expect_code 1 "$MTANALYZE" --json "double/t.log.$(cat double/pid)" >child 2>/dev/null &&
	leaks_are child 0x3e9 0x3e9 0x3e9 0x3ec
'

test_expect_success 'a child whose exec failed went on with its copy: it is the heir' '
	c=$(cat execfail/pid) &&
	grep -a "^# exec /nonexistent/ana-lineage$" "execfail/t.log.$c" &&
	"$MTANALYZE" --json execfail/t.log >report 2>err &&
	leaks_are report &&
	test "$(handed report)" = "$c 3 3003"
'

test_expect_success 'a daemon forked before helpers that exec'"'"'d: the blocks before its fork are its' '
	d=$(cat spawn/pid) &&
	test "$(tr -d "\000" <spawn/t.log | grep -ac "^# fork ")" = 3 &&
	"$MTANALYZE" --json spawn/t.log >report 2>err &&
	leaks_are report &&
	test "$(handed report)" = "$d 3 3003" &&
	grep "note: this process ended while process $d, which holds a copy of its heap from its fork .# fork 1." err
'

test_expect_success 'glusterd'"'"'s start: handed to the daemon, not to the helpers that exec'"'"'d' '
	d=$(cat gluster/pid) &&
	"$MTANALYZE" --json gluster/t.log >report 2>err &&
	leaks_are report &&
	test "$(handed report)" = "$d 3 3003" &&
	test_expect_code 1 "$MTANALYZE" --json "gluster/t.log.$d" >daemon.json 2>err &&
	leaks_are daemon.json 0x3e9 0x3e9 0x3e9 0x3ec &&
	test "$(handed daemon.json)" = None
'

test_expect_success 'session: the daemonizing parent leaks nothing, the waiting ones keep their leaks' '
	d=$(cat gluster/pid) &&
	test_expect_code 1 "$MTANALYZE" session gluster/t.log* >out 2>err &&
	cat out &&
	grep -x "    gluster/t.log: no leaks; handed 3,003 bytes in 3 blocks to pid $d" out &&
	grep -x "      gluster/t.log.$d: 4,007 bytes in 4 blocks not freed; inherited 3,003 bytes in 3 blocks" out &&
	test_expect_code 1 "$MTANALYZE" session wait/t.log* >out 2>err &&
	grep -x "    wait/t.log: 3,003 bytes in 3 blocks not freed" out &&
	test_expect_code 1 "$MTANALYZE" session exec/t.log* >out 2>err &&
	grep -x "    exec/t.log: 3,003 bytes in 3 blocks not freed" out
'

test_expect_success 'session: blocks live at an exec are not leaks, the program exec'"'"'d traced or not' '
	mkdir untraced && cp exec/t.log exec/t.log.[0-9]* untraced/ && rm untraced/t.log.*.1 &&
	c=$(cat exec/pid) &&
	test_expect_code 1 "$MTANALYZE" session untraced/t.log* >out 2>err &&
	cat out &&
	grep -x "      untraced/t.log.$c: 3,003 bytes in 3 blocks live at the exec (not leaks); inherited 3,003 bytes in 3 blocks" out &&
	tail -n 1 out | grep -x "4 processes, 4 program runs: 3,003 bytes in 3 blocks not freed, in 1 of them"
'

test_expect_success 'a trace that does not say when its process exited hands nothing over' '
	mkdir old && cp double/t.log* old/ &&
	tr -d "\000" <double/t.log | grep -v "^# time " >old/t.log &&
	test_expect_code 1 "$MTANALYZE" --json old/t.log >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 &&
	grep "does not say when it exited" err
'

test_done
