#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2385-recorder-planted-files.sh -- root never writes its trace into a
# file another user left for it in a directory others may write in (the
# kernel's protected_regular rule, whatever the sysctl says): the trace
# holds the command line, heap and library addresses.  The program runs on
# unrecorded and the recorder says why; the same for a rotated part
# (issue 24, point 3).  Files of our own, or of the directory's owner, are
# written as before.
#
# Fixture: tests/helper/rec-files.c.
. "$(dirname "$0")/lib.sh"

FILES="$HELPER/rec-files"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	test_skip 'files planted by another user are refused' 'needs root (to be the victim), setpriv and a nobody user'
	test_done
	exit $?
fi

# A sticky world-writable directory, as /tmp is, outside the test tree
# (whose parents may be closed to others).
pub=$(mktemp -d /tmp/mtrec-planted.XXXXXX) && chmod 1777 "$pub"
trap 'rm -rf "$pub"' EXIT
nobody_uid=$(id -u nobody)

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

test_expect_success 'a world-writable file planted by nobody in a 1777 directory: refused, left as it was' '
	as_nobody sh -c "echo planted >$pub/x.log && chmod 666 $pub/x.log" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/x.log" "$FILES" churn 0.3 >out 2>err &&
	cat err &&
	grep -x done out &&
	test "$(cat "$pub/x.log")" = planted &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "mtrec: refusing trace file .$pub/x.log.: it belongs to user $nobody_uid, not to this process.s user, in a sticky directory others may write in (whoever made it could read the trace); not recording" err &&
	test "$(ls "$pub" | grep -c "^x\.log")" -eq 1
'

test_expect_success 'the launcher: mtrec -o names the planted file: refused before the run (125)' '
	as_nobody sh -c "echo planted >$pub/l.log && chmod 666 $pub/l.log" &&
	test_expect_code 125 "$MTREC" -o "$pub/l.log" "$FILES" churn 0.2 >out 2>err &&
	cat err &&
	test ! -s out &&
	test "$(cat "$pub/l.log")" = planted &&
	grep -x "mtrec: .$pub/l.log. belongs to user $nobody_uid, in a sticky directory others may write in (whoever made it could read the trace; the recorder refuses it); not running .$FILES." err
'

test_expect_success 'a rotated part planted by nobody: recording stops there, saying so; the part is left as it was' '
	as_nobody sh -c "echo planted >$pub/r.log.part2 && chmod 666 $pub/r.log.part2" &&
	MTREC_ROTATE=4M LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/r.log" "$FILES" churn 1.5 >out 2>err &&
	cat err &&
	grep -x done out &&
	test "$(cat "$pub/r.log.part2")" = planted &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "mtrec: stopped recording to .$pub/r.log.part2.: the file belongs to another user, in a sticky directory others may write in (whoever made it could read the trace); not writing into it" err &&
	grep -a "^# stopped the file belongs to another user" "$pub/r.log" &&
	grep -a -x "= End" "$pub/r.log"
'

test_expect_success 'a file of our own in the same directory is written as before' '
	echo old >"$pub/own.log" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/own.log" "$FILES" churn 0.2 >out 2>err &&
	test ! -s err &&
	test "$(tail -n 1 "$pub/own.log")" = "= End" &&
	mtrace_ok "$pub/own.log"
'

test_expect_success 'a file of the directory owner in its own sticky directory is written (the kernel rule)' '
	as_nobody sh -c "mkdir -m 1777 $pub/nb && echo theirs >$pub/nb/t.log && chmod 666 $pub/nb/t.log" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/nb/t.log" "$FILES" churn 0.2 >out 2>err &&
	test ! -s err &&
	test "$(tail -n 1 "$pub/nb/t.log")" = "= End"
'

test_expect_success 'a symbolic link planted by nobody is never followed' '
	echo secret >"$pub/target" &&
	as_nobody ln -s "$pub/target" "$pub/link.log" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/link.log" "$FILES" churn 0.2 >out 2>err &&
	cat err &&
	grep -x done out &&
	test "$(cat "$pub/target")" = secret &&
	grep "^mtrec: cannot open trace file .$pub/link.log." err
'

# A hard link in the sticky directory to a file of root's: with
# fs.protected_hardlinks 0 (the kernel's default; systemd sets 1) any user
# can make one to any file it can see, /etc/shadow say, and truncating the
# trace would empty that file.  Root makes the link here, as the sysctl
# is machine-wide.
test_expect_success 'a hard link to a file of ours, in a 1777 directory: refused, the file left as it was' '
	seq 1000 >victim && cp victim victim.orig &&
	ln "$OUT/victim" "$pub/hl.log" &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/hl.log" "$FILES" churn 0.2 >out 2>err &&
	cat err &&
	grep -x done out &&
	cmp victim victim.orig &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "mtrec: refusing trace file .$pub/hl.log.: it has other names (a hard link), in a sticky directory others may write in (writing would empty the file they name); not recording" err &&
	test_expect_code 125 "$MTREC" -o "$pub/hl.log" "$FILES" churn 0.2 >out 2>err &&
	cat err &&
	cmp victim victim.orig &&
	grep -x "mtrec: .$pub/hl.log. has other names (a hard link), in a sticky directory others may write in (writing would empty the file they name; the recorder refuses it); not running .$FILES." err
'

test_expect_success 'a rotated part that is a hard link to a file of ours: recording stops there; the file left as it was' '
	seq 1000 >victim2 && cp victim2 victim2.orig &&
	ln "$OUT/victim2" "$pub/hr.log.part2" &&
	MTREC_ROTATE=4M LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$pub/hr.log" "$FILES" churn 1.5 >out 2>err &&
	cat err &&
	grep -x done out &&
	cmp victim2 victim2.orig &&
	test "$(wc -l <err)" -eq 1 &&
	grep -x "mtrec: stopped recording to .$pub/hr.log.part2.: the file has other names (a hard link), in a sticky directory others may write in (writing would empty the file they name); not writing into it" err &&
	grep -a -x "= End" "$pub/hr.log"
'

test_expect_success 'a trace of ours with a hard link outside the sticky directory is written as before' '
	echo old >"$OUT/mine.log" &&
	ln "$OUT/mine.log" kept.log &&
	LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/mine.log" "$FILES" churn 0.2 >out 2>err &&
	test ! -s err &&
	test "$(tail -n 1 kept.log)" = "= End"
'

test_expect_success 'mtrec-service: a trace directory another user linked or made first in /tmp is refused' '
	mkdir -p units && printf "[Service]\nExecStart=/bin/sleep 1000\n" >units/demo.service &&
	mkdir -m 755 "$pub/root-only" &&
	as_nobody ln -s "$pub/root-only" "$pub/svc-link" &&
	test_must_fail "$TOP/recorder/mtrec-service" install demo --unit-dir "$OUT/units" \
		--dir "$pub/svc-link" --no-reload 2>err &&
	cat err &&
	grep "is a symbolic link; not using it" err &&
	test "$(stat -c %a "$pub/root-only")" = 755 &&
	as_nobody mkdir -m 777 "$pub/svc-theirs" &&
	test_must_fail "$TOP/recorder/mtrec-service" install demo --unit-dir "$OUT/units" \
		--dir "$pub/svc-theirs" --no-reload 2>err &&
	cat err &&
	grep "is not a directory of yours (user $nobody_uid made it)" err &&
	test ! -e units/demo.service.d/50-mtrec.conf
'

test_done
