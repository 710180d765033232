#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4050-db-postgresql: --db postgresql://... loads runs into PostgreSQL
# with share/schema.sql, as into SQLite: the runs of one program from
# four "hosts" (each its own address layout, ASLR), loaded at once, all
# get in, each whole; their frames match by build-id and offset while
# their addresses differ; every ready query of share/queries gives the
# same answers on both engines; mtanalyze diff takes a run of the server
# as URI:ID, against another or against a trace, as it takes runs.db:ID;
# a URI's password is never printed (a wrong one: the error names the URI
# without it).  Runs on a throwaway cluster (pg_virtualenv, which this
# script re-executes itself under); skipped, saying why, without one.

# Under pg_virtualenv once: its own messages to stderr, the TAP to stdout.
if [ -z "${PGHOST:-}" ] && [ -z "${MTA_T4050_INNER:-}" ] && command -v pg_virtualenv >/dev/null &&
   ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	exec 3>&1
	MTA_T4050_INNER=1 exec pg_virtualenv -t sh -c 'exec sh "$0" "$@" >&3 3>&-' "$0" "$@" >&2
fi
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -f "$LIBMTREC" ] || ! command -v sqlite3 >/dev/null; then
	test_skip 'PostgreSQL' 'needs the analyzer, the recorder and sqlite3'
	test_done; exit
fi
if [ -z "${PGHOST:-}" ] || ! command -v psql >/dev/null; then
	test_skip 'PostgreSQL' 'needs PostgreSQL: pg_virtualenv (postgresql-common) and a server (postgresql)'
	test_done; exit
fi
if "$MTANALYZE" --db postgresql://localhost/none /dev/null 2>&1 | grep -q "built without PostgreSQL"; then
	test_skip 'PostgreSQL' 'mtanalyze was built without libpq (libpq-dev)'
	test_done; exit
fi

URI="postgresql://$PGUSER:$PGPASSWORD@$PGHOST:$PGPORT/$PGDATABASE"
pq() { psql -X -q -At -F '|' -v ON_ERROR_STOP=1 "$URI" "$@"; }
q() { sqlite3 -batch -separator '|' "$@"; }

# The program of the fleet: version 1, and version 2, which adds a leak.
cat >app.c <<\EOF
#include <stdlib.h>
#include <string.h>
static void *keep[64];
static char *config (void) { char *p = malloc (100); memset (p, 1, 100); return p; }
static void *session (void) { return calloc (4, 16); }
#ifdef V2
static void *cache_entry (void) { return malloc (48); }   /* the leak version 2 brings */
#endif
int main (int argc, char **argv)
{
	int n = argc > 1 ? atoi (argv[1]) : 3;
	config ();                              /* leaks on every host */
	for (int i = 0; i < n; i++)
		keep[i] = session ();
	for (int i = 1; i < n; i++)             /* the first one leaks */
		free (keep[i]);
#ifdef V2
	cache_entry ();
#endif
	free (malloc (10));
	return 0;
}
EOF

# load VERSION HOSTS...: the runs of those hosts loaded at once (host 4 of
# version 2 with --all-events), then into SQLite in the order of the ids
# the server gave them.
load() {
	v=$1 && shift &&
	for h in "$@"; do
		ev= && { [ $v$h != 24 ] || ev=--all-events; } &&
		{ st=0 && "$MTANALYZE" --db "$URI" $ev --host host$h ./app v$v-host$h.log >load$v$h.out \
			2>load$v$h.err || st=$?; echo $st >load$v$h.st; } &
	done &&
	wait &&
	for h in "$@"; do
		test "$(cat load$v$h.st)" = 1 && test_must_be_empty load$v$h.err &&
		grep "^run [0-9]* loaded into .postgresql://$PGUSER:\*\*\*@$PGHOST:$PGPORT/$PGDATABASE.: " load$v$h.out ||
			return 1
	done &&
	pq -c "SELECT traces, host FROM runs WHERE traces LIKE 'v$v-%' ORDER BY id" >order &&
	test -s order &&
	while IFS="|" read -r t host; do
		test_expect_code 1 "$MTANALYZE" --db fleet.db --host "$host" ./app "$t" >/dev/null || return 1
	done <order
}

