#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2350-recorder-small-stacks.sh -- the recorder runs on the stack of
# whoever calls malloc: a thread with a small stack, or a signal handler on
# a small sigaltstack, does not overflow it because its calls are recorded
# (issue 24, point 1).  The bound the README and mtrec(1) give (2 KiB
# beyond malloc's own) is measured here with a stack filled with a
# pattern, with MTREC_REACH and MTREC_TRACK on and mtrec ctl's requests
# looked for, and taken (reach, mark, status).
#
# Fixture: tests/helper/rec-smallstack.c (with librec-pool.so's pool_get
# and pool_put, tracked).
. "$(dirname "$0")/lib.sh"

SMALL="$HELPER/rec-smallstack"
BOUND=2048
MTREC_TRACK=pool_get:alloc:1,pool_put:free
export MTREC_TRACK

# A call of the recorder's into libc bound lazily from inside malloc runs
# the loader's resolver there, which saves the vector registers on the
# stack (1-3 KiB): bound at load instead (-Wl,-z,now), which the loader
# marks in the dynamic section.
test_expect_success 'libmtrec.so is bound at load (-z now): no lazy binding inside malloc' '
	readelf -d "$LIBMTREC" >dynamic &&
	grep -E "\(FLAGS\) .*BIND_NOW" dynamic &&
	grep -E "\(FLAGS_1\) .*Flags:.* NOW" dynamic
'

for depth in 1 16 64; do
	test_expect_success "a 16 KiB thread stack 8 KB deep allocates, recorded at depth $depth" "
		\"\$SMALL\" thread 16384 8192 2000 >plain$depth.out &&
		grep -x 'done 2000' plain$depth.out &&
		timeout 120 env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=thread$depth.log MTREC_DEPTH=$depth \
			MTREC_REACH=1 \"\$SMALL\" thread 16384 8192 2000 >thread$depth.out &&
		test_cmp plain$depth.out thread$depth.out &&
		test \"\$(tail -n 1 thread$depth.log)\" = '= End' &&
		mtrace_ok thread$depth.log
	"
done

# deepest OUT: the figure rec-smallstack printed.
deepest() {
	sed -n 's/^deepest //p' "$1"
}

for depth in 1 16 64; do
	test_expect_success "the stack a recorded call needs beyond malloc's, at depth $depth: at most $BOUND bytes" "
		\"\$SMALL\" measure 3000 >native$depth.out &&
		timeout 120 env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=measure$depth.log MTREC_DEPTH=$depth \
			MTREC_REACH=1 \"\$SMALL\" measure 3000 >traced$depth.out &&
		native=\$(deepest native$depth.out) && traced=\$(deepest traced$depth.out) &&
		echo \"malloc alone \$native bytes, recorded \$traced bytes\" &&
		test -n \"\$native\" && test -n \"\$traced\" &&
		test \$((traced - native)) -le $BOUND &&
		test \"\$(tail -n 1 measure$depth.log)\" = '= End' &&
		test \"\$(grep -a -c '^# k pool_get @ .* + ' measure$depth.log)\" -ge 3000
	"
done

test_expect_success "the same with MTREC_ROTATE=1M: the next part opened from inside malloc" "
	\"\$SMALL\" measure 3000 >native-rot.out &&
	timeout 120 env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=\$OUT/rot.log MTREC_ROTATE=1M \
		MTREC_REACH=1 \"\$SMALL\" measure 3000 >traced-rot.out &&
	native=\$(deepest native-rot.out) && traced=\$(deepest traced-rot.out) &&
	echo \"malloc alone \$native bytes, recorded \$traced bytes\" &&
	test -n \"\$native\" && test -n \"\$traced\" &&
	test \$((traced - native)) -le $BOUND &&
	test -s rot.log.part2
"

