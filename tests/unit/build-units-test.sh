#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# build-units-test.sh OUTDIR -- build the unit tests of the recorder's chunk
# writer and tables in OUTDIR, with the recorder's flags (see Makefile.in
# REC_CFLAGS), each linked with only the recorder files below it:
#
# chunk-test: recorder/chunk.c on file.c, file-open.c, file-bus.c, tables-objects.c, prim.c;
# tables-test: tables-caller.c, tables-stack.c, tables-objects.c on
#   symtab.c, prim.c; libtables-obj.so, a library it loads and unloads;
# libturn.so and realloc-turn: an allocator that hands a block realloc
#   released to another thread before realloc returns, and its driver.
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd)
U="$TOP/tests/unit"
R="$TOP/recorder"
OUT=${1:?usage: build-units-test.sh OUTDIR}
CC=${CC:-cc}
W="-Wall -Wextra -Wno-unused-parameter -Werror"
REC="-O2 -g $W -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-stack-protector \
	-D_GNU_SOURCE -I$R"
mkdir -p "$OUT"
cd "$OUT"

for f in chunk file file-open file-bus tables-objects prim tables-caller tables-stack symtab; do
	$CC $REC -c -o $f.o "$R/$f.c"
done
$CC -O2 -g $W -D_GNU_SOURCE -I"$R" -o chunk-test "$U/chunk-test.c" \
	chunk.o file.o file-open.o file-bus.o tables-objects.o prim.o -ldl -pthread
$CC -O2 -g $W -D_GNU_SOURCE -I"$R" -o tables-test "$U/tables-test.c" \
	tables-caller.o tables-stack.o tables-objects.o symtab.o prim.o -ldl -pthread
$CC -O2 -g $W -fPIC -shared -o libtables-obj.so "$U/tables-obj.c"
$CC -O2 -g $W -fno-builtin -fPIC -shared -o libturn.so "$U/realloc-turn.c"
$CC -O2 -g $W -fno-builtin -D_GNU_SOURCE -I"$R" -o realloc-turn "$U/realloc-turn-main.c" -ldl -pthread
