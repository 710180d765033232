#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4040-pprof-profile: --pprof FILE writes the run as a gzip-compressed
# profile.proto that go tool pprof reads (issue 31.2): the four sample
# types, totals equal to the report's (blocks and bytes not freed, every
# allocation), the site the report charges as the leaf (wrappers skipped),
# code inlined by the compiler as lines of one location, the objects as
# mappings with their build-ids, the kinds of tracked allocators as a
# "kind" label; and an unwritable FILE is an error that writes nothing.
# Fixtures: tests/helper/ana-inline.c (-O2, an inlined wrapper),
# tests/helper/rec-kinds-api.c (a pool and references through mtrec.h).
. "$(dirname "$0")/lib.sh"
SRC="$TOP/tests/helper/ana-inline.c"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'pprof profiles' 'needs the analyzer and the recorder'
	test_done; exit
fi
if ! command -v go >/dev/null || ! go tool pprof -h >/dev/null 2>&1; then
	test_skip 'pprof profiles' "needs 'go tool pprof' (Debian's golang-go) to read them"
	test_done; exit
fi
export GOCACHE="$OUT/go-cache" HOME="$OUT"

# total SAMPLE_INDEX FILE: the total go tool pprof gives for the index
# (-unit=byte: bytes as bytes, not kB; counts then print as "8byte").
total() {
	go tool pprof -sample_index="$1" -unit=byte -top "$2" 2>/dev/null |
		sed -n 's/^Showing nodes accounting for [^,]*, [0-9.]*% of \([0-9]*\)\(B\|byte\)* total$/\1/p'
}

# json_total KEY FILE: the run's KEY in mtanalyze's JSON report
json_total() {
	py "d['run']['$1']" "$2"
}

test_expect_success 'a run with stacks: go tool pprof reads it, totals are the report'"'"'s' '
	"$MTREC" -q --depth 16 -o inl.log "$HELPER/ana-inline" 5 &&
	test_expect_code 1 "$MTANALYZE" --pprof inl.pb.gz inl.log >out 2>err &&
	cat out err &&
	grep "^report written to .inl.pb.gz.: " out &&
	gzip -t inl.pb.gz &&
	test_expect_code 1 "$MTANALYZE" --json inl.log >inl.json &&
	blocks=$(json_total leaked_blocks inl.json) && bytes=$(json_total leaked_bytes inl.json) &&
	allocs=$(json_total allocations inl.json) &&
	say "report: $blocks blocks, $bytes bytes not freed, $allocs allocations" &&
	test "$(total inuse_space inl.pb.gz)" = "$bytes" &&
	test "$(total inuse_objects inl.pb.gz)" = "$blocks" &&
	test "$(total alloc_objects inl.pb.gz)" = "$allocs" &&
	test "$(total alloc_space inl.pb.gz)" = "$(json_total bytes_allocated inl.json)"
'

test_expect_success 'the sample types, the leaf is the site charged, the wrapper is not in it' '
	go tool pprof -raw inl.pb.gz >raw 2>&1 &&
	grep "^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]" raw &&
	go tool pprof -top -unit=byte inl.pb.gz >top 2>&1 &&
	cat top &&
	grep -E "^ +[0-9]+B +[0-9.]+% .* cache_put( \(inline\))?$" top &&
	! grep " xmalloc$" top
'

test_expect_success 'inlined code: the inlined function and its caller are lines of one location' '
	sed -n "/^Locations/,/^Mappings/p" raw >locs &&
	cat locs &&
	grep -A1 -E "^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ cache_put .*ana-inline.c:$(line_of LEAK-PUT) " locs >loc &&
	grep -E "^ +worker .*ana-inline.c:$(line_of PUT-CALL) " loc
'

test_expect_success 'the program is a mapping with its build-id' '
	id=$(readelf -n "$HELPER/ana-inline" | sed -n "s/.*Build ID: //p") &&
	test -n "$id" &&
	sed -n "/^Mappings/,\$p" raw >maps &&
	cat maps &&
	grep " $HELPER/ana-inline $id " maps
'

