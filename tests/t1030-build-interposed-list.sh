#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1030-build-interposed-list.sh -- the functions the recorder interposes
# are listed once, in recorder/shim.h (MTREC_MALLOC_FAMILY,
# MTREC_INTERPOSED, MTREC_EXPORTED): libmtrec.map exports exactly those
# names, and libmtrec.so as built defines exactly those and nothing else.
# (shim.c checks each listed type against libc's at compile time.)
. "$(dirname "$0")/lib.sh"

test_expect_success 'the names listed in shim.h' '
	printf "%s\n" "#include \"shim.h\"" "#define X(n, r, p) n" "#define N(n) n" \
		"@@ MTREC_MALLOC_FAMILY(X) MTREC_INTERPOSED(X) MTREC_EXPORTED(N) @@" >names.c &&
	$CC -E -P -I"$TOP/recorder" names.c | sed -n "s/^@@ \(.*\) @@$/\1/p" |
		tr -s " \t" "\n\n" | sed "/^$/d" | sort >listed &&
	test "$(wc -l <listed)" -ge 30 &&
	test "$(sort -u listed | wc -l)" -eq "$(wc -l <listed)" &&
	grep -x malloc listed && grep -x dl_iterate_phdr listed && grep -x trace_on listed
'

test_expect_success 'libmtrec.map exports exactly the listed names' '
	sed -n "/global:/,/local:/p" "$TOP/recorder/libmtrec.map" | sed "1d;\$d" |
		tr -s " \t;" "\n\n\n" | sed "/^$/d" | sort >mapped &&
	test_cmp listed mapped
'

test_expect_success 'libmtrec.so defines exactly the listed names' '
	nm -D --defined-only "$TOP/recorder/libmtrec.so" | awk "{ print \$3 }" | sed "s/@.*//" |
		sort >exported &&
	test_cmp listed exported
'

test_expect_success 'a function of the malloc family is not an MTREC_TRACK name' '
	sed -n "/MTREC_MALLOC_FAMILY(X)/,/^\$/p" "$TOP/recorder/shim.h" |
		sed -n "s/^.*X(\([a-z_]*\),.*/\1/p" >family &&
	grep -x malloc family && grep -x pvalloc family &&
	for f in $(cat family); do
		MTREC_TRACK="$f:alloc" MALLOC_TRACE=t.log LD_PRELOAD="$TOP/recorder/libmtrec.so" \
			/bin/true 2>err &&
		grep "malloc family" err || { echo "$f accepted"; exit 1; }
	done
'

test_done
