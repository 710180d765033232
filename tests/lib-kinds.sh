# SPDX-License-Identifier: LGPL-2.1-or-later
# lib-kinds.sh -- sourced by the tests of tracked kinds (t33xx): write
# traces with "# k" lines whose callers are the marked lines of
# tests/helper/ana-kinds.c.
#
# kinds_trace < EVENTS > TRACE: a trace of ana-kinds' process holding
# EVENTS, one a line:
#   k KIND SITE OP ADDR [SIZE]   a tracked event called from SITE
#   m SITE OP ADDR [SIZE]        a malloc event called from SITE
#   anything else                copied as it is ("# T 2", "# stopped ...")
# SITE is the name of one of ana-kinds' functions.
KINDS_APP="$TOP/tests/helper/ana-kinds"
KINDS_SRC="$TOP/tests/helper/ana-kinds.c"

kinds_trace() {
	"$KINDS_APP" >kinds-sites || return 1
	printf '# mtrec 1\n# pid 100 1\n# start 1000000000.000000000\n# exe %s\n= Start\n# T 100\n' "$KINDS_APP"
	awk -v app="$KINDS_APP" '
		FNR == NR { off[$1] = $2; next }
		$1 == "k" { printf "# k %s @ %s:[%s]", $2, app, off[$3]
			    for (i = 4; i <= NF; i++) printf " %s", $i; print ""; next }
		$1 == "m" { printf "@ %s:[%s]", app, off[$2]
			    for (i = 3; i <= NF; i++) printf " %s", $i; print ""; next }
		{ print }' kinds-sites - || return 1
	echo '= End'
}

# kinds_line MARKER: the line of ana-kinds.c that holds MARKER (the
# SITE (name, MARKER) line: DICT-UNREF is not DICT-UNREF-EXTRA).
kinds_line() {
	grep -n -e "$1)" "$KINDS_SRC" | cut -d: -f1
}

# kinds_events N: the events of the tests' run, for kinds_trace.
#   malloc: 1 block leaked at MALLOC-LEAK (16 bytes), one freed;
#   pool:   3 blocks of 64 bytes leaked at POOL-GET-A, 2 got at POOL-GET-B
#           and put back at POOL-PUT, and one put at POOL-PUT-STRAY that
#           pool never gave (rte did: kinds keep their blocks apart);
#   rte:    1 block of 256 bytes leaked at RTE-ALLOC, one freed at RTE-FREE;
#   dict_t: N objects referenced at DICT-NEW and DICT-COPY and dropped once
#           at DICT-UNREF (net +1 each), one balanced, and one dropped at
#           DICT-UNREF-EXTRA that nobody referenced (below zero).
kinds_events() {
	echo "m malloc_leak + 0x55d0c07c5000 0x10"
	echo "m malloc_free + 0x55d0c07c5040 0x20"
	echo "k rte rte_alloc + 0x7f0000009000 0x100"
	echo "k rte rte_alloc + 0x7f000000a000 0x200"
	echo "k pool pool_put_stray - 0x7f0000009000"
	for i in 0 1 2; do echo "k pool pool_get_a + 0x7f000000100$i 0x40"; done
	echo "k pool pool_get_b + 0x7f0000002000 0x40"
	echo "k pool pool_get_b + 0x7f0000002040 0x40"
	echo "k pool pool_put - 0x7f0000002040"
	echo "k pool pool_put - 0x7f0000002000"
	echo "k rte rte_free - 0x7f000000a000"
	echo "m malloc_free - 0x55d0c07c5040"
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			a = sprintf ("0x%x", 1439744000 + i * 256)
			print "k dict_t dict_new r " a; print "k dict_t dict_copy r " a
			print "k dict_t dict_unref u " a
		}
		print "k dict_t dict_new r 0x55d0d0000000"; print "k dict_t dict_unref u 0x55d0d0000000"
		print "k dict_t dict_unref_extra u 0x55d0d0000100"
	}'
}
