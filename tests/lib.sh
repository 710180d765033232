# tests/lib.sh -- a small TAP test library in the manner of git's t/.
#
# A test script sources this file, runs test_expect_success for each
# behaviour it proves, and ends with test_done.  Each script runs in its own
# scratch directory, tests/out/NAME, so tests never see each other's files.

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
NAME=$(basename "$0" .sh)
OUT="$TOP/tests/out/$NAME"
rm -rf "$OUT" && mkdir -p "$OUT" && cd "$OUT" || exit 1

LIBMTREC="$TOP/recorder/libmtrec.so"
MTREC="$TOP/recorder/mtrec"
MTANALYZE="$TOP/analyzer/mtanalyze"
# make check-valgrind: every mtanalyze run under memcheck (tests/vg-mtanalyze)
[ -n "${MTA_VALGRIND:-}" ] && MTANALYZE="$TOP/tests/vg-mtanalyze"
HELPER="$TOP/tests/helper"
GLIBC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
CC=${CC:-cc}
export LC_ALL=C

test_count=0
test_failed=0
test_skipped=0

say() { printf '# %s\n' "$*"; }

# test_expect_success TITLE BODY: run BODY in a subshell; ok when it exits 0.
test_expect_success() {
	test_count=$((test_count + 1))
	if (set -e; eval "$2") >"$OUT/log.$test_count" 2>&1; then
		printf 'ok %d - %s\n' "$test_count" "$1"
	else
		test_failed=$((test_failed + 1))
		printf 'not ok %d - %s\n' "$test_count" "$1"
		sed -e 's/^/#   /' "$OUT/log.$test_count" | tail -n 40
	fi
}

# test_skip TITLE REASON: a test that cannot run here, and why.
test_skip() {
	test_count=$((test_count + 1))
	test_skipped=$((test_skipped + 1))
	printf 'ok %d - %s # skip %s\n' "$test_count" "$1" "$2"
}

# test_cmp EXPECTED ACTUAL: fail with a diff when the files differ.
test_cmp() {
	diff -u "$1" "$2"
}

# need_analyzer: true when the analyzer was built.
need_analyzer() {
	[ -x "$MTANALYZE" ]
}

# strip_ext FILE: the standard lines of a trace (no extension, blank or
# padding lines), as glibc's own tracer would have written them.
strip_ext() {
	tr -d '\000' <"$1" | grep -v -e '^#' -e '^[[:space:]]*$' | sed -e 's/ s=[0-9]*$//'
}

# norm_ptrs: replace every pointer value by the order of its first use, so
# traces of two runs (or two tracers) compare line by line.
norm_ptrs() {
	awk '{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^0x[0-9a-f]+$/ && length($i) > 10 && $(i-1) ~ /^[-+<>!]$/) {
				if (!($i in id)) id[$i] = "P" (++n)
				$i = id[$i]
			}
		print
	}'
}

test_done() {
	printf '1..%d\n' "$test_count"
	printf '# %s: %d passed, %d failed, %d skipped\n' "$NAME" \
		$((test_count - test_failed - test_skipped)) "$test_failed" "$test_skipped"
	[ "$test_failed" -eq 0 ]
}
