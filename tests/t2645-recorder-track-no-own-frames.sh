#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2645-recorder-track-no-own-frames: a tracked constructor that calls
# malloc itself (tests/helper/librec-trkdeep.c: tobj_new), called at the
# bottom of 1 and 16 nested calls of an unmodified program, recorded at
# MTREC_DEPTH 1 and 16 with tobj_new/tobj_ref/tobj_unref tracked (issue
# 27.1).  While tobj_new runs, the recorder's wrapper is on the stack
# between it and the program; its malloc and calloc must still be charged
# to the program's call chain, and no caller field nor stack frame of the
# trace may lie in libmtrec.so (SPEC: "The recorder's own functions never
# appear in a recorded stack").
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/lib-track.sh"

SRC="$HELPER/rec-trkdeep.c"
LIBSRC="$HELPER/librec-trkdeep.c"
SPEC='tobj_new:ref:0:tobj,tobj_ref:ref:1:tobj,tobj_unref:unref:1:tobj'

# frames TRACE SIZE: for each "+" of SIZE bytes made by tobj_new, its
# stack's frames as "OBJECT OFFSET" lines (OBJECT "-" the executable, or
# "recorder" for any frame inside libmtrec.so), then a "--" line
# (tests/stack-frames.py).
frames() {
	python3 "$TOP/tests/stack-frames.py" "$1" "$2" "(tobj_new+"
}

# where: the FILE:LINE of each "OBJECT OFFSET" line on stdin.
where() {
	while read -r obj off; do
		case $obj in --|recorder|unknown) echo "$obj"; continue ;; esac
		[ "$obj" = - ] && obj="$HELPER/rec-trkdeep"
		addr2line -e "$obj" "$(printf '%#x' $((off - 1)))" | sed 's/ (discriminator.*//' || return 1
	done
}

# callers TRACE OP SIZE: "FILE:LINE" of the caller field of each malloc
# "@ ... OP ADDR [SIZE]" line of TRACE whose size is SIZE ("-": frees).
callers() {
	tr -d '\000' <"$1" | awk -v op="$2" -v size="$3" '
		$1 == "@" && $3 == op && (size == "-" || $5 == size) {
			obj = $2; sub(/:[([].*$/, "", obj)
			rel = $2; sub(/.*\[/, "", rel); sub(/\].*/, "", rel)
			print obj, rel
		}' | while read -r obj rel; do
		case $obj in *libmtrec.so) echo recorder; continue ;; esac
		addr2line -e "$obj" "$(printf '%#x' $((rel - 1)))" | sed 's/ (discriminator.*//' || return 1
	done
}

TAIL_SPEC='tpool_get_tail:alloc:*1:tp,tpool_put_tail:free:1:tp'
for depth in 1 16; do
	# tpool_get_tail and tpool_put_tail end in "jmp malloc", "jmp free":
	# those return into the wrapper, whose frame the caller field must
	# not name (issue 27.1: iobref_unref -> iobuf_unref -> ... jmp free
	# put 41 to 60 frees of a GlusterFS process at track_call).
	test_expect_success "depth $depth: a tracked function's tail call of malloc and free: the program's line" '
		env MTREC_TRACK="$TAIL_SPEC" MTREC_DEPTH=$depth LD_PRELOAD="$LIBMTREC" \
			MALLOC_TRACE="$OUT/t$depth.log" "$HELPER/rec-trkdeep" 1 tail >out 2>err &&
		test "$(kcount t$depth.log tp +)" = 3 && test "$(kcount t$depth.log tp -)" = 2 &&
		tr -d "\000" <t$depth.log | grep "^@ \|^# k " >events &&
		! grep "libmtrec\.so" events &&
		callers t$depth.log + 0x38 | tail -n 1 >got &&
		echo "$SRC:$(line_of "/\* TAIL-KEPT")" >expect && test_cmp expect got &&
		callers t$depth.log - - | grep -e "^recorder" -e "^$SRC:" | sort -u >got &&
		printf "%s\n" "$SRC:$(line_of "/\* TAIL-PUT ")" "$SRC:$(line_of "/\* TAIL-PUT2")" >expect &&
		test_cmp expect got
	'
done

for depth in 1 16; do
	for levels in 1 16; do
		test_expect_success "depth $depth, $levels nested calls: traced, tobj_new's references seen" '
			env MTREC_TRACK="$SPEC" MTREC_DEPTH=$depth LD_PRELOAD="$LIBMTREC" \
				MALLOC_TRACE="$OUT/d$depth-$levels.log" "$HELPER/rec-trkdeep" $levels >out 2>err &&
			test "$(kcount d$depth-$levels.log tobj r)" = 3 &&
			test "$(kcount d$depth-$levels.log tobj u)" = 2
		'
		test_expect_success "depth $depth, $levels nested calls: no caller field in libmtrec.so" '
			tr -d "\000" <d$depth-$levels.log | grep "^@ \|^# k " >events &&
			test "$(wc -l <events)" -gt 6 &&
			! grep "libmtrec\.so" events
		'
	done
done

test_expect_success 'depth 16: no stack frame lies in libmtrec.so' '
	for levels in 1 16; do
		tr -d "\000" <d16-$levels.log | grep "^# stack " >stacks &&
		test "$(wc -l <stacks)" -gt 3 &&
		python3 - d16-$levels.log <<-\PY || return 1
		import sys
		objs, bad = [], 0
		lines = [l.replace("\0", "").split() for l in open(sys.argv[1], errors="replace")]
		for f in lines:
		    if len(f) >= 6 and f[:2] == ["#", "object"] and f[5].endswith("/libmtrec.so"):
		        objs.append([int(x, 16) for x in f[3].split("-")])
		assert objs
		for f in lines:
		    if len(f) >= 3 and f[:2] == ["#", "stack"]:
		        bad += sum(1 for ip in f[3:] for lo, hi in objs if lo <= int(ip, 16) < hi)
		sys.exit(1 if bad else 0)
		PY
	done
'

test_expect_success 'depth 16, 1 level: the malloc inside tobj_new is charged to CALL-NEW, then its callers' '
	frames d16-1.log 16 | where >got &&
	{
		echo "$LIBSRC:$(line_of "/\* DEEP-MALLOC" "$LIBSRC")" &&
		echo "$SRC:$(line_of "/\* CALL-NEW")" &&
		echo "$SRC:$(line_of "/\* CALL-BOTTOM")"
	} >expect &&
	head -n 3 got >first && test_cmp expect first
'

test_expect_success 'depth 16, 16 levels: 16 frames of the program, the calloc too' '
	frames d16-16.log 16 >f16 &&
	test "$(grep -c -- "^--" f16)" = 2 &&
	sed -n "1,/^--/p" f16 | grep -v -- "^--" >one &&
	test "$(wc -l <one)" = 16 &&
	! grep "^recorder\|^unknown" f16 &&
	where <one | sed -n "4,16p" | sort -u >down &&
	echo "$SRC:$(line_of "/\* CALL-DOWN")" >expect && test_cmp expect down &&
	frames d16-16.log 200 | where | sed -n 1,2p >calloc &&
	printf "%s\n" "$LIBSRC:$(line_of "/\* DEEP-CALLOC" "$LIBSRC")" "$SRC:$(line_of "/\* CALL-KEPT")" >expect &&
	test_cmp expect calloc
'

test_done
