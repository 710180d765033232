# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/lib.sh -- a small TAP test library in the manner of git's t/.
#
# A test script sources this file, runs test_expect_success for each
# behaviour it proves, and ends with test_done.  Each script runs in its own
# scratch directory, tests/out/NAME, so tests never see each other's files.
#
# Writing a test body
# -------------------
#
# A body is shell text run in a subshell of the script, with `set -e` in
# effect and its output going to tests/out/NAME/log.N (shown when it
# fails).  The test passes when the body exits 0.  Two checks make a
# failing command fail the test wherever it is:
#
#  - `set -e`: a command that fails on a line of its own ends the body.
#    POSIX sh ignores `set -e` in some places, and a failure there goes
#    unseen unless the body's verdict depends on it:
#      * every command of `a && b` but the last, of `a || b` but the
#        last, and the command after `!` or in an if/while condition;
#      * every command inside a function called from such a place.
#    A helper function therefore runs sometimes with set -e in effect (when
#    it is the last command of a chain) and sometimes without: it must
#    chain its own commands with && (or "|| return 1"), and must not run a
#    command whose non-zero status is expected as a bare command -- keep
#    such a status with "st=0; cmd || st=$?" or test_expect_code, as the
#    helpers below do.
#  - the "&&-chain lint" (git's GIT_TEST_CHAIN_LINT): before the real run
#    the body is run once as "(exit 117) && BODY"; a body whose commands are
#    all joined by && runs nothing then and exits 117.  Anything else -- a
#    line not chained to the next, a top-level "a || b" -- means a command
#    whose failure could be lost: the test fails with "broken &&-chain"
#    (and the real body is not run).  So: join every command of a body
#    with &&, as in git.  Inside a { ...; } group, a loop or a subshell,
#    end each command with && or "|| exit 1" / "|| return 1" as usual.
#    MTREC_TEST_CHAIN_LINT=0 turns the lint off (for debugging only);
#    MTREC_TEST_TRACE=1 runs bodies under set -x, to see which command
#    ended one.
#
# A command expected to exit non-zero says so, never with "|| :" or a bare
# `! cmd`:
#
#   test_expect_code N CMD ARGS...  ok when CMD exits exactly N
#                                   (mtanalyze and /usr/bin/mtrace exit 1
#                                   when they find leaks: that is
#                                   "test_expect_code 1 mtanalyze ...")
#   test_must_fail CMD ARGS...      ok when CMD fails normally: exit 1-125;
#                                   0, "not found" (127), "cannot run"
#                                   (126) and deaths by a signal (>128,
#                                   e.g. a SIGSEGV) all fail the test
#   test_might_fail CMD ARGS...     ok on 0 as on 1-125; a crash still fails
#
# `! grep ...` (and `! test ...`) stays fine for grep and test, inside an
# && chain.  Environment for CMD goes through env(1):
# `test_expect_code 1 env MALLOC_TRACE=t.log prog`.
#
# Other helpers
# -------------
#
#   test_expect_success [PREREQ] TITLE BODY
#                                   a test (see above); with PREREQ (NAME or
#                                   NAME,NAME...) it is reported skipped,
#                                   "# skip missing NAME", where NAME does
#                                   not hold
#   test_lazy_prereq NAME SCRIPT    NAME holds when SCRIPT exits 0 (run once);
#                                   defined here: GLIBC_DEBUG (glibc's
#                                   libc_malloc_debug.so), MTRACE, TIME
#                                   (/usr/bin/time), PERL, PYTHON3, SQLITE3,
#                                   ANALYZER
#   test_have_prereq NAME[,NAME]    true when each holds (for top-level ifs)
#   test_expect_failure [PREREQ] TITLE BODY
#                                   a known breakage (git's name): a test
#                                   that fails today because of a bug in
#                                   the product, reported as "not ok ...
#                                   # TODO known breakage" (and "# TODO
#                                   known breakage vanished" once it
#                                   passes); run.sh lists them apart.
#                                   Not for test bugs: fix those.
#   test_skip TITLE REASON          a test that cannot run here, and why
#   test_cmp EXPECTED ACTUAL        fail with a diff when the files differ
#   test_must_be_empty FILE         fail, showing FILE, unless it is empty
#   test_when_passed CMD            in a body: run CMD (in the body's
#                                   directory) after the test, if it passed;
#                                   when it failed, CMD is skipped and the
#                                   files stay for review.  For big files:
#                                   test_when_passed 'rm -f big.log'
#   test_done                       the plan and the totals; last line
#
# Big files: when every test of a script passed, test_done also removes
# any file above 1 MB left in tests/out/NAME (traces of stress runs);
# MTREC_TEST_KEEP=1 keeps them.  When a test failed, everything stays.
#
# Trace helpers (shared by the recorder and analyzer scripts):
#
#   need_analyzer                   true when the analyzer was built
#   strip_ext TRACE                 the standard lines of a trace
#   norm_ptrs                       pointers renamed P1, P2, ... (a filter)
#   mtrace_ok TRACE [BINARY]        /usr/bin/mtrace reads TRACE (report
#                                   in mt_TRACE), exits 0 or 1, and finds
#                                   no free of memory never allocated and
#                                   no duplicate allocation
#   mtrace_leaks TRACE N [SIZE]     mtrace_ok, and exactly N leaks (of SIZE
#                                   bytes each when given), exit 1 (0 when
#                                   N is 0)
#   count_size TRACE SIZE           standard lines of TRACE ending in SIZE
#   same_as_mtrace M-ARGS -- A-ARGS /usr/bin/mtrace M-ARGS and mtanalyze
#                                   A-ARGS print the same and exit the same
#                                   (files expect, actual; stderr in err)
#   line_of PATTERN [FILE]          line numbers of PATTERN in FILE ($SRC)
#   q SQL-ARGS...                   sqlite3 -bail
#   py EXPR FILE                    python3: EXPR with d = FILE's JSON

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
test_broken=0

