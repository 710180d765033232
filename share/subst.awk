# SPDX-License-Identifier: LGPL-2.1-or-later
# subst.awk -- put the installed paths into man pages and mtrec.pc.
# The Nth word of the environment variable SUBST_NAMES is replaced by the
# value of SUBST_N wherever it stands in the text, literally (no regular
# expression, no '&'), so that a prefix may hold any character the
# install allows.
BEGIN {
	n = split(ENVIRON["SUBST_NAMES"], names, " ")
	for (i = 1; i <= n; i++)
		value[names[i]] = ENVIRON["SUBST_" i]
}
{
	line = $0
	for (i = 1; i <= n; i++) {
		out = ""
		while ((p = index(line, names[i])) > 0) {
			out = out substr(line, 1, p - 1) value[names[i]]
			line = substr(line, p + length(names[i]))
		}
		line = out line
	}
	print line
}
