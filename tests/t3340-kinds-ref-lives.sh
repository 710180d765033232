#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3340-kinds-ref-lives: the lives of reference-counted objects at one
# address (issue 27.3, 27.4).  A pool gives the same address to object
# after object; each life ends when its count comes back to zero or when
# the memory is put back (a "-" of any kind at the address: mem_put of a
# dict_t's gf_mem_pool object), and the next reference there is a new
# object.  A drop of a reference no tracked call took (the first event of
# an object, or one at count 0) is counted apart by its path, one line per
# path however many objects, and never merges the lives that follow.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-kinds.sh"
if ! need_analyzer || [ ! -x "$KINDS_APP" ] || ! command -v python3 >/dev/null; then
	test_skip 'lives of referenced objects' 'needs the analyzer, tests/helper/ana-kinds and python3'
	test_done; exit
fi
S="$KINDS_SRC"

# lives N: at one address A, N balanced lives, a drop below zero, a life
# put back by the pool with 2 references held, a balanced life, and last
# a life left at +1 (the leak, never put back); at N other addresses one
# drop each that no tracked call took.
lives() {
	awk -v n="$1" 'BEGIN {
		a = "0x7f0000100000"
		for (i = 0; i < n; i++) {
			print "k gf_mem_pool pool_get_a + " a " 0x58"
			print "k dict_t dict_new r " a; print "k dict_t dict_copy r " a
			print "k dict_t dict_unref u " a; print "k dict_t dict_unref u " a
			print "k gf_mem_pool pool_put - " a
		}
		print "k dict_t dict_unref_extra u " a
		print "k gf_mem_pool pool_get_b + " a " 0x58"
		print "k dict_t dict_new r " a; print "k dict_t dict_copy r " a
		print "k gf_mem_pool pool_put - " a
		print "k gf_mem_pool pool_get_a + " a " 0x58"
		print "k dict_t dict_new r " a; print "k dict_t dict_unref u " a
		print "k gf_mem_pool pool_put - " a
		print "k gf_mem_pool pool_get_a + " a " 0x58"
		print "k dict_t dict_new r " a; print "k dict_t dict_copy r " a
		print "k dict_t dict_unref u " a
		for (i = 0; i < n; i++)
			printf "k dict_t dict_unref_extra u 0x%x\n", 1439744000 + i * 256
	}'
}

test_expect_success 'the lives at one address: the one left at +1 is the one entry, exit 1' '
	lives 500 | kinds_trace >run.log &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 1 run.log >out 2>err &&
	test_must_be_empty err &&
	sed -n "/^Kind .dict_t./,/^Peak/p" out &&
	grep -q "^Kind .dict_t.: 0 allocations, 0 releases, 1005 references taken, 1503 dropped, of 503 objects$" out &&
	grep -q "^Unbalanced references, kind .dict_t.: 1 object above zero, 1 entry$" out &&
	grep -A6 "^  dict_t: 1 object with net count +1, e.g. 0x7f0000100000$" out >entry &&
	grep -E "^      x1 +dict_new at $S:$(kinds_line DICT-NEW) in " entry &&
	grep -E "^      x1 +dict_copy at $S:$(kinds_line DICT-COPY) in " entry &&
	sed -n "/dropped at:/,\$p" entry | grep -E "^      x1 +dict_unref at $S:$(kinds_line DICT-UNREF) in " &&
	test "$(grep -c "^  dict_t: " out)" = 1
'

test_expect_success 'the drops below zero: one line for their path, 501 of them' '
	grep -q "^Below zero, kind .dict_t.: 501 references dropped that no tracked call took (taken before the recording began, or by a path not tracked), 1 path, 501 addresses$" out &&
	test "$(grep -c -E "^  dict_t +x[0-9]+ " out)" = 1 &&
	grep -E "^  dict_t +x501 +dict_unref_extra at $S:$(kinds_line DICT-UNREF-EXTRA) in " out
