#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3090-analyzer-fork-inheritance.sh -- the reports by call site of a
# forked child's trace start from the blocks its parent had live at the
# fork (no frees of memory "never allocated" for them; those never freed
# are the child's leaks), and a parent that ended while its child lived on
# handed it its blocks: they are not its leaks (share/analyzer.md, "Forks
# and daemons").  The plain report stays the script's on every trace.
#
# Fixture: tests/helper/rec-daemon.c.  Before forking, the first process
# allocates 3 blocks of 1001 bytes (0x3e9) that nobody frees and 2 of 1002
# (0x3ea); the daemon frees the 1002 blocks and leaks 1 of 1004 (0x3ec).
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'fork inheritance' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
DAEMON="$HELPER/rec-daemon"

# run MODE: record rec-daemon MODE in the current directory (t.log) and
# wait for the daemon to be gone; its pid is left in the file pid.
run() {
	env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=t.log "$DAEMON" "$1" pid >out 2>err &&
	test ! -s err &&
	i=0 && while [ ! -s pid ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done &&
	while kill -0 "$(cat pid)" 2>/dev/null; do sleep 0.01; done
}

# leaks_are JSON SIZES...: the blocks not freed in the --json report JSON
# have exactly these sizes (hex), in any order; no bad free.
leaks_are() {
	test "$(py "len(d[\"bad_frees\"])" "$1")" = 0 &&
	py "\"\\n\".join(\"%#x\" % l[\"size\"] for l in d[\"leaks\"])" "$1" | sort >leaks.actual &&
	shift && printf "%s\n" "$@" | sort >leaks.expect &&
	test_cmp leaks.expect leaks.actual
}

# plain_is_mtrace TRACE: the plain report is the script's on TRACE.
plain_is_mtrace() {
	same_as_mtrace "$DAEMON" "$1" -- "$DAEMON" "$1"
}

# through_fork PARENT CHILD: what glibc's tracer would have written had the
# child kept writing its parent's file: the parent's standard lines up to
# its "# fork" line, then the child's.
through_fork() {
	tr -d "\000" <"$1" | sed -n "/^# fork /q;p" | grep -a "^@" &&
	strip_ext "$2"
}

test_expect_success 'record daemon(3), a double fork (with and without a middle trace), both sides running' '
	for m in daemon double double-alloc both; do
		mkdir $m && (cd $m && run $m) || return 1
	done
'

test_expect_success 'the plain report is the script'"'"'s on every trace, forks or not' '
	for t in */t.log*; do
		plain_is_mtrace "$t" || return 1
	done &&
	cd daemon &&
	test_expect_code 1 "$MTANALYZE" "t.log.$(cat pid)" >report 2>err &&
	grep -c "never alloc" report | grep -x 2 &&
	grep "note: .t.log.$(cat pid). is the trace of a forked child: this report is the script.s" err
'

test_expect_success 'daemon(3), child: no never-allocated frees, the inherited blocks it kept are its leaks' '
	cd daemon &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$(cat pid)" >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	grep "note: .t.log.$(cat pid). starts from the 5 blocks (5007 bytes) its parent" err
'

test_expect_success 'daemon(3), child: its leaks are what mtrace says of the trace continued through the fork' '
	cd daemon &&
	through_fork t.log "t.log.$(cat pid)" >through.log &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$(cat pid)" >report 2>/dev/null &&
	leaks_are report $(/usr/bin/mtrace through.log | grep "^0x" | awk "{ print \$2 }")
'

test_expect_success 'daemon(3), parent: the blocks handed to the child are not its leaks, exit 0' '
	cd daemon &&
	"$MTANALYZE" --by-site t.log >report 2>err &&
	grep -x "No memory leaks." report &&
	grep "note: this process ended while process $(cat pid), which holds a copy of its heap from its fork .# fork 1., lived on: the 5 blocks (5007 bytes) it had allocated before that fork and still had were handed to it, and its trace .\./t.log.$(cat pid). reports them" err
'

test_expect_success '--no-inherit reads each trace alone, as mtrace does' '
	cd daemon &&
	test_expect_code 1 "$MTANALYZE" --no-inherit --json t.log >report 2>err &&
	test_must_be_empty err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ea 0x3ea &&
	test_expect_code 1 "$MTANALYZE" --no-inherit --json "t.log.$(cat pid)" >report 2>err &&
	test "$(py "len(d[\"bad_frees\"])" report)" = 2
'

test_expect_success 'daemon(3) --json: lineage, leaks and bad frees of both sides' '
	cd daemon && child=$(cat pid) &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$child" >child.json 2>/dev/null &&
	test "$(py "d[\"run\"][\"leaked_blocks\"], d[\"run\"][\"bad_frees\"]" child.json)" = "4 0" &&
	test "$(py "d[\"lineage\"][\"parent\"][\"inherited_blocks\"], d[\"lineage\"][\"parent\"][\"mark\"], d[\"lineage\"][\"handed_to_child\"]" child.json)" = "5 1 None" &&
	"$MTANALYZE" --json t.log >parent.json 2>/dev/null &&
	test "$(py "d[\"run\"][\"leaked_blocks\"], d[\"lineage\"][\"parent\"]" parent.json)" = "0 None" &&
	test "$(py "d[\"lineage\"][\"handed_to_child\"]" parent.json)" = \
		"{'"'"'pid'"'"': $child, '"'"'mark'"'"': 1, '"'"'blocks'"'"': 5, '"'"'bytes'"'"': 5007, '"'"'trace'"'"': '"'"'./t.log.$child'"'"'}"
'

test_expect_success 'daemon(3) --by-site: the child leaks 4 blocks at its sites, the parent none' '
	cd daemon &&
	test_expect_code 1 "$MTANALYZE" --by-site "t.log.$(cat pid)" >child.sites 2>/dev/null &&
	grep "4 blocks" child.sites &&
	! grep -i "never alloc\|bad free" child.sites &&
	"$MTANALYZE" --by-site t.log >parent.sites 2>/dev/null
'

test_expect_success 'double fork: the grandchild starts from the first process, which leaks nothing' '
	cd double &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$(cat pid)" >report 2>/dev/null &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	"$MTANALYZE" --by-site t.log >parent 2>err &&
	grep -x "No memory leaks." parent &&
	grep "this process ended while process $(cat pid), which holds a copy of its heap" err
'

test_expect_success 'a child that execs at once inherited nothing: the parent keeps its leaks, and says why' '
	mkdir exec && cd exec &&
	run exec &&
	test -f "t.log.$(cat pid)" &&
	! grep -a "^# parent" "t.log.$(cat pid)" &&
	test_expect_code 1 "$MTANALYZE" --json t.log >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ea 0x3ea &&
	grep "note: no trace of a child that inherited this process.s heap at its last fork (.# fork 1.) was found beside .t.log." err &&
	plain_is_mtrace t.log
'

test_expect_success 'the daemon parent whose child trace is gone keeps its leaks' '
	mkdir gone && cd gone &&
	cp ../daemon/t.log . &&
	test_expect_code 1 "$MTANALYZE" --json t.log >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ea 0x3ea &&
	grep "no trace of a child that inherited this process.s heap" err
'

test_expect_success 'double fork through a middle trace: inheritance over two generations' '
	cd double-alloc && child=$(cat pid) &&
	middle=$(grep -a "^# parent " "t.log.$child" | cut -d" " -f3) &&
	test -f "t.log.$middle" &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$child" >report 2>/dev/null &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	"$MTANALYZE" --by-site "t.log.$middle" >middle 2>err &&
	grep -x "No memory leaks." middle &&
	grep "starts from the 5 blocks" err && grep "while process $child, which" err &&
	"$MTANALYZE" --by-site t.log >first 2>err &&
	grep -x "No memory leaks." first && grep "while process $child, which.* its trace .\./t.log.$child. reports them" err
'

test_expect_success 'both sides keep running: each frees some inherited blocks, each leaks the rest' '
	cd both &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$(cat pid)" >child 2>/dev/null &&
	leaks_are child 0x3e9 0x3e9 0x3e9 0x3ea 0x3ec &&
	test_expect_code 1 "$MTANALYZE" --json t.log >parent 2>err &&
	leaks_are parent 0x3e9 0x3e9 0x3e9 0x3ea 0x3ed &&
	! grep "were handed to it" err &&
	grep "not handed to its child: the child whose trace is .\./t.log.$(cat pid). ended before this process did (it waited for its child)" err
'

test_expect_success 'the parent trace not found: a clear note, and the trace read alone' '
	mkdir alone && cd alone &&
	child=$(cat ../daemon/pid) &&
	cp "../daemon/t.log.$child" . &&
	sed -i "s|^# parent \([0-9]*\) 1 .*|# parent \1 1 /nonexistent/t.log|" "t.log.$child" &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$child" >report 2>err &&
	grep "note: .t.log.$child. is the trace of a forked child of process [0-9]*, whose trace ./nonexistent/t.log. was not found: the blocks the child inherited are not known" err &&
	test "$(py "len(d[\"bad_frees\"])" report)" = 2
'

test_expect_success '--parent FILE names the parent trace; a trace moved with its parent is found beside it' '
	cd alone && child=$(cat ../daemon/pid) &&
	test_expect_code 1 "$MTANALYZE" --json --parent ../daemon/t.log "t.log.$child" >report 2>/dev/null &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	cp ../daemon/t.log . &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$child" >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	grep "read from .\./t.log." err
'

test_expect_success 'a parent trace compressed since is found beside the child' '
	mkdir gz && cd gz && child=$(cat ../daemon/pid) &&
	cp "../alone/t.log.$child" . && gzip -c ../daemon/t.log >t.log.gz &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$child" >report 2>err &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	grep "read from .\./t.log.gz." err
'

test_expect_success '--parent with the trace of another process: a warning, the trace read alone' '
	cd alone && child=$(cat ../daemon/pid) &&
	test_expect_code 1 "$MTANALYZE" --json --parent ../both/t.log "t.log.$child" >report 2>err &&
	grep "warning: .../both/t.log. is not the trace of process" err &&
	test "$(py "len(d[\"bad_frees\"])" report)" = 2
'

test_expect_success 'rotation: the parent mark in a later part is found' '
	mkdir rot && cd rot &&
	REC_DAEMON_CHURN=100000 MTREC_ROTATE=4M run daemon &&
	test -f t.log.part2 &&
	test_expect_code 1 "$MTANALYZE" --json "t.log.$(cat pid)" >report 2>/dev/null &&
	leaks_are report 0x3e9 0x3e9 0x3e9 0x3ec &&
	"$MTANALYZE" --by-site t.log t.log.part* >parent 2>err &&
	grep -x "No memory leaks." parent &&
	plain_is_mtrace t.log.part2
'

test_done