say() { printf '# %s\n' "$*"; }

# BUG MESSAGE: a mistake in a test script itself; stop the script.
BUG() {
	printf 'BUG in %s: %s\n' "$NAME" "$*" >&2
	printf 'not ok %d - BUG: %s\n' $((test_count + 1)) "$*"
	exit 1
}

# test_run_ BODY: run BODY (lint first), set test_status_; log in test_log_.
test_run_() {
	test_log_="$OUT/log.$test_count"
	test_cleanup_="$OUT/.when-passed.$test_count"
	rm -f "$test_cleanup_"
	# set -e does nothing here if this function was called from a
	# condition (if, &&, ||, !): then no body could fail as it should.
	(set -e; false; exit 0) 2>/dev/null
	[ $? -ne 0 ] || BUG "test '$1' run from a condition (if, &&, ||, !): set -e would be ignored"
	: >"$test_log_"
	if [ "${MTREC_TEST_CHAIN_LINT:-1}" != 0 ]; then
		(set -e; eval "(exit 117) && $2") >>"$test_log_" 2>&1 </dev/null
		test_status_=$?
		if [ $test_status_ -ne 117 ]; then
			echo "broken &&-chain: the body runs commands outside its && chain" \
				"(lint run exited $test_status_, not 117; see tests/lib.sh)" >>"$test_log_"
			test_status_=1
			return
		fi
	fi
	(
		# A body ended by set -e says so (else its log may be silent).
		trap 'test_st_=$?; [ $test_st_ -eq 0 ] || echo "# body exited with status $test_st_" >&2' EXIT
		TEST_CLEANUP_FILE_=$test_cleanup_
		[ "${MTREC_TEST_TRACE:-0}" = 0 ] || set -x
		set -e
		eval "$2"
	) >>"$test_log_" 2>&1 </dev/null
	test_status_=$?
	if [ $test_status_ -eq 0 ] && [ -f "$test_cleanup_" ]; then
		(set -e; . "$test_cleanup_") >>"$test_log_" 2>&1 </dev/null || {
			echo "test_when_passed: a cleanup command failed" >>"$test_log_"
			test_status_=1
		}
	elif [ -f "$test_cleanup_" ]; then
		echo "test failed: kept for review what test_when_passed would remove" >>"$test_log_"
	fi
	rm -f "$test_cleanup_"
}

