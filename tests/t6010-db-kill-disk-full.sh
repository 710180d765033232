#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t6010-db-kill-disk-full: a load into a database is all or nothing.  Killed
# at any moment (while it reads, while it inserts, while it commits), or
# stopped by a full disk or a file size limit, it leaves the database as it
# was before that load: PRAGMA integrity_check says ok, the run count is
# unchanged, and the whole content (sqlite3 .dump) is the same.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! command -v sqlite3 >/dev/null; then
	test_skip 'database atomicity' 'needs the analyzer and sqlite3'
	test_done; exit
fi

# A trace long enough that a load takes a while: 300000 allocations from
# 64 call sites, two in three freed.
awk 'BEGIN { print "= Start"
	for (i = 0; i < 300000; i++) {
		printf "@ ./big:[0x%x] + 0x%x 0x10\n", 4096 + i % 64, 65536 + 16 * i
		if (i % 3) printf "@ ./big:[0x99] - 0x%x\n", 65536 + 16 * i
	}
	print "= End" }' >big.log
printf '= Start\n@ ./small:[0x10] + 0x1000 0x20\n= End\n' >small.log

# same_as_before DB: DB is intact and holds exactly what before.db holds.
same_as_before() {
	test "$(q "$1" "PRAGMA integrity_check")" = ok &&
	test "$(q "$1" "SELECT count(*) FROM runs")" = 1 &&
	q before.db .dump >expect && q "$1" .dump >actual &&
	test_cmp expect actual
}

test_expect_success 'a database with one run' '
	test_expect_code 1 "$MTANALYZE" --db before.db small.log >/dev/null &&
	test "$(q before.db "SELECT count(*) FROM runs")" = 1
'

# kill_load WHEN: start a load of big.log into kill.db (a copy of
# before.db), SIGKILL it at WHEN (a delay in seconds after its journal
# appears, or "commit": as soon as the database file itself changes), then
# check the database.  A load that finished first proves nothing: say so.
kill_load() {
	cp before.db kill.db
	size0=$(wc -c <kill.db)
	# (a command of its own: "a && b &" would put the whole list aside)
	"$MTANALYZE" --db kill.db --all-events big.log >/dev/null 2>&1 &
	pid=$!
	i=0
	while [ ! -f kill.db-journal ] && [ $i -lt 6000 ] && kill -0 $pid 2>/dev/null; do
		sleep 0.01; i=$((i + 1))
	done
	if [ "$1" = commit ]; then
		while [ "$(wc -c <kill.db)" = "$size0" ] && kill -0 $pid 2>/dev/null; do :; done
	else
		sleep "$1"
	fi
	kill -9 $pid 2>/dev/null || :   # it may have ended: see below
	st=0; wait $pid || st=$?
	if [ $st != 137 ]; then
		say "the load ended (status $st) before the kill at $1"
		test "$(q kill.db "PRAGMA integrity_check")" = ok &&
		test "$(q kill.db "SELECT count(*) FROM runs")" = 2
		return
	fi
	same_as_before kill.db   # a hot journal is rolled back on the next open
}

test_expect_success 'SIGKILL as the inserts begin' '
	kill_load 0
'

test_expect_success 'SIGKILL in the middle of the inserts' '
	kill_load 0.3
'

test_expect_success 'SIGKILL while the commit writes the database' '
	kill_load commit
'

test_expect_success 'the next load after a kill adds its run' '
	cp before.db kill.db &&
	{ "$MTANALYZE" --db kill.db --all-events big.log >/dev/null 2>&1 & } &&
	pid=$! &&
	while [ ! -f kill.db-journal ] && kill -0 $pid 2>/dev/null; do sleep 0.01; done &&
	kill -9 $pid &&
	test_expect_code 137 wait $pid &&
	test_expect_code 1 "$MTANALYZE" --db kill.db small.log >/dev/null &&
	test "$(q kill.db "PRAGMA integrity_check")" = ok &&
	test "$(q kill.db "SELECT count(*) FROM runs")" = 2
'

# A file size limit: writes past it fail with EFBIG (SIGXFSZ ignored, as a
# daemon's supervisor may leave it).  dash counts ulimit -f in 512 bytes.
test_expect_success 'a file size limit reached during the load' '
	cp before.db fsize.db &&
	blocks=$(( $(wc -c <fsize.db) / 512 + 64 )) &&
	st=0 &&
	{ (trap "" XFSZ && ulimit -f $blocks &&
	   exec "$MTANALYZE" --db fsize.db --all-events big.log) >/dev/null 2>err || st=$?; } &&
	cat err && test $st = 2 && grep -q "^mtanalyze: " err &&
	same_as_before fsize.db && ! test -f fsize.db-journal
'

# A full disk, for real: a 512 KiB tmpfs in a mount namespace of our own
# (unprivileged, through a user namespace), where writes fail with ENOSPC.
if unshare -rm sh -c 'mount -t tmpfs -o size=4k tmpfs "$1"' sh "$OUT" 2>/dev/null; then
	test_expect_success 'the disk fills up during the load' '
		mkdir -p full && cp before.db full.db &&
		unshare -rm sh -c "
			mount -t tmpfs -o size=512k tmpfs full && cp full.db full/ &&
			st=0; \"\$1\" --db full/full.db --all-events big.log >/dev/null 2>err || st=\$?
			echo \$st >status; ls full >left; cp full/full.db full.db" sh "$MTANALYZE" &&
		cat err && test "$(cat status)" = 2 && grep -q "^mtanalyze: " err &&
		echo full.db >expect.left && test_cmp expect.left left &&
		same_as_before full.db
	'
else
	test_skip 'the disk fills up during the load' 'no unprivileged mount namespace (unshare -rm)'
fi

test_done
