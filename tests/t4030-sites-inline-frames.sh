#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4030-sites-inline-frames: code the compiler inlined is charged to the
# right line (issue 11.1).  The -O2 fixture's xmalloc wrapper is inlined
# into cache_put, and cache_put into worker, with gcc and with clang
# (addr2line -i says so): the inlined wrapper is skipped like a called
# one and the leak lands on cache_put's line, with or without stacks, in
# --by-site, --json, --db, --folded and diff; the plain report stays what
# the mtrace script prints; without debug information the report falls
# back to the function that holds the code.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'inline frames' 'needs the analyzer and the recorder'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-inline.c"
PUT=$(line_of LEAK-PUT)
CALL=$(line_of PUT-CALL)
DIRECT=$(line_of LEAK-DIRECT)

XMALLOC=$(line_of XMALLOC-CALL)

test_lazy_prereq SQLITE3 'command -v sqlite3'
test_lazy_prereq PYTHON3 'command -v python3'
test_lazy_prereq STRIP 'command -v strip'

# The gcc build: the Makefile's helper (-O2 -g) when $CC is gcc.
if readelf -p .comment "$TOP/tests/helper/ana-inline" 2>/dev/null | grep -q "GCC:" &&
   ! readelf -p .comment "$TOP/tests/helper/ana-inline" | grep -q clang; then
	cp "$TOP/tests/helper/ana-inline" gcc-app
elif command -v gcc >/dev/null; then
	gcc -O2 -g -o gcc-app "$SRC"
fi
CLANG_CC=${CLANG:-clang}
command -v "$CLANG_CC" >/dev/null && "$CLANG_CC" -O2 -g -o clang-app "$SRC"

# row BLOCKS FUNCTION LINE FILE: a row of the report, BLOCKS blocks charged
# to FUNCTION at the fixture's LINE
row() {
	grep -E "^ +$1 +[0-9]+  $2 at $SRC:$3 in " "$4"
}

