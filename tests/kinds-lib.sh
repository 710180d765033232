# kinds-lib.sh -- sourced by the tests of tracked kinds (t33xx): write
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
	printf '# mtrec 1\n# T 100\n# pid 100 1\n# exe %s\n= Start\n' "$KINDS_APP"
	awk -v app="$KINDS_APP" '
		FNR == NR { off[$1] = $2; next }
		$1 == "k" { printf "# k %s @ %s:[%s]", $2, app, off[$3]
			    for (i = 4; i <= NF; i++) printf " %s", $i; print ""; next }
		$1 == "m" { printf "@ %s:[%s]", app, off[$2]
			    for (i = 3; i <= NF; i++) printf " %s", $i; print ""; next }
		{ print }' kinds-sites - || return 1
	echo '= End'
}

# kinds_line MARKER: the line of ana-kinds.c that holds MARKER.
kinds_line() {
	grep -n -e "$1" "$KINDS_SRC" | cut -d: -f1
}
