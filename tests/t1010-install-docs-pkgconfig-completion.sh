#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t1010-install-docs-pkgconfig-completion: what `make install` gives a user
# beyond the programs -- man pages for every command, the API and the
# format, with the installed paths in them and no groff warnings; mtrec.pc,
# with which a program includes mtrec.h (or links the recorder); bash
# completion for the three commands -- and that uninstall takes them away.
. "$(dirname "$0")/lib.sh"

if ! command -v groff >/dev/null || ! command -v man >/dev/null ||
   ! command -v pkg-config >/dev/null || ! command -v bash >/dev/null; then
	test_skip 'installed documents' 'needs groff, man-db, pkg-config and bash (sh .ci/run --deps)'
	test_done; exit
fi
ROOT=$OUT/root
MAN=$ROOT/usr/share/man

test_expect_success 'a copy of the sources, installed under DESTDIR with prefix /usr' '
	mkdir tree &&
	cp -R "$TOP/configure" "$TOP/Makefile.in" "$TOP/recorder" "$TOP/share" tree/ &&
	rm -rf tree/recorder/*.o tree/recorder/*.d tree/recorder/libmtrec.so tree/recorder/mtrec &&
	(cd tree && ./configure --disable-analyzer --prefix=/usr >out) &&
	make -s -C tree >build.out 2>&1 &&
	make -s -C tree install DESTDIR="$ROOT" >install.out 2>&1 &&
	for p in man1/mtrec.1 man1/mtanalyze.1 man1/mtrec-service.1 man3/mtrec.h.3 \
		 man3/trace_on.3 man3/trace_off.3 man3/trace_mark.3 man5/mtrec-trace.5; do
		test -f "$MAN/$p" || { echo "missing $p"; exit 1; }
	done &&
	test -f "$ROOT/usr/share/pkgconfig/mtrec.pc" &&
	for c in mtrec mtanalyze mtrec-service; do
		test -f "$ROOT/usr/share/bash-completion/completions/$c" || exit 1
	done
'

test_expect_success 'every page renders without a warning, from groff and from man' '
	(cd "$MAN" && for p in man*/*; do
		groff -ww -man -Tutf8 -z "$p" 2>"$OUT/groff.err" &&
		test_must_be_empty "$OUT/groff.err" || { echo "groff: $p"; exit 1; }
		MANWIDTH=80 man --warnings -l "$p" >/dev/null 2>"$OUT/man.err" &&
		test_must_be_empty "$OUT/man.err" || { echo "man: $p"; exit 1; }
	done)
'

test_expect_success 'man finds each by name; trace_on(3) is the API page' '
	for n in mtrec mtanalyze mtrec-service; do
		MANWIDTH=80 man -M "$MAN" 1 $n >page.txt 2>/dev/null &&
		grep -q "^NAME" page.txt || exit 1
	done &&
	MANWIDTH=80 man -M "$MAN" 3 trace_on >page.txt 2>/dev/null &&
	grep -q "mtrec.h, *trace_on, *trace_off, *trace_mark" page.txt &&
	MANWIDTH=80 man -M "$MAN" 5 mtrec-trace >page.txt 2>/dev/null &&
	grep -q "# stack ID IP" page.txt
'

test_expect_success 'the installed paths are in the pages, and they exist' '
	! grep -l "pkgdatadir\|pkglibdir" "$MAN"/man*/* &&
	grep -q "/usr/share/mtrec /json-format.md" "$MAN/man1/mtanalyze.1" &&
	grep -q "LD_PRELOAD=/usr/lib/mtrec/libmtrec.so" "$MAN/man1/mtanalyze.1" &&
	grep -ho "/usr/share/mtrec /[a-z./-]*[a-z]" "$MAN"/man*/* | sed "s# /#/#" | sort -u >paths &&
	test -s paths &&
	while read -r p; do test -e "$ROOT$p" || { echo "no $p"; exit 1; }; done <paths
'

cat >"$OUT/app.c" <<'EOF2'
#include <stdlib.h>
#include <mtrec.h>

int main(void)
{
	void *p;
	trace_mark("before");
	trace_off();
	free(malloc(10));
	trace_on();
	p = malloc(20);
	trace_mark("after");
	free(p);
	return 0;
}
EOF2

