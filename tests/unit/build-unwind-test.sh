#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# build-unwind-test.sh OUTDIR -- build the unwind.c unit test in OUTDIR.
#
# libuwshim.so: recorder/unwind.c with the shim that plays libmtrec.so,
#   compiled with the recorder's flags (see Makefile.in REC_CFLAGS);
# libuwchain.so: the chain hops as a shared library;
# unwind-test: the driver, with the chain hops compiled once per variant.
# $CC is the compiler ("cc" by default); $CLANG, when set, adds a variant.
set -e
TOP=$(cd "$(dirname "$0")/../.." && pwd)
U="$TOP/tests/unit"
OUT=${1:?usage: build-unwind-test.sh OUTDIR}
CC=${CC:-cc}
W="-Wall -Wextra -Werror"
mkdir -p "$OUT"
cd "$OUT"

$CC -O2 -g $W -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-stack-protector \
	-D_GNU_SOURCE -DMTREC_UNWIND_TEST -I"$TOP/recorder" -I"$U" -shared \
	-o libuwshim.so "$U/unwind-shim.c" "$TOP/recorder/unwind.c" "$TOP/recorder/unwind-cfi.c"
$CC -O2 -g $W -fPIC -fomit-frame-pointer -DVARIANT=lib -I"$U" -shared \
	-o libuwchain.so "$U/unwind-chain.c" -L. -luwshim

objs=
variant() {
	name=$1; cc=$2; shift 2
	$cc $W -g -DVARIANT="$name" -I"$U" "$@" -c -o "chain-$name.o" "$U/unwind-chain.c"
	objs="$objs chain-$name.o"
}
variant o2nofp "$CC" -O2 -fomit-frame-pointer
variant o2fp "$CC" -O2 -fno-omit-frame-pointer
variant o0 "$CC" -O0
variant o0nofp "$CC" -O0 -fomit-frame-pointer
variant os "$CC" -Os -fomit-frame-pointer
extra=
if [ -n "${CLANG:-}" ] && command -v "$CLANG" >/dev/null 2>&1; then
	variant clang "$CLANG" -O2 -fomit-frame-pointer
	extra=-DHAVE_CLANG
fi
$CC -O2 -g $W -D_GNU_SOURCE $extra -I"$U" -o unwind-test "$U/unwind-test.c" $objs \
	-L. -luwchain -luwshim -Wl,-rpath,"$OUT" -pthread -ldl
$CC -O2 -g $W -fPIC -fvisibility=hidden -ftls-model=initial-exec -fno-stack-protector \
	-D_GNU_SOURCE -I"$TOP/recorder" -shared \
	-o libuwpreload.so "$U/unwind-preload.c" "$TOP/recorder/unwind.c" "$TOP/recorder/unwind-cfi.c"
