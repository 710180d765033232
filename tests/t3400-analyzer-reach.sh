#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3400-analyzer-reach.sh -- mtanalyze reads the recorder's reachability
# verdicts ("# reach begin N" ... "# reach ADDR KIND" ... "# reach end",
# MTREC_REACH=1): --by-site gives the run's blocks not freed by category
# and each site's own, --json the same per run, site and block, --leaks
# KINDS keeps only those kinds as leaks and gates the exit status on them
# (exit 2 on a trace without verdicts); the mtrace-compatible report does
# not change.  Verdicts that come before their block's "+" line, for
# blocks freed later, that cannot be read, several scans and a scan the
# trace ends in are handled.
#
# Traces: written here by hand, and one recorded from
# tests/helper/rec-reach.c.
. "$(dirname "$0")/lib.sh"

test_lazy_prereq PYJSON 'command -v python3'

# A trace of three sites: a definite leak with an indirect tail, a cache
# still reachable, a block possibly lost; one verdict comes before its
# block's line (another thread's chunk), one is for a block freed after
# the scan, one cannot be read.
cat >hand.log <<\EOF
= Start
# T 100
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(lost+10)[0x1010] + 0x1040 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
@ ./app:(odd+10)[0x1210] + 0x3000 0x64
@ ./app:(gone+10)[0x1310] + 0x4000 0x10
# reach begin 7
# reach 0x1000 definite
# reach 0x1040 indirect
# reach 0x2000 reachable
# reach 0x3000 possible
# reach 0x4000 reachable
# reach 0x5000 definite
# reach 0xzz definite
# reach unscanned registers of 1 other thread: not readable while they run (their stacks are scanned)
# reach end 1100 1
# T 101
@ ./app:(late+10)[0x1410] + 0x5000 0x8
@ ./app:(gone+20)[0x1320] - 0x4000
= End
EOF
# the same without the verdicts
grep -v "^# reach" hand.log >plain.log

test_expect_success 'the mtrace-compatible report does not change' '
	test_expect_code 1 "$MTANALYZE" hand.log >with &&
	test_expect_code 1 "$MTANALYZE" plain.log >without &&
	test_cmp without with
'

test_expect_success '--by-site: the run by category, as valgrind'"'"'s summary, and the notes' '
	test_expect_code 1 "$MTANALYZE" --by-site hand.log >out &&
	cat >expect <<-\EOF &&
	Blocks not freed, by reachability (share/reach.md):
	  definitely lost: 56 bytes in 2 blocks
	  indirectly lost: 48 bytes in 1 block
	    possibly lost: 100 bytes in 1 block
	  still reachable: 256 bytes in 1 block
	The recorder could not scan registers of 1 other thread: not readable while they run (their stacks are scanned).
	The scan at line 8 announced 7 verdicts; the trace holds 6.
	1 '"'"'# reach'"'"' line could not be read, the first at line 15.
	EOF
	head -n 8 out >actual &&
	test_cmp expect actual
'

test_expect_success '--by-site: each site'"'"'s blocks by category under its row' '
	grep -E -A1 "^ +[0-9]+ +[0-9]+  lost\+0x10 " out | tail -n 1 >actual &&
	echo "                     1 definitely lost (48 bytes), 1 indirectly lost (48 bytes)" >expect &&
	test_cmp expect actual &&
	grep -E -A1 "^ +[0-9]+ +[0-9]+  late\+0x10 " out | tail -n 1 | grep "^ *1 definitely lost (8 bytes)\$" &&
	! grep -E "^ +[0-9]+ +[0-9]+  gone\+" out
'

test_expect_success '--leaks definite,indirect: only those are leaks, and the exit status follows them' '
	test_expect_code 1 "$MTANALYZE" --leaks definite,indirect hand.log >out &&
	grep "^Leaks here are only the blocks definitely lost or indirectly lost (--leaks): 3 of 5\.\$" out &&
	grep "^Memory not freed, by call site: 3 blocks, 104 bytes, 2 sites\$" out &&
	! grep -E "^ +[0-9]+ +[0-9]+  cache\+" out &&
	! grep -E "^ +[0-9]+ +[0-9]+  odd\+" out
