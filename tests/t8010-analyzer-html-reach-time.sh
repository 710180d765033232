#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t8010-analyzer-html-reach-time: the --html page shows what the text
# report and --json know beyond the leaks: the blocks not freed by
# reachability (valgrind's LEAK SUMMARY) for the run and per site when the
# trace has the recorder's verdicts (mtrec --reach), the growth class of
# each leak site and how many sites grew each way, and a chart over
# seconds when the trace has the recorder's clock ('# time' lines), over
# trace lines when not; the tracked kinds (a pool's blocks not released,
# a count of references above zero) -- as headless Chromium shows the
# page (t8000's way), checked against --json.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v python3 >/dev/null; then
	test_skip 'html reach and time' 'needs the analyzer, the recorder and python3'
	test_done; exit
fi
FACTS="$TOP/tests/html-facts.py"

test_lazy_prereq CHROMIUM 'command -v chromium'
test_lazy_prereq TIDY 'command -v tidy'

browse() {
	chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
		--enable-logging=stderr --v=0 --dump-dom "file://$PWD/$1" >dom.html 2>browser.log &&
	! grep "CONSOLE" browser.log &&
	python3 "$FACTS" dom.html
}

test_expect_success 'record: a run with reachability verdicts, a timed run, one without the clock' '
	MTREC_REACH=1 MALLOC_TRACE="$PWD/reach.log" LD_PRELOAD="$LIBMTREC" "$HELPER/rec-reach" &&
	grep -q "^# reach end" reach.log &&
	"$MTREC" -o timed.log --depth 8 "$HELPER/ana-growth" 20000 13 2>/dev/null &&
	test "$(grep -c "^# time" timed.log)" -ge 8 &&
	"$MTREC" -o ours.log --depth 8 "$HELPER/ana-growth" 20000 2>/dev/null &&
	test "$(grep -c "^# time" ours.log)" -ge 2 &&
	grep -v "^# time" ours.log >short.log &&
	for t in reach timed short; do
		test_expect_code 1 "$MTANALYZE" --json $t.log >$t.json &&
		test_expect_code 1 "$MTANALYZE" --html $t.html $t.log >/dev/null || exit 1
	done
'

test_expect_success TIDY 'the pages pass tidy' '
	tidy -q -e reach.html && tidy -q -e timed.html
'

test_expect_success CHROMIUM 'the leak summary is --json'"'"'s reachability of the run' '
	browse reach.html >facts &&
	grep "^reach " facts >actual &&
	py "\"\\n\".join(\"reach %s %d %d\" % (k, v[\"bytes\"], v[\"blocks\"]) for k, v in d[\"reach\"].items() if v[\"blocks\"] or k != \"unknown\")" reach.json >expect &&
	test_cmp expect actual &&
	grep -x "reach definite [1-9][0-9]* [1-9][0-9]*" facts
'

test_expect_success CHROMIUM 'each leak site shows its blocks by reachability, as --json' '
	grep "^leak-reach " facts | sed "s/^leak-reach \([a-z_]*\) at [^:]*:[0-9]* in [^:]*: /\1: /" >actual &&
	py "\"\\n\".join(\"%s: %s\" % (s[\"function\"], \", \".join(\"%d %s (%d bytes)\" % (v[\"blocks\"], w, v[\"bytes\"]) for k, w in ((\"definite\", \"definitely lost\"), (\"indirect\", \"indirectly lost\"), (\"possible\", \"possibly lost\"), (\"reachable\", \"still reachable\"), (\"unknown\", \"not scanned\")) for v in [s[\"reach\"][k]] if v[\"blocks\"])) for s in d[\"leak_sites\"])" reach.json >expect &&
	test_cmp expect actual &&
	test -s actual
'

test_expect_success CHROMIUM 'no leak summary, no reachability column without verdicts' '
	browse timed.html >facts &&
	! grep "^reach \|^leak-reach " facts &&
	! grep "Reachability\|id=\"reach\"" timed.html
'

test_expect_success CHROMIUM 'growth: each site'"'"'s class and the count of each, as --json' '
	grep "^leak " facts | cut -d" " -f4,5 | sed "s/ at .*//" | sort >actual &&
	py "\"\\n\".join(\"%s %s\" % (s[\"growth\"], s[\"function\"]) for s in d[\"leak_sites\"])" timed.json | sort >expect &&
	test_cmp expect actual &&
	grep "^growth " facts | sort >actual &&
	py "\"\\n\".join(\"growth %s %d\" % (g, n) for g, n in sorted(__import__(\"collections\").Counter(s[\"growth\"] for s in d[\"leak_sites\"]).items()))" timed.json >expect &&
	test_cmp expect actual &&
	grep -x "growth linear 1" facts && grep -x "growth exponential 1" facts
'

