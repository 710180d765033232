#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3050-analyzer-unusable-input: a trace in which no line is a trace line
# (empty, NUL bytes only, binary junk, text that is no trace, an ELF file
# given as the trace, compressed data of an unsupported kind) exits 2 with
# one message naming the file and what it holds, in every mode, before any
# output: no run stored (the database left as it was), no shrink output.
# "= Start" and "= End" alone are a trace of nothing (status 0); a trace
# with some unreadable lines is read as before, one whose event lines are
# all unreadable is unusable in every mode (the plain report still prints
# what the script prints, then exits 2); among rotated parts, a
# part without a trace line is named in a warning.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer; then
	test_skip 'unusable input' 'needs the analyzer'
	test_done; exit
fi

# The junk, and what the message says of each.
: >empty.log
head -c 65536 /dev/zero >nul.log
# random bytes, without a "\n#" or "\n=" that could start a text line
head -c 200000 /dev/urandom | tr '\n' 'x' | tr '#=@' 'abc' | fold -b -w 300 >junk.log
printf 'hello\nthis is a README, not a trace\n#!/bin/sh\n' >text.log
printf '\n\n   \n' >blank.log
cp "$HELPER/ana-leaks" elf.log
printf '= Start\n= End\n' >se.log
have_bzip2=no
command -v bzip2 >/dev/null && bzip2 -c se.log >bz2.log && have_bzip2=yes

cat >kinds <<'EOF'
empty.log empty file
nul.log only NUL bytes
junk.log binary data, not a trace: no line of it is a trace line
text.log text, but not a trace: no line of it is a trace line
blank.log only blank lines
elf.log an ELF file, not a trace: did you forget the TRACE argument?
EOF
[ $have_bzip2 = yes ] &&
	echo "bz2.log bzip2 data: only gzip, zstd and xz data are read; decompress it with bunzip2" >>kinds

# each_kind CMD...: for every kind of junk J, CMD with "@" replaced by J
# exits 2, prints nothing, and says "mtanalyze: J: WHAT" alone on stderr.
each_kind() {
	while read -r f what; do
		printf 'mtanalyze: %s: %s\n' "$f" "$what" >expect.err &&
		args= && for a in "$@"; do
			case $a in @) args="$args $f" ;; *) args="$args $a" ;; esac
		done &&
		test_expect_code 2 $args >out 2>err &&
		test_must_be_empty out &&
		test_cmp expect.err err || return 1
	done <kinds
}

test_expect_success 'the plain report: status 2, one message naming the file and what it holds' '
	each_kind "$MTANALYZE" @
'

test_expect_success 'by call site, JSON, --growth: the same' '
	each_kind "$MTANALYZE" --by-site @ &&
	each_kind "$MTANALYZE" --json @ &&
	each_kind "$MTANALYZE" --growth linear,exponential @
'

test_expect_success '--db: no database created, an existing one left as it was' '
	each_kind "$MTANALYZE" --db new.db @ &&
	test ! -e new.db &&
	"$MTANALYZE" --db old.db se.log >/dev/null &&
	cp old.db old.db.before &&
	each_kind "$MTANALYZE" --db old.db @ &&
	cmp old.db.before old.db
'

test_expect_success 'diff: either side unusable' '
	each_kind "$MTANALYZE" diff @ se.log &&
	each_kind "$MTANALYZE" diff se.log @
'

test_expect_success 'shrink: status 2, no output file left' '
	each_kind "$MTANALYZE" shrink -o shrunk.log @ &&
	test ! -e shrunk.log && test ! -e shrunk.log.tmp
'

test_expect_success 'the ELF given with a BINARY: still no trace' '
	test_expect_code 2 "$MTANALYZE" "$HELPER/ana-leaks" elf.log >out 2>err &&
	test_must_be_empty out &&
	echo "mtanalyze: elf.log: an ELF file, not a trace: did you forget the TRACE argument?" >expect &&
	test_cmp expect err