test_expect_success 'tracked allocators: their leaks are samples labelled with the kind' '
	"$MTREC" -q --depth 8 -o kinds.log "$HELPER/rec-kinds-api" 50 &&
	test_expect_code 1 "$MTANALYZE" --pprof kinds.pb.gz kinds.log >out &&
	go tool pprof -traces -tagfocus=kind=pool kinds.pb.gz >pool 2>&1 &&
	cat pool &&
	grep -E "^ +kind: +pool$" pool &&
	! grep -E "^ +kind: +malloc$" pool &&
	go tool pprof -traces -tagfocus=kind=malloc kinds.pb.gz >malloc 2>&1 &&
	grep -E "^ +kind: +malloc$" malloc
'

test_lazy_prereq CHROMIUM 'command -v chromium'

# serve FILE: go tool pprof -http on a free port of the loopback, its pid
# in pprof.pid, its address in pprof.url once its page answers (it exits
# on an unreadable profile: then no pprof.url).
serve() {
	port=$(python3 -c "import socket; s = socket.socket (); s.bind ((\"127.0.0.1\", 0)); print (s.getsockname ()[1])") &&
	{ go tool pprof -http=127.0.0.1:$port -no_browser -unit=byte "$1" >http.out 2>&1 & echo $! >pprof.pid; } &&
	python3 - "$port" "$(cat pprof.pid)" <<-\EOF
	import os, sys, time, urllib.request
	url = "http://127.0.0.1:%s" % sys.argv[1]
	for _ in range (1200):
	    try:
	        open ("top.html", "wb").write (urllib.request.urlopen (url + "/ui/top", timeout=5).read ())
	        open ("pprof.url", "w").write (url)
	        break
	    except OSError:
	        try:
	            os.kill (int (sys.argv[2]), 0)
	        except OSError:
	            break
	        time.sleep (0.1)
	EOF
}

# stop: the server serve started, whatever became of what ran meanwhile
stop() {
	kill "$(cat pprof.pid)" 2>/dev/null
	return 0
}

# browse PATH: the DOM of the server's page PATH after its script ran
browse() {
	st=0
	chromium --headless --disable-gpu --no-sandbox --no-first-run --disable-extensions \
		--dump-dom "$(cat pprof.url)$1" >dom.html 2>browser.log || st=$?
	stop
	return $st
}

test_expect_success 'go tool pprof -http serves the profile: its page, the report'"'"'s total' '
	serve inl.pb.gz && stop && cat http.out &&
	test -s pprof.url &&
	grep "<title>ana-inline inuse_space</title>" top.html &&
	grep "Total samples = $(json_total leaked_bytes inl.json)B" top.html
'

test_expect_success CHROMIUM 'go tool pprof -http: headless Chromium shows the functions of --by-site' '
	serve inl.pb.gz && browse /ui/top &&
	test_expect_code 1 "$MTANALYZE" --by-site inl.log >sites &&
	sed -n "s/^ *\([0-9]*\) *\([0-9]*\)  \([a-z_]*\) at .*/\2 \3/p" sites | sort >expect &&
	cat expect && test -s expect &&
	python3 -c "
import re, sys
rows = re.findall (r\"<tr[^>]*>(.*?)</tr>\", open (\"dom.html\").read (), re.S)
for r in rows:
    c = [re.sub (r\"<[^>]*>\", \"\", x) for x in re.findall (r\"<td[^>]*>(.*?)</td>\", r, re.S)]
    if len (c) >= 6 and c[0] not in (\"0\", \"0B\"):
        print (c[0].rstrip (\"B\"), c[5].replace (\" (inline)\", \"\"))
" | sort >actual &&
	test_cmp expect actual
'

test_expect_success 'a trace without stacks: one location per caller line' '
	"$MTREC" -q -o flat.log "$HELPER/ana-inline" 3 &&
	test_expect_code 1 "$MTANALYZE" --pprof flat.pb.gz flat.log >out &&
	test_expect_code 1 "$MTANALYZE" --json flat.log >flat.json &&
	test "$(total inuse_space flat.pb.gz)" = "$(json_total leaked_bytes flat.json)"
'

test_expect_success 'an unwritable FILE: exit 2 naming it, nothing written' '
	test_expect_code 2 "$MTANALYZE" --pprof no-such-dir/p.pb.gz inl.log >out 2>err &&
	cat err &&
	grep "cannot write .no-such-dir/p.pb.gz." err &&
	test ! -e no-such-dir
'

test_done
