#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t3092-analyzer-diff-leaks-stored.sh -- `mtanalyze diff --leaks` on a
# database run reads what the run stored, or refuses: a version 5 database
# not yet migrated (no reach_line column) is read as it is, its run having
# no verdicts; a run loaded with --leaks KINDS answers for those kinds
# only, and asking it for others is an error naming the run and the kinds
# it holds (exit 2), never a false regression (issue 26, point 5;
# share/diff.md, "Noise").
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || ! command -v sqlite3 >/dev/null; then
	test_skip 'diff --leaks on stored runs' 'needs the analyzer and sqlite3'
	test_done; exit
fi

# A feature that adds a leak (definite) and a cache (still reachable).
cat >base.log <<\EOT
= Start
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
# reach begin 2
# reach 0x1000 definite
# reach 0x2000 reachable
# reach end 10 0
= End
EOT
cat >feature.log <<\EOT
= Start
@ ./app:(lost+10)[0x1010] + 0x1000 0x30
@ ./app:(cache+10)[0x1110] + 0x2000 0x100
@ ./app:(newleak+10)[0x1310] + 0x3000 0x20
@ ./app:(newcache+10)[0x1410] + 0x4000 0x40
# reach begin 4
# reach 0x1000 definite
# reach 0x2000 reachable
# reach 0x3000 definite
# reach 0x4000 reachable
# reach end 10 0
= End
EOT

test_expect_success 'a version 5 database, not migrated: no verdicts, said so; no SQL error' '
	sqlite3 v5.db <"$TOP/tests/reach-v5-db.sql" &&
	test "$(sqlite3 v5.db "PRAGMA user_version")" = 5 &&
	test_expect_code 2 "$MTANALYZE" diff --leaks definite v5.db:1 feature.log >out 2>err &&
	cat err &&
	! grep "no such column" err &&
	grep -x "mtanalyze: --leaks: .v5.db:1 (run 1). has no reachability verdicts .*" err &&
	test_must_be_empty out &&
	test "$(sqlite3 v5.db "PRAGMA user_version")" = 5
'

test_expect_success 'a version 5 database, not migrated: diff without --leaks reads it' '
	"$MTANALYZE" diff v5.db:1 v5.db:1 >out 2>err &&
	test_must_be_empty err &&
	grep -x "No new or grown leaks in FEATURE." out
'

test_expect_success 'a run loaded with --leaks definite answers for definite: the new leak only' '
	test_expect_code 1 "$MTANALYZE" --db d.db --leaks definite base.log >out &&
	test "$(sqlite3 d.db "SELECT leak_kinds FROM runs WHERE id = 1")" = definite &&
	test_expect_code 1 "$MTANALYZE" diff --leaks definite d.db:1 feature.log >out 2>err &&
	test_must_be_empty err &&
	grep "^  new .*newleak+0x10 in ./app$" out &&
	test "$(grep -c "^  new " out)" = 1
'

test_expect_success 'asked for kinds it did not store: exit 2, naming the run and what it holds' '
	for k in reachable all definite,possible; do
		test_expect_code 2 "$MTANALYZE" diff --leaks $k d.db:1 feature.log >out 2>err &&
		test_must_be_empty out &&
		grep "^mtanalyze: --leaks: .d.db:1 (run 1). holds only the blocks of the kinds it was loaded with (--leaks definite): it cannot say which of its blocks were " err ||
		return 1
	done &&
	grep "were possible (" err &&
	test_expect_code 2 "$MTANALYZE" diff --json --leaks reachable feature.log d.db:1 >out 2>err &&
	test_must_be_empty out && grep "holds only the blocks" err
'

test_expect_success 'a run loaded without --leaks answers for every kind' '
	test_expect_code 1 "$MTANALYZE" --db d.db base.log >out &&
	test_expect_code 1 "$MTANALYZE" diff --leaks reachable d.db:2 feature.log >out 2>err &&
	test_must_be_empty err &&
	grep "^  new .*newcache+0x10 in ./app$" out &&
	test "$(grep -c "^  new " out)" = 1
'

test_done