'

test_expect_success '--leaks reachable on a trace whose leaks are all lost: exit 0' '
	cat >lost.log <<-\EOF &&
	= Start
	@ ./app:(lost+10)[0x1010] + 0x1000 0x30
	# reach begin 1
	# reach 0x1000 definite
	# reach end 10 0
	= End
	EOF
	"$MTANALYZE" --leaks reachable,possible lost.log >out &&
	grep "^No blocks possibly lost or still reachable (--leaks)\.\$" out &&
	test_expect_code 1 "$MTANALYZE" --leaks all lost.log >out
'

test_expect_success '--leaks on a trace without verdicts: exit 2, saying why' '
	test_expect_code 2 "$MTANALYZE" --leaks definite plain.log 2>err &&
	grep "^mtanalyze: --leaks: .plain.log. has no reachability verdicts" err &&
	test_expect_code 2 "$MTANALYZE" --leaks sometimes hand.log 2>err &&
	grep "unknown kind .sometimes." err
'

test_expect_success 'a block without a verdict is "not scanned" (unknown)' '
	cat >partial.log <<-\EOF &&
	= Start
	@ ./app:(lost+10)[0x1010] + 0x1000 0x30
	# reach begin 1
	# reach 0x1000 definite
	# reach end 10 0
	@ ./app:(after+10)[0x1510] + 0x6000 0x20
	= End
	EOF
	test_expect_code 1 "$MTANALYZE" --by-site partial.log >out &&
	grep "^      not scanned: 32 bytes in 1 block\$" out &&
	test_expect_code 1 "$MTANALYZE" --leaks definite,indirect,possible,reachable partial.log >out &&
	! grep -E "^ +[0-9]+ +[0-9]+  after\+" out &&
	test_expect_code 1 "$MTANALYZE" --leaks unknown partial.log >out &&
	grep -E "^ +[0-9]+ +[0-9]+  after\+" out
'

test_expect_success PYJSON '--json: reach per run, per site and per block' '
	test_expect_code 1 "$MTANALYZE" --json hand.log >j.json &&
	python3 - j.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["reach"]["definite"] == {"blocks": 2, "bytes": 56}, d["reach"]
	assert d["reach"]["indirect"] == {"blocks": 1, "bytes": 48}
	assert d["reach"]["reachable"] == {"blocks": 1, "bytes": 256}
	assert d["reach"]["unknown"] == {"blocks": 0, "bytes": 0}
	assert d["leak_kinds"] is None
	assert d["reach_finished"] is True and d["reach_scans"] == 1 and d["reach_line"] == 8
	assert d["reach_bad_lines"] == 1
	assert d["reach_notes"][0].startswith("registers of 1 other thread")
	site = [s for s in d["leak_sites"] if s["function"] == "lost+0x10"][0]
	assert site["reach"]["definite"]["blocks"] == 1 and site["reach"]["indirect"]["blocks"] == 1
	cats = {l["address"]: l["reach"] for l in d["leaks"]}
	assert cats == {"0x1000": "definite", "0x1040": "indirect", "0x2000": "reachable",
			"0x3000": "possible", "0x5000": "definite"}, cats
	EOF
'

test_expect_success PYJSON '--json --leaks: only those kinds in leaks, all of them in reach' '
	test_expect_code 1 "$MTANALYZE" --json --leaks definite hand.log >j.json &&
	python3 - j.json <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d["leak_kinds"] == ["definite"]
	assert d["run"]["leaked_blocks"] == 2 and d["all_leaked_blocks"] == 5
	assert {l["reach"] for l in d["leaks"]} == {"definite"}
	assert d["reach"]["reachable"]["blocks"] == 1
	EOF
'

