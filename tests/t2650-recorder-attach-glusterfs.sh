#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2650-recorder-attach-glusterfs: GlusterFS's SystemTap workflow on a
# process that is already running (issue 27.6): a program linked against
# Debian's real libglusterfs.so.0, started without the recorder, gets
# "mtrec attach --track @glusterfs --depth 16", does its work (t2648's
# planted leak: dict_new, three dict_ref from dht_rmdir_opendir_cbk, two
# dict_unref, among dictionaries made and dropped properly), and gets
# "mtrec detach".  The report names the one dictionary left above zero
# with the paths of its references and drops, as when preloaded; a
# dictionary referenced before the attach and dropped after it is counted
# under "Below zero" by its path, never above zero nor as a bad free; the
# program runs on after the detach, its stderr holding only the recorder's
# coverage messages (said in the process, as under the preload).  Needs libglusterfs0 and libgfapi0.
. "$(dirname "$0")/lib.sh"

if ! need_libglusterfs || ! need_analyzer; then
	test_skip 'an attached planted leak in libglusterfs' 'needs libglusterfs0, libgfapi0 and the analyzer'
	test_done; exit
fi
SRC="$TOP/tests/helper/gf-planted.c"

# waitfor PATTERN: until the program's stdout has a line matching it.
waitfor() {
	for i in $(seq 600); do
		grep -q "$1" out && return 0
		sleep 0.05
	done
	echo "no '$1' from the program" >&2
	return 1
}

test_expect_success 'the program builds against the real libglusterfs' '
	gf_build gf-attach
'

test_expect_success 'started without the recorder, attached, its work done, detached: it runs on' '
	(exec ./gf-attach --attached 100 >out 2>err &) &&
	waitfor "^ready " &&
	pid=$(sed -n "s/^ready //p" out) &&
	"$MTREC" attach -o "$OUT/t.log" --depth 16 --track @glusterfs $pid >attach.out 2>attach.err &&
	grep "process $pid: recording into $OUT/t.log; [0-9]* call slots redirected" attach.out &&
	: >go && waitfor "^done " &&
	"$MTREC" detach $pid >detach.out &&
	grep "recording stopped in $OUT/t.log" detach.out &&
	: >exit && waitfor "^bye\$" &&
	grep "^mtrec: track: call slots patched: .*dict_new [0-9]*, dict_ref [0-9]*, dict_unref [0-9]*" err &&
	! grep -v "^mtrec: track: " err
'

test_expect_success 'the trace has one window' '
	grep -a "^# attached\|^# detached\|^= " t.log | sed "s/ by mtrec attach.*//" >windows &&
	printf "%s\n" "# attached 1" "= Start" "# detached 1" "= End" >expect &&
	test_cmp expect windows
'

test_expect_success 'analyzed: exit 1, for the one dictionary above zero' '
	test_expect_code 1 "$MTANALYZE" --by-site --frames 1 t.log >rep &&
	grep -x "Unbalanced references, kind .dict_t.: 1 object above zero, 1 entry" rep &&
	grep -x "  dict_t: 1 object with net count +1, e.g. $(sed -n "s/^done //p" out)" rep
'

# at FUNCTION LABEL: the "x1 FUNCTION at FILE:LINE" lines of the marked lines of gf-planted.c.
at() {
	for l in $(line_of "/\* $2[ :]"); do
		printf "      x1        %s at %s:%s in %s\n" "$1" "$SRC" "$l" "$OUT/gf-attach"
	done
}

test_expect_success 'its references and drops, path by path, as when preloaded' '
	sed -n "/^  dict_t: 1 object/,/^\$/p" rep | grep "^      x" >paths &&
	{ at main PLANT-NEW && at dht_rmdir_opendir_cbk PLANT-REF &&
	  at dht_rmdir_done PLANT-UNREF && at main PLANT-LAST; } >expect &&
	sort expect >expect.s && sort paths >paths.s && test_cmp expect.s paths.s
'

test_expect_success 'the drop of a reference taken before the attach: below zero, by its path' '
	grep "^Below zero, kind .dict_t.: 1 reference dropped that no tracked call took" rep &&
	grep -A2 "^Below zero, kind .dict_t." rep >below &&
	grep -E "^  dict_t +x1 +main at $SRC:$(line_of "/\* OLDER-UNREF \*/") in " below
'

test_expect_success 'no bad free, no frame of the recorder' '
	! grep -i "never allocated\|bad free" rep &&
	! grep "libmtrec\|mtrec_attach" rep
'

test_done
