#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3040-analyzer-pressure: the analyzer under pressure (issue 18 point
# 10).  Out of memory (ulimit -v, the limit found by measuring) it exits 2
# with one line and leaves no partial output in any mode that writes one
# (--db new or existing, --json into a file, shrink -o); and --by-site
# keeps call sites apart when the objects of the trace are gone.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! command -v sqlite3 >/dev/null || ! command -v python3 >/dev/null; then
	test_skip 'the analyzer under pressure' 'needs the analyzer, sqlite3 and python3'
	test_done; exit
fi
py() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2"; }

# 600000 blocks never freed from 50 callers: tens of MB of live blocks.
awk 'BEGIN { print "= Start"
	for (i = 0; i < 600000; i++)
		printf "@ ./app:[0x%x] + 0x%x 0x10\n", 4096 + (i % 50) * 16, 268435456 + i * 32
	print "= End" }' >big.log
printf '= Start\n@ ./app:[0x10] + 0x1000 0x10\n= End\n' >tiny.log

# The smallest address-space limit (KB) under which a tiny trace is
# analyzed in MODE; the big one needs far more than LIMIT + 24 MB.
limit_for() {
	v=16384 &&
	while [ $v -le 1048576 ]; do
		st=0 && { (ulimit -v $v && "$MTANALYZE" "$@" tiny.log >/dev/null 2>&1) || st=$?; } &&
		if [ $st -le 1 ]; then echo $((v + 24576)) && return 0; fi &&
		v=$((v + 8192)) || return 1
	done &&
	echo 0
}

# under_limit LIMIT ARGS...: run mtanalyze with the address space limited
under_limit() {
	lim=$1 && shift &&
	st=0 && { (ulimit -v "$lim" && exec "$MTANALYZE" "$@") >out 2>err || st=$?; }
}

# oom_said: status 2 and one line saying so
oom_said() {
	cat err && test $st = 2 && test "$(wc -l <err)" = 1 &&
	grep -q "^mtanalyze: out of memory (" err
}

# AddressSanitizer reserves terabytes of address space: ulimit -v cannot
# make such a build run out of memory the ordinary way.
if ldd "$TOP/analyzer/mtanalyze" 2>/dev/null | grep -q libasan; then
	test_skip 'out of memory' 'a sanitizer build (ulimit -v does not apply)'
else
test_expect_success 'the big trace is fine without a limit' '
	test_expect_code 1 "$MTANALYZE" --by-site big.log >/dev/null
'

test_expect_success 'out of memory, --db into a new database: status 2, no file left' '
	lim=$(limit_for --db probe.db) && rm -f probe.db && test "$lim" -gt 0 &&
	under_limit "$lim" --db new.db big.log && oom_said &&
	test ! -e new.db && test ! -e new.db-journal
'

test_expect_success 'out of memory, --db into an existing database: left as it was' '
	test_expect_code 1 "$MTANALYZE" --db old.db tiny.log >/dev/null &&
	sqlite3 old.db .dump >before.dump && cp old.db old.copy &&
	lim=$(limit_for --db probe.db) && rm -f probe.db &&
	under_limit "$lim" --db old.db big.log && oom_said &&
	sqlite3 old.db .dump >after.dump && test_cmp before.dump after.dump &&
	cmp old.db old.copy && test ! -e old.db-journal
'

test_expect_success 'out of memory, --all-events: rolled back, status 2' '
	lim=$(limit_for --db probe.db --all-events) && rm -f probe.db &&
	under_limit "$lim" --db old.db --all-events big.log &&
	cat err && test $st = 2 && grep -q "^mtanalyze: out of memory" err &&
	sqlite3 old.db .dump >after2.dump && test_cmp before.dump after2.dump
'

test_expect_success 'out of memory, --json into a file: nothing half written' '
	lim=$(limit_for --json) &&
	st=0 && { (ulimit -v "$lim" && exec "$MTANALYZE" --json big.log) >j.json 2>err || st=$?; } &&
	oom_said && test ! -s j.json
