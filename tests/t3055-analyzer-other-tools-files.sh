#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3055-analyzer-other-tools-files: the files of other memory tools given
# to mtanalyze in place of a trace are named as what they are, status 2,
# in every mode, before any output (SPEC, "Exit codes and inputs"):
# heaptrack's data files (as heaptrack writes them, zstd, gzip'd, raw),
# valgrind's logs (text and XML), pprof's profiles (profile.proto, gzip'd
# as pprof and Go write them, or not).  heaptrack's was read as a trace:
# its '- 0' lines are frees of memory never allocated, and the report
# said so line by line, status 0.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer; then
	test_skip 'other tools'"'"' files' 'needs the analyzer'
	test_done; exit
fi

test_lazy_prereq HEAPTRACK 'command -v heaptrack && command -v zstd'
test_lazy_prereq VALGRIND 'command -v valgrind'
test_lazy_prereq GO 'command -v go'

printf '= Start\n= End\n' >se.log

# each_mode FILE WHAT: every mode of mtanalyze exits 2 on FILE, prints
# nothing on stdout, and says "mtanalyze: FILE: WHAT" alone on stderr.
each_mode() {
	printf 'mtanalyze: %s: %s\n' "$1" "$2" >expect.err &&
	for mode in "" --by-site --json "--db new.db" "--html new.html" --folded; do
		test_expect_code 2 "$MTANALYZE" $mode "$1" >out 2>err &&
		test_must_be_empty out && test_cmp expect.err err || return 1
	done &&
	test ! -e new.db && test ! -e new.html &&
	test_expect_code 2 "$MTANALYZE" diff se.log "$1" >out 2>err &&
	test_must_be_empty out && test_cmp expect.err err &&
	test_expect_code 2 "$MTANALYZE" session "$1" >out 2>err &&
	test_must_be_empty out && test_cmp expect.err err &&
	test_expect_code 2 "$MTANALYZE" shrink -o shrunk.log "$1" >out 2>err &&
	test ! -e shrunk.log && test_cmp expect.err err
}

heaptrack_is='a heaptrack data file, not a malloc trace: read it with heaptrack_print'
test_expect_success HEAPTRACK 'heaptrack data files: zstd, gzip, plain, raw' '
	heaptrack -o "$OUT/ht" /usr/bin/true >ht.out 2>&1 &&
	test -s ht.zst &&
	each_mode ht.zst "$heaptrack_is (zstd data)" &&
	zstd -dc ht.zst >ht.txt && gzip -c ht.txt >ht.gz &&
	grep -q "^- 0$" ht.txt &&
	each_mode ht.gz "$heaptrack_is (gzip data)" &&
	each_mode ht.txt "$heaptrack_is" &&
	heaptrack -r -o "$OUT/raw" /usr/bin/true >raw.out 2>&1 &&
	raw=$(ls raw.raw*) && test -s "$raw" &&
	test_expect_code 2 "$MTANALYZE" --by-site "$raw" >out 2>err &&
	grep -q "^mtanalyze: $raw: $heaptrack_is" err
'

valgrind_is='a valgrind log, not a malloc trace: record one with mtrec'
test_expect_success VALGRIND 'valgrind logs: --log-file, stderr, XML' '
	valgrind --leak-check=full --log-file=vg.log /usr/bin/true &&
	grep -q "^==[0-9]*== Memcheck" vg.log &&
	each_mode vg.log "$valgrind_is" &&
	valgrind --leak-check=full /usr/bin/true 2>vg2.log &&
	test_expect_code 2 "$MTANALYZE" --json vg2.log >out 2>err &&
	echo "mtanalyze: vg2.log: $valgrind_is" >expect && test_cmp expect err &&
	valgrind --xml=yes --xml-file=vg.xml /usr/bin/true &&
	test_expect_code 2 "$MTANALYZE" vg.xml >out 2>err &&
	echo "mtanalyze: vg.xml: $valgrind_is" >expect && test_cmp expect err
'

# A profile.proto as pprof writes one: sample_type first, a sample, a
# location, a function, the string table, time, period_type and period.
cat >mkprof.py <<'PY'
import gzip, sys
def varint(v):
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        if not v:
            return out + bytes([b])
        out += bytes([b | 0x80])
def field(n, wire, payload):
    key = varint(n << 3 | wire)
    return key + (varint(payload) if wire == 0 else varint(len(payload)) + payload)
vt = field(1, 0, 1) + field(2, 0, 2)
fn = field(1, 0, 1) + field(2, 0, 3) + field(4, 0, 4)
loc = field(1, 0, 1) + field(3, 0, 0x401000) + field(4, 2, field(1, 0, 1) + field(2, 0, 7))
sample = field(1, 2, varint(1)) + field(2, 2, varint(4096))
prof = field(1, 2, vt) + field(2, 2, sample) + field(4, 2, loc) + field(5, 2, fn)
for s in [b'', b'alloc_space', b'bytes', b'main', b'main.c']:
    prof += field(6, 2, s)
prof += field(9, 0, 1700000000000000000) + field(11, 2, vt) + field(12, 0, 1)
sys.stdout.buffer.write(gzip.compress(prof) if sys.argv[1] == 'gz' else prof)
PY

pprof_is='a pprof profile, not a malloc trace: read it with pprof'
test_expect_success PYTHON3 'pprof profiles: gzip'"'"'d as pprof writes them, and not' '
	python3 mkprof.py gz >prof.pb.gz && python3 mkprof.py plain >prof.pb &&
	each_mode prof.pb.gz "$pprof_is (gzip data)" &&
	test_expect_code 2 "$MTANALYZE" --by-site prof.pb >out 2>err &&
	echo "mtanalyze: prof.pb: $pprof_is" >expect && test_cmp expect err
'

test_expect_success GO 'pprof: a heap profile written by a Go program' '
	cat >heap.go <<-\GO &&
	package main

	import (
		"os"
		"runtime"
		"runtime/pprof"
	)

	var keep [][]byte

	func main() {
		runtime.MemProfileRate = 1
		for i := 0; i < 100; i++ {
			keep = append(keep, make([]byte, 4096))
		}
		f, _ := os.Create(os.Args[1])
		pprof.WriteHeapProfile(f)
		f.Close()
	}
	GO
	HOME="$OUT" GOCACHE="$OUT/gocache" GO111MODULE=off go run heap.go heap.pb.gz &&
	test_expect_code 2 "$MTANALYZE" heap.pb.gz >out 2>err &&
	echo "mtanalyze: heap.pb.gz: $pprof_is (gzip data)" >expect && test_cmp expect err
'

test_expect_success 'a trace that looks like none of them is still read' '
	printf "= Start\n@ ./v:[0x10] + 0x1000 0x10\n= End\n" >v.log &&
	test_expect_code 1 "$MTANALYZE" v.log >out &&
	printf "==12 hello\nv 1\n" >v2.log &&
	test_expect_code 2 "$MTANALYZE" v2.log >out 2>err &&
	echo "mtanalyze: v2.log: text, but not a trace: no line of it is a trace line" >expect &&
	test_cmp expect err
'

test_done