'

test_expect_success 'junk compressed: what it holds, and in which data' '
	gzip -c nul.log >nul.gz &&
	test_expect_code 2 "$MTANALYZE" nul.gz >out 2>err &&
	echo "mtanalyze: nul.gz: only NUL bytes (gzip data)" >expect &&
	test_cmp expect err &&
	gzip -c empty.log >empty.gz &&
	test_expect_code 2 "$MTANALYZE" --json empty.gz >out 2>err &&
	echo "mtanalyze: empty.gz: empty file (gzip data)" >expect &&
	test_cmp expect err
'

test_expect_success 'standard input: the same rule' '
	test_expect_code 2 "$MTANALYZE" - <nul.log >out 2>err &&
	echo "mtanalyze: <stdin>: only NUL bytes" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$MTANALYZE" - <empty.log >out 2>err &&
	echo "mtanalyze: <stdin>: empty file" >expect &&
	test_cmp expect err &&
	printf "" | test_expect_code 2 "$MTANALYZE" - >out 2>err &&
	echo "mtanalyze: <stdin>: empty input" >expect &&
	test_cmp expect err &&
	cat nul.log | test_expect_code 2 "$MTANALYZE" --json - >out 2>err &&
	echo "mtanalyze: <stdin>: only NUL bytes" >expect &&
	test_cmp expect err &&
	test_expect_code 2 "$MTANALYZE" - <elf.log >out 2>err &&
	grep -q "^mtanalyze: <stdin>: an ELF file, not a trace" err
'

test_expect_success '"= Start" and "= End" alone: a trace of nothing, no leaks, status 0' '
	"$MTANALYZE" se.log >out 2>err &&
	echo "No memory leaks." >expect && test_cmp expect out && test_must_be_empty err &&
	"$MTANALYZE" --by-site se.log >out &&
	"$MTANALYZE" --json se.log >out &&
	"$MTANALYZE" --growth linear se.log >out &&
	"$MTANALYZE" diff se.log se.log >out &&
	"$MTANALYZE" shrink -q -o se.out se.log && test_cmp se.log se.out
'

test_expect_success MTRACE '"= Start" and "= End" alone: what the script says too' '
	same_as_mtrace se.log -- se.log
'

test_expect_success 'some unreadable lines: warnings with line numbers, the analysis goes on' '
	{ echo "= Start" && echo "@ ./app:[0x10] + 0x1000 0x10" && echo "garbage here" &&
	  printf "\001\002\003\n" && echo "= End"; } >some.log &&
	test_expect_code 1 "$MTANALYZE" some.log >out 2>err &&
	grep -q "^Memory not freed:" out &&
	grep -q "^mtanalyze: some.log:3: unreadable line .garbage here.$" err &&
	grep -q "^mtanalyze: some.log:4: unreadable line" err
'

# Event lines that are all unreadable (a size that is no number): the
# script reads each as a leak, every other mode could read nothing.
awk 'BEGIN { print "= Start"; for (i = 1; i <= 1000; i++) printf "@ ./app:[0x10] + 0x%x zz\n", 4096 + 16 * i;
	print "= End" }' >unread.log
unread_msg="mtanalyze: unread.log: unusable: none of its 1000 event lines could be read (the first at line 2), so nothing can be said of its leaks"

test_expect_success 'event lines all unreadable: --by-site, --json, --growth, --folded: status 2, no report' '
	for mode in --by-site --json "--growth linear" --folded "--leaks all"; do
		test_expect_code 2 "$MTANALYZE" -q $mode unread.log >out 2>err &&
		test_must_be_empty out &&
		echo "$unread_msg" >expect && test_cmp expect err || return 1
	done
'