'

test_expect_success 'JSON: the same two entries, the one above zero first' '
	test_expect_code 1 "$MTANALYZE" --json run.log >run.json &&
	py "json.dumps ([(r[\"kind\"], r[\"objects\"], r[\"net_count\"], r[\"below_zero\"], r[\"example\"]) for r in d[\"refcounts\"]])" run.json >actual &&
	echo "[[\"dict_t\", 1, 1, false, \"0x7f0000100000\"], [\"dict_t\", 501, -1, true, \"0x7f0000100000\"]]" >expect &&
	test_cmp expect actual
'

test_expect_success 'HTML: the kinds, the entry above zero with its paths, the path below zero' '
	test_expect_code 1 "$MTANALYZE" --html run.html --frames 1 run.log >/dev/null &&
	sed -n "/<section id=\"kinds\">/,/<\/section>/p" run.html >kinds &&
	grep -q "^<h3 class=\"kind\">Kind dict_t</h3>$" kinds &&
	grep -q "^<p>1005 references taken, 1503 dropped, of 503 objects; 1 object left above zero, 1 entry.</p>$" kinds &&
	test "$(grep -c "<details class=\"refgroup\">" kinds)" = 1 &&
	grep -q "<summary>1 object with net count +1, e.g. 0x7f0000100000</summary>" kinds &&
	grep -q "^<li>x1 dict_copy at $S:$(kinds_line DICT-COPY) in " kinds &&
	grep -q "^<p>501 references dropped that no tracked call took" kinds &&
	grep -q "^<tr><td class=\"num\">501</td><td>dict_unref_extra at $S:$(kinds_line DICT-UNREF-EXTRA) in " kinds
'

test_expect_success 'only drops below zero: not a leak (exit 0), still reported' '
	kinds_trace >neg.log <<-\END &&
	k dict_t dict_unref_extra u 0x55d0d0000100
	k dict_t dict_new r 0x55d0d0000200
	k dict_t dict_unref u 0x55d0d0000200
	k dict_t dict_unref u 0x55d0d0000200
	END
	"$MTANALYZE" --by-site neg.log >out2 &&
	grep -q "^Every reference of kind .dict_t. was dropped\.$" out2 &&
	grep -q "^Below zero, kind .dict_t.: 2 references dropped that no tracked call took (taken before the recording began, or by a path not tracked), 2 paths, 2 addresses$" out2
'

# GlusterFS's root inode: its references are taken inside the library
# (never seen) and its users drop them by many paths; at the end of a
# FUSE client's run, 2,748 drops below zero in 15 paths were all at its
# one address.  The heading says how many objects the drops were of.
test_expect_success 'the drops below zero at one address by many paths: one address, in text, JSON and HTML' '
	awk "BEGIN {
		for (i = 0; i < 200; i++) print \"k inode_t dict_unref u 0x55d0d0000400\"
		for (i = 0; i < 100; i++) print \"k inode_t dict_unref_extra u 0x55d0d0000400\"
		print \"k inode_t dict_unref_extra u 0x55d0d0000500\"
	}" | kinds_trace >root.log &&
	"$MTANALYZE" --by-site root.log >out3 &&
	grep -q "^Below zero, kind .inode_t.: 301 references dropped that no tracked call took (taken before the recording began, or by a path not tracked), 2 paths, 2 addresses$" out3 &&
	"$MTANALYZE" --json root.log >root.json &&
	py "json.dumps ([(k[\"kind\"], k[\"objects\"], k[\"below_zero_addresses\"]) for k in d[\"kinds\"]])" root.json >actual &&
	echo "[[\"inode_t\", 0, 2]]" >expect && test_cmp expect actual &&
	"$MTANALYZE" --html root.html root.log >/dev/null &&
	grep -q "^<p>301 references dropped that no tracked call took (taken before the recording began, or by a path not tracked), 2 paths, 2 addresses.</p>$" root.html
'

test_done