test_expect_success 'build 1 runs on four hosts (each its own address layout)' '
	$CC -g -O0 -o app app.c &&
	for h in 1 2 3 4; do
		"$MTREC" -o v1-host$h.log --depth 8 ./app || exit 1
	done &&
	test "$(grep -h "^# object .* -$" v1-host*.log | cut -d" " -f3 | sort -u | wc -l)" = 4
'

test_expect_success 'their four loads at once all get in, each one run, with its host and build' '
	load 1 1 2 3 4 &&
	test "$(pq -c "SELECT count(*), count(DISTINCT host), count(DISTINCT build_id) FROM runs")" = "4|4|1" &&
	test "$(pq -c "SELECT count(*) FROM runs r WHERE leaked_blocks <> (SELECT count(*) FROM leaks l WHERE l.run_id = r.id)")" = 0 &&
	test "$(pq -c "SELECT count(*) FROM (SELECT function, file, line, object FROM sites
		GROUP BY function, file, line, object HAVING count(*) > 1) x")" = 0 &&
	test "$(q fleet.db "SELECT count(*) FROM runs")" = 4
'

test_expect_success 'build 2, with a new leak, on two of the hosts, loaded at once' '
	rm app && $CC -g -O0 -DV2 -o app app.c &&
	for h in 3 4; do
		"$MTREC" -o v2-host$h.log --depth 8 ./app || exit 1
	done &&
	load 2 3 4 &&
	test "$(pq -c "SELECT count(*), count(DISTINCT host), count(DISTINCT build_id) FROM runs")" = "6|4|2" &&
	test "$(pq -c "SELECT count(*) FROM stacks")" = "$(pq -c "SELECT count(DISTINCT id) FROM stacks")" &&
	test "$(pq -c "SELECT host, all_events FROM runs WHERE all_events = 1")" = "host4|1" &&
	test "$(pq -c "SELECT count(*) FROM events e JOIN runs r ON r.id = e.run_id WHERE r.host = '"'"'host4'"'"'")" = \
		"$(pq -c "SELECT events FROM runs WHERE all_events = 1")" &&
	test "$(q fleet.db "SELECT count(*) FROM runs")" = 6
'

test_expect_success 'no password printed: not by a load, not by a wrong one' '
	! grep -F "$PGPASSWORD" load*.out load*.err &&
	bad="postgresql://$PGUSER:wrong-secret@$PGHOST:$PGPORT/$PGDATABASE" &&
	test_expect_code 2 "$MTANALYZE" --db "$bad" v1-host1.log >out 2>err &&
	test_must_be_empty out &&
	grep "^mtanalyze: cannot connect to .postgresql://$PGUSER:\*\*\*@$PGHOST:$PGPORT/$PGDATABASE.: .*password authentication failed" err &&
	! grep "wrong-secret" err &&
	test_expect_code 2 "$MTANALYZE" diff "$bad:1" v1-host1.log >out 2>err &&
	! grep "wrong-secret" err && grep "cannot connect" err &&
	test_expect_code 2 "$MTANALYZE" diff "$URI" v1-host1.log >out 2>err &&
	! grep -F "$PGPASSWORD" err && grep "is a database: name one of its runs" err &&
	test_expect_code 2 "$MTANALYZE" "$bad?password=wrong-secret" >out 2>err &&
	! grep "wrong-secret" err &&
	test_expect_code 2 "$MTANALYZE" --db "postgresql://$PGUSER@$PGHOST:$PGPORT/$PGDATABASE?password=wrong-secret" \
		v1-host1.log >out 2>err &&
	grep "password=\*\*\*" err && ! grep "wrong-secret" err
