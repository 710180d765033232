#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4072-analyzer-json-formatting: the numbers and strings of --json are
# formatted by hand (report/json-put.c, issue 30.3: printf's parsing of a
# format for each of the 2.4 GB of 2 million callers' document was most of
# its time).  Python's json module reads them back: integers at the edges
# of their digit counts (0, 9, 10, 99, 100, 10^19 - 1, 10^19, 2^64 - 1),
# addresses near the top of the space, a thread id past 2^31, and a name
# of every kind of byte -- invalid UTF-8 and a lone surrogate become
# U+FFFD (one for each byte), the C0 and C1 controls and DEL \u escapes,
# UTF-8 of 2, 3 and 4 bytes left whole -- in --json (the buffer's writer)
# and in session --json (the writer of small documents, straight to its
# FILE).  The document holds no raw control byte, and its leaks are
# byte for byte the lines Python writes of them.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! test_have_prereq PYTHON3; then
	test_skip 'JSON formatting' 'needs the analyzer and python3'
	test_done; exit
fi

# the name: a b, then \377 (invalid), \001, DEL, U+0085 (C1), the euro
# sign, U+1F600, a surrogate's bytes (3 invalid), a quote, a backslash and
# a sequence cut short at the end
ODD='/tmp/a\377b\001\177\302\205\342\202\254\360\237\230\200\355\240\200"\\\302'
test_expect_success 'a trace of edge numbers and an odd name' '
	{
		printf "# mtrec 1\n# pid 4242 1\n# exe $ODD\n= Start\n# T 4000000000\n" &&
		for size in 0 9 a 63 64; do
			echo "@ ./x:[0x4006] + 0x10$size 0x$size"
		done &&
		echo "@ ./x:[0x4007] + 0xfffffffffffff000 0x8ac7230489e7ffff" &&
		echo "@ ./x:[0x4008] + 0xfffffffffffff100 0x8ac7230489e80000" &&
		echo "@ ./x:[0x4009] + 0xffffffffffffff00 0xffffffffffffffff" &&
		echo "= End"
	} >f.log &&
	cat >expect.py <<-\EOF &&
	import json, sys
	raw = open(sys.argv[1], "rb").read().decode()
	d = json.loads(raw)
	want = []
	for l in open("f.log", errors="replace"):
	    f = l.split()
	    if f[0] == "@":
	        want.append((hex(int(f[3], 16)), int(f[4], 16)))
	got = [(l["address"], l["size"]) for l in d["leaks"]]
	assert sorted(got) == sorted(want), (got, want)
	assert all(l["thread"] == 4000000000 for l in d["leaks"]), d["leaks"]
	big = {s["function"]: s["leaked_bytes"] for s in d["leak_sites"]}
	assert big["0x4009"] == 2**64 - 1 and big["0x4008"] == 10**19 and big["0x4007"] == 10**19 - 1, big
	assert big["0x4006"] == 9 + 10 + 99 + 100, big
	# byte for byte as Python writes them: a digit too many or too few
	# may still read as a number
	lines = [l.strip().rstrip(",") for l in raw.splitlines() if l.lstrip().startswith("{\"address\"")]
	assert lines == [json.dumps(l, separators=(", ", ": ")) for l in d["leaks"]], lines
	EOF
	cat >name.py <<-\EOF &&
	import json, re, sys
	raw = open(sys.argv[1], "rb").read()
	assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", raw), "a raw control byte"
	d = json.loads(raw)
	got = d["images"][0]["program"] if sys.argv[2] == "session" else d["run"]["exe"]
	name = "/tmp/a\ufffdb\x01\x7f\x85\u20ac\U0001f600\ufffd\ufffd\ufffd\"\\\ufffd"
	assert got == name, ascii(got)
	EOF
	test_expect_code 1 "$MTANALYZE" --json f.log >out.json &&
	python3 expect.py out.json
'

test_expect_success 'the name, whole and escaped, no raw control byte in the document' '
	python3 name.py out.json run
'

test_expect_success 'session --json: the same name' '
	test_expect_code 1 "$MTANALYZE" session --json f.log >session.json &&
	python3 name.py session.json session
'

test_done
