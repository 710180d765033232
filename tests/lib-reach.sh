# lib-reach.sh -- what the tests of MTREC_REACH share (t2700, t2710):
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
