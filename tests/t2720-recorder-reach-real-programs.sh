#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t2720-recorder-reach-real-programs.sh -- MTREC_REACH=1 on programs of
# the system, not fixtures: bash running a script, perl, git.  The bytes
# and blocks of each of valgrind's kinds, as mtanalyze --json gives them
# from the recorder's verdicts, are within 1% (or 256 bytes) of what
# `valgrind --leak-check=full` says of the same command.  Measured when
# written: the block counts equal in every kind; bash's reachable bytes
# 59 more here (its environment array), perl's possibly lost 4 more (the
# dynamic linker's per-thread vector, whose size valgrind's own preloads
# change), git's equal.
. "$(dirname "$0")/lib.sh"

test_lazy_prereq VALGRIND 'command -v valgrind'
test_lazy_prereq GIT 'command -v git && git -C "$TOP" rev-parse'

# kinds_of_trace TRACE PROGRAM: "KIND BYTES BLOCKS" for each kind.
kinds_of_trace() {
	"$MTANALYZE" --json "$2" "$1" >"$1.json"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["reach"]
for k in ("definite", "indirect", "possible", "reachable"):
    print(k, d[k]["bytes"], d[k]["blocks"])
assert d["unknown"]["blocks"] == 0, d["unknown"]' "$1.json"
}

# kinds_of_valgrind LOG: the same from valgrind's LEAK SUMMARY (0 0 for a
# kind it does not print: "All heap blocks were freed").
kinds_of_valgrind() {
	tr -d , <"$1" | awk '/definitely lost:/ { d = $4 " " $7 } /indirectly lost:/ { i = $4 " " $7 }
		/possibly lost:/ { p = $4 " " $7 } /still reachable:/ { r = $4 " " $7 }
		END { print "definite", d ? d : "0 0"; print "indirect", i ? i : "0 0"
		      print "possible", p ? p : "0 0"; print "reachable", r ? r : "0 0" }'
}

# close_enough MINE THEIRS: each kind's bytes and blocks within 1% or
# 256 bytes (blocks: 1% or 2).
close_enough() {
	paste "$1" "$2" | awk '{ db = $2 - $5; if (db < 0) db = -db; dn = $3 - $6; if (dn < 0) dn = -dn
		if (db > 256 && db > $5 / 100) { print "bytes of " $1 ": " $2 " against " $5; bad = 1 }
		if (dn > 2 && dn > $6 / 100) { print "blocks of " $1 ": " $3 " against " $6; bad = 1 } }
		END { exit bad }'
}

# compare NAME PROGRAM ARGS...: the program under both, compared.
compare() {
	cmp_name_=$1 && shift &&
	timeout 120 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$OUT/$cmp_name_.log" MTREC_REACH=1 \
		"$@" >"$cmp_name_.out" </dev/null &&
	grep "^# reach end " "$cmp_name_.log" &&
	kinds_of_trace "$cmp_name_.log" "$1" >"$cmp_name_.mine" &&
	timeout 600 valgrind --leak-check=full --show-leak-kinds=all "$@" \
		>"$cmp_name_.vgout" 2>"$cmp_name_.vg" </dev/null &&
	kinds_of_valgrind "$cmp_name_.vg" >"$cmp_name_.theirs" &&
	cat "$cmp_name_.mine" "$cmp_name_.theirs" &&
	close_enough "$cmp_name_.mine" "$cmp_name_.theirs"
}

test_expect_success VALGRIND,PYTHON3 'bash running a script: as valgrind says' '
	printf "x=\$(echo hi)\nf() { echo \$1; }\nf \$x\n" >s.sh &&
	compare bash /bin/bash s.sh
'

test_expect_success VALGRIND,PYTHON3,PERL 'perl: as valgrind says' '
	compare perl /usr/bin/perl -e "my %h = (a => [1, 2]); print scalar(keys %h), qq(\\n)"
'

test_expect_success VALGRIND,PYTHON3,GIT 'git log: as valgrind says' '
	compare git "$(command -v git)" -C "$TOP" log --oneline -3
'

test_done
