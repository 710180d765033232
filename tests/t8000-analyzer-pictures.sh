#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t8000-analyzer-pictures: --folded prints the fixture's leaks as folded
# stacks with their byte counts, and --html writes one page that opens
# offline in a real browser (headless Chromium) without a console error,
# shows the numbers --json gives, and passes tidy (share/pictures.md).
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'pictures' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-wrappers.c"
APP="$TOP/tests/helper/ana-wrappers"
FACTS="$TOP/tests/html-facts.py"

test_lazy_prereq CHROMIUM 'command -v chromium'
test_lazy_prereq TIDY 'command -v tidy'

# browse PAGE[#FRAGMENT]: the DOM after the page's script ran, in dom.html;
# Chromium's log (console messages are "CONSOLE" lines) in browser.log.
browse() {
	chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
		--enable-logging=stderr --v=0 --dump-dom "file://$PWD/$1" >dom.html 2>browser.log
}

test_expect_success 'record the fixture' '
	"$MTREC" -o deep.log --depth 16 "$APP" &&
	"$MTREC" -o none.log --depth 16 "$APP" free &&
	test_expect_code 1 "$MTANALYZE" --json deep.log >run.json
'

# ------------------------------------------------------------ folded

test_expect_success '--folded: the known leaks, in bytes, exit 1' '
	test_expect_code 1 "$MTANALYZE" --folded deep.log >folded &&
	sed "s/.*;//" folded | sort >actual &&
	{ echo "load_config (ana-wrappers.c:$(line_of LEAK-A)) 100"
	  echo "main (ana-wrappers.c:$(line_of LEAK-C)) 21"
	  echo "main (ana-wrappers.c:$(line_of LEAK-DUP)) 20"
	  echo "parse_args (ana-wrappers.c:$(line_of LEAK-B)) 40"
	  echo "pool_get (ana-wrappers.c:$(line_of POOL-CALL)) 50"; } | sort >expect &&
	test_cmp expect actual
'

test_expect_success '--folded: outermost first, wrappers skipped, one stack a line' '
	head -n 1 folded | grep "^_start .*;__libc_start_main .*;main (ana-wrappers.c:[0-9]*);load_config (" &&
	! grep "xmalloc\|malloc (" folded &&
	# the format flamegraph.pl reads: frames without spaces around ";", a count
	python3 -c "
