#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Stress: 16 threads of a million events each, a churn of 1,000 short-lived
# threads, and recording toggled 1,000 times while threads allocate.  Each
# trace is checked by the analyzer (or glibc's mtrace): no impossible free
# and the leaks exactly as made (or, when toggling cuts events apart, within
# the bound that toggling allows).
. "$(dirname "$0")/lib.sh"

# report TRACE: an mtrace-format report, by mtanalyze when built (fast).
report() {
	if need_analyzer; then "$MTANALYZE" "$1"; else /usr/bin/mtrace "$1"; fi
}

test_expect_success '16 threads x 1M events: consistent, no leaks' '
	timeout 300 env LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t16.log \
		"$HELPER/bench-alloc" 16 500000 &&
	test "$(grep -c "^@" t16.log)" -ge 16000000 &&
	report t16.log >r16 &&
	! grep -q -e "never alloc" -e duplicate r16 &&
	grep -q "^No memory leaks.\$" r16 &&
	test_when_passed "rm -f t16.log"
'

test_expect_success '1,000 short-lived threads: consistent, exactly the leaks made' '
	for i in 1 2 3 4 5; do
		LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/churn.log "$HELPER/rec-lifecycle" 2 || exit 1
	done &&
	test "$(grep "^# T " churn.log | sort -u | wc -l)" -ge 150 &&
	busy_line=$(grep -n "malloc(32)" "$TOP/tests/helper/rec-lifecycle.c" | cut -d: -f1) &&
	test_expect_code 1 /usr/bin/mtrace "$HELPER/rec-lifecycle" churn.log >rc &&
	! grep -q -e "never alloc" -e duplicate rc &&
	test "$(grep "  at " rc | grep -v -c -e "dl-tls.c" -e "c:$busy_line")" = 2
'

# split_by_toggle: every address event that contradicts the previous event
# on the same address (a second "+" or a "-" without "+") must have a
# "= Start" between the two: the free or allocation in between happened
# while recording was off.  Prints the contradictions that do not.
split_by_toggle() {
	tr -d "\000" <"$1" | awk '
		/^= Start/ { span++ }
		$1 == "@" { $1 = ""; $2 = ""; $0 = $0 }
		$1 == "+" || $1 == ">" {
			if (($2 in alloc) && alloc[$2] == span) print "duplicate " NR ": " $0
			alloc[$2] = span }
		$1 == "-" || $1 == "<" {
			if (!($2 in alloc) && ($2 in freed) && freed[$2] == span)
				print "free of freed " NR ": " $0
			delete alloc[$2]; freed[$2] = span }'
}

test_expect_success 'toggled 1,000 times under 4 threads: spans bracketed, splits only at toggles' '
	timeout 120 env LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/toggle.log "$HELPER/rec-toggle" 4 1000 &&
	grep "^= " toggle.log | uniq -c | awk "\$1 != 1 { exit 1 }" &&
	test "$(grep -c "^= Start" toggle.log)" = 1001 &&
	split_by_toggle toggle.log >bad && test ! -s bad &&
	{ report toggle.log >rt || test $? = 1; } &&
	test "$(grep -c "never alloc" rt)" -le 4000 &&
	test "$(grep -c duplicate rt)" -le 4000
'

test_expect_success 'the 1,000-thread churn itself: 1,000 threads joined one by one' '
	cat >churn.c <<-\EOF &&
	#include <pthread.h>
	#include <stdlib.h>
	static void *f(void *a) { char *volatile p = malloc(100); free(p); return a; }
	int main(void) {
		for (int i = 0; i < 1000; i++) {
			pthread_t t;
			if (pthread_create(&t, 0, f, 0)) return 1;
			pthread_join(t, 0);
		}
		char *volatile leak = malloc(4321);
		return leak == 0;
	}
	EOF
	$CC -O1 -pthread -o churn churn.c &&
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/c1000.log ./churn &&
	test "$(grep "^# T " c1000.log | sort -u | wc -l)" -ge 1000 &&
	test_expect_code 1 /usr/bin/mtrace churn c1000.log >r1000 &&
	! grep -q -e "never alloc" -e duplicate r1000 &&
	test "$(grep -c "  at " r1000)" = 1 && grep -q "0x10e1  at " r1000
'

test_done
