#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/run.sh -- run every tests/tNNNN-*.sh (or those named) and total them.
#
# Each script prints TAP; this runner shows it, counts ok / not ok / skip,
# lists the known breakages (test_expect_failure: "not ok ... # TODO known
# breakage") apart, names the scripts that failed (and which of their
# tests) on the line before the last, ends with the line "N passed, N
# failed, N skipped" and fails when any test failed or a script exited
# non-zero.
#
# MTREC_TEST_JOBS=N runs N scripts at a time (CI's sanitizer and valgrind
# steps, where each test waits mostly on its analyzer), each one's output
# shown whole, in the order of the list.  The default, 1, is `make check`:
# the timing tests measure on an otherwise idle machine.
cd "$(dirname "$0")" || exit 2
passed=0 failed=0 skipped=0 broken=0 brokenlist= times= failedlist=
if [ $# -gt 0 ]; then scripts="$*"; else scripts=$(ls t[0-9]*.sh); fi
jobs=${MTREC_TEST_JOBS:-1}

# run_script T: T's output to out/.run/T.out, its exit status to .../T.rc.
run_script() {
	sh "./$1" >"out/.run/$1.out" 2>&1
	echo $? >"out/.run/$1.rc"
}

if [ "$jobs" -gt 1 ]; then
	rm -rf out/.run && mkdir -p out/.run || exit 2
	# Each job takes the next script no job has claimed (mkdir is atomic).
	j=0
	while [ $j -lt "$jobs" ]; do
		(
			for t in $scripts; do
				t=$(basename "$t")
				mkdir "out/.run/$t.claim" 2>/dev/null && run_script "$t"
			done
		) &
		j=$((j + 1))
	done
	wait
fi

for t in $scripts; do
	t=$(basename "$t")
	echo "*** $t"
	if [ "$jobs" -gt 1 ]; then
		out=$(cat "out/.run/$t.out")
		status=$(cat "out/.run/$t.rc" 2>/dev/null || echo 2)
	else
		start=$(date +%s)
		out=$(sh "./$t" 2>&1)
		status=$?
		times="$times$(( $(date +%s) - start )) $t
"
	fi
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | grep -c '^ok .*# skip' )
	o=$(printf '%s\n' "$out" | grep -c '^ok ')
	n=$(printf '%s\n' "$out" | grep -c '^not ok ')
	b=$(printf '%s\n' "$out" | grep -c '^not ok .*# TODO known breakage$')
	[ "$b" -eq 0 ] ||
		brokenlist="$brokenlist$(printf '%s\n' "$out" | sed -n "s/^not ok \(.*\) # TODO known breakage\$/  $t \1/p")
"
	skipped=$((skipped + p)); passed=$((passed + o - p))
	failed=$((failed + n - b)); broken=$((broken + b))
	if [ $((n - b)) -gt 0 ]; then
		nums=$(printf '%s\n' "$out" | grep '^not ok ' | grep -v '# TODO known breakage$' |
			sed 's/^not ok \([0-9]*\).*/#\1/' | tr '\n' ' ' | sed 's/ $//; s/ /, /g')
		failedlist="$failedlist${failedlist:+,} $t ($nums)"
	fi
	if [ $status -ne 0 ] && [ $((n - b)) -eq 0 ]; then
		echo "not ok - $t exited with status $status"
		failed=$((failed + 1))
		failedlist="$failedlist${failedlist:+,} $t (exit $status)"
	fi
done
# Where the time goes (one script at a time only: else they overlap).
if [ -n "$times" ] && [ "$(printf '%s' "$times" | grep -c .)" -gt 10 ]; then
	echo "slowest scripts (seconds):"
	printf '%s' "$times" | sort -rn | head -n 10 | sed 's/^/  /'
fi
if [ $broken -gt 0 ]; then
	echo "$broken known breakage(s), product bugs not yet fixed (not counted below):"
	printf '%s' "$brokenlist"
fi
[ -z "$failedlist" ] || echo "failed:$failedlist"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