import re, sys
for l in open(sys.argv[1]):
    assert re.match(r\"^[^;\\n]+(;[^;\\n]+)* [0-9]+\\n\$\", l), l
" folded &&
	test "$(awk "{ s += \$NF } END { print s }" folded)" = "$(py "d[\"run\"][\"leaked_bytes\"]" run.json)"
'

test_expect_success '--folded-count=blocks; allocated, peak and temporary sum to the run'"'"'s' '
	test_expect_code 1 "$MTANALYZE" --folded --folded-count=blocks deep.log >blocks &&
	test "$(sed "s/.*;//" blocks | grep "^parse_args" | sed "s/.* //")" = 2 &&
	test "$(awk "{ s += \$NF } END { print s }" blocks)" = "$(py "d[\"run\"][\"leaked_blocks\"]" run.json)" &&
	for w in allocated:bytes_allocated peak:peak_live_bytes temporary:temporary_allocations; do
		test_expect_code 1 "$MTANALYZE" --folded=${w%%:*} deep.log >f.$$ &&
		test "$(awk "{ s += \$NF } END { print s }" f.$$)" = "$(py "d[\"run\"][\"${w#*:}\"]" run.json)" ||
			{ echo "${w%%:*}"; exit 1; }
	done
'

test_expect_success '--folded without leaks: nothing, exit 0' '
	"$MTANALYZE" --folded none.log >empty &&
	test_must_be_empty empty
'

test_expect_success '--folded usage errors are status 2, one line' '
	test_expect_code 2 "$MTANALYZE" --folded=bogus deep.log 2>err &&
	grep "takes leaked, allocated, peak or temporary, not .bogus." err &&
	test_expect_code 2 "$MTANALYZE" --folded-count=blocks deep.log 2>err &&
	grep "needs --folded" err &&
	test_expect_code 2 "$MTANALYZE" --folded=peak --folded-count=blocks deep.log 2>err &&
	test_expect_code 2 "$MTANALYZE" --folded --json deep.log >out 2>err &&
	test_must_be_empty out
'

# ------------------------------------------------------------ html

test_expect_success '--html alone writes the file and prints one line naming it' '
	test_expect_code 1 "$MTANALYZE" --html report.html deep.log >out &&
	echo "report written to '"'"'report.html'"'"': 8 leaked blocks, 231 bytes, 0 bad frees" >expect &&
	test_cmp expect out &&
	test -s report.html &&
	! ls report.html.* 2>/dev/null &&
	"$MTANALYZE" --html clean.html none.log >out &&
	grep "0 leaked blocks" out
'

test_expect_success '--html with --json: stdout is the JSON, the file the same run' '
	test_expect_code 1 "$MTANALYZE" --json --html both.html deep.log >both.json &&
	test "$(py "d[\"run\"][\"leaked_bytes\"]" both.json)" = 231 &&
	test -s both.html
'

test_expect_success 'an --html file that cannot be written: status 2, no file, nothing printed' '
	test_expect_code 2 "$MTANALYZE" --html nodir/r.html deep.log >out 2>err &&
	test_must_be_empty out &&
	echo "mtanalyze: cannot write '"'"'nodir/r.html'"'"': No such file or directory" >expect &&
	test_cmp expect err &&
	mkdir isdir &&
	test_expect_code 2 "$MTANALYZE" --html isdir deep.log >out 2>err &&
	grep "cannot write .isdir." err &&
	test_must_be_empty out &&
	! ls isdir.* 2>/dev/null
'

test_expect_success 'the page is self-contained and small' '
	! grep -i -E "(src|href)=|@import|url\(" report.html &&
	! grep -o "https\?://[^\"]*" report.html | grep -v "^http://www.w3.org/2000/svg$" &&
	test $(wc -c <report.html) -lt 100000
'

test_expect_success TIDY 'the page passes tidy without a warning' '
	tidy -q -e report.html &&
	tidy -q -e clean.html
'

test_expect_success CHROMIUM 'Chromium opens the page without a console message' '
	browse "report.html#search=load_config" &&
	! grep "CONSOLE" browser.log &&
	python3 "$FACTS" dom.html >facts &&
	grep "^flame-boxes [1-9]" facts
'

test_expect_success CHROMIUM 'the summary shows the numbers of --json' '
	for f in leaked_blocks leaked_bytes bad_frees peak_live_bytes allocations frees \
		bytes_allocated temporary_allocations events lines; do
		grep -x "summary $f $(py "d[\"run\"][\"$f\"]" run.json)" facts || { echo "$f"; exit 1; }
	done
'

test_expect_success CHROMIUM 'the leak table is --json'"'"'s leak sites, with their stacks' '
	grep "^leak " facts | sed "s/ at .*:\([0-9]*\) in .*/ \1/" >actual &&
	py "\"\\n\".join(\"leak %d %d %s %s %d\" % (s[\"leaked_blocks\"], s[\"leaked_bytes\"], s[\"growth\"], s[\"function\"], s[\"line\"]) for s in d[\"leak_sites\"])" run.json >expect &&
	test_cmp expect actual &&
	grep -x "stacks 5" facts
'

test_expect_success CHROMIUM 'the chart draws the run and the largest leak sites over time' '
	grep "^series " facts >series &&
	test $(wc -l <series) = 6 &&
	all=$(sed -n 1p series | cut -d" " -f3) &&
	test "$all" -ge "$(py "d[\"run\"][\"leaked_bytes\"]" run.json)" &&
	test "$all" -le "$(py "d[\"run\"][\"peak_live_bytes\"]" run.json)" &&
	py "\"\\n\".join(\"series s%d %d\" % (k + 1, max(s[\"live_bytes_over_time\"])) for k, s in enumerate(d[\"leak_sites\"]))" run.json >expect &&
	sed 1d series >actual &&
	test_cmp expect actual
'

test_expect_success CHROMIUM 'the flame graph holds the leaked bytes; its search finds a leak' '
	grep -x "flame-root 231" facts &&
	grep -x "flame-matched 100" facts &&
	browse "report.html#search=parse_args" &&
	python3 "$FACTS" dom.html | grep -x "flame-matched 40"
'

# clicked PAGE: the page with tests/html-clicks.js run after its own script,
# which clicks the leak table's headers and the flame graph's boxes through
# the page's handlers; what the page then showed, in clicks.
clicked() {
	python3 -c "
import sys
s = open(sys.argv[1]).read()
i = s.rindex(\"</body>\")
open(\"clicked.html\", \"w\").write(s[:i] + \"<script>\\n\" + open(sys.argv[2]).read() + \"</script>\\n\" + s[i:])
" "$1" "$TOP/tests/html-clicks.js" &&
	browse clicked.html &&
	! grep "CONSOLE" browser.log &&
	python3 -c "
import html, re, sys
print(html.unescape(re.findall(r\"<pre id=.clicks.>(.*?)</pre>\", open(sys.argv[1]).read(), re.S)[-1]), end=\"\")
" dom.html >clicks
}

test_expect_success CHROMIUM 'clicks sort the leak table and zoom the flame graph' '
	clicked report.html &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sites = d[\"leak_sites\"]
by = sorted(s[\"leaked_bytes\"] for s in sites)
print(\"sort Bytes descending \" + \",\".join(map(str, by[::-1])))
print(\"sort Bytes ascending \" + \",\".join(map(str, by)))
names = [\"%s at %s:%d in %s\" % (s[\"function\"], s[\"file\"], s[\"line\"], s[\"object\"]) for s in sites]
print(\"sort Site ascending \" + \",\".join(sorted(names, key=str.lower)))
stacks = []
for l in open(sys.argv[2]):
    st, n = l.rsplit(\" \", 1)
    stacks.append((st.split(\";\"), int(n)))
def value(prefix):
    return sum(n for st, n in stacks if st[:len(prefix)] == prefix)
st = [st for st, n in stacks if st[-1].startswith(\"parse_args \")][0]
i = len(st) - 1
print(\"zoom %d full 0\" % d[\"run\"][\"leaked_bytes\"])
print(\"zoom %d full %d\" % (value(st), i + 1))
print(\"zoom %d full %d\" % (value(st[:i]), i))
print(\"zoom %d full 0\" % d[\"run\"][\"leaked_bytes\"])
print(\"matched %d\" % sum(n for st, n in stacks if any(f.startswith(\"load_config \") for f in st)))
" run.json folded >expect &&
	test_cmp expect clicks
'

test_expect_success CHROMIUM 'a page without leaks opens cleanly too' '
	browse clean.html &&
	! grep "CONSOLE" browser.log &&
	grep "No memory leaks" dom.html
'

test_expect_success CHROMIUM 'a screenshot for review (tests/out)' '
	chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=900,1000 \
		--screenshot="$PWD/report.png" "file://$PWD/report.html" 2>browser.log &&
	test "$(head -c 8 report.png | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a
'

test_expect_success 'diff --html: one line, the new sites, their curves; exit 1' '
	test_expect_code 1 "$MTANALYZE" diff --html diff.html none.log deep.log >out &&
	echo "comparison written to '"'"'diff.html'"'"': 5 sites new or grown in FEATURE" >expect &&
	test_cmp expect out &&
	test_expect_code 1 "$MTANALYZE" diff --json none.log deep.log >diff.json &&
	test_expect_code 2 "$MTANALYZE" diff --html nodir/d.html none.log deep.log >out 2>err &&
	test_must_be_empty out &&
	grep "cannot write .nodir/d.html." err
'

test_expect_success TIDY 'the diff page passes tidy' '
	tidy -q -e diff.html
'

test_expect_success CHROMIUM 'Chromium shows the diff page: changes of --json, curves' '
	browse diff.html &&
	! grep "CONSOLE" browser.log &&
	python3 "$FACTS" dom.html >facts &&
	grep "^change " facts | sed "s/ at .*:\([0-9]*\) in .*/ \1/" >actual &&
	py "\"\\n\".join(\"change %s %s %d\" % (c[\"change\"], c[\"function\"], c[\"line\"]) for c in d[\"new_or_grown\"])" diff.json >expect &&
	test_cmp expect actual &&
	test "$(grep -c "^series s0 " facts)" = 5 &&
	grep -x "series s0 100" facts
'

test_done