test_expect_success 'a scan the recorder refused is said, as --by-site says it' '
	{ grep -v "^= End" short.log && echo "# reach refused no memory for the scan" && echo "= End"; } >refused.log &&
	test_expect_code 1 "$MTANALYZE" --by-site refused.log >refused.sites &&
	grep "did not make a reachability scan it was asked for: no memory for the scan\.\$" refused.sites &&
	test_expect_code 1 "$MTANALYZE" --html refused.html refused.log >/dev/null &&
	grep "<p class=\"warning\" id=\"reach-refused\">The recorder did not make a reachability scan it was asked for: no memory for the scan\.</p>" refused.html
'

test_expect_success CHROMIUM 'a timed run: the chart over seconds, the peak in seconds' '
	grep -x "axis time" facts &&
	grep -x "x-label seconds" facts &&
	end=$(py "d[\"run\"][\"timeline\"][\"times_ns\"][-1] / 1e9" timed.json) &&
	shown=$(sed -n "s/^summary seconds //p" facts) &&
	python3 -c "import sys; a, b = map(float, sys.argv[1:]); assert abs(a - b) < 0.002 and a > 0.5, (a, b)" "$end" "$shown" &&
	grep "<title>peak: [0-9]* bytes at [0-9.]* s</title>" timed.html
'

test_expect_success CHROMIUM 'tracked kinds and refcounts: what --json has, as the page shows it' '
	"$MTREC" -q -o kinds.log --depth 8 "$HELPER/rec-kinds-api" 50 &&
	test_expect_code 1 "$MTANALYZE" --json kinds.log >kinds.json &&
	test_expect_code 1 "$MTANALYZE" --html kinds.html kinds.log >/dev/null &&
	browse kinds.html >/dev/null &&
	python3 "$TOP/tests/html-kinds.py" dom.html kinds.json >facts.kinds &&
	sed -n "s/^page //p" facts.kinds >actual &&
	sed -n "s/^json //p" facts.kinds >expect &&
	cat actual &&
	test_cmp expect actual &&
	grep -x "not-released pool 4 192 pool_get" actual &&
	grep -x "refgroup 1 1 0x[0-9a-f]*" actual
'

# rec-reach's peak is its last allocation, between the last two samples
# (a sample is what was live before its line): the run's curve went up to
# the end of the run in a slope, below the peak's marker.
test_expect_success CHROMIUM 'the run'"'"'s curve passes through the peak at the marker' '
	browse reach.html >/dev/null &&
	py "d[\"run\"][\"peak_live_bytes\"]" reach.json >peak &&
	python3 -c "
import re
dom = open (\"dom.html\").read ()
mx = float (re.search (r\"<line class=.marker. x1=.([0-9.]+).\", dom).group (1))
s0 = re.search (r\"<polyline class=.series s0. data-max=.([0-9]+). points=.([^\\\"]*).\", dom)
pts = [tuple (map (float, p.split (\",\"))) for p in s0.group (2).split ()]
top = min (y for x, y in pts)
assert int (s0.group (1)) == int (open (\"peak\").read ()), (s0.group (1), open (\"peak\").read ())
assert any (x == mx and y == top for x, y in pts), (mx, top, pts)
"
'

# A run of a hundredth of a second: with two decimals its ticks were
# 0.00 0.00 0.01.
test_expect_success CHROMIUM 'a short timed run: three ticks in seconds, apart, the last its end' '
	"$MTREC" -o quick.log --depth 8 "$HELPER/ana-growth" 2000 2>/dev/null &&
	test_expect_code 1 "$MTANALYZE" --json quick.log >quick.json &&
	test_expect_code 1 "$MTANALYZE" --html quick.html quick.log >/dev/null &&
	browse quick.html >facts &&
	grep -x "axis time" facts &&
	sed -n "s/^x-tick //p" facts >ticks &&
	cat ticks &&
	py "\"%.9f %.9f\" % (d[\"run\"][\"timeline\"][\"times_ns\"][0] / 1e9, d[\"run\"][\"timeline\"][\"times_ns\"][-1] / 1e9)" quick.json >span &&
	python3 -c "
import sys
t = [float (x) for x in open (\"ticks\").read ().split ()]
a, b = map (float, open (\"span\").read ().split ())
assert b - a < 0.1, (a, b)
assert len (t) == 3 and t[0] < t[1] < t[2], t
for v, w in zip (t, (a, (a + b) / 2, b)):
    assert abs (v - w) <= (b - a) / 2 * 0.1, (t, a, b)
"
'

test_expect_success CHROMIUM 'a trace without the recorder'"'"'s clock (as glibc'"'"'s): the chart over trace lines, and why' '
	browse short.html >facts &&
	grep -x "axis lines" facts &&
	grep -x "x-label trace line" facts &&
	! grep "^summary seconds" facts &&
	grep "fewer than 2 of the recorder" short.html
'

test_expect_success CHROMIUM 'a screenshot for review (tests/out)' '
	chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1000,1400 \
		--screenshot="$PWD/reach.png" "file://$PWD/reach.html" 2>browser.log &&
	chromium --headless --disable-gpu --no-sandbox --hide-scrollbars --window-size=1000,1400 \
		--screenshot="$PWD/timed.png" "file://$PWD/timed.html" 2>browser.log &&
	test "$(head -c 8 timed.png | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a
'

test_done
