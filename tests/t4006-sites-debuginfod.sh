#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4006-sites-debuginfod: a stripped program's leaks get their lines from a
# debuginfod server (DEBUGINFOD_URLS, elfutils' client, by build-id) in
# every mode but the plain one (addr2line asks no server); a server that
# has no file for it, or cannot be reached, is said in the no-symbols note;
# without DEBUGINFOD_URLS the note says to set it.  The server (Debian's
# debuginfod, which listens on every interface) runs in a network
# namespace of its own with the analyzer.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'debuginfod' 'needs the analyzer and the recorder'
	test_done; exit
fi
if ! command -v objcopy >/dev/null || ! command -v debuginfod >/dev/null ||
   ! command -v debuginfod-find >/dev/null; then
	test_skip 'debuginfod' 'needs objcopy and Debian'"'"'s debuginfod package (debuginfod, debuginfod-find)'
	test_done; exit
fi
# a network namespace of our own: as root, or in a user namespace
if unshare -n true 2>/dev/null; then NS="unshare -n"
elif unshare -rn true 2>/dev/null; then NS="unshare -rn"
else
	test_skip 'debuginfod' 'unshare -n is not permitted here (a test server must not listen on the host)'
	test_done; exit
fi
SSRC="$TOP/tests/helper/ana-stripped.c"

# in_ns DIR CMD...: CMD with a debuginfod server of DIR's files at
# $URL, both in a network namespace of their own (lo only), the client's
# cache in ./cache (emptied first: it remembers misses)
in_ns() {
	dir=$1 && shift &&
	rm -rf cache pollcache &&
	cat >ns.sh <<-\EOS &&
	ip link set lo up || exit 3
	dir=$1 && shift
	debuginfod -F "$dir" -p 8002 -d "$PWD/db.sqlite" >srv.log 2>&1 &
	srv=$!
	# ready once it serves ready-id, a file of its directory (at most 120 s)
	i=0
	while [ $i -lt 240 ]; do
		rm -rf pollcache
		DEBUGINFOD_CACHE_PATH=$PWD/pollcache DEBUGINFOD_URLS=http://127.0.0.1:8002 \
			debuginfod-find debuginfo "$(cat ready-id)" >/dev/null 2>&1 && break
		sleep 0.5; i=$((i + 1))
	done
	DEBUGINFOD_CACHE_PATH=$PWD/cache DEBUGINFOD_URLS=http://127.0.0.1:8002 "$@"
	st=$?
	kill $srv; wait $srv
	exit $st
	EOS
	rm -f db.sqlite && $NS sh ns.sh "$dir" "$@"
}

test_expect_success 'a stripped program, its debug file only on the server' '
	cp "$TOP/tests/helper/ana-stripped" full &&
	objcopy --only-keep-debug full app.debug &&
	mkdir bin srv other &&
	objcopy --strip-all full bin/app &&
	mv app.debug srv/ &&
	! readelf -S bin/app | grep -q "\.symtab" &&
	"$MTREC" -o s.log --depth 16 bin/app &&
	readelf -n bin/app | sed -n "s/.*Build ID: //p" >id &&
	cp id ready-id &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 s.log >local &&
	grep -q "^No symbols for $OUT/bin/app" local
'

test_expect_success 'without DEBUGINFOD_URLS the note says to set it' '
	grep -q "^No symbols for .*or set DEBUGINFOD_URLS=https://debuginfod.debian.net (.*fetched by build-id)" local
'

test_expect_success '--by-site, --json and diff: the lines come from the server' '
	printf "= Start\n= End\n" >empty.log &&
	in_ns srv sh -c "
		\"$MTANALYZE\" --by-site --frames 0 s.log >named; echo \$? >named.rc
		\"$MTANALYZE\" --json s.log >s.json; echo \$? >json.rc
		\"$MTANALYZE\" diff empty.log s.log >d; echo \$? >d.rc
		\"$MTANALYZE\" s.log >plain; echo \$? >plain.rc" &&
	cat named &&
	test "$(cat named.rc)" = 1 &&
	grep -E "^ +3 +[0-9]+  new_port at $SSRC:$(line_of LEAK-PORT "$SSRC") in " named &&
	grep -E "^ +2 +[0-9]+  new_flow at $SSRC:$(line_of LEAK-FLOW "$SSRC") in " named &&
	grep -E "^ +1 +[0-9]+  new_bridge at $SSRC:$(line_of LEAK-BRIDGE "$SSRC") in " named &&
	! grep -q "^No symbols" named &&
	test "$(cat json.rc)" = 1 &&
	grep -q "\"function\": \"new_port\"" s.json &&
	grep -q "new_port at $SSRC:$(line_of LEAK-PORT "$SSRC")" d
