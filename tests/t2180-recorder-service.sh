#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# mtrec-service writes a systemd drop-in that preloads the recorder into a
# named service, and removes it.  The drop-in is checked by systemd's own
# parser (systemd-analyze verify) and its environment is proven to work by
# running a program with it.
. "$(dirname "$0")/lib.sh"

SVC="$TOP/recorder/mtrec-service"
mkdir -p units && printf '[Unit]\nDescription=demo\n[Service]\nExecStart=/bin/sleep 1000\n' >units/demo.service

test_expect_success 'install writes the drop-in for the named service' '
	"$SVC" install demo --unit-dir "$OUT/units" --dir "$OUT/traces" --depth 8 --no-reload >out &&
	grep -q "wrote .*units/demo.service.d/50-mtrec.conf" out &&
	f=units/demo.service.d/50-mtrec.conf &&
	grep -q "^Environment=\"LD_PRELOAD=$TOP/recorder/libmtrec.so\"\$" $f &&
	grep -q "^Environment=\"MALLOC_TRACE=$OUT/traces/demo.%%p.log\"\$" $f &&
	grep -q "^Environment=\"MTREC_DEPTH=8\"\$" $f &&
	test -d traces
'

if command -v systemd-analyze >/dev/null 2>&1; then
test_expect_success 'systemd-analyze verify reads the unit and the drop-in without complaint' '
	SYSTEMD_UNIT_PATH="$OUT/units:" systemd-analyze verify demo.service >verify.out 2>&1 &&
	! grep "50-mtrec.conf" verify.out &&
	cp units/demo.service.d/50-mtrec.conf saved &&
	echo "Bogus=1" >>units/demo.service.d/50-mtrec.conf &&
	test_might_fail env SYSTEMD_UNIT_PATH="$OUT/units:" systemd-analyze verify demo.service >bad.out 2>&1 &&
	grep -q "50-mtrec.conf.*Bogus" bad.out &&
	cp saved units/demo.service.d/50-mtrec.conf
'
else
test_skip 'systemd-analyze verify reads the unit and the drop-in without complaint' \
	'systemd-analyze is not installed'
fi

test_expect_success 'the drop-in environment traces a program as systemd would run it' '
	sed -n "s/^Environment=\"\\(.*\\)\"\$/\\1/p" units/demo.service.d/50-mtrec.conf |
		sed "s/%%/%/g" >env.list &&
	{ env $(cat env.list) "$HELPER/rec-every-call" >/dev/null & } &&
	pid=$! && wait $pid &&
	test -f "traces/demo.$pid.log" &&
	grep -q "^# depth 8\$" "traces/demo.$pid.log" &&
	grep -q " s=[0-9]*\$" "traces/demo.$pid.log"
'

# The odd directory of issue 13: a blank, &, |, %, a double quote, a
# backslash and $ each survive sed and systemd's quoting and specifiers.
odd="$OUT/tr ac&es|50%\"q\\b\$x"
test_expect_success 'a trace directory with blanks, &, |, %, quotes and backslashes' '
	"$SVC" install odd --force --unit-dir "$OUT/units" --dir "$odd" --no-reload >out &&
	f=units/odd.service.d/50-mtrec.conf &&
	test -d "$odd" &&
	sed -n "s/^Environment=\"MALLOC_TRACE=\(.*\)\"\$/\1/p" $f >quoted &&
	sed -e "s/%%/%/g" -e "s/\\\\\(.\)/\1/g" quoted >decoded &&
	printf "%s\n" "$odd/odd.%p.log" >expect &&
	test_cmp expect decoded &&
	sed -n "s/^ReadWritePaths=\"\(.*\)\"\$/\1/p" $f | sed -e "s/%%/%/g" -e "s/\\\\\(.\)/\1/g" >rw &&
	printf "%s\n" "$odd" >expect && test_cmp expect rw &&
	if command -v systemd-analyze >/dev/null 2>&1; then
		printf "[Service]\nExecStart=/bin/true\n" >units/odd.service &&
		SYSTEMD_UNIT_PATH="$OUT/units:" systemd-analyze verify odd.service >verify.out 2>&1 &&
		! grep "50-mtrec.conf" verify.out
	fi &&
	"$SVC" remove odd --unit-dir "$OUT/units" --no-reload >/dev/null
'

test_expect_success 'a recorder under a path with a blank is refused, with the reason' '
	mkdir -p "odd lib/recorder" "odd lib/share/systemd" &&
	cp "$SVC" "$TOP/recorder/libmtrec.so" "odd lib/recorder/" &&
	cp "$TOP/share/systemd/mtrec.conf.in" "odd lib/share/systemd/" &&
	cp units/demo.service.d/50-mtrec.conf before &&
	test_expect_code 1 "odd lib/recorder/mtrec-service" install demo --unit-dir "$OUT/units" \
		--dir "$OUT/traces" --no-reload 2>err &&
	grep -q "LD_PRELOAD splits paths at blanks and colons" err &&
	test_cmp before units/demo.service.d/50-mtrec.conf
'

test_expect_success 'remove deletes it; removing again is an error' '
	"$SVC" remove demo.service --unit-dir "$OUT/units" --no-reload >out &&
	test ! -e units/demo.service.d &&
	test_must_fail "$SVC" remove demo --unit-dir "$OUT/units" --no-reload 2>err &&
	grep -q "no mtrec drop-in for demo.service" err
'

test_expect_success '--version prints the same version line as mtrec' '
	"$SVC" --version >out &&
	"$MTREC" --version | sed "s/^mtrec /mtrec-service /" >expect &&
	test_cmp expect out &&
	grep -E "^mtrec-service [0-9]+\.[0-9]+" out
'

test_expect_success 'install refuses a unit systemd does not know, and says where it looked' '
	test_expect_code 1 "$SVC" install no-such-unit-here --unit-dir "$OUT/units" --no-reload >out 2>err &&
	cat err &&
	grep "^mtrec-service: no unit .no-such-unit-here.service.: .systemctl cat. does not know it" err &&
	grep -F "$OUT/units" err && grep -F "/lib/systemd/system" err && grep -e "--force" err &&
	test ! -e units/no-such-unit-here.service.d
'

test_expect_success 'a template instance is known by its template; --force installs any name' '
	printf "[Service]\nExecStart=/bin/sleep %%i\n" >units/tick@.service &&
	"$SVC" install tick@5 --unit-dir "$OUT/units" --dir "$OUT/traces" --no-reload >out &&
	test -f units/tick@5.service.d/50-mtrec.conf &&
	"$SVC" install later --force --unit-dir "$OUT/units" --dir "$OUT/traces" --no-reload >out &&
	test -f units/later.service.d/50-mtrec.conf
'

test_expect_success 'bad names and options are refused' '
	test_must_fail "$SVC" install "bad name" --unit-dir "$OUT/units" 2>err && grep -q "not a service name" err &&
	test_must_fail "$SVC" install demo --depth 99 --unit-dir "$OUT/units" 2>err && grep -q "from 1 to 64" err &&
	test_must_fail "$SVC" install demo --dir rel --unit-dir "$OUT/units" 2>err && grep -q "absolute path" err
'

test_done