test_show_log_() {
	sed -e 's/^/#   /' "$test_log_" | tail -n 40
}

# test_lazy_prereq NAME SCRIPT: NAME holds when SCRIPT (run once, on first
# use, in a subshell) exits 0.
test_lazy_prereq() {
	eval "test_prereq_script_$1=\$2"
}

# test_have_prereq NAME[,NAME...]: true when every NAME holds.
test_have_prereq() {
	for test_p_ in $(echo "$1" | tr , ' '); do
		eval "test_p_have_=\${test_prereq_have_$test_p_:-}"
		if [ -z "$test_p_have_" ]; then
			eval "test_p_script_=\${test_prereq_script_$test_p_-}"
			[ -n "$test_p_script_" ] || BUG "unknown prerequisite $test_p_"
			if (eval "$test_p_script_") >/dev/null 2>&1 </dev/null; then test_p_have_=yes; else test_p_have_=no; fi
			eval "test_prereq_have_$test_p_=$test_p_have_"
		fi
		[ "$test_p_have_" = yes ] || { test_missing_prereq_=$test_p_; return 1; }
	done
	return 0
}

# Prerequisites every script may name.
test_lazy_prereq GLIBC_DEBUG '[ -f "$GLIBC_DEBUG" ]'
test_lazy_prereq MTRACE '[ -x /usr/bin/mtrace ]'
test_lazy_prereq TIME '[ -x /usr/bin/time ]'
test_lazy_prereq PERL 'command -v perl'
test_lazy_prereq PYTHON3 'command -v python3'
test_lazy_prereq SQLITE3 'command -v sqlite3'
test_lazy_prereq ANALYZER '[ -x "$MTANALYZE" ]'

# test_expect_ success|failure [PREREQ] TITLE BODY: the two below.
test_expect_() {
	test_kind_=$1 && shift &&
	[ $# -eq 2 ] || [ $# -eq 3 ] ||
		BUG "test_expect_$test_kind_ takes [prereq], a title and a body, got $# arguments"
	if [ $# -eq 3 ]; then
		test_have_prereq "$1" || { test_skip "$2" "missing $test_missing_prereq_"; return 0; }
		shift
	fi
	test_count=$((test_count + 1))
	test_run_ "$1" "$2"
	case $test_kind_,$test_status_ in
	success,0)
		printf 'ok %d - %s\n' "$test_count" "$1" ;;
	success,*)
		test_failed=$((test_failed + 1))
		printf 'not ok %d - %s\n' "$test_count" "$1"
		test_show_log_ ;;
	failure,0)
		printf 'ok %d - %s # TODO known breakage vanished\n' "$test_count" "$1" ;;
	failure,*)
		test_broken=$((test_broken + 1))
		printf 'not ok %d - %s # TODO known breakage\n' "$test_count" "$1"
		test_show_log_ ;;
	esac
}

# test_expect_success [PREREQ] TITLE BODY: ok when BODY, run as described
# above, exits 0.
test_expect_success() {
	test_expect_ success "$@"
}

# test_expect_failure [PREREQ] TITLE BODY: a known breakage of the product.
test_expect_failure() {
	test_expect_ failure "$@"
}

# test_skip TITLE REASON: a test that cannot run here, and why.
test_skip() {
	test_count=$((test_count + 1))
	test_skipped=$((test_skipped + 1))
	printf 'ok %d - %s # skip %s\n' "$test_count" "$1" "$2"
}

# test_expect_code N CMD...: ok when CMD exits with status N exactly.
test_expect_code() {
	test_want_=$1 && shift &&
	{ "$@" && test_got_=0 || test_got_=$?; } &&
	if [ "$test_got_" = "$test_want_" ]; then
		return 0
	else
		echo "test_expect_code: exit status $test_got_, expected $test_want_: $*" >&2
		return 1
	fi
}

