#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# build-symtab-test.sh OUTDIR -- build the symtab.c unit test in OUTDIR.
#
# libsymodd-{gnu,sysv,both}.so: symtab-odd.c linked with each hash style;
# libsymodd-strip.so: the GNU one stripped (only .dynsym left);
# libsymodd-extra.so, -extra2.so (laid out differently), -race.so: loaded
#   and unloaded by the test;
# symtab-test-pie, symtab-test-nopie, symtab-test-nopie-sysv: the driver
#   with recorder/symtab.c (the recorder's flags, see Makefile.in
#   REC_CFLAGS) and symtab-odd.c, exported (-rdynamic); the non-PIE ones
#   also have undefined symbols with a value (canonical PLT entries), which
#   _dl_addr only sees through DT_HASH.
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd)
U="$TOP/tests/unit"
OUT=${1:?usage: build-symtab-test.sh OUTDIR}
CC=${CC:-cc}
W="-Wall -Wextra -Werror"
ODD="-fno-toplevel-reorder -g"
mkdir -p "$OUT"
cd "$OUT"

for style in gnu sysv both; do
	$CC -O2 $ODD -fPIC -shared -Wl,--hash-style=$style -o libsymodd-$style.so "$U/symtab-odd.c"
done
cp libsymodd-gnu.so libsymodd-strip.so && strip --strip-all libsymodd-strip.so
cp libsymodd-gnu.so libsymodd-extra.so
cp libsymodd-gnu.so libsymodd-race.so
$CC -O0 $ODD -fPIC -shared -o libsymodd-extra2.so "$U/symtab-odd.c"

REC="-O2 -g $W -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-stack-protector \
	-D_GNU_SOURCE -I$TOP/recorder"
$CC $REC -c -o symtab.o "$TOP/recorder/symtab.c"
$CC $REC -c -o prim.o "$TOP/recorder/prim.c"
$CC -O2 $W -D_GNU_SOURCE -I"$TOP/recorder" -c -o symtab-test.o "$U/symtab-test.c"
$CC -O1 $ODD -fPIE -c -o odd-pie.o "$U/symtab-odd.c"
$CC -O1 $ODD -fno-pie -c -o odd-nopie.o "$U/symtab-odd.c"
$CC -pie -rdynamic -o symtab-test-pie symtab-test.o odd-pie.o symtab.o prim.o \
	-lm -ldl -pthread
$CC -no-pie -rdynamic -o symtab-test-nopie symtab-test.o odd-nopie.o symtab.o prim.o \
	-lm -ldl -pthread
$CC -no-pie -rdynamic -Wl,--hash-style=sysv -o symtab-test-nopie-sysv symtab-test.o \
	odd-nopie.o symtab.o prim.o -lm -ldl -pthread
