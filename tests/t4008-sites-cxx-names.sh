#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4008-sites-cxx-names: C++ names are demangled in every output but the
# plain one (shop::Cart::add(int), not _ZN4shop4Cart3addEi), and the
# wrapper list and --skip match a function by either spelling: a list
# with only the mangled or only the demangled operator new skips it.
. "$(dirname "$0")/lib.sh"

CXX=${CXX:-g++}
if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'C++ names' 'needs the analyzer and the recorder'
	test_done; exit
fi
if ! command -v "$CXX" >/dev/null; then
	test_skip 'C++ names' "needs a C++ compiler ($CXX)"
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-cxx-cart.cpp"
ADD="shop::Cart::add(int) at $SRC:$(line_of LEAK-ADD)"

test_expect_success 'a C++ program leaking in shop::Cart::add(int), at depth 16' '
	$CXX -O1 -g -o cart "$SRC" &&
	nm cart | grep -q " T _ZN4shop4Cart3addEi$" &&
	"$MTREC" -o c.log --depth 16 ./cart
'

test_expect_success '--by-site: the demangled name, operator new skipped' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 c.log >site &&
	cat site &&
	grep -E "^ +3 +48  shop::Cart::add\(int\) at $SRC:$(line_of LEAK-ADD) in " site &&
	! grep -q "_ZN" site &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --no-skip c.log >noskip &&
	grep -E "^ +3 +48  operator new\(unsigned long\) in " noskip
'

test_expect_success PYTHON3 '--json, --html and diff: demangled too' '
	test_expect_code 1 "$MTANALYZE" --json c.log >c.json &&
	py "[s[\"function\"] for s in d[\"leak_sites\"]]" c.json | grep -F "shop::Cart::add(int)" &&
	test_expect_code 1 "$MTANALYZE" --by-site --html c.html c.log >/dev/null &&
	grep -q "shop::Cart::add(int)" c.html &&
	printf "= Start\n= End\n" >empty.log &&
	test_expect_code 1 "$MTANALYZE" diff empty.log c.log >d &&
	grep -qF "$ADD" d &&
	! grep -q "_ZN" c.json d
'

test_expect_success SQLITE3 '--db and --folded: demangled too' '
	test_expect_code 1 "$MTANALYZE" --db c.db c.log >/dev/null &&
	sqlite3 c.db "SELECT function FROM sites" >db.functions &&
	grep -qxF "shop::Cart::add(int)" db.functions &&
	! grep -q "^_Z" db.functions &&
	test_expect_code 1 "$MTANALYZE" --folded c.log >c.folded &&
	grep -qF ";shop::Cart::add(int) (ana-cxx-cart.cpp:$(line_of LEAK-ADD)) 48" c.folded &&
	! grep -q "_ZN" c.folded
'

test_expect_success 'the plain report is what the script prints: no names added' '
	test_expect_code 1 "$MTANALYZE" c.log >plain &&
	! grep -q "shop::" plain
'

test_expect_success '--skip takes either spelling' '
	for skip in _ZN4shop4Cart3addEi "shop::Cart::add*"; do
		test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --skip "$skip" c.log >k &&
		grep -E "^ +3 +48  main at $SRC:" k || exit 1
	done
'

test_expect_success 'a wrapper list with only the mangled, or only the demangled, operator new' '
	mkdir data &&
	for w in _Znwm "operator new(unsigned long)"; do
		printf "%s\n" "$w" >data/wrappers.txt &&
		MTA_PKGDATADIR=$PWD/data test_expect_code 1 "$MTANALYZE" --by-site --frames 0 c.log >w &&
		grep -E "^ +3 +48  shop::Cart::add\(int\) at " w || exit 1
	done &&
	printf "malloc\n" >data/wrappers.txt &&
	MTA_PKGDATADIR=$PWD/data test_expect_code 1 "$MTANALYZE" --by-site --frames 0 c.log >w &&
	grep -E "^ +3 +48  operator new\(unsigned long\) in " w
'

test_done