test_expect_success 'event lines all unreadable: --db, --html: nothing written' '
	test_expect_code 2 "$MTANALYZE" -q --db unread.db unread.log >out 2>err &&
	test_must_be_empty out && test ! -e unread.db &&
	"$MTANALYZE" --db old2.db se.log >/dev/null && cp old2.db old2.db.before &&
	test_expect_code 2 "$MTANALYZE" -q --db old2.db unread.log >out 2>err &&
	cmp old2.db.before old2.db &&
	test_expect_code 2 "$MTANALYZE" -q --html unread.html unread.log >out 2>err &&
	test_must_be_empty out && test ! -e unread.html &&
	echo "$unread_msg" >expect && test_cmp expect err
'

test_expect_success 'event lines all unreadable: diff (either side), session, shrink: status 2' '
	test_expect_code 2 "$MTANALYZE" diff -q unread.log se.log >out 2>err &&
	test_must_be_empty out && grep -qxF "$unread_msg" err &&
	test_expect_code 2 "$MTANALYZE" diff -q se.log unread.log >out 2>err &&
	test_must_be_empty out && grep -qxF "$unread_msg" err &&
	test_expect_code 2 "$MTANALYZE" session -q unread.log >out 2>err &&
	test_must_be_empty out && grep -qxF "$unread_msg" err &&
	test_expect_code 2 "$MTANALYZE" shrink -q -o unread.out unread.log >out 2>err &&
	test ! -e unread.out && grep -qxF "$unread_msg" err
'

test_expect_success MTRACE 'event lines all unreadable, plain report: the script'"'"'s stdout, status 2' '
	test_expect_code 1 /usr/bin/mtrace unread.log >expect 2>/dev/null &&
	grep -q "^0x0000000000001010 " expect &&
	test_expect_code 2 "$MTANALYZE" --mtrace-exact unread.log >actual 2>err &&
	test_cmp expect actual &&
	tail -n 1 err >err.last && echo "$unread_msg" >expect && test_cmp expect err.last &&
	sed "s/^@ .* + 0x[0-9a-f]* zz/@ x + zz 0x10/" unread.log >zz.log &&
	/usr/bin/mtrace zz.log >expect 2>/dev/null &&
	echo "No memory leaks." >no-leaks && test_cmp no-leaks expect &&
	test_expect_code 2 "$MTANALYZE" -q --mtrace-exact zz.log >actual 2>err &&
	test_cmp expect actual && grep -q "^mtanalyze: zz.log: unusable: none of its 1000 event" err
'

test_expect_success 'one readable event among them: read as before, with the warnings' '
	sed "500s/ zz\$/ 0x10/" unread.log >one.log &&
	test_expect_code 1 "$MTANALYZE" one.log >out 2>err &&
	grep -q "^mtanalyze: 999 unreadable lines in all, 5 shown" err &&
	test_expect_code 1 "$MTANALYZE" --json one.log >out 2>err &&
	py "d[\"run\"][\"leaked_blocks\"]" out >n && echo 1 >expect && test_cmp expect n &&
	test_expect_code 1 "$MTANALYZE" diff -q se.log one.log >out
'

test_expect_success 'rotated parts: a part without a trace line is named, the run read' '
	echo "@ ./app:[0x10] + 0x2000 0x10" >part2.log &&
	test_expect_code 1 "$MTANALYZE" some.log nul.log part2.log >out 2>err &&
	grep -q "^mtanalyze: warning: nul.log: only NUL bytes: no trace line in this part of the run$" err &&
	grep -q "^0x0*2000 " out
'

test_expect_success 'rotated parts: no part with a trace line, every one named' '
	test_expect_code 2 "$MTANALYZE" empty.log nul.log >out 2>err &&
	test_must_be_empty out &&
	echo "mtanalyze: empty.log: empty file; nul.log: only NUL bytes" >expect &&
	test_cmp expect err
'

test_expect_success 'rotated parts: an ELF among them is an error all the same' '
	test_expect_code 2 "$MTANALYZE" se.log elf.log >out 2>err &&
	test_must_be_empty out &&
	grep -q "^mtanalyze: elf.log: an ELF file, not a trace" err
'

test_done
