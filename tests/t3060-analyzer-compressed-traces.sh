#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3060-analyzer-compressed-traces: gzip, zstd and xz traces are read as
# they are, told by their content (not their name), in every mode, with
# the output of the uncompressed trace byte for byte; compressed rotated
# parts are ordered and read as one run; shrink writes compressed output
# by the name's suffix; data cut short or corrupt is an error naming the
# file, the byte and the line reached.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'compressed traces' 'needs the analyzer and the recorder'
	test_done; exit
fi
for tool in gzip zstd xz; do
	command -v $tool >/dev/null || { test_skip 'compressed traces' "needs $tool"; test_done; exit; }
done
test_lazy_prereq SQLITE3 'command -v sqlite3'

ZEXT="gz zst xz"

# compress FILE: FILE.gz, FILE.zst, FILE.xz beside FILE
compress() {
	gzip -c "$1" >"$1.gz" && zstd -q -c "$1" >"$1.zst" && xz -c "$1" >"$1.xz"
}

# same_output WANT-STATUS ARGS...: mtanalyze ARGS with "@" replaced by
# t.log, then by each compressed copy: the same stdout (trace names made
# alike), the same stderr, the same status.
same_output() {
	want=$1 && shift &&
	run_with t.log "$@" >expect.out 2>expect.err &&
	for z in $ZEXT; do
		run_with t.log.$z "$@" >actual.out 2>actual.err &&
		sed "s/t\.log\.$z/t.log/g" actual.out >actual.norm &&
		sed "s/t\.log\.$z/t.log/g" actual.err >actual.enorm &&
		test_cmp expect.out actual.norm && test_cmp expect.err actual.enorm || return 1
	done
}

# run_with TRACE ARGS...: mtanalyze ARGS, "@" replaced by TRACE, status $want
run_with() {
	rw_t=$1 && shift && rw_args= &&
	for a in "$@"; do
		case $a in @) rw_args="$rw_args $rw_t" ;; *) rw_args="$rw_args $a" ;; esac
	done &&
	test_expect_code "$want" "$MTANALYZE" $rw_args
}

test_expect_success 'record a trace with stacks, compress it three ways' '
	MTREC_QUIET=1 MTREC_DEPTH=8 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/t.log \
		"$HELPER/ana-leaks" &&
	grep -q "^# stack " t.log && compress t.log
'

test_expect_success 'the plain report: byte for byte the uncompressed one' '
	same_output 1 "$HELPER/ana-leaks" @ &&
	same_output 1 --mtrace-exact @
'

test_expect_success MTRACE 'and that is /usr/bin/mtrace'"'"'s report' '
	same_as_mtrace "$HELPER/ana-leaks" t.log -- "$HELPER/ana-leaks" t.log.zst
'

test_expect_success 'by call site, JSON, --growth: the same' '
	same_output 1 --by-site @ &&
	same_output 1 --json "$HELPER/ana-leaks" @ &&
	same_output 0 --growth exponential @
'

test_expect_success SQLITE3 '--db: the same run stored' '
	for t in t.log t.log.gz t.log.zst t.log.xz; do
		test_expect_code 1 "$MTANALYZE" --db $t.db $t >/dev/null &&
		q $t.db "UPDATE runs SET loaded_at = '\'''\'', traces = '\'''\''" &&
		q $t.db .dump >$t.dump || return 1
	done &&
	test_cmp t.log.dump t.log.gz.dump &&
	test_cmp t.log.dump t.log.zst.dump &&
	test_cmp t.log.dump t.log.xz.dump
'

test_expect_success 'diff: compressed on either side' '
	same_output 0 diff t.log @ &&
	same_output 0 diff @ t.log &&
	test_expect_code 0 "$MTANALYZE" diff t.log.gz t.log.xz >out &&
	grep -q "No new or grown leaks" out
'

test_expect_success 'shrink: the same output from compressed input' '
	"$MTANALYZE" shrink -q -o plain.out t.log &&
	for z in $ZEXT; do
		"$MTANALYZE" shrink -q -o $z.out t.log.$z && test_cmp plain.out $z.out || return 1
	done
'

test_expect_success 'by content, not by name: renamed, on standard input' '
	cp t.log.zst renamed.log && cp t.log.gz noext &&
	test_expect_code 1 "$MTANALYZE" t.log >expect &&
	test_expect_code 1 "$MTANALYZE" renamed.log >actual && test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" noext >actual && test_cmp expect actual &&
	test_expect_code 1 "$MTANALYZE" - <t.log.xz >actual && test_cmp expect actual &&
	cat t.log.gz | test_expect_code 1 "$MTANALYZE" - >actual && test_cmp expect actual
'

test_expect_success 'concatenated members and frames are one trace, as zcat reads them' '
	n=$(wc -l <t.log) && half=$((n / 2)) &&
	head -n $half t.log >h1 && tail -n +$((half + 1)) t.log >h2 &&
	gzip -c h1 >cat.gz && gzip -c h2 >>cat.gz &&
	zstd -q -c h1 >cat.zst && zstd -q -c h2 >>cat.zst &&
	xz -c h1 >cat.xz && xz -c h2 >>cat.xz &&
	test_expect_code 1 "$MTANALYZE" t.log >expect &&
	for f in cat.gz cat.zst cat.xz; do
		test_expect_code 1 "$MTANALYZE" $f >actual && test_cmp expect actual || return 1
	done