'

# Bad URIs are refused by libpq before it connects, in words that quote
# what it could not read: the token it could not decode, a URI whole.
test_expect_success 'no password printed: not by a URI libpq cannot read' '
	for u in "postgresql://$PGUSER:wr%zzong-secret@$PGHOST:$PGPORT/$PGDATABASE" \
		"postgresql://$PGUSER@$PGHOST:$PGPORT/$PGDATABASE?password=wr%zzong-secret" \
		"postgresql://$PGUSER:wrong/secret@$PGHOST:$PGPORT/$PGDATABASE" \
		"postgresql://$PGUSER:wrong-secret@[::1/$PGDATABASE" \
		"postgresql://$PGUSER:wrong-secret@no-such-host.invalid:$PGPORT/$PGDATABASE"; do
		test_expect_code 2 "$MTANALYZE" --db "$u" v1-host1.log >out 2>err &&
		test_must_be_empty out && cat err &&
		grep "^mtanalyze: cannot connect to .postgresql://$PGUSER[:@]" err &&
		! grep "secret" err &&
		test_expect_code 2 "$MTANALYZE" diff "$u:1" v1-host1.log >out 2>err &&
		grep "cannot connect to" err && ! grep "secret" err || exit 1
	done
'

test_expect_success 'one schema: the same tables, views and columns on both engines' '
	q fleet.db "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info (m.name) p
		WHERE m.type IN ('"'"'table'"'"', '"'"'view'"'"')" | sort >lite.cols &&
	pq -c "SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema () AND table_name <> '"'"'mta_pragma'"'"'" | sort >pg.cols &&
	test "$(wc -l <lite.cols)" -ge 100 &&
	test_cmp lite.cols pg.cols &&
	test "$(q fleet.db "PRAGMA user_version")" = "$(pq -c "SELECT value FROM mta_pragma WHERE name = '"'"'user_version'"'"'")"
'

test_expect_success 'frames: addresses differ between hosts, build-id and offset match' '
	for h in 1 2; do
		pq -c "SELECT DISTINCT f.address, f.build_id, f.object_offset FROM frames f
			JOIN stacks k ON k.id = f.stack_id JOIN runs r ON r.id = k.run_id
			JOIN sites s ON s.id = k.site_id
			WHERE r.host = '"'"'host$h'"'"' AND s.function = '"'"'session'"'"' AND f.level = 0" >frame$h ||
			exit 1
	done &&
	test "$(wc -l <frame1)" = 1 && test "$(wc -l <frame2)" = 1 &&
	test "$(cut -d"|" -f1 frame1)" != "$(cut -d"|" -f1 frame2)" &&
	test "$(cut -d"|" -f2,3 frame1)" = "$(cut -d"|" -f2,3 frame2)" &&
	grep "^[0-9-]*|[0-9a-f]\{40\}|[0-9]*\$" frame1 &&
	test "$(pq -c "SELECT count(DISTINCT build_id) FROM frames WHERE object_offset IS NOT NULL")" -ge 2
'

test_expect_success 'diff: two runs of the server, as two of the file' '
	test_expect_code 1 "$MTANALYZE" diff "$URI:1" "$URI:-1" >pg.diff 2>err &&
	test_must_be_empty err &&
	test_expect_code 1 "$MTANALYZE" diff fleet.db:1 fleet.db:-1 >lite.diff &&
	sed "s|postgresql://$PGUSER:\*\*\*@$PGHOST:$PGPORT/$PGDATABASE|DB|" pg.diff >a &&
	sed "s|fleet.db|DB|" lite.diff >b &&
	test_cmp b a &&
	grep "new .* cache_entry at .*app.c:7" a &&
	! grep -F "$PGPASSWORD" pg.diff
'

