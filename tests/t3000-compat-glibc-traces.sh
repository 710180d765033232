#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3000-compat-glibc-traces: on traces written by glibc's own tracer,
# mtanalyze prints what /usr/bin/mtrace prints, byte for byte, with the same
# exit status; where the script leaves an address unresolved and we can
# resolve it, the only difference is the file:line in its place.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -x /usr/bin/mtrace ] || [ ! -f "$GLIBC_DEBUG" ]; then
	test_skip 'mtrace compatibility' 'needs analyzer, /usr/bin/mtrace and libc_malloc_debug.so'
	test_done; exit
fi

SRC="$TOP/tests/helper"

# glibc_trace LOG PROG ARGS...: trace PROG with glibc's libc_malloc_debug.so
glibc_trace() {
	log=$1; shift
	LD_PRELOAD=$GLIBC_DEBUG MALLOC_TRACE=$log "$@"
}

test_expect_success 'build PIE, non-PIE, no-debug and stripped fixtures' '
	$CC -O1 -g -fPIC -shared -o libana-leak.so "$SRC/libana-leak.c" &&
	for v in pie nopie nodebug; do
		case $v in
		pie) f="-g -pie -fPIE" ;; nopie) f="-g -no-pie -fno-PIE" ;; nodebug) f="-pie -fPIE" ;;
		esac
		$CC -O1 $f -DWITH_LIB -o $v "$SRC/ana-leaks.c" -L. -lana-leak -Wl,-rpath,"$OUT" -ldl || exit 1
	done &&
	cp nodebug stripped && strip stripped &&
	for v in pie nopie nodebug stripped; do
		glibc_trace $v.log ./$v l || exit 1
		grep -q "^@ ./$v:" $v.log || exit 1
	done
'

test_expect_success 'PIE with debug info: same output as mtrace BINARY TRACE' '
	same_as_mtrace ./pie pie.log -- ./pie pie.log &&
	grep -q "ana-leaks.c:" actual && grep -q "libana-leak.c:" actual
'

test_expect_success 'PIE without debug info: same output (addr2line symbol fallbacks)' '
	same_as_mtrace ./nodebug nodebug.log -- ./nodebug nodebug.log
'

test_expect_success 'stripped PIE: same output' '
	same_as_mtrace ./stripped stripped.log -- ./stripped stripped.log
'

test_expect_success 'binary named without ./ : same output' '
	same_as_mtrace pie pie.log -- pie pie.log
'

test_expect_success 'without BINARY: exact mode is the script, default resolves' '
	same_as_mtrace pie.log -- --mtrace-exact pie.log &&
	same_as_mtrace nodebug.log -- --mtrace-exact nodebug.log &&
	# what the script resolves with BINARY we resolve without it
	same_as_mtrace ./pie pie.log -- pie.log
'

test_expect_success 'non-PIE: the script cannot resolve the executable, we can' '
	same_as_mtrace ./nopie nopie.log -- --mtrace-exact ./nopie nopie.log &&
	test_expect_code 1 /usr/bin/mtrace ./nopie nopie.log >script &&
	test_expect_code 1 "$MTANALYZE" ./nopie nopie.log >ours &&
	# build the expected text: each unresolved "at 0xREL" of the script
	# becomes what addr2line says of 0x400000+REL in the executable
	base=$(readelf -lW nopie | awk "/LOAD/ { print \$3; exit }") &&
	: >expect &&
	while IFS= read -r line; do
		case "$line" in
		*" at 0x"*)
			rel=${line##* at }
			loc=$(addr2line -e nopie $(printf "%#x" $(($base + $rel))))
			printf "%s at %s\n" "${line% at *}" "$loc" >>expect ;;
		*) printf "%s\n" "$line" >>expect ;;
		esac
	done <script &&
	test_cmp expect ours &&
	! grep -q " at 0x" ours
'

test_expect_success 'freed, never allocated and duplicate blocks (edited traces)' '
	# drop the first allocation: its free is now "never alloc`d";
	# repeat a later one: "Alloc duplicate"; feed a realloc twice
	awk "/ \\+ / && !done { done = 1; next } { print }" pie.log >e1.log &&
	awk "{ print } / \\+ / { n++ } n == 3 && !d { d = 1; print }" pie.log >e2.log &&
	awk "{ print } / > / && !d { d = 1; print; sub(/ > /, \" < \"); print; print }" pie.log >e3.log &&
	for e in e1 e2 e3; do
		same_as_mtrace ./pie $e.log -- ./pie $e.log || exit 1
	done &&
	/usr/bin/mtrace ./pie e1.log | grep -q "was never alloc" &&
	/usr/bin/mtrace ./pie e2.log | grep -q "Alloc .* duplicate" &&
	/usr/bin/mtrace ./pie e3.log | grep -q "Realloc .* duplicate"