'

test_expect_success 'shrink -o OUT.zst, .gz, .xz: compressed, read back by the tools and by mtanalyze' '
	"$MTANALYZE" shrink -q -o small.log t.log.gz &&
	"$MTANALYZE" shrink -q -o small.zst t.log &&
	"$MTANALYZE" shrink -q -o small.gz t.log.xz &&
	"$MTANALYZE" shrink -q -o small.xz t.log.zst &&
	zstd -q -d -c small.zst >zst.plain && test_cmp small.log zst.plain &&
	gzip -d -c small.gz >gz.plain && test_cmp small.log gz.plain &&
	xz -d -c small.xz >xz.plain && test_cmp small.log xz.plain &&
	test_expect_code 1 "$MTANALYZE" small.log >expect &&
	test_expect_code 1 "$MTANALYZE" small.zst >actual && test_cmp expect actual
'

test_expect_success 'rotated parts compressed (each its own way): one run, in header order' '
	MTREC_QUIET=1 MTREC_ROTATE=1M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/rot.log \
		"$HELPER/rec-handoff" 2 40000 3 &&
	test -f rot.log.part3 &&
	{ echo rot.log; n=2; while [ -f rot.log.part$n ]; do echo rot.log.part$n; n=$((n + 1)); done; } >order &&
	cat $(cat order) >all.log &&
	test_expect_code 1 "$MTANALYZE" all.log >expect &&
	i=0 && : >zorder &&
	for p in $(cat order); do
		i=$((i + 1)) &&
		case $((i % 4)) in
		0) cp $p $p.c && echo $p.c >>zorder ;;
		1) gzip -c $p >$p.gz && echo $p.gz >>zorder ;;
		2) zstd -q -c $p >$p.zst && echo $p.zst >>zorder ;;
		3) xz -0 -c $p >$p.xz && echo $p.xz >>zorder ;;
		esac || return 1
	done &&
	test_expect_code 1 "$MTANALYZE" $(sort -r zorder) >actual 2>err &&
	test_cmp expect actual && test_must_be_empty err &&
	test_expect_code 1 "$MTANALYZE" --by-site all.log >expect.sites &&
	test_expect_code 1 "$MTANALYZE" --by-site $(sort -r zorder) >actual.sites &&
	test_cmp expect.sites actual.sites
'

test_expect_success 'rotated parts all zstd: the part not given is named with its suffix' '
	for p in $(cat order); do zstd -q -f $p -o $p.zst || return 1; done &&
	test_expect_code 1 "$MTANALYZE" rot.log.zst rot.log.part2.zst >/dev/null 2>err &&
	grep -q "warning: the run continues in .rot.log.part3.zst., not given" err
'

test_expect_success 'a truncated .gz: status 2, the file, the byte and the last line read' '
	size=$(wc -c <t.log.gz) && cut=$((size * 2 / 3)) &&
	head -c $cut t.log.gz >cut.gz &&
	test_expect_code 2 "$MTANALYZE" cut.gz >out 2>err &&
	test_must_be_empty out &&
	cat err &&
	test $(wc -l <err) = 1 &&
	grep -q "^mtanalyze: cut.gz: gzip data cut short at byte $cut, where the file ends: it is truncated; line [1-9][0-9]* was the last one read" err &&
	last=$(sed -n "s/.*; line \([0-9]*\) was the last.*/\1/p" err) &&
	got=$(gzip -d -c cut.gz 2>/dev/null | wc -l) &&
	test "$last" -le "$got" && test "$last" -gt 0
'

test_expect_success 'truncated zstd and xz, in every mode: the same kind of error' '
	for z in zst xz; do
		size=$(wc -c <t.log.$z) && head -c $((size - 20)) t.log.$z >cut.$z &&
		for mode in "" --by-site --json "--db cut.db" "--growth linear"; do
			test_expect_code 2 "$MTANALYZE" $mode cut.$z >out 2>err &&
			test_must_be_empty out &&
			grep -q "^mtanalyze: cut.$z: [a-z]* data cut short at byte $((size - 20))" err || return 1
		done &&
		test_expect_code 2 "$MTANALYZE" shrink -o cut.out cut.$z 2>err &&
		test ! -e cut.out &&
		grep -q "cut short" err || return 1
	done
'

test_expect_success 'corrupt data mid-file: status 2, the byte where decoding stopped' '
	size=$(wc -c <t.log.gz) && mid=$((size / 2)) &&
	{ head -c $mid t.log.gz && printf "\377\377\377\377\377\377\377\377" &&
	  tail -c +$((mid + 9)) t.log.gz; } >bad.gz &&
	test_expect_code 2 "$MTANALYZE" bad.gz >out 2>err &&
	cat err &&
	grep -q "^mtanalyze: bad.gz: corrupt gzip data at byte [0-9]* of the file (.*); line [0-9]* was the last one read" err
'

test_expect_success 'garbage after the compressed data: an error, not silently dropped' '
	{ cat t.log.gz && echo "trailing text"; } >trail.gz &&
	test_expect_code 2 "$MTANALYZE" trail.gz >out 2>err &&
	grep -q "^mtanalyze: trail.gz: corrupt gzip data at byte [0-9]* of the file (other bytes after the gzip data)" err
'

test_done
