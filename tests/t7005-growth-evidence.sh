#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t7005-growth-evidence: leaks of real daemons that are not growth are not
# called linear or exponential (share/growth.md, "Evidence"): the fixture
# tests/helper/ana-daemon-shapes.c has a rehash's 2 blocks at start-up and 14 at
# shutdown (constant), a teardown's 400 blocks in the last tenth of the run
# (unknown: too short a span), what a full 64-entry cache shared by 4
# threads keeps (constant), 5 blocks over the whole run (unknown: too few),
# and a steady leak in each thread, which must stay linear -- in event
# order (a glibc trace, whose events are in true order) and on the
# recorder's clock, three runs each; the --growth gate counts only real
# leaks, and "unknown" can be asked for.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'growth evidence' 'needs the analyzer and the recorder'
	test_done; exit
fi
APP="$HELPER/ana-daemon-shapes"

# classes FILE...: "function class" of each leaking site, by function
classes() {
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 "$@" >sites &&
	sed -n 's/^ *[0-9][0-9]* *[0-9][0-9]*  \([a-z_]*\) at .*  \[\([a-z]*\)\]$/\1 \2/p' sites | sort
}

cat >expect <<EOF_
cache_insert constant
few_leak unknown
rehash constant
steady_leak linear
translator_fini unknown
EOF_

test_expect_success GLIBC_DEBUG 'event order: shutdown, full cache and few blocks are not growth (3 runs)' '
	for i in 1 2 3; do
		LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=glibc$i.log "$APP" 20000 &&
		classes "$APP" glibc$i.log >actual && test_cmp expect actual || exit 1
	done
'

# On the clock axis the shapes are what the machine's scheduler made of
# them: a run during which the load changed (another job starting on a
# shared 2-core machine) can stretch a phase.  Two runs of three must
# agree with the rule; a broken rule fails all three.
test_expect_success 'recorder clock: the same classes with 4 threads (2 runs of 3 at least)' '
	good=0 &&
	for i in 1 2 3; do
		"$MTREC" -o timed$i.log --depth 8 "$APP" 20000 13 2>/dev/null &&
		test "$(grep -c "^# time" timed$i.log)" -ge 8 &&
		classes timed$i.log >actual$i || exit 1
		if test_cmp expect actual$i; then good=$((good + 1)); fi
	done &&
	test $good -ge 2 &&
	for i in 1 2 3; do
		if test_cmp expect actual$i >/dev/null; then cp timed$i.log timed.log; fi
	done
'

test_expect_success 'the gate fails on the steady leak alone' '
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential timed.log >real &&
	grep -q "^Only the leaks that grow as linear, exponential: 1 of the 5 sites" real &&
	grep -q "steady_leak at .*\[linear\]" real
'

test_expect_success 'without the steady leak the gate passes, and says what else leaks' '
	"$MTREC" -o benign.log --depth 8 "$APP" 20000 13 rtcf 2>/dev/null &&
	"$MTANALYZE" --growth linear,exponential benign.log >none &&
	grep -q "^No leaks that grow as linear, exponential (4 sites leak otherwise" none
'

test_expect_success '--growth unknown lists the sites that could not be judged' '
	test_expect_code 1 "$MTANALYZE" --growth unknown benign.log >unknown &&
	grep -q "few_leak at .*\[unknown\]" unknown &&
	grep -q "translator_fini at .*\[unknown\]" unknown &&
	! grep -q "rehash at .*\[" unknown
'

test_done