# test_fails_normally_ WHAT STATUS CMD...: STATUS is a normal failure
# (1-125), or 0 when WHAT is "might".
test_fails_normally_() {
	test_what_=$1 test_st_=$2 && shift 2 &&
	case $test_st_ in
	0)	[ "$test_what_" = might ] && return 0
		echo "test_must_fail: the command succeeded: $*" >&2 ;;
	126)	echo "test_${test_what_}_fail: the command could not be run (126): $*" >&2 ;;
	127)	echo "test_${test_what_}_fail: command not found (127): $*" >&2 ;;
	*)	[ "$test_st_" -le 125 ] && return 0
		if [ "$test_st_" -gt 128 ]; then
			echo "test_${test_what_}_fail: the command died of signal $((test_st_ - 128)): $*" >&2
		else
			echo "test_${test_what_}_fail: exit status $test_st_ is not a normal failure: $*" >&2
		fi ;;
	esac
	return 1
}

# test_must_fail CMD...: ok when CMD exits 1..125 (a failure, not a crash).
test_must_fail() {
	{ "$@" && test_got_=0 || test_got_=$?; } &&
	test_fails_normally_ must "$test_got_" "$@"
}

# test_might_fail CMD...: ok when CMD exits 0..125 (not a crash).
test_might_fail() {
	{ "$@" && test_got_=0 || test_got_=$?; } &&
	test_fails_normally_ might "$test_got_" "$@"
}

# test_cmp EXPECTED ACTUAL: fail with a diff when the files differ.
test_cmp() {
	diff -u "$1" "$2"
}

# test_must_be_empty FILE: fail, showing it, unless FILE is empty.
test_must_be_empty() {
	if [ -s "$1" ]; then
		echo "'$1' is not empty:" >&2 && head -n 20 "$1" >&2
		return 1
	fi
	[ -e "$1" ] || { echo "'$1' does not exist" >&2; return 1; }
}

# test_quote_ STRING: STRING quoted for the shell.
test_quote_() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# test_when_passed CMD...: in a body, run CMD after the test if it passes.
test_when_passed() {
	[ -n "${TEST_CLEANUP_FILE_:-}" ] || BUG "test_when_passed outside a test body"
	printf '(cd %s && %s)\n' "$(test_quote_ "$PWD")" "$*" >>"$TEST_CLEANUP_FILE_"
}

# within TENTHS CMD...: CMD succeeds within TENTHS tenths of a second (a
# loaded machine may take seconds to start a program under test).
within() {
	left=$1; shift
	until "$@"; do
		[ "$left" -gt 0 ] || return 1
		left=$((left - 1))
		sleep 0.1
	done
}

# need_analyzer: true when the analyzer was built.
need_analyzer() {
	[ -x "$MTANALYZE" ]
}

# gen_callers N: N leaked blocks from N distinct callers, each with a stack of its
# own whose outer frames 1000 callers share (t4070, t4071)
gen_callers() {
	awk -v N="$1" -f "$TOP/tests/bench/gen-callers.awk"
}

# need_libglusterfs: true when Debian's libglusterfs0 and libgfapi0 are
# installed, for tests/helper/gf-planted.c (built by the test: gf_build).
GF_LIBDIR=/usr/lib/x86_64-linux-gnu
need_libglusterfs() {
	[ -e "$GF_LIBDIR/libglusterfs.so.0" ] && [ -e "$GF_LIBDIR/libgfapi.so.0" ]
}