# mtrec ctl's requests are taken by the next call that looks for them,
# inside malloc: reach scans the heap there (its stack wiped before the
# scan took 2 KiB alone, 2488 bytes beyond malloc's in all).
for depth in 1 16 64; do
	test_expect_success "the same while mtrec ctl's reach, mark and status are taken, depth $depth" "
		\"\$SMALL\" measure 500 >native-ctl$depth.out &&
		rm -f enough$depth &&
		{ env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=\$OUT/ctl$depth.log MTREC_DEPTH=$depth \
			MTREC_REACH=1 \"\$SMALL\" measure 500 until enough$depth >traced-ctl$depth.out & } &&
		pid=\$! &&
		within 600 test -s ctl$depth.log &&
		for req in reach 'mark one' status reach; do
			\"\$MTREC\" ctl \$pid \$req >/dev/null || { touch enough$depth; exit 1; }
		done &&
		touch enough$depth &&
		wait \$pid &&
		native=\$(deepest native-ctl$depth.out) && traced=\$(deepest traced-ctl$depth.out) &&
		echo \"malloc alone \$native bytes, recorded \$traced bytes\" &&
		test -n \"\$native\" && test -n \"\$traced\" &&
		test \$((traced - native)) -le $BOUND &&
		test \"\$(grep -a -c '^# reach end' ctl$depth.log)\" -ge 2 &&
		grep -a -q '^# mark one' ctl$depth.log
	"
done

# A forked child's first call opens its own trace, from inside malloc.
for depth in 1 16; do
	test_expect_success "the same in a forked child, its trace opened by its first malloc, depth $depth" "
		\"\$SMALL\" measure 300 fork >native-fork$depth.out &&
		timeout 120 env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=\$OUT/fork$depth.log MTREC_DEPTH=$depth \
			MTREC_REACH=1 \"\$SMALL\" measure 300 fork >traced-fork$depth.out &&
		native=\$(deepest native-fork$depth.out) && traced=\$(deepest traced-fork$depth.out) &&
		echo \"malloc alone \$native bytes, recorded \$traced bytes\" &&
		test -n \"\$native\" && test -n \"\$traced\" &&
		test \$((traced - native)) -le $BOUND &&
		child=\$(ls fork$depth.log.* | grep -v part) &&
		test \"\$(tail -n 1 \$child)\" = '= End' &&
		test \"\$(grep -a -c '^# k pool_get @ .* + ' \$child)\" -ge 300
	"
done

# The handler's calls are not nested in the main thread's when it
# interrupts it outside malloc: those look for mtrec ctl's requests, with
# the signal frame already on the sigaltstack.
for depth in 1 16; do
	test_expect_success "a handler on an 8 KiB sigaltstack allocates: at most $BOUND bytes more of it, depth $depth" "
		\"\$SMALL\" sigalt 8192 600 >/dev/null 2>native-alt$depth.err &&
		timeout 120 env LD_PRELOAD=\"\$LIBMTREC\" MALLOC_TRACE=alt$depth.log MTREC_DEPTH=$depth \
			MTREC_REACH=1 \"\$SMALL\" sigalt 8192 600 >alt$depth.out 2>alt$depth.err &&
		grep '^handled [0-9]' alt$depth.out &&
		native=\$(sed -n 's/^rec-smallstack: \\([0-9]*\\) bytes of the sigaltstack touched\$/\\1/p' native-alt$depth.err) &&
		traced=\$(sed -n 's/^rec-smallstack: \\([0-9]*\\) bytes of the sigaltstack touched\$/\\1/p' alt$depth.err) &&
		echo \"malloc alone \$native bytes, recorded \$traced bytes\" &&
		test -n \"\$native\" && test -n \"\$traced\" &&
		test \$((traced - native)) -le $BOUND &&
		if grep -a -q '^# lost [0-9]* events in signal handlers' alt$depth.log; then
			# a handler that interrupted the recorder where it holds
			# its thread's lock cannot write: counted, said, and the
			# analyzer says the run is incomplete (SPEC, never harm)
			test_expect_code 1 \"\$MTANALYZE\" alt$depth.log >/dev/null 2>an$depth.err &&
			grep -q 'is incomplete: .* (events in signal handlers that the recorder could not write' an$depth.err
		else
			mtrace_ok alt$depth.log
		fi
	"
done

test_done
