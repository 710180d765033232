#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2140-recorder-scoping.sh -- trace_on()/trace_off()/trace_mark() from
# <mtrec.h> and glibc's mtrace()/muntrace(): a program built with them
# runs normally without the recorder; with MTREC_SCOPED=1 only what
# happens inside on/off spans is recorded, each span between "= Start"
# and "= End", marks as "# mark LABEL" lines; without it recording starts
# at the first allocation and trace_off() stops it until the next
# trace_on().
#
# Fixture: tests/helper/rec-scoped.c (each step allocates blocks of a size
# of its own; its header lists the steps).
. "$(dirname "$0")/lib.sh"

SCOPED="$HELPER/rec-scoped"

# spans FILE: the span, mark and fixture event lines of FILE, in file
# order, without callers and with pointers numbered by first use.
spans() {
	tr -d '\000' <"$1" |
	grep -a -e '^= ' -e '^# mark ' -e '^@ [^ ]*rec-scoped[^ ]* ' |
	sed -e 's/^@ [^ ]* //' -e 's/ s=[0-9]*$//' | norm_ptrs
}

test_expect_success 'the fixture does not link the recorder: its scoping symbols are weak' '
	! readelf -d "$SCOPED" | grep NEEDED | grep mtrec &&
	nm -D "$SCOPED" >syms &&
	grep -E "^ +w trace_on\$" syms &&
	grep -E "^ +w trace_off\$" syms &&
	grep -E "^ +w trace_mark\$" syms
'

test_expect_success 'without the recorder the program runs normally and writes no trace' '
	MALLOC_TRACE="$OUT/plain.log" "$SCOPED" >out 2>err &&
	echo "scoped ok" >expect && test_cmp expect out &&
	test ! -s err &&
	test ! -e plain.log
'

test_expect_success 'under glibc tracer the program runs and only mtrace()..muntrace() is traced' '
	LD_PRELOAD="$GLIBC_DEBUG" MALLOC_TRACE=glibc.log "$SCOPED" >out &&
	echo "scoped ok" >expect && test_cmp expect out &&
	grep " + 0x[0-9a-f]* 0x151\$" glibc.log &&
	! grep " 0x1[0-47][0-9a-f]\$" glibc.log
'

cat >expect.scoped <<'EOF'
= Start
+ P1 0x111
# mark first
+ P2 0x112
- P1
= End
= Start
+ P3 0x131
# mark second
= End
= Start
+ P4 0x151
# mark via mtrace
- P3
= End
= Start
+ P5 0x171
= End
EOF

test_expect_success 'MTREC_SCOPED=1: only the spans are recorded, each in = Start / = End, with marks' '
	LD_PRELOAD="$LIBMTREC" MTREC_SCOPED=1 MALLOC_TRACE=scoped.log "$SCOPED" >out 2>err &&
	echo "scoped ok" >expect && test_cmp expect out &&
	test ! -s err &&
	spans scoped.log >actual &&
	test_cmp expect.scoped actual
'

test_expect_success 'MTREC_SCOPED=1: nothing outside the spans, not even other callers' '
	{ strip_ext scoped.log | grep -v -e "^= " -e "rec-scoped" >others || test $? = 1; } &&
	test_must_be_empty others &&
	test "$(grep -c "^= Start\$" scoped.log)" -eq 4 &&
	test "$(grep -c "^= End\$" scoped.log)" -eq 4 &&
	! grep "# mark hidden" scoped.log
'

test_expect_success 'MTREC_SCOPED=1: mtrace reads the scoped trace (3 blocks not freed within spans)' '
	test_expect_code 1 mtrace scoped.log >mt &&
	cat mt &&
	! grep -e "never alloc" -e duplicate mt &&
	test "$(grep -c "^0x" mt)" -eq 3 &&
	grep "^0x[0-9a-f]* *0x112 " mt && grep "^0x[0-9a-f]* *0x151 " mt && grep "^0x[0-9a-f]* *0x171 " mt
'

cat >expect.default <<'EOF'
= Start
+ P1 0x101
+ P2 0x111
# mark first
+ P3 0x112
- P2
= End
= Start
+ P4 0x131
# mark second
= End
= Start
+ P5 0x151
# mark via mtrace
- P4
= End
= Start
+ P6 0x171
= End
EOF

test_expect_success 'without MTREC_SCOPED: recording starts at once, trace_off() stops it until trace_on()' '
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=default.log "$SCOPED" >out 2>err &&
	echo "scoped ok" >expect && test_cmp expect out &&
	test ! -s err &&
	spans default.log >actual &&
	test_cmp expect.default actual &&
	! grep "# mark hidden" default.log
'

test_expect_success 'without MTREC_SCOPED: the first span opens before the program first allocation' '
	# Lines of the dynamic loader and libc come before the fixture own.
	strip_ext default.log | sed -n "1,/rec-scoped/p" >head &&
	head -n 1 head | grep -x "= Start" &&
	test "$(grep -c "^= " head)" -eq 1
'

test_done
