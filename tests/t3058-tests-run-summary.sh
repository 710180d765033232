#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3058-tests-run-summary: tests/run.sh ends with the names of the scripts
# that failed, and which of their tests, on the line before its closing
# "N passed, N failed, N skipped" (still the very last line), so that a
# newcomer whose `make check` failed 40 minutes in sees what to look at
# without scrolling back through thousands of lines; one script at a time
# and several (MTREC_TEST_JOBS) alike.
. "$(dirname "$0")/lib.sh"

# A tree of four scripts: two failing tests, a known breakage, a script
# that exits non-zero with its tests passed, one that passes.
mkdir -p tree/tests &&
cp "$TOP/tests/run.sh" "$TOP/tests/lib.sh" tree/tests/ &&
cat >tree/tests/t0001-two-fail.sh <<'T'
. "$(dirname "$0")/lib.sh"
test_expect_success 'passes' 'true'
test_expect_success 'fails' 'false'
test_expect_failure 'a known breakage' 'false'
test_expect_success 'fails too' 'false'
test_done
T
cat >tree/tests/t0002-exits.sh <<'T'
. "$(dirname "$0")/lib.sh"
test_expect_success 'passes' 'true'
test_done
exit 3
T
cat >tree/tests/t0003-passes.sh <<'T'
. "$(dirname "$0")/lib.sh"
test_expect_success 'passes' 'true'
test_done
T

cat >expect <<'EOF2'
failed: t0001-two-fail.sh (#2, #4), t0002-exits.sh (exit 3)
3 passed, 3 failed, 0 skipped
EOF2

test_expect_success 'the failed scripts named before the closing line' '
	test_expect_code 1 sh tree/tests/run.sh >out 2>&1 &&
	tail -n 2 out >actual && test_cmp expect actual
'

test_expect_success 'several scripts at a time: the same' '
	test_expect_code 1 env MTREC_TEST_JOBS=2 sh tree/tests/run.sh >out 2>&1 &&
	tail -n 2 out >actual && test_cmp expect actual
'

test_expect_success 'all passed: the closing line alone, last' '
	sh tree/tests/run.sh t0003-passes.sh >out 2>&1 &&
	! grep -q "^failed:" out &&
	tail -n 1 out >actual && echo "1 passed, 0 failed, 0 skipped" >expect1 &&
	test_cmp expect1 actual
'

test_done
