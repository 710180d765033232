#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7040-analyzer-session: `mtanalyze session` lists every program run of a
# recording session -- the first process, a forked worker and what it
# exec'd, a double-forked daemon whose trace rotated -- as a tree, each
# with its own leaks; blocks live at an exec are not leaks; a forked
# child's leaks include the blocks it inherited and kept (the daemon hangs
# under the process whose heap it inherited, not under the launcher); the
# counts are those of /usr/bin/mtrace on each run's files, plus what each
# inherited (the fixture's children free nothing they inherit).
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'session summary' 'needs the analyzer and the recorder'
	test_done; exit
fi
SRC=$TOP/tests/helper/ana-session.c

# wait_ended N: until N of the files say "= End" (the daemon outlives
# the launcher; the file a process exec'd from has none), at most 300 s:
# the daemon's 100000 rounds take a second alone, far longer beside other
# tests on a loaded machine (20 s was once too short)
wait_ended() {
	n_=0
	while [ "$(grep -al '^= End' s.log* | wc -l)" -lt $1 ]; do
		n_=$((n_ + 1)); [ $n_ -lt 3000 ] || { echo "only $(grep -al '^= End' s.log*) ended"; return 1; }
		sleep 0.1
	done
}

test_expect_success 'record a session: worker, its exec, a rotated daemon' '
	ANA_SESSION_ROUNDS=100000 MTREC_ROTATE=1M MTREC_DEPTH=8 \
		"$MTREC" -q -o s.log "$HELPER/ana-session" &&
	wait_ended 3 &&
	ls s.log* >files && cat files && ls s.log.*.part2 &&
	test $(wc -l <files) -ge 6
'

test_expect_success 'one entry per program run, as a tree, with its own leaks' '
	test_expect_code 1 "$MTANALYZE" session s.log* >out 2>err &&
	cat out && test_must_be_empty err &&
	root=$(sed -n "s/^# pid \([0-9]*\) .*/\1/p" s.log) &&
	grep -q "^pid $root .*/ana-session  (parent [0-9]*)$" out &&
	grep -q "^    s.log: no leaks$" out &&
	grep -q "^  pid [0-9]* .*/ana-session$" out &&
	grep -q "^      s.log.[0-9]*: 250 bytes in 3 blocks live at the exec (not leaks); inherited 50 bytes in 1 block$" out &&
	grep -q "^  pid [0-9]*, after an exec: .*/ana-session image$" out &&
	grep -q "^      s.log.[0-9]*.1: 900 bytes in 3 blocks not freed$" out &&
	grep -q "largest: 900 bytes in 3 blocks at .*ana-session.c:$(line_of "image leak")" out &&
	grep -q "^      s.log.[0-9]*, s.log.[0-9]*.part2.*: 7,050 bytes in 2 blocks not freed; inherited 50 bytes in 1 block$" out &&
	grep -q "largest: 7,000 bytes in 1 block at daemon_child at .*ana-session.c:$(line_of "daemon leak")" out &&
	test "$(grep -c "^  pid " out)" = 3 &&
	tail -n 1 out | grep -qx "3 processes, 4 program runs: 7,950 bytes in 5 blocks not freed, in 2 of them"
'

test_expect_success 'the order the files are named in does not matter' '
	test_expect_code 1 "$MTANALYZE" session $(sort -r files) >out2 &&
	test_cmp out out2
'

test_expect_success '--json: the same facts, and each run'"'"'s counts are mtrace'"'"'s on its files' '
	test_expect_code 1 "$MTANALYZE" session --json s.log* >j &&
	test "$(py "len(d[\"images\"])" j)" = 4 &&
	py "\"\\n\".join(\"%d %s\" % (i[\"leaked_blocks\"] - i[\"inherited_blocks\"], \" \".join(i[\"files\"])) for i in d[\"images\"])" j >runs &&
	cat runs &&
	while read -r blocks files; do
		cat $files >run.log && mtrace_leaks run.log "$blocks" || exit 1
	done <runs &&
	test "$(py "[i[\"leaks\"] for i in d[\"images\"] if i[\"exec_next\"] is not None]" j)" = "[False]" &&
	test "$(py "[i[\"program\"].split()[-1] for i in d[\"images\"] if i[\"exec_of\"] is not None and d[\"images\"][i[\"exec_of\"]][\"exec_next\"] == i[\"index\"]]" j)" = "['"'"'image'"'"']"
'

test_expect_success 'a session without leaks exits 0' '
	test_expect_code 0 "$MTANALYZE" session s.log >out &&
	tail -n 1 out | grep -qx "1 process, 1 program run: no leaks"
'

test_expect_success 'a glibc trace among them: listed, program not recorded' '
	printf "= Start\n@ ./x:[0x1] + 0x10 0x20\n= End\n" >g.log &&
	test_expect_code 1 "$MTANALYZE" session s.log g.log >out &&
	grep -q "^(program not recorded)$" out &&
	grep -q "^    g.log: 32 bytes in 1 block not freed$" out
'

test_expect_success 'usage errors and unusable files exit 2 with one line' '
	test_expect_code 2 "$MTANALYZE" session 2>err && grep -q "takes the trace files" err &&
	test_expect_code 2 "$MTANALYZE" session - <s.log 2>err && grep -q "standard input" err &&
	test_expect_code 2 "$MTANALYZE" session s.log nosuch.log 2>err && grep -q "nosuch.log" err &&
	test_expect_code 2 "$MTANALYZE" session "$HELPER/ana-session" 2>err && grep -q "ELF" err
'

test_expect_success 'the report refuses two processes and points to session' '
	test_expect_code 2 "$MTANALYZE" $(sed -n 1,2p files) 2>err &&
	grep -q "different processes.*mtanalyze session" err
'

test_done
