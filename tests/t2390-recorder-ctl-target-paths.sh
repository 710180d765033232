#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2390-recorder-ctl-target-paths.sh -- root's "mtrec ctl PID" on another
# user's process never makes or follows a directory that process chose
# (its XDG_RUNTIME_DIR): not in a directory of root's, not through a
# symbolic link, not in one another user made; it still works in the
# user's own runtime directory (issue 24, point 4).
#
# Fixture: tests/helper/rec-files.c, run as nobody.
. "$(dirname "$0")/lib.sh"

FILES="$HELPER/rec-files"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	test_skip 'mtrec ctl never makes a directory a process chose' 'needs root (as the caller), setpriv and a nobody user'
	test_done
	exit $?
fi
# Directories outside the test tree (whose parents may be closed to
# others): etc stands for /etc (root's, 0755).
pub=$(mktemp -d /tmp/mtrec-ctl.XXXXXX) && chmod 755 "$pub"
trap 'kill $(cat "$pub"/*.pid 2>/dev/null) 2>/dev/null; rm -rf "$pub"' EXIT
mkdir -m 755 "$pub/etc" "$pub/nb" "$pub/sticky" && chmod 1777 "$pub/sticky" &&
chown nobody "$pub/nb" || exit 1

# as_nobody_traced NAME XDG: the fixture as nobody, recorded, with
# XDG_RUNTIME_DIR=XDG, in the background; its pid in $pub/NAME.pid once
# the recorder is loaded in it.  It allocates every 200 ms ("slow"): a
# churning one writes its trace at hundreds of MB a second, for 30 s.
as_nobody_traced() {
	{ setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env XDG_RUNTIME_DIR="$2" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/nb/$1.log" \
		"$FILES" slow 30 >/dev/null 2>"$1.err" & } &&
	echo $! >"$pub/$1.pid" &&
	for i in $(seq 200); do
		grep -q libmtrec "/proc/$(cat "$pub/$1.pid")/maps" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

test_expect_success 'XDG_RUNTIME_DIR names a directory of root: nothing made there, a clear refusal' '
	as_nobody_traced etc "$pub/etc" &&
	test_expect_code 125 "$MTREC" ctl "$(cat "$pub/etc.pid")" status 2>err &&
	cat err &&
	grep "^mtrec: not making .$pub/etc/mtrec. (process [0-9]* chose it)" err &&
	test ! -e "$pub/etc/mtrec"
'

test_expect_success 'XDG_RUNTIME_DIR through a symbolic link the user made: not followed' '
	ln -s "$pub/etc" "$pub/nb/link" &&
	chown -h nobody "$pub/nb/link" &&
	as_nobody_traced link "$pub/nb/link" &&
	test_expect_code 125 "$MTREC" ctl "$(cat "$pub/link.pid")" status 2>err &&
	cat err &&
	grep "^mtrec: cannot reach .$pub/nb/link/mtrec. (of process [0-9]*) without following a symbolic link" err &&
	test ! -e "$pub/etc/mtrec"
'

test_expect_success 'a request directory another user made first: refused, saying who made it' '
	setpriv --reuid=4242 --regid=4242 --clear-groups mkdir -m 777 "$pub/sticky/mtrec" &&
	as_nobody_traced sticky "$pub/sticky" &&
	test_expect_code 125 "$MTREC" ctl "$(cat "$pub/sticky.pid")" status 2>err &&
	cat err &&
	grep "^mtrec: .$pub/sticky/mtrec. is not a directory of user $(id -u nobody) that only it may write in (user 4242 made it)" err
'

test_expect_success 'the user'"'"'s own runtime directory: the request is made and answered; the directory is the user'"'"'s, 0700' '
	as_nobody_traced own "$pub/nb" &&
	"$MTREC" ctl "$(cat "$pub/own.pid")" status >out 2>err &&
	cat out err &&
	grep "^recording" out &&
	test "$(stat -c "%U %a" "$pub/nb/mtrec")" = "nobody 700" &&
	"$MTREC" ctl "$(cat "$pub/own.pid")" mark "from root" >out &&
	grep -a -x "# mark from root" "$pub/nb/own.log"
'

test_expect_success 'a traced process of root without XDG_RUNTIME_DIR: /tmp/mtrec-0, root'"'"'s, 0700' '
	{ env -u XDG_RUNTIME_DIR LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/root.log" "$FILES" slow 30 >/dev/null 2>root.err & } &&
	echo $! >"$pub/root.pid" &&
	sleep 0.3 &&
	"$MTREC" ctl "$(cat "$pub/root.pid")" status >out &&
	grep "^recording" out &&
	test "$(stat -c "%u %a" /tmp/mtrec-0)" = "0 700"
'

# The recorder's side: a request is taken only in a directory (not a
# symbolic link) of its user or root that nobody else may write in.
test_expect_success 'the recorder ignores a request whose directory is a symbolic link' '
	mkdir -m 700 "$pub/real" && mkdir -m 755 "$pub/x" &&
	ln -s "$pub/real" "$pub/x/mtrec" &&
	{ env XDG_RUNTIME_DIR="$pub/x" LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/x.log" "$FILES" churn 30 >/dev/null 2>x.err & } &&
	echo $! >"$pub/x.pid" &&
	pid=$(cat "$pub/x.pid") &&
	for i in $(seq 200); do test -s "$pub/x.log" && break; sleep 0.05; done &&
	start=$(sed "s/.*) //" /proc/$pid/stat | cut -d" " -f20) &&
	printf "mtrec-ctl 1 %s\noff\n" "$start" >"$pub/real/$pid.ctl" &&
	sleep 1 &&
	kill -0 $pid &&
	test -f "$pub/real/$pid.ctl" &&
	# what it wrote so far: grep would chase the churn to its end, 30 s on
	size=$(stat -c %s "$pub/x.log") &&
	kill $pid && rm "$pub/x.pid" &&
	head -c "$size" "$pub/x.log" >x.head &&
	grep -a -q -x "= Start" x.head &&
	! grep -a -x "= End" x.head
'

test_done
