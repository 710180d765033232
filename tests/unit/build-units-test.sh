#!/bin/sh
# build-units-test.sh OUTDIR -- build the unit tests of the recorder's chunk
# writer and tables in OUTDIR, with the recorder's flags (see Makefile.in
# REC_CFLAGS), each linked with only the recorder files below it:
#
# chunk-test: recorder/rec-chunk.c on rec-file.c, rec-objects.c, rec-prim.c;
# tables-test: rec-caller.c, rec-stack.c, rec-objects.c on rec-symtab.c,
#   rec-prim.c; libtables-obj.so, a library it loads and unloads;
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

for f in chunk file objects prim caller stack symtab; do
	$CC $REC -c -o rec-$f.o "$R/rec-$f.c"
done
$CC -O2 -g $W -D_GNU_SOURCE -I"$R" -o chunk-test "$U/chunk-test.c" \
	rec-chunk.o rec-file.o rec-objects.o rec-prim.o -ldl -pthread
$CC -O2 -g $W -D_GNU_SOURCE -I"$R" -o tables-test "$U/tables-test.c" \
	rec-caller.o rec-stack.o rec-objects.o rec-symtab.o rec-prim.o -ldl -pthread
$CC -O2 -g $W -fPIC -shared -o libtables-obj.so "$U/tables-obj.c"
$CC -O2 -g $W -fno-builtin -fPIC -shared -o libturn.so "$U/realloc-turn.c"
$CC -O2 -g $W -fno-builtin -D_GNU_SOURCE -I"$R" -o realloc-turn "$U/realloc-turn-main.c" -ldl -pthread