test_expect_success 'diff: a run of the server against a trace, as a --base' '
	test_expect_code 1 "$MTANALYZE" diff "$URI:1" ./app:v2-host4.log >out &&
	grep "^BASE     postgresql://$PGUSER:\*\*\*@.*:1 (run 1)" out &&
	grep "new .* cache_entry at " out &&
	"$MTANALYZE" diff ./app:v2-host3.log "$URI:-1" >out2 &&
	grep "No new or grown leaks" out2 &&
	test_expect_code 1 "$MTANALYZE" diff --base "$URI:2" --base fleet.db:3 "$URI:1" "$URI:last" >out3 &&
	grep "^BASE     postgresql://$PGUSER:\*\*\*@.*:2 (run 2): .* (--base)\$" out3 &&
	grep "^BASE     fleet.db:3 (run 3): .* (--base)\$" out3 &&
	grep "new .* cache_entry at " out3
'

# A run of another program, the last: sites that grow linearly and
# faster (growing-leaks.sql), a free of memory never allocated
# (bad-frees.sql), leaks the run before had not (compare-runs.sql) -- so
# that no query below answers nothing on both engines alike.
test_expect_success 'a run that grows and frees what it never allocated, loaded last' '
	"$MTREC" -q -o grow0.log --depth 8 "$HELPER/ana-growth" 4000 13 &&
	awk "!d && / - 0x/ { print; sub(/ - 0x[0-9a-f]+/, \" - 0x10\"); d = 1 } { print }" grow0.log >grow.log &&
	test_expect_code 1 "$MTANALYZE" --db "$URI" --host host1 grow.log >out &&
	test_expect_code 1 "$MTANALYZE" --db fleet.db --host host1 grow.log >>out &&
	test "$(grep -c "^run 7 loaded into .*: [0-9]* leaked blocks, [0-9]* bytes, 1 bad free\$" out)" = 2
'

# answers ENGINE QUERY: its rows, sorted (the engines order equal rows and
# text apart), without loaded_at (the time of each load) and the ids of
# sites and stacks (each engine numbers its own).
answers() {
	case $1 in
	pg) pq -v run=NULL -v base=NULL -v feature=NULL -v frames=NULL -v lib=NULL -v limit=NULL \
		-v program=NULL -f "$2" ;;
	*) q fleet.db <"$2" ;;
	esac >raw.$1 &&
	case $2 in
	*/runs.sql) cut -d"|" -f1,3- raw.$1 ;;
	*/leak-stacks.sql) cut -d"|" -f3- raw.$1 ;;
	*) cat raw.$1 ;;
	esac | sort
}

