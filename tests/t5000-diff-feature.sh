#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t5000: mtanalyze diff isolates the leaks of a feature patch.  The demo
# (share/demo/demo.c) is built twice in two directories, as is and with
# patches/demo-request-tags.patch, which adds one leaking line and moves
# the code around the old leaks; both builds are recorded with several
# threads, and diff must report exactly the patch's leaking line.
. "$(dirname "$0")/lib.sh"

SUPP="$TOP/share/demo/demo.supp"
PATCH="$TOP/patches/demo-request-tags.patch"

# rows FILE: the site rows of a diff report, as "CHANGE FUNCTION FILE:LINE"
rows() {
	sed -n -e 's/^  \(new\|grew\|less\|gone\) .*  \([^ ]*\) at \([^ ]*\) in .*/\1 \2 \3/p' "$1"
}

if ! need_analyzer; then
	test_skip 'mtanalyze diff' 'analyzer not built'
	test_done
	exit
fi

test_expect_success 'build the demo as is and with the feature patch, in two trees' '
	mkdir -p base/share/demo feature/share/demo &&
	cp "$TOP/share/demo/demo.c" base/share/demo/ &&
	cp "$TOP/share/demo/demo.c" feature/share/demo/ &&
	patch -s -p1 -d feature <"$PATCH" &&
	$CC -g -O0 -pthread -o base/demo base/share/demo/demo.c &&
	$CC -g -O0 -pthread -o feature/demo feature/share/demo/demo.c &&
	# the one allocation the patch adds (lines it only moves are both
	# removed and added), found in the patched source
	sed -n -e "/^+++ /d" -e "s/^+//p" "$PATCH" | sort >plus &&
	sed -n -e "/^--- /d" -e "s/^-//p" "$PATCH" | sort >minus &&
	comm -23 plus minus | grep "alloc (" >added &&
	test $(wc -l <added) = 1 &&
	grep -n -F -x -f added feature/share/demo/demo.c | cut -d: -f1 >tag-line &&
	test $(wc -l <tag-line) = 1
'
TAG_LINE=$(cat tag-line 2>/dev/null)
NEW_SITE="new handle_request $OUT/feature/share/demo/demo.c:$TAG_LINE"

test_expect_success 'record both with 4 threads, and the base twice' '
	"$MTREC" -o base.log --depth 16 base/demo 4 400 &&
	"$MTREC" -o base2.log --depth 16 base/demo 4 400 &&
	"$MTREC" -o feature.log --depth 16 feature/demo 4 400
'

test_expect_success 'the patch moved every old leak to another line' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 base.log >base.sites &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 feature.log >feature.sites &&
	for f in load_config handle_request cache_open cache_chunk_new; do
		b=$(sed -n "s/.* $f at .*demo.c:\([0-9]*\) in .*/\1/p" base.sites | head -n 1) &&
		f=$(sed -n "s/.* $f at .*demo.c:\([0-9]*\) in .*/\1/p" feature.sites | tail -n 1) &&
		test -n "$b" && test -n "$f" && test "$b" != "$f" || return 1
	done
'

test_expect_success 'diff reports exactly the patch'"'"'s leaking line, exit 1' '
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" base.log feature.log >out &&
	cat out &&
	echo "$NEW_SITE" >expect &&
	rows out >actual &&
	test_cmp expect actual &&
	grep "^New or grown leaks in FEATURE: 1 site, +400 blocks" out &&
	! grep "^Leaks smaller or gone" out
'

test_expect_success 'the same with --no-source (pairing by caller and block size)' '
	test_expect_code 1 "$MTANALYZE" diff --no-source --suppressions "$SUPP" base.log feature.log >out &&
	rows out >actual &&
	test_cmp expect actual
'

test_expect_success 'the same facts with --json' '
	test_expect_code 1 "$MTANALYZE" diff --json --suppressions "$SUPP" base.log feature.log >out.json &&
	if command -v jq >/dev/null; then
		jq -e ".format == \"mtanalyze-diff\" and (.new_or_grown | length) == 1 and
			.new_or_grown[0].change == \"new\" and .new_or_grown[0].line == $TAG_LINE and
			.new_or_grown[0].function == \"handle_request\" and
			.new_or_grown[0].delta_blocks == 400 and .new_or_grown[0].base_line == null and
			(.smaller_or_gone | length) == 0" out.json
	else
		grep "\"change\": \"new\", \"function\": \"handle_request\".*\"line\": $TAG_LINE," out.json
	fi
'

test_expect_success 'runs loaded into a database compare the same way' '
	rm -f runs.db &&
	test_expect_code 1 "$MTANALYZE" --db runs.db base.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" --db runs.db feature.log >/dev/null &&
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" runs.db:1 runs.db:-1 >out &&
	rows out >actual &&
	test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" runs.db:1 feature.log >out &&
	rows out >actual &&
	test_cmp expect actual
'

test_expect_success 'a run against itself: nothing, exit 0' '
	"$MTANALYZE" diff feature.log feature.log >out &&
	grep "^No new or grown leaks in FEATURE.$" out &&
	rows out >actual && test_must_be_empty actual &&
	"$MTANALYZE" diff runs.db:2 runs.db:2 >out &&
	rows out >actual && test_must_be_empty actual &&
	"$MTANALYZE" diff --json base.log base.log >out.json &&
	grep "\"new_or_grown\": \[\]" out.json
