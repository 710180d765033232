#!/bin/sh
# t4007-sites-hints: where the answer is one option away, the report says
# it -- a program deleted since the recording is "not found" (not "no
# symbols"), naming BINARY and --sysroot; a trace without stacks whose
# leaks sit in a known wrapper names --depth 16; --help lists compact.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ]; then
	test_skip 'hints' 'needs the analyzer and the recorder'
	test_done; exit
fi

test_expect_success 'a program deleted since the recording: not found, and what to pass' '
	cp "$HELPER/ana-stripped" gone &&
	"$MTREC" -o g.log ./gone &&
	test_expect_code 1 "$MTANALYZE" --by-site g.log >kept &&
	! grep -q "^Not found" kept &&
	rm gone &&
	test_expect_code 1 "$MTANALYZE" --by-site g.log >out &&
	cat out &&
	grep -q "^Not found: $OUT/gone (deleted or moved since the recording, or recorded on another machine): .*mtanalyze BINARY TRACE.*--sysroot DIR" out &&
	! grep -q "^No symbols" out &&
	cp "$HELPER/ana-stripped" again &&
	test_expect_code 1 "$MTANALYZE" --by-site again g.log >named &&
	! grep -q "^Not found" named
'

test_expect_success 'no stacks, leaks in a known wrapper: --depth 16 would show the callers' '
	"$MTREC" -o d1.log --depth 1 "$HELPER/ana-gluster-wrappers" &&
	test_expect_code 1 "$MTANALYZE" --by-site d1.log >d1 &&
	grep -q "^[0-9]* of the [0-9]* leaked blocks are charged to allocation wrappers (.*__gf_calloc.*): the trace has no stacks" d1 &&
	grep -q "mtrec --depth 16. or MTREC_DEPTH=16" d1 &&
	test_expect_code 1 "$MTANALYZE" --json d1.log >d1.json &&
	grep -q "\"depth_suggestion\": {\"depth\": 16, \"wrappers\": \".*__gf_calloc" d1.json &&
	"$MTREC" -o d16.log --depth 16 "$HELPER/ana-gluster-wrappers" &&
	test_expect_code 1 "$MTANALYZE" --by-site d16.log >d16 &&
	! grep -q "MTREC_DEPTH=16" d16
'

test_expect_success '--help lists compact with the other subcommands' '
	"$MTANALYZE" --help >help &&
	grep -q "^mtanalyze compact TRACE" help &&
	grep -q "^mtanalyze shrink TRACE" help
'

test_done
