#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/spdx.sh [--add] -- every source file of the tree says its license
# in an SPDX-License-Identifier line (LICENSE: LGPL-2.1-or-later) in its
# first two lines: C files on their first line, scripts after their "#!".
#
# Lists the files without one and exits 1 (t1049); with --add, gives
# them one instead (for files added since, or a branch merged).  Source
# files: *.c, *.h, *.sh, *.awk, *.py, *.js, Makefile.in, configure, and
# the scripts without a suffix (recorder/mtrec-service, tests/vg-mtanalyze,
# .ci/run, .ci/deb-check, share/completion/*); not tests/out, not what
# the build generates.
ID='SPDX-License-Identifier: LGPL-2.1-or-later'
add=
[ "${1-}" = --add ] && add=1
cd "$(dirname "$0")/.." || exit 2

sources() {
	find . -path ./tests/out -prune -o -path ./.git -prune -o -path ./debian -prune -o \
		-path ./build-doc -prune -o -path ./demo-run -prune -o -type f \
		\( -name '*.[ch]' -o -name '*.sh' -o -name '*.awk' -o -name '*.py' -o -name '*.js' \
		-o -name Makefile.in -o -name configure \) -print
	for f in recorder/mtrec-service tests/vg-mtanalyze .ci/run .ci/deb-check share/completion/*; do
		[ -f "$f" ] && echo "./$f"
	done
}

# The comment that holds the line in FILE's language.
line_for() {
	case $1 in
	*.[ch]) echo "/* $ID */" ;;
	*.js) echo "// $ID" ;;
	*) echo "# $ID" ;;
	esac
}

missing=0
for f in $(sources | sed 's|^\./||' | grep -v '^recorder/track-profiles\.h$' | sort); do
	head -n 2 "$f" | grep -q "$ID" && continue
	if [ -z "$add" ]; then
		echo "$f: no '$ID' in its first two lines"
		missing=$((missing + 1))
		continue
	fi
	l=$(line_for "$f")
	if head -n 1 "$f" | grep -q '^#!'; then
		{ head -n 1 "$f" && echo "$l" && tail -n +2 "$f"; } >"$f.spdx"
	else
		{ echo "$l" && cat "$f"; } >"$f.spdx"
	fi
	chmod --reference="$f" "$f.spdx" && mv "$f.spdx" "$f" || exit 2
done
[ "$missing" -eq 0 ] || { echo "spdx: $missing files without the license line"; exit 1; }
