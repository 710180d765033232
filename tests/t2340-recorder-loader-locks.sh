#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2340-recorder-loader-locks: a program that allocates inside its own
# dl_iterate_phdr() callback (under the loader's lock) while another
# thread loads and unloads a plugin never hangs under the recorder: the
# recorder asks the loader nothing from inside such a callback (glibc's
# dladdr would take the loader's other lock, held by the dlopen waiting
# for the first), and takes its own object-list lock only inside the
# loader's.  The library before this fix hung 3 runs of 3.
. "$(dirname "$0")/lib.sh"

if [ ! -f "$LIBMTREC" ]; then
	test_skip 'loader locks' 'needs the recorder'
	test_done; exit
fi
PLUG=$HELPER/librec-plug.so

for depth in 1 16; do
	test_expect_success "depth $depth: allocating in a dl_iterate_phdr callback during dlopen/dlclose: no hang" '
		test_expect_code 0 timeout 60 env MTREC_QUIET=1 MTREC_DEPTH='$depth' LD_PRELOAD="$LIBMTREC" \
			MALLOC_TRACE="$OUT/d'$depth'.log" "$HELPER/rec-phdr-alloc" "$PLUG" 3 >out &&
		grep -qx done out &&
		mtrace_leaks d'$depth'.log 0 &&
		grep -q "^# unload " d'$depth'.log
	'
done

test_expect_success 'callers in a callback get the lookup-free form, the plugin its full one' '
	grep -q "^@ \[0x[0-9a-f]*\] + " d1.log &&
	grep -q "^@ .*librec-plug.so:(plug_work+[0-9a-f]*)\[0x[0-9a-f]*\] + " d1.log
'

test_done