test_expect_success 'pkg-config --cflags: mtrec.h found; the program runs with and without the recorder' '
	export PKG_CONFIG_PATH="$ROOT/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$ROOT" &&
	test "$(pkg-config --modversion mtrec)" = "$(sed -n "s/^VERSION = //p" tree/Makefile)" &&
	cc -Wall -Werror $(pkg-config --cflags mtrec) app.c -o app &&
	./app &&
	env MALLOC_TRACE="$OUT/pre.log" LD_PRELOAD="$ROOT/usr/lib/mtrec/libmtrec.so" ./app &&
	grep -q "^# mark before" pre.log && grep -q "^# mark after" pre.log &&
	test "$(grep -c "^@.* + " pre.log)" = 1 &&
	mtrace_leaks pre.log 0
'

test_expect_success 'pkg-config --libs: the recorder linked in, not preloaded, records' '
	export PKG_CONFIG_PATH="$ROOT/usr/share/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$ROOT" &&
	cc app.c $(pkg-config --cflags --libs mtrec) -o app-linked &&
	readelf -d app-linked | grep -q "NEEDED.*libmtrec.so" &&
	env MALLOC_TRACE="$OUT/linked.log" LD_LIBRARY_PATH="$ROOT/usr/lib/mtrec" ./app-linked &&
	grep -q "^# mark after" linked.log && test "$(grep -c "^@.* + " linked.log)" = 1
'

# complete WORDS...: what the installed completion offers for the last word
cat >"$OUT/complete.bash" <<'EOF2'
for c in mtrec mtanalyze mtrec-service; do . "$ROOT/usr/share/bash-completion/completions/$c"; done
COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
f=$(complete -p "$1" | sed 's/.*-F \([^ ]*\) .*/\1/')
# (the function's status is that of compopt, which fails outside a real completion)
cd "$OUT/cwd" && { $f; printf '%s\n' "${COMPREPLY[@]}" | sort; }
EOF2

complete() {
	ROOT=$ROOT OUT=$OUT PATH="$TOP/analyzer:$ROOT/usr/bin:$PATH" bash "$OUT/complete.bash" "$@"
}

test_expect_success 'bash completion: subcommands, options from --help, values' '
	mkdir -p cwd && : >cwd/t.log && : >cwd/t.log.part2 &&
	complete mtanalyze se >c && grep -qx session c &&
	complete mtanalyze --by >c && test "$(cat c)" = --by-site &&
	complete mtanalyze diff --min >c && printf "%s\n" --min-blocks --min-bytes >e && test_cmp e c &&
	complete mtanalyze session --j >c && test "$(cat c)" = --json &&
	complete mtanalyze --growth li >c && printf "%s\n" linear >e && test_cmp e c &&
	complete mtanalyze --by-site t.l >c && printf "%s\n" t.log t.log.part2 >e && test_cmp e c &&
	complete mtrec --dep >c && test "$(cat c)" = --depth &&
	complete mtrec --signal=USR >c && printf "%s\n" --signal=USR1 --signal=USR2 >e && test_cmp e c &&
	complete mtrec -o x.log mtanaly >c && grep -qx mtanalyze c &&
	complete mtrec ct >c && grep -qx ctl c &&
	complete mtrec ctl $$ o >c && printf "%s\n" off on >e && test_cmp e c &&
	complete mtrec ctl --time >c && test "$(cat c)" = --timeout &&
	complete mtrec-service re >c && test "$(cat c)" = remove &&
	complete mtrec-service install nginx --no-r >c && test "$(cat c)" = --no-reload &&
	complete mtrec ctl $$ re >c && test "$(cat c)" = reach &&
	complete mtrec-service install nginx --re >c && printf "%s\n" --reach >e && test_cmp e c &&
	complete mtrec-service install nginx --co >c && test "$(cat c)" = --compact &&
	complete mtrec-service install nginx --tr >c && test "$(cat c)" = --track &&
	complete mtrec-service fi >c && test "$(cat c)" = files &&
	complete mtrec-service follow nginx --p >c && test "$(cat c)" = --pid
'

test_expect_success 'make uninstall removes the pages, mtrec.pc and the completions' '
	make -s -C tree uninstall DESTDIR="$ROOT" &&
	find "$ROOT" -type f >left && test_must_be_empty left
'

test_done