test_expect_success 'every ready query gives the same answers on both engines' '
	ls "$TOP"/share/queries/*.sql >queries && test "$(wc -l <queries)" -ge 10 &&
	for f in $(cat queries); do
		answers lite "$f" >lite.out && answers pg "$f" >pg.out &&
		test_cmp lite.out pg.out && test -s pg.out || { echo "$f"; exit 1; }
	done
'

test_expect_success 'the fleet queries: the site on every host, the site build 2 brought' '
	answers pg "$TOP/share/queries/fleet-leaks-by-host.sql" >by-host &&
	grep "^config|[^|]*app.c:4|.*|4|4|6|6|600\$" by-host &&
	grep "^session|[^|]*app.c:5|.*|4|4|6|6|384\$" by-host &&
	grep "^cache_entry|[^|]*app.c:7|.*|2|4|2|2|96\$" by-host &&
	answers pg "$TOP/share/queries/fleet-first-build.sql" >first &&
	b2=$(pq -c "SELECT build_id FROM runs WHERE traces = '"'"'v2-host3.log'"'"'") &&
	grep "^cache_entry|[^|]*app.c:7|.*|$b2|5|2|2|4\$" first &&
	grep "^config|[^|]*app.c:4|" first | grep -v "|$b2|"
'

# A version 7 database on the server, as that version made it:
# site_timeline a table of a row a sample.  Its next load makes it ranges
# (schema v8) in the statement that brings the schema up to date.
test_expect_success 'a version 7 database: site_timeline becomes ranges, the runs read back the same' '
	pq -c "SELECT * FROM leak_growth ORDER BY run_id, site_id, seq" >growth.before &&
	test -s growth.before &&
	pq -c "CREATE TABLE t7 AS SELECT * FROM site_timeline; DROP VIEW leak_growth;
		DROP VIEW site_timeline; DROP TABLE site_timeline_ranges; ALTER TABLE t7 RENAME TO site_timeline;
		UPDATE mta_pragma SET value = 7 WHERE name = '"'"'user_version'"'"'" &&
	test "$(pq -c "SELECT table_type FROM information_schema.tables
		WHERE table_name = '"'"'site_timeline'"'"'")" = "BASE TABLE" &&
	test_expect_code 1 "$MTANALYZE" --db "$URI" --host host1 grow.log >out &&
	test "$(pq -c "SELECT value FROM mta_pragma WHERE name = '"'"'user_version'"'"'")" = 8 &&
	test "$(pq -c "SELECT table_type FROM information_schema.tables
		WHERE table_name = '"'"'site_timeline'"'"'")" = VIEW &&
	pq -c "SELECT * FROM leak_growth WHERE run_id <= 7 ORDER BY run_id, site_id, seq" >growth.after &&
	test_cmp growth.before growth.after &&
	pq -c "SELECT function, seq, line, live_blocks, live_bytes FROM leak_growth WHERE run_id = 7
		ORDER BY 1, 2" >r7 &&
	pq -c "SELECT function, seq, line, live_blocks, live_bytes FROM leak_growth
		WHERE run_id = (SELECT max (id) FROM runs) ORDER BY 1, 2" >rnew &&
	test -s r7 && test_cmp r7 rnew
'

# Last: the run's id the killed load took is not given again (a sequence
# is outside transactions), and the runs' ids above would not be SQLite's.
# kill_in_transaction: the load of big.log started, killed (SIGKILL) once
# its transaction has written (the server gave it a transaction id); 0
# when it was killed so.
kill_in_transaction() {
	"$MTANALYZE" --db "$URI" --all-events --host killed ./big big.log >kill.out 2>&1 &
	pid=$!
	n=0
	while [ "$(pq -c "SELECT count(*) FROM pg_stat_activity WHERE backend_xid IS NOT NULL
		AND pid <> pg_backend_pid ()")" = 0 ] &&
	      kill -0 $pid 2>/dev/null && [ $n -lt 6000 ]; do
		n=$((n + 1))
	done
	kill -KILL $pid 2>/dev/null
	st=0 && wait $pid || st=$?
	test $st = 137 && ! grep "loaded into" kill.out
}

test_expect_success 'a load killed in its transaction leaves nothing of its run' '
	cat >big.c <<-\EOF &&
	#include <stdlib.h>
	int main (int argc, char **argv)
	{
		for (int i = 0, n = atoi (argv[1]); i < n; i++) {
			void *p = malloc (16 + i % 64);
			if (i % 3)
				free (p);
		}
		return 0;
	}
	EOF
	$CC -g -O0 -o big big.c &&
	"$MTREC" -q -o big.log --depth 4 ./big 200000 &&
	pq -c "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM stacks), (SELECT count(*) FROM leaks),
		(SELECT count(*) FROM events), (SELECT count(*) FROM frames)" >before &&
	kill_in_transaction &&
	n=0 && while [ "$(pq -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = '"'"'client backend'"'"'
		AND pid <> pg_backend_pid ()")" != 0 ] && [ $n -lt 6000 ]; do n=$((n + 1)); done &&
	pq -c "SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM stacks), (SELECT count(*) FROM leaks),
		(SELECT count(*) FROM events), (SELECT count(*) FROM frames)" >after &&
	cat before && test_cmp before after
'

test_done
