#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4009-sites-auto-skip: in code without symbols, an allocation wrapper is
# found from the stacks (a small function, by its .eh_frame bounds, that
# allocates for several functions) and skipped in every output, and said;
# --no-auto-skip keeps it.  A function that allocates for one caller
# (make_table, dup_name) stays a leak site, and so does one called from
# several places of one function (an unrolled loop: t4005's new_port); a
# wrapper called through a thin one (xre__ through xre) is found by the
# callers of that one.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'wrappers found without symbols' 'needs the analyzer and the recorder'
	test_done; exit
fi
if ! command -v objcopy >/dev/null; then
	test_skip 'wrappers found without symbols' 'needs objcopy'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-nosym-wrappers.c"

# rows FILE: the block counts of the report's rows, sorted
rows() {
	grep -E "^ +[0-9]+ +[0-9]+  " "$1" | awk '{print $1}' | sort -n | tr "\n" " "
}

test_expect_success 'a stripped copy, recorded at depth 16; the names from its debug file' '
	cp "$HELPER/ana-nosym-wrappers" full &&
	objcopy --only-keep-debug full app.debug &&
	objcopy --strip-all full app &&
	! readelf -S app | grep -q "\.symtab" &&
	"$MTREC" -q -o t.log --depth 16 ./app &&
	id=$(readelf -n app | sed -n "s/.*Build ID: //p") && d=${id%"${id#??}"} &&
	mkdir -p dbg/.build-id/$d && mv app.debug dbg/.build-id/$d/${id#??}.debug &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --skip xalloc --skip "xre*" --debug-dir dbg t.log >named &&
	cat named &&
	grep -E "^ +4 +[0-9]+  make_table at $SRC:$(line_of LEAK-TABLE)" named &&
	grep -E "^ +5 +[0-9]+  dup_name at $SRC:$(line_of LEAK-DUP)" named
'

test_expect_success 'without symbols: xalloc and xre__ found and skipped, the eight leak sites kept' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 t.log >auto &&
	cat auto &&
	test "$(rows auto)" = "1 2 3 4 5 6 7 8 " &&
	test "$(rows named)" = "1 2 3 4 5 6 7 8 " &&
	grep -q "^Allocation wrappers found in code without symbols, skipped" auto &&
	test "$(grep -c "^  - 0x[0-9a-f]* in $OUT/app: [0-9]* bytes of code, called from 4 functions\$" auto)" = 1 &&
	test "$(grep -c "^  - 0x" auto)" = 3 &&
	! grep -q "^Most leaked blocks" auto
'

# lies_in FUNCTION: the found wrapper's offset (in $off) lies in FUNCTION
lies_in() {
	set -- $(nm -S full | grep " t $1\$") &&
	test $((off)) -ge $((0x$1)) && test $((off)) -lt $((0x$1 + 0x$2))
}

test_expect_success 'the wrappers found: xalloc, and the chain xre__, xre' '
	off=$(sed -n "s/^  - \(0x[0-9a-f]*\) in .*called from 4 functions\$/\1/p" auto) && lies_in xalloc &&
	for f in xre__ xre; do
		found=
		for off in $(sed -n "s/^  - \(0x[0-9a-f]*\) in .*/\1/p" auto); do
			lies_in $f && found=$off
		done
		test -n "$found" || exit 1
	done
'

test_expect_success '--no-auto-skip: xalloc and xre__ hold their callers'"'"' blocks' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --no-auto-skip t.log >off &&
	test "$(rows off)" = "4 11 21 " &&
	! grep -q "^Allocation wrappers found" off
'

test_expect_success PYTHON3 'JSON and diff see the same sites' '
	test_expect_code 1 "$MTANALYZE" --json t.log >t.json &&
	test "$(py "sorted(s[\"leaked_blocks\"] for s in d[\"leak_sites\"])" t.json)" = "[1, 2, 3, 4, 5, 6, 7, 8]" &&
	test "$(py "sorted(a[\"callers\"] for a in d[\"run\"][\"auto_skipped\"])" t.json)" = "[1, 3, 4]" &&
	test "$(py "sorted(a[\"callers_via\"] for a in d[\"run\"][\"auto_skipped\"])" t.json)" = "[3, 3, 4]" &&
	test_expect_code 1 "$MTANALYZE" --json --no-auto-skip t.log >off.json &&
	test "$(py "d[\"run\"][\"auto_skipped\"]" off.json)" = "[]" &&
	printf "= Start\n= End\n" >empty.log &&
	test_expect_code 1 "$MTANALYZE" diff empty.log t.log >d &&
	cat d &&
	test "$(grep -c "^  new " d)" = 8
'

# xre__ has one caller, xre: found through it (a thin one, called from
# three functions), which the line says -- "called from 1 functions" alone
# read as the rule's own exception.
test_expect_success 'a wrapper found through a thin one says so' '
	test "$(grep -c "^  - 0x[0-9a-f]* in $OUT/app: [0-9]* bytes of code, called from 1 function, and through that thin one from 3\$" auto)" = 1 &&
	! grep -q "called from 1 functions" auto
'

# the leak table's sites (the text of each row's last cell), and the list
# of wrappers found, from the page
test_expect_success PYTHON3 'HTML: the same eight sites, and the wrappers found named' '
	test_expect_code 1 "$MTANALYZE" --html t.html --frames 0 t.log >/dev/null &&
	cat >sites.py <<-\EOS &&
	import re, sys
	page = open(sys.argv[1]).read()
	table = re.search(r"<table[^>]*id=\"leak-sites\".*?</table>", page, re.S).group(0)
	rows = re.findall(r"<tr><td class=\"num\">\d+</td><td class=\"num\">(\d+)</td>", table)
	print(" ".join(sorted(rows, key=int)))
	sec = re.search(r"<section id=\"auto-skipped\">.*?</section>", page, re.S)
	print(len(re.findall(r"<li>0x[0-9a-f]+ in [^<]*bytes of code, called from", sec.group(0))) if sec else 0)
	EOS
	python3 sites.py t.html >html.facts &&
	cat html.facts &&
	test "$(sed -n 1p html.facts)" = "1 2 3 4 5 6 7 8" &&
	test "$(sed -n 2p html.facts)" = 3 &&
	test_expect_code 1 "$MTANALYZE" --html off.html --no-auto-skip --frames 0 t.log >/dev/null &&
	python3 sites.py off.html >off.facts &&
	test "$(cat off.facts)" = "$(printf "4 11 21\n0")"
'

test_lazy_prereq PPROF 'command -v go && HOME="$OUT" GOCACHE="$OUT/go-cache" go tool pprof -h'
test_expect_success PPROF 'pprof: the leaves are the eight sites, the wrappers found are comments' '
	export GOCACHE="$OUT/go-cache" HOME="$OUT" &&
	test_expect_code 1 "$MTANALYZE" --pprof t.pb.gz t.log >/dev/null &&
	go tool pprof -sample_index=inuse_objects -top t.pb.gz >top 2>&1 &&
	cat top &&
	test "$(grep -E "^ +[0-9]+ +[0-9.]+% .*app\+0x" top | awk "\$1 > 0 {print \$1}" | sort -n | tr "\n" " ")" = "1 2 3 4 5 6 7 8 " &&
	go tool pprof -comments t.pb.gz >comments 2>&1 &&
	cat comments &&
	test "$(grep -c "^allocation wrapper found without symbols, skipped: 0x[0-9a-f]* in $OUT/app: " comments)" = 3
'

test_expect_success 'a trace without stacks: nothing is found (no callers to count)' '
	"$MTREC" -q -o d1.log --depth 1 ./app &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 d1.log >d1 &&
	! grep -q "^Allocation wrappers found" d1
'

test_done
