#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2230-recorder-caller-strings.sh -- caller strings from the symbol index
# (recorder/symtab.c): the very text glibc's dladdr-based one has, at a
# cost that does not grow with the size of the caller's symbol table.
#
# The unit test (tests/unit/build-symtab-test.sh) compares the index with
# dladdr() on every symbol edge and every byte of small objects, in PIE
# and non-PIE executables, libc, libm, and shared objects with zero-size,
# aliased, nested, TLS and absolute symbols under each hash style, and
# stripped.  The fixture (tests/helper/rec-many-callers) loads a generated
# library of 30,000 exported functions whose first 1,000 allocate and free:
# 2,000 new callers, each of which costs glibc's dladdr a walk over 30,000
# symbols.
. "$(dirname "$0")/lib.sh"

PROG="$HELPER/rec-many-callers"

test_expect_success 'build the symbol index unit test with -Wall -Wextra -Werror' '
	CC="$CC" sh "$TOP/tests/unit/build-symtab-test.sh" "$OUT/build"
'

# unit VARIANT: run one driver; its "# ..." lines go to the test's log.
unit() {
	"$OUT/build/symtab-test-$1" "$OUT/build" >"out-$1" 2>&1 || { cat "out-$1"; return 1; }
	cat "out-$1" &&
	tail -n 1 "out-$1" | grep -qx PASS
}

test_expect_success 'the index says what dladdr says (PIE executable)' 'unit pie'
test_expect_success 'the index says what dladdr says (non-PIE, GNU hash)' 'unit nopie'
test_expect_success 'the index says what dladdr says (non-PIE, DT_HASH only)' 'unit nopie-sysv'

# gen_many NFN NCALL: assembly for a library of NFN exported functions, the
# first NCALL of which call malloc and free once each, and many_run(rounds)
# that calls those.  Assembly because a C compiler takes half a minute on
# 30,000 functions.
gen_many() {
	awk -v nfn="$1" -v ncall="$2" '
	function fn(name) {
		printf "\t.globl %s\n\t.type %s, @function\n%s:\n", name, name, name
	}
	BEGIN {
		print "\t.text"
		for (i = 0; i < nfn; i++) {
			if (i < ncall) {
				fn("many_" i)
				printf "\tpush %%rbx\n\tlea %d(%%rdi), %%rdi\n\tcall malloc@PLT\n", i % 64 + 1
				printf "\tmov %%rax, %%rdi\n\tcall free@PLT\n\tpop %%rbx\n\tret\n"
			} else {
				fn("many_pad_" i)
				printf "\tlea %d(%%rdi), %%eax\n\tret\n", i
			}
			printf "\t.size %s, .-%s\n", i < ncall ? "many_" i : "many_pad_" i,
				i < ncall ? "many_" i : "many_pad_" i
		}
		fn("many_run")
		print "\tpush %rbx\n\tpush %rbp\n\tsub $8, %rsp\n\tmov %edi, %ebx"
		print "1:\ttest %ebx, %ebx\n\tjle 2f"
		for (i = 0; i < ncall; i++)
			printf "\tmov $%d, %%edi\n\tcall many_%d@PLT\n", i % 100, i
		print "\tdec %ebx\n\tjmp 1b"
		print "2:\tadd $8, %rsp\n\tpop %rbp\n\tpop %rbx\n\tret\n\t.size many_run, .-many_run"
		print "\t.section .note.GNU-stack,\"\",@progbits"
	}'
}

# median_ms CMD...: the median wall time of 5 runs, in ms.
median_ms() {
	: >times &&
	for i in 1 2 3 4 5; do
		t0=$(date +%s%N) &&
		{ "$@" >/dev/null 2>&1 || return 1; } &&
		t1=$(date +%s%N) &&
		echo $(((t1 - t0) / 1000000)) >>times || return 1
	done &&
	sort -n times | sed -n 3p
}

if [ "$(uname -m)" = x86_64 ]; then
	test_expect_success 'build the fixture library: 30,000 functions, 1,000 allocating' '
		gen_many 30000 1000 >libmany.s &&
		$CC -shared -o libmany.so libmany.s &&
		test "$(nm -D --defined-only libmany.so | grep -c " T many_")" -ge 30000
	'

	test_expect_success 'caller strings of 2,000 new callers are byte for byte glibc'"'"'s' '
		LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/glibc.log "$PROG" "$OUT/libmany.so" 2 &&
		MTREC_SCOPED=1 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/ours.log \
			"$PROG" "$OUT/libmany.so" 2 &&
		strip_ext glibc.log | norm_ptrs >expect &&
		strip_ext ours.log | grep -v "^= End\$" | norm_ptrs >actual &&
		test_cmp expect actual &&
		test "$(grep -c "^@ $OUT/libmany.so:(many_[0-9]*+[0-9a-f]*)\[0x" actual)" = 4000
	'

	# The index costs a sort per object and a binary search per caller;
	# dladdr a walk over the table per caller.  Against the same run under
	# glibc's tracer (whose cost is mostly dladdr too) and against the
	# native run, with room for a busy machine.
	test_expect_success 'describing the callers costs far less than dladdr did' '
		native=$(median_ms "$PROG" "$OUT/libmany.so" 1) &&
		ours=$(median_ms env LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t.%p.log \
			"$PROG" "$OUT/libmany.so" 1) &&
		glibc=$(median_ms env LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$OUT/g.log \
			"$PROG" "$OUT/libmany.so" 1) &&
		echo "native $native ms, ours $ours ms, glibc mtrace $glibc ms (medians of 5)" &&
		test $(((ours - native) * 4)) -le $((glibc - native)) &&
		test "$ours" -le $((3 * native + 100))
	'
else
	test_skip 'the 30,000-function fixture' 'its generator writes x86-64 assembly'
fi

test_done
