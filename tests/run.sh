#!/bin/sh
# tests/run.sh -- run every tests/tNNNN-*.sh (or those named) and total them.
#
# Each script prints TAP; this runner shows it, counts ok / not ok / skip,
# ends with the line "N passed, N failed, N skipped" and fails when any did.
cd "$(dirname "$0")" || exit 2
passed=0 failed=0 skipped=0
if [ $# -gt 0 ]; then scripts="$*"; else scripts=$(ls t[0-9]*.sh); fi
for t in $scripts; do
	t=$(basename "$t")
	echo "*** $t"
	out=$(sh "./$t" 2>&1)
	status=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | grep -c '^ok .*# skip' )
	o=$(printf '%s\n' "$out" | grep -c '^ok ')
	n=$(printf '%s\n' "$out" | grep -c '^not ok ')
	skipped=$((skipped + p)); passed=$((passed + o - p)); failed=$((failed + n))
	if [ $status -ne 0 ] && [ $n -eq 0 ]; then
		echo "not ok - $t exited with status $status"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
