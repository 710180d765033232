# SPDX-License-Identifier: LGPL-2.1-or-later
# lib-reach.sh -- what the tests of MTREC_REACH share (t2700, t2710, t2740):
# sourced after lib.sh, with PROG set to the fixture.

# record TRACE ARGS...: the fixture under the recorder with MTREC_REACH=1.
record() {
	rec_trace_=$1 && shift &&
	rm -f "$rec_trace_" &&
	timeout 120 env LD_PRELOAD="$LIBMTREC" MALLOC_TRACE="$PWD/$rec_trace_" MTREC_REACH=1 \
		"$PROG" "$@"
}

# verdicts TRACE: "SIZE KIND" for each block of the program's own (the
# dynamic linker's left out), sorted.  The trace is read twice: a
# thread's "+" line may come after the "# reach" lines in the file (each
# thread writes in chunks of its own).
verdicts() {
	awk 'NR == FNR { if ($1 == "@" && ($3 == "+" || $3 == ">")) { size[$4] = $5; who[$4] = $2 }
			 next }
	     $1 == "#" && $2 == "reach" && $3 ~ /^0x/ && who[$3] !~ /ld-linux/ { print size[$3], $4 }' \
		"$1" "$1" | sort
}

# totals TRACE: "KIND BYTES BLOCKS" for each kind, from the "# reach" lines
# and the sizes the trace gave the blocks.
totals() {
	# hex(): mawk reads "0x48" as 72, gawk as 0 (without
	# --non-decimal-data): whichever awk is installed, convert by hand
	awk 'function hex(s,  v, i) { v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	     NR == FNR { if ($1 == "@" && ($3 == "+" || $3 == ">")) size[$4] = $5; next }
	     $1 == "#" && $2 == "reach" && $3 ~ /^0x/ { b[$4] += hex(size[$3]); n[$4]++ }
	     END { split("definite indirect possible reachable", k, " ")
		   for (i = 1; i <= 4; i++) print k[i], b[k[i]] + 0, n[k[i]] + 0 }' "$1" "$1"
}

# vg_totals LOG: the same from valgrind's LEAK SUMMARY (all 0 when it has
# none: "All heap blocks were freed").
vg_totals() {
	tr -d , <"$1" | awk 'BEGIN { d = i = p = r = "0 0" }
		/definitely lost:/ { d = $4 " " $7 } /indirectly lost:/ { i = $4 " " $7 }
		/possibly lost:/ { p = $4 " " $7 } /still reachable:/ { r = $4 " " $7 }
		END { print "definite", d; print "indirect", i; print "possible", p; print "reachable", r }'
}