inline_tests() {
	cc=$1 app=$OUT/$1-app

	test_expect_success "$cc: addr2line -i sees malloc called in xmalloc <- cache_put <- worker" '
		"$MTREC" -o $cc.log --depth 16 "$app" &&
		"$MTREC" -o $cc-6.log --depth 16 "$app" 6 &&
		"$MTREC" -o $cc-flat.log "$app" &&
		grep -q "^# stack" $cc.log && ! grep -q " s=[0-9]" $cc-flat.log &&
		rel=$(sed -n "s/^@ .*:\[\(0x[0-9a-f]*\)\] + 0x[0-9a-f]* 0x10 s=.*/\1/p" $cc.log | sort -u) &&
		test $(echo "$rel" | wc -l) = 1 &&
		addr2line -i -f -e "$app" $(printf "0x%x" $((rel - 1))) >a2l &&
		cat a2l &&
		sed -n "1p;3p;5p" a2l | tr "\n" " " >names &&
		test "$(cat names)" = "xmalloc cache_put worker " &&
		test "$(sed -n 4p a2l)" = "$SRC:$PUT" &&
		test "$(sed -n 6p a2l)" = "$SRC:$CALL"
	'

	test_expect_success "$cc: the 3 leaks of the inlined cache_put are charged to its line, not worker's" '
		test_expect_code 1 "$MTANALYZE" --by-site --frames 1 $cc.log >out &&
		cat out &&
		row 3 cache_put $PUT out &&
		grep -A1 -E "  cache_put at $SRC:$PUT in " out | grep -q "called from worker at $SRC:$CALL in " &&
		row 2 worker $DIRECT out &&
		test $(grep -c -E "^ +[0-9]+ +[0-9]+  " out) = 3 &&
		! grep -q "xmalloc" out
	'

	test_expect_success "$cc: a wrapper's helper inlined into it is skipped with it" '
		test_expect_code 1 "$MTANALYZE" --by-site --no-skip --frames 0 $cc.log >noskip-all &&
		row 1 do_alloc $(line_of DO-ALLOC-CALL) noskip-all &&
		row 1 main $(line_of LEAK-DUP) out &&
		! grep -q -e do_alloc -e xstrdup out
	'

	test_expect_success "$cc: without stacks, the caller field alone is charged the same way" '
		test_expect_code 1 "$MTANALYZE" --by-site $cc-flat.log >flat &&
		row 3 cache_put $PUT flat &&
		row 2 worker $DIRECT flat
	'

	test_expect_success "$cc: --no-skip charges them to the inlined xmalloc" '
		test_expect_code 1 "$MTANALYZE" --by-site --no-skip --frames 0 $cc.log >noskip &&
		row 5 xmalloc $XMALLOC noskip
	'

	test_expect_success PYTHON3 "$cc: --json says which frames were inlined" '
		test_expect_code 1 "$MTANALYZE" --json --frames 2 $cc.log >out.json &&
		py "[(s[\"function\"], s[\"line\"], s[\"inlined\"], s[\"leaked_blocks\"]) for s in d[\"leak_sites\"] if s[\"function\"] == \"cache_put\"]" out.json >actual &&
		echo "[(${SQ}cache_put${SQ}, $PUT, True, 3)]" >expect &&
		test_cmp expect actual &&
		py "[(st[\"inlined\"], st[\"frames\"][0][\"function\"], st[\"frames\"][0][\"line\"], st[\"frames\"][0][\"inlined\"], st[\"frames\"][1][\"function\"]) for s in d[\"leak_sites\"] if s[\"function\"] == \"cache_put\" for st in s[\"stacks\"]]" out.json >actual &&
		echo "[(True, ${SQ}worker${SQ}, $CALL, False, ${SQ}main${SQ})]" >expect &&
		test_cmp expect actual
	'

	test_expect_success SQLITE3 "$cc: --db: xmalloc, cache_put and worker are three levels at one address" '
		test_expect_code 1 "$MTANALYZE" --db $cc.db $cc.log 2>/dev/null &&
		q $cc.db "SELECT f.level, f.charged, f.function, f.location, f.inlined, f.address = g.address
			FROM stack_frames f JOIN stack_frames g ON g.stack_id = f.stack_id AND g.level = 0
			WHERE f.stack_id = (SELECT stack_id FROM stack_frames WHERE function = ${SQ}cache_put${SQ})
			AND f.level < 4 ORDER BY f.level" >actual &&
		cat >expect <<-EOF &&
		0|0|xmalloc|$SRC:$XMALLOC|1|1
		1|1|cache_put|$SRC:$PUT|1|1
		2|0|worker|$SRC:$CALL|0|1
		3|0|main|$SRC:$(line_of WORKER-CALL)|0|0
		EOF
		test_cmp expect actual
	'

	test_expect_success "$cc: --folded stacks pass through the inlined frames" '
		test_expect_code 1 "$MTANALYZE" --folded $cc.log >folded &&
		grep -q ";worker (ana-inline.c:$CALL);cache_put (ana-inline.c:$PUT) 48$" folded
	'

	test_expect_success "$cc: diff keys the inlined site: cache_put grew 3 -> 6, worker did not change" '
		test_expect_code 1 "$MTANALYZE" diff $cc.log $cc-6.log >diff &&
		cat diff &&
		grep -q -E "^  grew +3 -> 6 \(\+3\) .*  cache_put at $SRC:$PUT in " diff &&
		! grep -q "  worker at" diff
	'

	test_expect_success MTRACE "$cc: the plain report is what /usr/bin/mtrace prints" '
		same_as_mtrace "$app" $cc.log -- "$app" $cc.log &&
		same_as_mtrace "$app" $cc-flat.log -- "$app" $cc-flat.log
	'

	test_expect_success STRIP "$cc: stripped, nothing to say which code was inlined: the function that holds it" '
		strip --strip-debug -o $cc-nodebug "$app" &&
		"$MTREC" -o $cc-nodebug.log --depth 16 ./$cc-nodebug &&
		test_expect_code 1 "$MTANALYZE" --by-site --frames 0 $cc-nodebug.log >nodebug &&
		grep -q -E "^ +5 +97  worker in " nodebug &&
		strip --strip-all -o $cc-stripped "$app" &&
		"$MTREC" -o $cc-stripped.log --depth 16 ./$cc-stripped &&
		test_expect_code 1 "$MTANALYZE" --by-site --frames 0 $cc-stripped.log >stripped &&
		grep -E "^ +[0-9]+ +[0-9]+  0x[0-9a-f]+ in .*$cc-stripped" stripped &&
		test_expect_code 1 "$MTANALYZE" --json $cc-stripped.log >/dev/null &&
		same_as_mtrace ./$cc-stripped $cc-stripped.log -- ./$cc-stripped $cc-stripped.log
	'
}

SQ="'"
if [ -x gcc-app ]; then
	inline_tests gcc
else
	test_skip 'gcc: inline frames' 'gcc is not installed'
fi
if [ -x clang-app ]; then
	inline_tests clang
else
	test_skip 'clang: inline frames' "no clang here ('$CLANG_CC' not found): the clang build is not tested"
fi

test_expect_success SQLITE3 'a version 3 database gets frames.inlined at its next load' '
	log=$(ls *.log | head -n 1) &&
	test_expect_code 1 "$MTANALYZE" --db v3.db $log >/dev/null 2>&1 &&
	sqlite3 v3.db "DROP VIEW stack_frames; ALTER TABLE frames DROP COLUMN inlined;
		CREATE VIEW stack_frames AS SELECT stack_id FROM frames; PRAGMA user_version = 3" &&
	test_expect_code 1 "$MTANALYZE" --db v3.db $log >out 2>/dev/null &&
	grep -q "^run 2 loaded" out &&
	test "$(sqlite3 v3.db "PRAGMA user_version")" = 8 &&
	q v3.db "SELECT DISTINCT st.run_id, f.inlined IS NULL FROM stack_frames f
		JOIN stacks st ON st.id = f.stack_id ORDER BY 1" | tr "\n" " " >actual &&
	test "$(cat actual)" = "1|1 2|0 "
'

test_done
