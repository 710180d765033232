# SPDX-License-Identifier: LGPL-2.1-or-later
# track-profiles.awk -- share/track/NAME.txt into recorder/track-profiles.h:
# the profiles compiled into the recorder, which reads no file at start.
# Each line's item, comments and blanks dropped, joined by commas.
BEGIN {
	print "/* Generated from share/track/NAME.txt by recorder/track-profiles.awk. */"
	print "static const struct {"
	print "\tconst char *name, *items;"
	print "} profiles[] = {"
}
FNR == 1 {
	if (name != "")
		printf "\t{ \"%s\", \"%s\" },\n", name, items
	name = FILENAME; sub(/.*\//, "", name); sub(/\.txt$/, "", name)
	items = ""
}
{
	sub(/#.*/, ""); gsub(/[ \t]/, "")
	if ($0 != "")
		items = items (items == "" ? "" : ",") $0
}
END {
	if (name != "")
		printf "\t{ \"%s\", \"%s\" },\n", name, items
	print "};"
}
