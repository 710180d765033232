#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2648-recorder-track-glusterfs-planted: the reference leak GlusterFS's
# developers hunt with their SystemTap script, planted in a small program
# linked against Debian's real libglusterfs.so.0 (issue 27.6): dict_new,
# three dict_ref from dht_rmdir_opendir_cbk, two dict_unref, among
# dictionaries made and dropped properly, recorded with mtrec --depth 16
# --track @glusterfs.  The report names the one dictionary left above zero
# with the paths of its references and drops, nothing below zero, and its
# pool object (gf_mem_pool) with the size its mem_pool holds and its
# caller.  Needs libglusterfs0 and libgfapi0 (the program declares what it
# calls: libglusterfs-dev's headers depend on the build's config.h).
. "$(dirname "$0")/lib.sh"

if ! need_libglusterfs || ! need_analyzer; then
	test_skip 'a planted leak in libglusterfs' 'needs libglusterfs0, libgfapi0 and the analyzer'
	test_done; exit
fi
SRC="$TOP/tests/helper/gf-planted.c"

test_expect_success 'the program builds against the real libglusterfs and runs' '
	gf_build gf-planted &&
	./gf-planted 5 >/dev/null
'

test_expect_success 'recorded with --track @glusterfs at depth 16' '
	"$MTREC" -o "$OUT/t.log" --depth 16 --track @glusterfs ./gf-planted 100 >out 2>err &&
	grep "^mtrec: track: call slots patched: .*dict_new [0-9]*, dict_ref [0-9]*, dict_unref [0-9]*" err &&
	test_expect_code 1 "$MTANALYZE" --by-site --frames 1 t.log >rep &&
	sed -n "/^Kind .gf_mem_pool/,\$p" rep
'

# at LABEL: the "x1 FUNCTION at gf-planted.c:LINE" lines of the marked lines.
at() {
	for l in $(line_of "/\* $2[ :]"); do
		printf "      x1        %s at %s:%s in %s\n" "$1" "$SRC" "$l" "$OUT/gf-planted"
	done
}

test_expect_success 'one dictionary above zero: its references and drops, path by path' '
	grep -x "Unbalanced references, kind .dict_t.: 1 object above zero, 1 entry" rep &&
	grep -x "  dict_t: 1 object with net count +1, e.g. $(cat out)" rep &&
	sed -n "/^  dict_t: 1 object/,/^\$/p" rep | grep "^      x" >paths &&
	{ at main PLANT-NEW && at dht_rmdir_opendir_cbk PLANT-REF &&
	  at dht_rmdir_done PLANT-UNREF && at main PLANT-LAST; } >expect &&
	sort expect >expect.s && sort paths >paths.s && test_cmp expect.s paths.s &&
	! grep "^Below zero, kind .dict_t." rep
'

test_expect_success 'its pool object: not released, with its size and its caller' '
	grep -A1 -E "^  gf_mem_pool +1 +[1-9][0-9]*  dict_new in " rep >pool &&
	grep -E "^ +called from main at $SRC:$(line_of "/\* PLANT-NEW \*/") in " pool
'

test_expect_success 'no frame of the recorder anywhere in the report' '
	! grep "libmtrec" rep
'

test_done
