#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/layers.sh -- the calls between object files, from their symbols
# (nm), checked against the layers of a component (`make layers`).
#
#   sh tests/layers.sh [-n NAME] [-l "TOP ... BOTTOM"] [-k "OBJ OBJ..."]... OBJ...
#
# An object calls another when it has an undefined symbol the other
# defines (functions and data alike; static ones are invisible, as they
# should be).  With -l, each object's layer is the name of the folder it
# is in, the list going from the top layer down: a call from an object to
# one in a higher layer is an upward call.  A cycle is a set of two or
# more objects that reach each other through their calls (a strongly
# connected component): one of them cannot be understood, tested or
# linked without the others.  -k names the objects of a cycle that is
# known and kept for now (the recorder's, recorder/README); that exact
# set is reported but does not fail, so a new cycle, or a known one that
# grew, shrank or went, fails until the list says so.
#
# Prints the calls between layers (or between objects when there are no
# layers), then every upward call and every cycle; exits 1 on an upward
# call, an unknown cycle or a known one gone, 2 on bad usage.
name=objects layers= known=
while getopts n:l:k: opt; do
	case $opt in
	n) name=$OPTARG ;;
	l) layers=$OPTARG ;;
	k) known="$known$(printf '%s\n' $OPTARG | sort | tr '\n' ' ')
" ;;
	*) echo "usage: layers.sh [-n NAME] [-l LAYERS] [-k OBJS]... OBJ..." >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "layers.sh: no object files" >&2; exit 2; }
for o in "$@"; do
	[ -f "$o" ] || { echo "layers.sh: '$o': no such object file (build first)" >&2; exit 2; }
done

# "D OBJ SYM" for each global definition, "U OBJ SYM" for each use.
nm -A -- "$@" | awk '
{
	obj = $1; addr = obj; sub(/:[^:]*$/, "", obj); sub(/.*:/, "", addr)
	if ($2 == "U" || ($2 == "w" && addr == "")) print "U", obj, $3
	else if ($2 ~ /^[TDBRCGSVWi]$/) print "D", obj, $3
}' | awk -v name="$name" -v layers="$layers" -v known="$known" '
function base(o) { sub(/\.(pic\.)?o$/, "", o); return o }
function sorted(list,   w, c, a, b, t, out) {
	c = split(list, w, " ")
	for (a = 1; a <= c; a++) for (b = a + 1; b <= c; b++) if (w[b] < w[a]) { t = w[a]; w[a] = w[b]; w[b] = t }
	for (a = 1; a <= c; a++) out = out " " w[a]
	return out
}
function layer(o,   d) { d = o; if (d !~ /\//) return ""; sub(/\/[^\/]*$/, "", d); sub(/.*\//, "", d); return d }
function short(o,   d, q, c) { d = base(o); if (layers != "") { c = split(d, q, "/"); return (c > 1 ? q[c-1] "/" q[c] : q[c]) } sub(/.*\//, "", d); return d }
$1 == "D" { def[$3] = $2; objs[$2] = 1; next }
$1 == "U" { use[++nu] = $2 SUBSEP $3; objs[$2] = 1 }
END {
	nl = split(layers, lv, " ")
	for (i = 1; i <= nl; i++) rank[lv[i]] = nl - i	# top layer highest
	for (i = 1; i <= nu; i++) {
		split(use[i], u, SUBSEP)
		if (!(u[2] in def) || def[u[2]] == u[1]) continue
		e = u[1] SUBSEP def[u[2]]
		if (!(e in edge)) { edge[e] = u[2]; ne++ } else if (length(edge[e]) < 60) edge[e] = edge[e] " " u[2]
	}
	n = 0
	for (o in objs) { id[o] = ++n; obj[n] = o }
	for (e in edge) { split(e, p, SUBSEP); r[id[p[1]], id[p[2]]] = 1 }
	# reachability (Warshall), then objects that reach each other
	for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if ((i, k) in r)
		for (j = 1; j <= n; j++) if ((k, j) in r) r[i, j] = 1
	printf "%s: %d objects, %d calls between objects\n", name, n, ne
	bad = 0
	if (nl > 0) {
		for (e in edge) { split(e, p, SUBSEP); a = layer(p[1]); b = layer(p[2])
			if (a != b) lay[a] = lay[a] " " b }
		for (i = 1; i <= nl; i++) {
			l = lv[i]; line = ""
			for (j = 1; j <= nl; j++) if (index(lay[l] " ", " " lv[j] " ")) line = line " " lv[j]
			printf "  %-8s -> %s\n", l, (line == "" ? " (nothing)" : line)
		}
		for (o in objs) if (!(layer(o) in rank)) printf "  %s: not in a layer (%s)\n", short(o), layers | "sort"
		close("sort")
		for (e in edge) { split(e, p, SUBSEP); a = layer(p[1]); b = layer(p[2])
			if ((a in rank) && (b in rank) && rank[b] > rank[a]) {
				printf "  upward call: %s -> %s (%s)\n", short(p[1]), short(p[2]), edge[e] | "sort"; bad = 1 } }
		close("sort")
	} else {
		for (e in edge) { split(e, p, SUBSEP); calls[short(p[1])] = calls[short(p[1])] " " short(p[2]) }
		for (o in calls) printf "  %s ->%s\n", o, sorted(calls[o]) | "sort"
		close("sort")
	}
	for (i = 1; i <= n; i++) {
		if (i in done) continue
		m = 0; set = ""
		for (j = 1; j <= n; j++) if (j == i || ((i, j) in r && (j, i) in r)) { done[j] = 1; m++; mem[m] = short(obj[j]) }
		if (m < 2) continue
		# sorted, space-separated, as -k is
		for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (mem[b] < mem[a]) { t = mem[a]; mem[a] = mem[b]; mem[b] = t }
		for (a = 1; a <= m; a++) set = set mem[a] " "
		if (index("\n" known, "\n" set "\n")) { printf "  known cycle (%d objects): %s\n", m, set; seen[set] = 1 }
		else { printf "  cycle (%d objects): %s\n", m, set; bad = 1 }
	}
	nk = split(known, ks, "\n")
	for (i = 1; i <= nk; i++) if (ks[i] != "" && !(ks[i] in seen)) {
		printf "  known cycle gone: %s(take it off the list)\n", ks[i]; bad = 1 }
	if (!bad) printf "  no upward call, no unknown cycle\n"
	exit bad
}'
