#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2725-recorder-deep-stacks-complete: a stack recorded at depth 64 is the
# whole stack, in code built -O1 and -O2 without frame pointers, as the
# daemons our users trace are (issue 30.2).  tests/helper/rec-deep-chain.c
# calls 31 distinct functions deep, in main and in a thread; its stacks
# must hold every link in order and end where gdb's backtrace ends.
# Built twice: as the toolchain lays programs out today, and with a gap
# between its segments (-z max-page-size=0x10000; binutils up to 2.35 left
# one too): glibc then describes the program segment by segment, and the
# walk used to stop at its first frame (make, node, lsof and 16 more of
# 773 programs in a Debian 12 /usr/bin).  /usr/bin/make is one of those.
. "$(dirname "$0")/lib.sh"

SRC="$HELPER/rec-deep-chain.c"
test_lazy_prereq GDB 'command -v gdb'

# frames TRACE SIZE: for each "+" event of SIZE bytes, its stack's frames
# as "OBJECT OFFSET" lines ("-" is the executable), then a "--" line
# (tests/stack-frames.py).
frames() {
	python3 "$TOP/tests/stack-frames.py" "$1" "$2"
}

# names PROG: the function of each "OBJECT OFFSET" line on stdin ("--"
# kept), the executable's symbols from PROG.
names() {
	while read -r obj off; do
		case $obj in --|recorder|unknown) echo "$obj"; continue ;; esac
		[ "$obj" = - ] && obj=$1
		addr2line -f -e "$obj" "$(printf '%#x' $((off - 1)))" | sed -n 1p || return 1
	done
}

# expected TOP: chain0 ... chain30, then TOP.
expected() {
	i=0 && while [ $i -le 30 ]; do echo chain$i && i=$((i + 1)); done && echo "$1"
}

# gdb_frames PROG: the number of frames of gdb's backtrace (past main, to
# _start) at the first call of chain0 in main, then in the thread.
gdb_frames() {
	gdb -batch -nx -ex "set pagination off" -ex "set debuginfod enabled off" \
		-ex "set backtrace past-main on" \
		-ex "break chain0 if size == 4321" -ex "break chain0 if size == 4322" \
		-ex run -ex bt -ex continue -ex bt -ex kill --args "$1" 1 >gdb.out 2>&1 &&
	awk '/^#0 / { if (n) print n; n = 0 } /^#[0-9]+ / { n++ } END { if (n) print n }' gdb.out
}

for opt in O1 O2; do
	for layout in plain gap; do
		v=$opt-$layout
		test_expect_success "$v: build the chain without frame pointers" '
			if [ $layout = gap ]; then link=-Wl,-z,max-page-size=0x10000; else link=; fi &&
			${CC:-cc} -$opt -g -fomit-frame-pointer $link -o chain-$v "$SRC" -pthread &&
			./chain-$v
		'
		test_expect_success "$v: each stack at depth 64 holds the 31 links in order" '
			MTREC_DEPTH=64 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$v.log" ./chain-$v 3 &&
			for who in 4321:main 4322:chain_thread; do
				frames $v.log ${who%:*} >frames-$v-${who%:*} &&
				test "$(grep -c -- "^--" frames-$v-${who%:*})" = 3 &&
				names chain-$v <frames-$v-${who%:*} >names-$v-${who%:*} &&
				expected ${who#*:} >expect &&
				awk "/^--/ { exit } { print }" names-$v-${who%:*} | sed -n 1,32p >actual &&
				test_cmp expect actual || return 1
			done
		'
		test_expect_success GDB "$v: and as many frames as gdb shows" '
			gdb_frames ./chain-$v >gdb-counts &&
			test "$(wc -l <gdb-counts)" = 2 &&
			for who in 4321 4322; do
				awk "/^--/ { print n; exit } { n++ }" frames-$v-$who || return 1
			done >ours &&
			say "frames, main and thread: gdb $(echo $(cat gdb-counts)), ours $(echo $(cat ours))" &&
			test_cmp gdb-counts ours
		'
	done
done

test_expect_success 'depth 16 keeps the 16 innermost links' '
	MTREC_DEPTH=16 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/d16.log" ./chain-O2-gap 1 &&
	frames d16.log 4321 | names chain-O2-gap >names16 &&
	i=0 && while [ $i -le 15 ]; do echo chain$i && i=$((i + 1)); done >expect &&
	echo -- >>expect &&
	test_cmp expect names16
'

# A forked child writes a trace of its own, whose stacks are numbered
# anew: the stacks it uses must be defined there once each, and its calls
# of the chain (from the very place of its parent's) hold the whole chain
# -- not a stack the parent numbered, which the child's walks repeat.
test_expect_success 'a forked child defines the stacks it uses once, whole' '
	MTREC_DEPTH=64 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/fork.log" ./chain-O2-gap 3 fork &&
	set -- fork.log.* && test $# = 1 && child=$1 &&
	tr -d "\000" <"$child" | awk "/^# stack / { if (\$3 in def && def[\$3] != \$0) { print \"stack \" \$3 \" defined twice\"; bad = 1 }
			def[\$3] = \$0 }
		/^@ .* s=[0-9]+\$/ { id = \$NF; sub(/^s=/, \"\", id); used[id] = 1; n++ }
		END { for (id in used) if (!(id in def)) { print \"stack \" id \" not defined\"; bad = 1 }
		      exit bad || n < 6 }" &&
	frames "$child" 4321 >frames-child &&
	test "$(grep -c -- "^--" frames-child)" = 3 &&
	names chain-O2-gap <frames-child | awk "/^--/ { exit } { print }" | sed -n 1,32p >actual &&
	expected main >expect &&
	test_cmp expect actual
'

# ends TRACE: the last frame of each stack under 64 frames, as frames
# prints it.
ends() {
	python3 - "$1" <<'PY'
import sys
objs, last = [], set()
for line in open(sys.argv[1], errors="replace"):
    f = line.replace("\0", "").split()
    if len(f) >= 6 and f[:2] == ["#", "object"]:
        lo, hi = (int(x, 16) for x in f[3].split("-"))
        objs.append((lo, hi, int(f[2], 16), f[5]))
    elif len(f) >= 3 and f[:2] == ["#", "stack"] and len(f) < 3 + 64:
        last.add(int(f[-1], 16))
for ip in sorted(last):
    o = [(b, p) for lo, hi, b, p in objs if lo <= ip < hi]
    print("%s %#x" % (o[-1][1], ip - o[-1][0]) if o else "unknown %#x" % ip)
PY
}

# make is a real program laid out with a gap (Debian 12's, built by
# binutils 2.35); every malloc it makes comes from main or the loader.
test_expect_success 'make: every stack at depth 64 ends in _start, the loader or 64 deep' '
	printf "all:\n\t@echo x\n" >Makefile &&
	MTREC_DEPTH=64 LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/make.log" make -n -f Makefile >/dev/null &&
	test "$(tr -d "\000" <make.log | grep -c "^# stack ")" -gt 20 &&
	ends make.log | names "$(command -v make)" | sort -u >ends &&
	cat ends &&
	grep -x _start ends &&
	! grep -v -x -e _start -e _dl_start_user ends
'

test_done
