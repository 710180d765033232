#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1020-build-layers.sh -- `make layers`: the calls between object files,
# read from their symbols, go down the analyzer's folders only, and no
# objects of either component call each other in a circle but the cycles
# the Makefile lists (analyzer/README, recorder/README).
#
# tests/layers.sh is tried first on small objects made here, so that each
# of its verdicts (an upward call, a new cycle, a known cycle that
# changed or went) is seen to fail.
. "$(dirname "$0")/lib.sh"

LAYERS="$TOP/tests/layers.sh"

# obj DIR/NAME 'C TEXT': compile one object.
obj() {
	mkdir -p "$(dirname "$1")" &&
	printf '%s\n' "$2" >"$1.c" &&
	$CC -c -o "$1.o" "$1.c"
}

test_expect_success 'calls going down only pass, and are listed by layer' '
	obj top/a "int b (void); int a (void) { return b (); }" &&
	obj low/b "int b (void) { return 1; }" &&
	sh "$LAYERS" -n demo -l "top low" top/a.o low/b.o >out &&
	grep -x "  top      ->  low" out &&
	grep -x "  no upward call, no unknown cycle" out
'

test_expect_success 'a call from a lower layer to a higher one fails, named' '
	obj low/c "int a (void); int c (void) { return a (); }" &&
	test_expect_code 1 sh "$LAYERS" -n demo -l "top low" top/a.o low/b.o low/c.o >out &&
	grep "upward call: low/c -> top/a (a)" out
'

test_expect_success 'objects calling each other in a circle fail, unless listed exactly' '
	obj flat/x "int y (int); int x (int n) { return n ? y (n - 1) : 0; }" &&
	obj flat/y "int z (int); int y (int n) { return z (n); }" &&
	obj flat/z "int x (int); int z (int n) { return x (n); }" &&
	test_expect_code 1 sh "$LAYERS" flat/x.o flat/y.o flat/z.o >out &&
	grep -x "  cycle (3 objects): x y z " out &&
	sh "$LAYERS" -k "z x y" flat/x.o flat/y.o flat/z.o >out &&
	grep -x "  known cycle (3 objects): x y z " out &&
	test_expect_code 1 sh "$LAYERS" -k "x y" flat/x.o flat/y.o flat/z.o &&
	test_expect_code 1 sh "$LAYERS" -k "x y z" -k "p q" flat/x.o flat/y.o flat/z.o >out &&
	grep -x "  known cycle gone: p q (take it off the list)" out
'

test_expect_success 'a missing object is an error, not a pass' '
	test_expect_code 2 sh "$LAYERS" flat/x.o flat/none.o
'

test_expect_success 'the analyzer and the recorder as built: make layers' '
	make -s -C "$TOP" layers >out &&
	cat out &&
	grep -c "no upward call, no unknown cycle" out >n &&
	if [ "$BUILD_ANALYZER" = yes ]; then echo 2 >expect; else echo 1 >expect; fi &&
	test_cmp expect n
'

test_done