test_expect_success PYJSON '--json on a trace without verdicts: reach is null' '
	test_expect_code 1 "$MTANALYZE" --json plain.log >j.json &&
	python3 -c "import json,sys; d=json.load(open(\"j.json\")); assert d[\"reach\"] is None; assert all(l[\"reach\"] is None for l in d[\"leaks\"]); assert d[\"leak_sites\"][0][\"reach\"] is None"
'

test_expect_success 'several scans: the last that finished judges, a later free drops its verdict' '
	cat >two.log <<-\EOF &&
	= Start
	@ ./app:(a+10)[0x1010] + 0x1000 0x30
	@ ./app:(b+10)[0x1110] + 0x2000 0x40
	# reach begin 2
	# reach 0x1000 reachable
	# reach 0x2000 reachable
	# reach end 10 0
	@ ./app:(c+10)[0x1210] + 0x3000 0x50
	# reach begin 3
	# reach 0x1000 definite
	# reach 0x2000 reachable
	# reach 0x3000 possible
	# reach unscanned stack of thread 7: not found (it is running, and made no allocation the recorder saw)
	# reach end 10 0
	@ ./app:(b+20)[0x1120] - 0x2000
	@ ./app:(d+10)[0x1310] + 0x2000 0x60
	# reach begin 1
	# reach 0x1000 reachable
	= End
	EOF
	test_expect_code 1 "$MTANALYZE" --by-site two.log >out &&
	cat >expect <<-\EOF &&
	Blocks not freed, by reachability (share/reach.md):
	  definitely lost: 48 bytes in 1 block
	  indirectly lost: 0 bytes in 0 blocks
	    possibly lost: 80 bytes in 1 block
	  still reachable: 0 bytes in 0 blocks
	      not scanned: 96 bytes in 1 block
	Verdicts of the recorder'"'"'s scan at line 9, the last of 2 that finished; blocks allocated after it are not scanned.
	The recorder could not scan stack of thread 7: not found (it is running, and made no allocation the recorder saw).
	EOF
	head -n 8 out >actual &&
	test_cmp expect actual
'

test_expect_success 'a scan the trace ends in is used when no other finished, and said' '
	head -n 5 two.log >cut.log &&
	test_expect_code 1 "$MTANALYZE" --by-site cut.log >out &&
	grep "^  still reachable: 48 bytes in 1 block\$" out &&
	grep "^      not scanned: 64 bytes in 1 block\$" out &&
	grep "^The recorder'"'"'s scan at line 4 did not finish (the trace ends first)" out &&
	grep "^The scan at line 4 announced 2 verdicts; the trace holds 1\.\$" out
'

test_expect_success 'a recorded run: --leaks definite,indirect names the dropped block and the list only' '
	MTREC_REACH=1 MALLOC_TRACE=rec.log LD_PRELOAD="$LIBMTREC" "$HELPER/rec-reach" &&
	test_expect_code 1 "$MTANALYZE" --leaks definite,indirect "$HELPER/rec-reach" rec.log >out &&
	grep "^Memory not freed, by call site: 5 blocks, 216 bytes, 2 sites\$" out &&
	grep "drop_plain at" out &&
	grep "drop_list at" out &&
	test_expect_code 1 "$MTANALYZE" --leaks possible "$HELPER/rec-reach" rec.log >out &&
	grep -E "^ +1 +100  keep_middle at " out
'

test_expect_success 'a scan the recorder refused: said in --by-site and --json, and --leaks names why' '
	{ grep -v "^= End" plain.log &&
	  echo "# reach refused no memory for the scan" && echo "= End"; } >refused.log &&
	test_expect_code 1 "$MTANALYZE" --by-site refused.log >out 2>err &&
	grep "^The recorder did not make a reachability scan it was asked for: no memory for the scan\.\$" out &&
	test_must_be_empty err &&
	test_expect_code 1 "$MTANALYZE" --json refused.log >out.json &&
	py "d[\"reach_refused\"] == [\"no memory for the scan\"] or sys.exit(1)" out.json &&
	test_expect_code 2 "$MTANALYZE" --leaks definite refused.log >out 2>err &&
	grep "did not make the scan asked for (no memory for the scan)" err
'

test_done
