#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3020-compat-recorder-traces: traces written by our recorder (with '#'
# lines and trailing columns) give the script's output too; their '#
# object' lines let mtanalyze find objects under --sysroot and refuse a
# file whose build-id differs, with a warning.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -x /usr/bin/mtrace ] || [ ! -f "$LIBMTREC" ]; then
	test_skip 'recorder traces' 'needs analyzer, recorder and /usr/bin/mtrace'
	test_done; exit
fi
SRC="$TOP/tests/helper"

test_expect_success 'record the fixture with libmtrec.so' '
	$CC -O1 -g -fPIC -shared -o libana-leak.so "$SRC/libana-leak.c" &&
	$CC -O1 -g -DWITH_LIB -o app "$SRC/ana-leaks.c" -L. -lana-leak -Wl,-rpath,"$OUT" -ldl &&
	LD_PRELOAD=$LIBMTREC MALLOC_TRACE=rec.log ./app l &&
	grep -q "^# object" rec.log && grep -q "^@ ./app:" rec.log
'

test_expect_success 'recorder trace: same output as mtrace, no unreadable lines' '
	same_as_mtrace ./app rec.log -- ./app rec.log &&
	! test -s err &&
	same_as_mtrace ./app rec.log -- rec.log
'

test_expect_success 'with stacks (s=ID columns)' '
	MTREC_DEPTH=8 LD_PRELOAD=$LIBMTREC MALLOC_TRACE=deep.log ./app l &&
	same_as_mtrace ./app deep.log -- ./app deep.log &&
	! test -s err
'

test_expect_success '--sysroot finds objects moved elsewhere' '
	mkdir -p root/$OUT && cp app libana-leak.so root/$OUT/ &&
	mkdir other && cd other &&
	sed "s|^@ ./app:|@ $OUT/app:|" ../rec.log >rec.log &&
	mv ../app ../libana-leak.so ../root/ &&
	test_expect_code 1 "$MTANALYZE" --sysroot ../root rec.log >ours &&
	grep -q "libana-leak.c:" ours && grep -q "ana-leaks.c:" ours &&
	mv ../root/app ../root/libana-leak.so ..
'

test_expect_success 'a build-id that does not match gives a warning, not a wrong answer' '
	$CC -O1 -g -fPIC -shared -DDIFFERENT=1 -o libana-leak.so "$SRC/libana-leak.c" -Wl,--build-id=sha1 \
		-Wl,-soname,libother &&
	test_expect_code 1 "$MTANALYZE" rec.log >ours 2>err &&
	grep -q "warning: .*libana-leak.so. does not match" err &&
	! grep -q "libana-leak.c:" ours
'

test_done
