# SPDX-License-Identifier: LGPL-2.1-or-later
# lib-compact.sh -- shared by the tests of `mtanalyze compact` (t3320-t3339).
#
#   record_fixture NAME ITER [WAITFILE]  ana-compact under the recorder, in
#                                        parts of 1M (stacks of 4 frames),
#                                        into NAME, NAME.part2, ...
#   same_analysis "FULL..." "COMPACT..." every report of the full trace's
#                                        parts equals that of the compacted
#                                        trace with the parts after it: the
#                                        script's report, --by-site, --json
#                                        and --growth (the samples over time,
#                                        which compact.md says differ, left
#                                        out)

record_fixture() {
	MTREC_QUIET=1 MTREC_ROTATE=1M MTREC_DEPTH=4 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=$OUT/$1 \
		"$HELPER/ana-compact" "$2" 100 ${3:+"$3"}
}

# the files of parts FIRST..LAST of NAME
parts_of() {
	n=$2
	while [ $n -le $3 ]; do
		if [ $n = 1 ]; then echo "$1"; else echo "$1.part$n"; fi
		n=$((n + 1))
	done
}

same_analysis() {
	full=$1 small=$2
	st1=0; "$MTANALYZE" $full >a.full || st1=$?
	st2=0; "$MTANALYZE" $small >a.small || st2=$?
	test $st1 = 1 && test $st2 = 1 && test_cmp a.full a.small || return 1
	test_expect_code 1 "$MTANALYZE" --by-site $full >s.full &&
	test_expect_code 1 "$MTANALYZE" --by-site $small >s.small &&
	grep -q "^Peak: .*held most by:" s.full && test_cmp s.full s.small || return 1
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential $full >g.full &&
	test_expect_code 1 "$MTANALYZE" --growth linear,exponential $small >g.small &&
	# the classes as such are t7000's; here, that the compacted trace
	# keeps them: a machine that starves the fixture for half its run
	# (load 12 on 2 cores) makes its steady leak look exponential
	test "$(grep -c "\[linear\]\|\[exponential\]" g.full)" -ge 2 &&
	test_cmp g.full g.small || return 1
	test_might_fail "$MTANALYZE" --json $full >j.full &&
	test_might_fail "$MTANALYZE" --json $small >j.small || return 1
	python3 - j.full j.small <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
def strip(d):
    for k in ('traces', 'timeline'):
        d['run'].pop(k)
    for s in d['leak_sites']:
        for k in ('live_blocks_over_time', 'live_bytes_over_time'):
            s.pop(k, None)
    return d
a, b = strip(a), strip(b)
assert a['bad_frees'] and a['leaks'], 'the fixture has bad frees and leaks'
for k in a:
    assert a[k] == b[k], k
PY
}
