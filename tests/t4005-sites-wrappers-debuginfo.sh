#!/bin/sh
# t4005-sites-wrappers-debuginfo: the leaks of real programs recorded with
# stacks land on the right function (issue 11): GlusterFS-like wrappers
# from the default list are skipped; a wrapper no list knows is named in a
# '--skip' suggestion; a stripped program's wrapper is skipped by offset
# (0xOFF, OBJECT+0xOFF), its debug file is found through --debug-dir, a
# build-id directory and --sysroot, and without one the report says so;
# a BINARY of another build is warned about once in every mode and never
# gives a wrong answer.  (Without --no-auto-skip the stripped wrapper is
# found and skipped by itself: t4009.)
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'wrappers and debug files' 'needs the analyzer and the recorder'
	test_done; exit
fi
SRC="$TOP/tests/helper/ana-gluster-wrappers.c"
APP="$TOP/tests/helper/ana-gluster-wrappers"
SSRC="$TOP/tests/helper/ana-stripped.c"

# row BLOCKS FUNCTION [FILE:LINE] FILE: the report has a row of BLOCKS
# blocks charged to FUNCTION (at FILE:LINE when given)
row() {
	if [ $# -eq 4 ]; then
		grep -E "^ +$1 +[0-9]+  $2 at $3 in " "$4"
	else
		grep -E "^ +$1 +[0-9]+  $2 in " "$3"
	fi
}

test_lazy_prereq OBJCOPY 'command -v objcopy'

test_expect_success 'record the GlusterFS-like fixture at depth 16' '
	"$MTREC" -o gf.log --depth 16 "$APP" &&
	"$MTREC" -o pool.log --depth 16 "$APP" pool &&
	grep -q "^# stack" gf.log
'

test_expect_success '__gf_calloc, mem_get0, gf_strdup, __gf_malloc: charged to their 3 callers' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 gf.log >gf &&
	cat gf &&
	row 4 inode_new "$SRC:$(line_of LEAK-INODE)" gf &&
	row 3 dict_new "$SRC:$(line_of LEAK-DICT)" gf &&
	row 2 xlator_set_name "$SRC:$(line_of LEAK-NAME)" gf &&
	! grep -E "  (__gf_|mem_get|gf_strdup)" gf &&
	! grep -q "^Most leaked blocks" gf
'

test_expect_success 'a wrapper no list knows: one line suggests --skip, which then works' '
	test_expect_code 1 "$MTANALYZE" --by-site pool.log >pool &&
	row 6 slab_take "$SRC:$(line_of SLAB-CALL)" pool &&
	tail -n 1 pool >last &&
	grep -q "^Most leaked blocks (6 of 6) are charged to slab_take, called from 3 places: .*.--skip slab_take. charges them to its callers" last &&
	test_expect_code 1 "$MTANALYZE" --by-site --skip slab_take pool.log >skipped &&
	row 3 fd_create "$SRC:$(line_of POOL-FD)" skipped &&
	row 2 stub_new "$SRC:$(line_of POOL-STUB)" skipped &&
	row 1 frame_new "$SRC:$(line_of POOL-FRAME)" skipped &&
	! grep -q "^Most leaked blocks" skipped &&
	test_expect_code 1 "$MTANALYZE" --by-site --no-skip pool.log >noskip &&
	! grep -q "^Most leaked blocks" noskip
'

test_expect_success PYTHON3 '--json: run.skip_suggestion, null when there is nothing to say' '
	test_expect_code 1 "$MTANALYZE" --json pool.log >pool.json &&
	test "$(py "d[\"run\"][\"skip_suggestion\"][\"skip\"], d[\"run\"][\"skip_suggestion\"][\"callers\"], d[\"run\"][\"skip_suggestion\"][\"leaked_blocks\"]" pool.json)" = "slab_take 3 6" &&
	test_expect_code 1 "$MTANALYZE" --json gf.log >gf.json &&
	test "$(py "d[\"run\"][\"skip_suggestion\"]" gf.json)" = None
'

test_expect_success OBJCOPY 'a stripped copy, its debug file kept apart, recorded at depth 16' '
	cp "$TOP/tests/helper/ana-stripped" full &&
	objcopy --only-keep-debug full app.debug &&
	mkdir bin dbg &&
	objcopy --strip-all full bin/app &&
	(cd bin && objcopy --add-gnu-debuglink=../app.debug app) &&
	mv app.debug dbg/ &&
	! readelf -S bin/app | grep -q "\.symtab" &&
	"$MTREC" -o s.log --depth 16 bin/app &&
	readelf -n bin/app | sed -n "s/.*Build ID: //p" >id &&
	test -s id
'

test_expect_success OBJCOPY 'no symbols, --no-auto-skip: offsets, the note once, and a --skip OBJECT+0xOFF suggestion' '
	test_expect_code 1 "$MTANALYZE" --by-site --no-auto-skip s.log >s &&
	cat s &&
	off=$(sed -n "s/^ *6 *[0-9]*  \(0x[0-9a-f]*\) in .*bin\/app .*/\1/p" s) &&
	test -n "$off" && echo "$off" >off &&
	test $(grep -c "^No symbols for $OUT/bin/app (no .symtab, no debug file found for build-id $(cat id)): .*--debug-dir" s) = 1 &&
	grep -q "^Most leaked blocks (6 of 6) are charged to $off, called from 3 places: .*.--skip app+$off." s
'

test_expect_success OBJCOPY '--skip 0xOFF and --skip OBJECT+0xOFF move the charge to the 3 callers' '
	off=$(cat off) &&
	for skip in "$off" "app+$off" "$OUT/bin/app+$off"; do
		test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --skip "$skip" s.log >k || exit 1
		grep -E "^ +[0-9]" k >rows || exit 1
		cut -c1-9 rows | tr -d " " | sort >counts || exit 1
		printf "1\n2\n3\n" >expect && test_cmp expect counts || exit 1
		! grep -q "  $off in" rows || exit 1
		! grep -q "^Most leaked blocks" k || exit 1
	done &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --no-auto-skip --skip "other+$off" s.log >k &&
	grep -q "^ *6 .*  $off in" k
'

test_expect_success OBJCOPY 'the debug file through --debug-dir: by name, and by build-id' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --debug-dir dbg s.log >named &&
	row 3 new_port "$SSRC:$(line_of LEAK-PORT "$SSRC")" named &&
	row 2 new_flow "$SSRC:$(line_of LEAK-FLOW "$SSRC")" named &&
	row 1 new_bridge "$SSRC:$(line_of LEAK-BRIDGE "$SSRC")" named &&
	! grep -q -e "^No symbols" -e "^Most leaked" named &&
	id=$(cat id) && d=${id%"${id#??}"} &&
	mkdir -p byid/.build-id/$d && cp dbg/app.debug byid/.build-id/$d/${id#??}.debug &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --debug-dir byid s.log >byid.out &&
	row 3 new_port "$SSRC:$(line_of LEAK-PORT "$SSRC")" byid.out &&
	test_expect_code 2 "$MTANALYZE" --by-site --debug-dir no-such-dir s.log 2>err &&
	grep -q "no-such-dir.: not a directory" err
'

test_expect_success OBJCOPY '--sysroot: the object and its debug file under SYSROOT/usr/lib/debug' '
	id=$(cat id) && d=${id%"${id#??}"} &&
	mkdir -p "root$OUT/bin" root/usr/lib/debug/.build-id/$d &&
	cp bin/app "root$OUT/bin/" &&
	cp dbg/app.debug root/usr/lib/debug/.build-id/$d/${id#??}.debug &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --sysroot root s.log >sys &&
	row 3 new_port "$SSRC:$(line_of LEAK-PORT "$SSRC")" sys &&
	rm -r root/usr/lib/debug/.build-id &&
	mkdir -p "root/usr/lib/debug$OUT/bin" && cp dbg/app.debug "root/usr/lib/debug$OUT/bin/" &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 0 --sysroot root s.log >sys2 &&
	row 2 new_flow "$SSRC:$(line_of LEAK-FLOW "$SSRC")" sys2
'

# same_without MODE-ARGS: mtanalyze MODE-ARGS other gf.log prints what it
# prints without the wrong BINARY (but for the BINARY itself, and the run's
# number in a database), and warns once, naming both build-ids.
same_without() {
	st=0 && "$MTANALYZE" "$@" other gf.log >with 2>err || st=$? &&
	test "$st" = 1 &&
	test_expect_code 1 "$MTANALYZE" "$@" gf.log >without &&
	sed -e "/\"binary\":/d" -e "s/^run [0-9]* loaded/run loaded/" with >with.cmp &&
	sed -e "/\"binary\":/d" -e "s/^run [0-9]* loaded/run loaded/" without >without.cmp &&
	test_cmp without.cmp with.cmp &&
	test "$(grep -c "warning: .other. does not match the traced object (build-id $(cat other.id), trace has $(cat gf.id))" err)" = 1 &&
	test "$(wc -l <err)" = 1
}

test_expect_success 'a BINARY of another build: warned once, in the plain report too, never used' '
	$CC -O1 -g -DDIFFERENT -o other "$SRC" &&
	readelf -n other | sed -n "s/.*Build ID: //p" >other.id &&
	readelf -n "$APP" | sed -n "s/.*Build ID: //p" >gf.id &&
	! test_cmp gf.id other.id &&
	same_without &&
	grep -q "ana-gluster-wrappers.c:" with
'

test_expect_success 'the same in --by-site and --json' '
	same_without --by-site &&
	row 4 inode_new "$SRC:$(line_of LEAK-INODE)" with &&
	same_without --json
'

test_expect_success SQLITE3 'the same with --db' '
	same_without --db w.db &&
	q w.db "SELECT s.function, t.leaked_blocks FROM site_stats t JOIN sites s ON s.id = t.site_id
		WHERE t.run_id = 1 AND t.leaked_blocks > 0 ORDER BY 1" >run1 &&
	q w.db "SELECT s.function, t.leaked_blocks FROM site_stats t JOIN sites s ON s.id = t.site_id
		WHERE t.run_id = 2 AND t.leaked_blocks > 0 ORDER BY 1" >run2 &&
	test_cmp run2 run1 &&
	grep -q "^inode_new|4" run1
'

test_expect_success 'the same in diff (BINARY:TRACE), once per side' '
	test_expect_code 1 "$MTANALYZE" diff other:gf.log other:pool.log >d.with 2>err &&
	test_expect_code 1 "$MTANALYZE" diff gf.log pool.log >d.without &&
	sed "s/other://" d.with >d.cmp &&
	test_cmp d.without d.cmp &&
	test "$(grep -c "warning: .other. does not match the traced object (build-id $(cat other.id), trace has $(cat gf.id))" err)" = 2
'

test_done