'

test_expect_success 'two runs of the same build: nothing once the caches are suppressed' '
	"$MTANALYZE" diff --suppressions "$SUPP" base.log base2.log >out &&
	rows out >actual && test ! -s actual
'

test_expect_success 'the gone direction: FEATURE as base lists the tag line as gone, exit 0' '
	"$MTANALYZE" diff --suppressions "$SUPP" feature.log base.log >out &&
	rows out >actual &&
	echo "gone handle_request $OUT/feature/share/demo/demo.c:$TAG_LINE" >expect.gone &&
	test_cmp expect.gone actual
'

# Noise: the per-thread caches leak one block per thread and chunks as
# the scheduler shares the requests; 2 threads against 6 makes it grow.
test_expect_success 'noise: 2 threads against 6, the caches grow' '
	"$MTREC" -o base-2t.log --depth 16 base/demo 2 400 &&
	"$MTREC" -o feature-6t.log --depth 16 feature/demo 6 400 &&
	test_expect_code 1 "$MTANALYZE" diff base-2t.log feature-6t.log >out &&
	rows out >actual &&
	grep "^grew cache_open .*/feature/share/demo/demo.c:" actual &&
	grep "^  grew  *2 -> 6 (+4) .* cache_open at" out &&
	grep -x "$NEW_SITE" actual
'

test_expect_success 'noise: a suppression file leaves the caches out' '
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" base-2t.log feature-6t.log >out &&
	rows out >actual &&
	test_cmp expect actual &&
	grep "leaking sites of the two runs suppressed" out
'

test_expect_success 'noise: --min-blocks / --min-bytes leave small changes out' '
	test_expect_code 1 "$MTANALYZE" diff --min-blocks 100 base-2t.log feature-6t.log >out &&
	rows out >actual &&
	test_cmp expect actual &&
	grep "under --min-blocks 100" out &&
	test_expect_code 1 "$MTANALYZE" diff --min-bytes 5000 base-2t.log feature-6t.log >out &&
	rows out >actual &&
	test_cmp expect actual &&
	"$MTANALYZE" diff --min-blocks 100000 base-2t.log feature-6t.log >out &&
	grep "^No new or grown leaks" out
'

test_expect_success 'suppression rules: file:line with wildcards, object, caller' '
	printf "file=demo.c:%s\n" "$TAG_LINE" >tag.supp &&
	"$MTANALYZE" diff --suppressions "$SUPP" --suppressions tag.supp base.log feature.log >out &&
	rows out >actual && test ! -s actual &&
	echo "file=*/feature/share/demo/demo.?:*  # the whole patched file" >file.supp &&
	"$MTANALYZE" diff --suppressions file.supp base.log feature.log >out &&
	grep "^No new or grown leaks" out &&
	echo "object=demo" >object.supp &&
	"$MTANALYZE" diff --suppressions object.supp base.log feature.log >out &&
	grep "^No new or grown leaks" out &&
	echo "caller=worker function=handle_*" >caller.supp &&
	"$MTANALYZE" diff --suppressions "$SUPP" --suppressions caller.supp base.log feature.log >out &&
	grep "^No new or grown leaks" out &&
	echo "caller=main function=handle_*" >caller2.supp &&
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" --suppressions caller2.supp base.log feature.log >out
'

test_expect_success 'a suppression file it cannot use: status 2, with the line' '
	printf "# ok\nfunction=a\nsize=12\n" >bad.supp &&
	test_expect_code 2 "$MTANALYZE" diff --suppressions bad.supp base.log feature.log 2>err &&
	grep "^mtanalyze: bad.supp:3: cannot use '"'"'size=12'"'"'" err &&
	test_expect_code 2 "$MTANALYZE" diff --suppressions missing.supp base.log feature.log 2>err &&
	grep "^mtanalyze: cannot read '"'"'missing.supp'"'"'" err
'

test_expect_success 'usage errors exit 2 with one line and where to look; unusable input 2' '
	test_expect_code 2 "$MTANALYZE" diff base.log >out 2>err &&
	grep -q "takes two runs, BASE and FEATURE" err &&
	grep -qx "Try .mtanalyze diff --help. for more information." err &&
	test_expect_code 2 "$MTANALYZE" diff runs.db base.log 2>err &&
	grep "name one of its runs, as .runs.db:1." err &&
	test_expect_code 2 "$MTANALYZE" diff runs.db:9 base.log 2>err &&
	grep "has no run 9" err &&
	test_expect_code 2 "$MTANALYZE" diff nothing.log base.log 2>err &&
	grep "^mtanalyze: cannot read '"'"'nothing.log'"'"'" err &&
	test_expect_code 2 "$MTANALYZE" diff added:base.log base.log 2>err &&
	grep "neither a program" err
'

test_expect_success 'BINARY:TRACE and the parts of a trace' '
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" base/demo:base.log feature/demo:feature.log >out &&
	rows out >actual && test_cmp expect actual &&
	head -n 20 feature.log >part1 && tail -n +21 feature.log >part2 &&
	test_expect_code 1 "$MTANALYZE" diff --suppressions "$SUPP" base.log part1,part2 >out &&
	rows out >actual && test_cmp expect actual
'

test_done