'

test_expect_success 'the plain report asks no server: as without DEBUGINFOD_URLS' '
	test "$(cat plain.rc)" = 1 &&
	test_expect_code 1 "$MTANALYZE" s.log >plain.local &&
	test_cmp plain.local plain &&
	! grep -q "ana-stripped.c" plain
'

test_expect_success 'a server without the file: said in the note' '
	objcopy --only-keep-debug "$TOP/tests/helper/ana-inline" other/unrelated.debug &&
	readelf -n other/unrelated.debug | sed -n "s/.*Build ID: //p" >ready-id &&
	test -s ready-id &&
	in_ns other sh -c "\"$MTANALYZE\" --by-site s.log >none; echo \$? >none.rc" &&
	test "$(cat none.rc)" = 1 &&
	grep -q "^No symbols for $OUT/bin/app .*(debuginfod at http://127.0.0.1:8002 has no debug file for it)" none
'

test_expect_success 'a server that cannot be reached: said, and the report still made' '
	DEBUGINFOD_CACHE_PATH=$PWD/cache2 DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_TIMEOUT=5 \
		$NS sh -c "ip link set lo up; \"$MTANALYZE\" --by-site s.log >down; echo \$? >down.rc" &&
	test "$(cat down.rc)" = 1 &&
	grep -q "^No symbols for $OUT/bin/app .*(debuginfod at http://127.0.0.1:9 could not be reached: .* after [0-9]* s, DEBUGINFOD_TIMEOUT (5 s) bounding each of 1 + DEBUGINFOD_RETRY_LIMIT (2) attempts)" down
'

# A server that takes the connection and never answers: libdebuginfod
# gives each attempt DEBUGINFOD_TIMEOUT and makes 1 + DEBUGINFOD_RETRY_LIMIT
# of them (3 s and the default limit waited 9.6 s), which the note says; on
# a terminal (script(1)) the fetch is announced and libdebuginfod shows its
# progress, and the object that stayed without symbols is named.
test_lazy_prereq SCRIPT 'command -v script'
test_expect_success PYTHON3,SCRIPT 'a server that never answers: the wait, its attempts, on a terminal' '
	cat >silent.py <<-\EOS &&
	import socket, sys
	s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("127.0.0.1", 8003)); s.listen(8)
	open("silent.up", "w").close()
	held = []
	while True:
	    held.append(s.accept()[0])
	EOS
	cat >silent.sh <<-\EOS &&
	ip link set lo up || exit 3
	rm -f silent.up
	python3 silent.py & srv=$!
	i=0; while [ ! -e silent.up ] && [ $i -lt 240 ]; do sleep 0.5; i=$((i + 1)); done
	DEBUGINFOD_CACHE_PATH=$PWD/cache3 DEBUGINFOD_URLS=http://127.0.0.1:8003 \
	DEBUGINFOD_TIMEOUT=1 DEBUGINFOD_RETRY_LIMIT=1 \
		script -qec "\"$MTANALYZE\" --by-site --frames 0 s.log" tty.out >/dev/null </dev/null
	kill $srv; wait $srv
	exit 0
	EOS
	MTANALYZE="$MTANALYZE" $NS sh silent.sh &&
	tr -d "\r" <tty.out >tty &&
	cat tty &&
	grep -q "^mtanalyze: fetching the debug file of .$OUT/bin/app. (build-id $(cat id)) from http://127.0.0.1:8003\$" tty &&
	grep -q "Downloading" tty &&
	grep "^No symbols for $OUT/bin/app " tty >note &&
	n=$(sed -n "s/.*could not be reached: .* after \\([0-9]*\\) s, DEBUGINFOD_TIMEOUT (1 s) bounding each of 1 + DEBUGINFOD_RETRY_LIMIT (1) attempts).*/\\1/p" note) &&
	test "$n" -ge 2
'

test_done