'

test_expect_success 'out of memory, by site and plain: status 2, one line' '
	lim=$(limit_for --by-site) &&
	under_limit "$lim" --by-site big.log && oom_said &&
	lim=$(limit_for) &&
	under_limit "$lim" big.log && oom_said
'

test_expect_success 'out of memory, shrink -o: no output, no temporary file' '
	echo old >small.log && lim=$(limit_for shrink -q -o probe.log) && rm -f probe.log &&
	st=0 && { (ulimit -v "$lim" && exec "$MTANALYZE" shrink -o small.log big.log) >out 2>err || st=$?; } &&
	oom_said && test "$(cat small.log)" = old && test ! -e small.log.tmp
'

fi

# A program and its library, recorded, then gone (another machine, a
# deleted build): sites stay apart, by object and offset.
if [ -f "$LIBMTREC" ] && command -v "$CC" >/dev/null; then
test_expect_success 'record a fixture, then delete its binary and library' '
	mkdir -p app && cd app &&
	"$CC" -O1 -g -shared -fPIC -o libana-leak.so "$HELPER/libana-leak.c" &&
	"$CC" -O1 -g -DWITH_LIB -o ana-leaks "$HELPER/ana-leaks.c" -L. -lana-leak -Wl,-rpath,"$OUT/app" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=../deep.log MTREC_DEPTH=16 ./ana-leaks l >/dev/null &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE=../flat.log ./ana-leaks l >/dev/null &&
	cd .. && test_expect_code 1 "$MTANALYZE" --by-site --frames 0 flat.log >present.out &&
	rm -rf app && cat present.out
'

test_expect_success 'by site: distinct sites of a deleted binary stay apart' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 1 deep.log >gone.out &&
	cat gone.out &&
	n=$(grep -c "^ *[0-9].* in $OUT/app/ana-leaks " gone.out) && test "$n" -ge 3 &&
	grep -q "^ *[0-9].*  0x[0-9a-f]* in $OUT/app/libana-leak.so " gone.out &&
	! grep -q "^ *[0-9].*  0x0  " gone.out &&
	grep -q "called from 0x[0-9a-f]* in $OUT/app/" gone.out &&
	test "$(grep "^Memory not freed" gone.out | sed "s/.*, \([0-9]*\) sites*$/\1/")" = \
	     "$(grep "^Memory not freed" present.out | sed "s/.*, \([0-9]*\) sites*$/\1/")"
'

test_expect_success 'JSON and the database keep them apart too' '
	test_expect_code 1 "$MTANALYZE" --json deep.log >gone.json &&
	py "sorted((s[\"function\"], s[\"object\"]) for s in d[\"leak_sites\"])" gone.json >sites &&
	cat sites &&
	test "$(py "len(set((s[\"function\"], s[\"object\"]) for s in d[\"leak_sites\"]))" gone.json)" = \
	     "$(py "len(d[\"leak_sites\"])" gone.json)" &&
	test_expect_code 1 "$MTANALYZE" --db gone.db deep.log >/dev/null &&
	test "$(sqlite3 gone.db "SELECT count(*) FROM leaks_by_site")" = "$(py "len(d[\"leak_sites\"])" gone.json)" &&
	test "$(sqlite3 gone.db "SELECT count(*) FROM sites WHERE function = '\''0x0'\''")" = 0
'

test_expect_success 'a caller field with a symbol keeps its offset' '
	printf "= Start\n@ ./gone:(leaky+18)[0x11f1] + 0x1000 0x10\n@ ./gone:(leaky+2a)[0x1203] + 0x2000 0x20\n= End\n" >sym.log &&
	test_expect_code 1 "$MTANALYZE" --by-site sym.log >sym.out &&
	grep -q "^ *1  *32  leaky+0x2a in ./gone " sym.out &&
	grep -q "^ *1  *16  leaky+0x18 in ./gone " sym.out
'
else
	test_skip 'sites of a deleted binary' 'needs the recorder and a C compiler'
fi

test_done
