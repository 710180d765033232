#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7010-shrink: `mtanalyze shrink TRACE... -o OUT` drops the blocks that
# were freed: OUT gives exactly the full trace's report -- leaks, frees of
# memory never allocated, duplicates, their line numbers -- with mtanalyze
# (default, --by-site, JSON) and with /usr/bin/mtrace, for recorder traces
# with stacks, glibc traces made under threads (with bad frees and
# duplicates), rotated parts and damaged input; it is far smaller, and its
# memory does not grow with the trace.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'shrink' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
HAVE_MTRACE=no
[ -x /usr/bin/mtrace ] && HAVE_MTRACE=yes

# same_reports FULL... -- SMALL: every report of the full trace (its parts
# concatenated for /usr/bin/mtrace) equals that of the shrunk one.
same_reports() {
	small=$1; shift
	cat "$@" >full.cat
	st1=0; "$MTANALYZE" "$@" >a.full || st1=$?
	st2=0; "$MTANALYZE" "$small" >a.small || st2=$?
	test $st1 = $st2 && test_cmp a.full a.small || return 1
	"$MTANALYZE" --by-site "$@" | sed -n "1,/^Peak:/p" >s.full
	"$MTANALYZE" --by-site "$small" | sed -n "1,/^Peak:/p" >s.small
	sed -i "/^Peak:/d; s/  \[[a-z]*\]$//" s.full s.small && test_cmp s.full s.small || return 1
	test_might_fail "$MTANALYZE" --json "$@" >j.full &&
	test_might_fail "$MTANALYZE" --json "$small" >j.small || return 1
	python3 -c "
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for k in ('leaks', 'bad_frees'):
    assert a[k] == b[k], k
for k in ('leaked_blocks', 'leaked_bytes', 'bad_frees', 'lines', 'duplicate_allocations'):
    assert a['run'][k] == b['run'][k], k
" j.full j.small || return 1
	if [ $HAVE_MTRACE = yes ]; then
		st1=0; /usr/bin/mtrace full.cat >m.full || st1=$?
		st2=0; /usr/bin/mtrace "$small" >m.small || st2=$?
		test $st1 = $st2 && test_cmp m.full m.small || return 1
	fi
}

test_expect_success 'a recorder trace with stacks: same reports, 10x smaller' '
	"$MTREC" -o deep.log --depth 8 "$HELPER/ana-growth" 20000 2>/dev/null &&
	"$MTANALYZE" shrink deep.log -o deep.small >msg &&
	grep -q "^deep.small: 622 of .* events kept" msg &&
	same_reports deep.small deep.log &&
	test $(wc -l <deep.small) = $(wc -l <deep.log) &&
	test $(($(wc -c <deep.log) / $(wc -c <deep.small))) -ge 10 &&
	test "$(grep -c "^# stack" deep.small)" -le 5
'

test_expect_success GLIBC_DEBUG 'a glibc trace under threads: bad frees and duplicates at the same lines' '
	# glibc logs a free after releasing the block: under threads its traces
	# show bad frees and duplicates, most runs (try a few)
	for i in 1 2 3 4 5 6 7 8; do
		LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=glibc.log "$HELPER/rec-handoff" 4 50000 3 &&
		test_expect_code 1 "$MTANALYZE" glibc.log >g.out || exit 1
		if grep -q "was never alloc" g.out && grep -q duplicate g.out; then break; fi
	done &&
	grep -q "was never alloc" g.out && grep -q duplicate g.out &&
	"$MTANALYZE" shrink -q glibc.log -o glibc.small &&
	same_reports glibc.small glibc.log &&
	test $(($(wc -c <glibc.log) / $(wc -c <glibc.small))) -ge 10
'

test_expect_success 'rotated parts given in any order: one run, shrunk into one file' '
	MTREC_QUIET=1 MTREC_ROTATE=4M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/rot.log \
		"$HELPER/rec-handoff" 4 100000 3 &&
	test -f rot.log.part3 &&
	{ echo rot.log; n=2; while [ -f rot.log.part$n ]; do echo rot.log.part$n; n=$((n + 1)); done; } >order &&
	"$MTANALYZE" shrink -q $(sort -r order) -o rot.small &&
	same_reports rot.small $(cat order) &&
	test "$(grep -c "^# mtrec" rot.small)" = 1 && ! grep -q "^# part" rot.small
'

test_expect_success 'damaged input: odd addresses, garbage, a cut last line' '
	cp deep.log bad.log &&
	caller=$(grep " + " deep.log | sed -n "3p" | cut -d" " -f2) &&
	{ echo "@ $caller + 0X1F 0x10"
	  echo "@ $caller - 0X1F"
	  echo "@ $caller + (nil) 0x10"
	  echo "garbage line"
	  echo "@ $caller + 0xdead0 0x20 extra extra extra extra extra extra"
	  echo "@ $caller + 0xbeef0 0x30"
	  echo "@ $caller - 0xbeef0"
	  echo "@ $caller + 0xbeef0 0x30"
	  echo "@ $caller + 0xbeef0 0x40"
	  echo "@ $caller - 0x77"
	  printf "@ $caller + 0xcafe0 0x3"; } >>bad.log &&
	"$MTANALYZE" shrink -q bad.log -o bad.small &&
	same_reports bad.small bad.log 2>/dev/null &&
	grep -q "duplicate" a.small && grep -q "Free .* was never alloc" a.small
'

test_expect_success 'standard input and a missing -o are refused' '
	test_expect_code 2 "$MTANALYZE" shrink -o x.small - <deep.log 2>err &&
	grep -q "not standard input" err &&
	test_expect_code 2 "$MTANALYZE" shrink deep.log 2>err && grep -q "needs -o" err &&
	test_expect_code 2 "$MTANALYZE" shrink -o x.small nosuch.log 2>err &&
	grep -q "cannot read .nosuch.log." err && test ! -e x.small
'

test_expect_success TIME 'memory follows the live blocks, not the length of the trace' '
	MTREC_QUIET=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/b1.log "$HELPER/bench-alloc" 2 50000 &&
	MTREC_QUIET=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/b10.log "$HELPER/bench-alloc" 2 500000 &&
	/usr/bin/time -f %M -o rss1 "$MTANALYZE" shrink -q b1.log -o b1.small &&
	/usr/bin/time -f %M -o rss10 "$MTANALYZE" shrink -q b10.log -o b10.small &&
	echo "$(tail -n 1 rss1) KiB, $(tail -n 1 rss10) KiB" &&
	test $(tail -n 1 rss10) -lt $(($(tail -n 1 rss1) * 3 / 2)) &&
	"$MTANALYZE" b10.small >r.small && "$MTANALYZE" b10.log >r.full && test_cmp r.full r.small &&
	test $(($(wc -c <b10.log) / $(wc -c <b10.small))) -ge 10
'

test_done