'

test_expect_success 'no leaks: "No memory leaks." and exit 0' '
	grep -v " + \| > " pie.log >clean.log &&
	same_as_mtrace ./pie clean.log -- ./pie clean.log &&
	grep -q "^No memory leaks.$" actual && grep -q "^exit 0$" actual
'

test_expect_success 'a trace in parts is one run; - reads standard input' '
	n=$(wc -l <pie.log) && head -n $((n / 2)) pie.log >part1 &&
	tail -n +$((n / 2 + 1)) pie.log >part2 &&
	same_as_mtrace ./pie pie.log -- ./pie part1 part2 &&
	test_expect_code 1 "$MTANALYZE" ./pie - <pie.log >stdin.out &&
	test_expect_code 1 /usr/bin/mtrace ./pie pie.log >script.out &&
	test_cmp script.out stdin.out &&
	# line numbers continue across parts
	awk "/ \\+ / && !done { done = 1; next } { print }" pie.log >e1.log &&
	head -n 3 e1.log >p1 && tail -n +4 e1.log >p2 &&
	same_as_mtrace ./pie e1.log -- ./pie p1 p2
'

test_expect_success 'two traces without BINARY are both traces' '
	cat clean.log pie.log >both.log &&
	test_expect_code 1 /usr/bin/mtrace both.log >expect &&
	test_expect_code 1 "$MTANALYZE" --mtrace-exact clean.log pie.log >actual &&
	test_cmp expect actual
'

test_expect_success 'a dlclosed library is resolved from its path in the caller field' '
	$CC -O1 -g -o dl "$SRC/ana-leaks.c" -ldl &&
	glibc_trace dl.log ./dl d "$OUT/libana-leak.so" &&
	grep -q "libana-leak.so:" dl.log &&
	same_as_mtrace ./dl dl.log -- ./dl dl.log &&
	same_as_mtrace ./dl dl.log -- dl.log
'

test_expect_success 'separate debug info through .gnu_debuglink' '
	objcopy --only-keep-debug pie pie.debug &&
	objcopy --strip-debug --add-gnu-debuglink=pie.debug pie linked &&
	glibc_trace linked.log ./linked l &&
	same_as_mtrace ./linked linked.log -- ./linked linked.log &&
	same_as_mtrace ./linked linked.log -- linked.log &&
	grep -q "ana-leaks.c:" actual
'

# A DWARF 5 unit whose primary file only #includes another (as glibc's
# sysdeps/x86_64/l10nflist.c includes intl/l10nflist.c): its file table's
# entries 0 and 1 differ, and addr2line (binutils 2.40) names a row no
# DW_LNS_set_file came before by entry 0, the primary file; the plain
# report prints what the script prints, the sites the file the code is in.
test_expect_success 'DWARF 5, the primary file including the code: the file mtrace prints' '
	mkdir -p dw5/a dw5/b &&
	printf "#include <stdlib.h>\nvoid *volatile keep;\nvoid make(int n) { keep = malloc((size_t)n * 3); }\n" >dw5/b/w.c &&
	printf "#include \"../b/w.c\"\n" >dw5/a/w.c &&
	printf "#include <mcheck.h>\nvoid make(int n);\nint main(int c, char **v) { (void)v; mtrace(); make(c + 10); return 0; }\n" >dw5/main.c &&
	(cd dw5/a && $CC -g -O2 -gdwarf-5 -c w.c -o ../w.o) &&
	$CC -g -O2 -gdwarf-5 -o dw5/prog dw5/main.c dw5/w.o &&
	glibc_trace dw5.log ./dw5/prog &&
	same_as_mtrace ./dw5/prog dw5.log -- ./dw5/prog dw5.log &&
	grep -q " at $OUT/dw5/a/w.c:3\$" actual &&
	test_expect_code 1 "$MTANALYZE" --by-site ./dw5/prog dw5.log >sites 2>/dev/null &&
	grep -q "make at $OUT/dw5/a/../b/w.c:3 in " sites
'

test_done