# gf_build NAME: tests/helper/gf-planted.c built as ./NAME against them.
gf_build() {
	$CC -O1 -g -o "$1" "$TOP/tests/helper/gf-planted.c" \
		"$GF_LIBDIR/libglusterfs.so.0" "$GF_LIBDIR/libgfapi.so.0"
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

# count_size FILE SIZE: the number of standard lines of FILE whose last
# field is SIZE (a decimal size, printed as glibc does: %#lx).
count_size() {
	strip_ext "$1" | grep -c " $(printf '%#x' "$2")\$" || true
}

# mtrace_ok FILE [BINARY]: /usr/bin/mtrace reads FILE (exit 0 or 1, report
# in mt_FILE, beside FILE) and reports no free of memory never allocated and
# no duplicate allocation.
mtrace_ok() {
	mtrace_rc_=0
	mtrace_mt_=$(dirname "$1")/mt_$(basename "$1")
	/usr/bin/mtrace ${2:+"$2"} "$1" >"$mtrace_mt_" 2>&1 || mtrace_rc_=$?
	if [ $mtrace_rc_ -gt 1 ]; then
		tail -n 5 "$mtrace_mt_"; echo "mtrace failed on $1 (exit $mtrace_rc_)"; return 1
	fi
	if grep -e "never alloc" -e "duplicate" "$mtrace_mt_" >/dev/null; then
		grep -e "never alloc" -e "duplicate" "$mtrace_mt_" | head
		echo "$1: inconsistent trace"; return 1
	fi
	return 0
}

# mtrace_leaks FILE NLEAKS [SIZE]: mtrace_ok, and exactly NLEAKS blocks not
# freed (all of SIZE bytes when given); mtrace exits 1 (0 if NLEAKS is 0).
mtrace_leaks() {
	mtrace_ok "$1" || return 1
	mtrace_n_=$(grep -c '^0x' "$mtrace_mt_" || true)
	if [ "$mtrace_n_" -ne "$2" ]; then
		cat "$mtrace_mt_"; echo "$1: $mtrace_n_ leaks, expected $2"; return 1
	fi
	if [ $mtrace_rc_ -ne $(($2 > 0)) ]; then
		cat "$mtrace_mt_"; echo "$1: mtrace exit $mtrace_rc_"; return 1
	fi
	if [ $# -ge 3 ] && grep '^0x' "$mtrace_mt_" | grep -v " $(printf '%#x' "$3") " >/dev/null; then
		cat "$mtrace_mt_"; echo "$1: leaks of other sizes than $3"; return 1
	fi
	return 0
}

# same_as_mtrace MTRACE-ARGS -- MTANALYZE-ARGS: /usr/bin/mtrace and
# mtanalyze print the same and exit the same.  Their outputs, each ended by
# an "exit N" line, are left in expect and actual, mtanalyze's stderr in err.
same_as_mtrace() {
	m_args_= a_args_= side_=m
	for a_; do
		if [ "$a_" = -- ]; then side_=a; continue; fi
		if [ $side_ = m ]; then m_args_="$m_args_ $a_"; else a_args_="$a_args_ $a_"; fi
	done
	st_=0; /usr/bin/mtrace $m_args_ >expect 2>/dev/null || st_=$?
	echo "exit $st_" >>expect
	st_=0; "$MTANALYZE" $a_args_ >actual 2>err || st_=$?
	echo "exit $st_" >>actual
	test_cmp expect actual
}

# line_of PATTERN [FILE]: the numbers of the lines of FILE (default $SRC)
# that hold PATTERN (a grep basic regular expression).
line_of() {
	grep -n -e "$1" "${2:-$SRC}" | cut -d: -f1
}

# q ARGS...: sqlite3, stopping at the first error.
q() {
	sqlite3 -bail "$@"
}

# py EXPR FILE: print EXPR evaluated with d = the JSON document of FILE.
py() {
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($1)" "$2"
}

# test_done: the plan, the totals; remove big files when everything passed.
test_done() {
	printf '1..%d\n' "$test_count"
	if [ "$test_failed" -eq 0 ] && [ "$test_broken" -eq 0 ] && [ "${MTREC_TEST_KEEP:-0}" != 1 ]; then
		big_=$(find "$OUT" -type f -size +1M | wc -l)
		if [ "$big_" -gt 0 ]; then
			find "$OUT" -type f -size +1M -exec rm -f {} +
			say "all passed: removed $big_ files above 1 MB from tests/out/$NAME"
		fi
	fi
	printf '# %s: %d passed, %d failed, %d skipped%s\n' "$NAME" \
		$((test_count - test_failed - test_skipped - test_broken)) "$test_failed" "$test_skipped" \
		"$([ "$test_broken" -eq 0 ] || echo ", $test_broken known breakage")"
	[ "$test_failed" -eq 0 ]
}
