#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Security: the recorder reads MALLOC_TRACE and its own variables with
# secure_getenv(), so a set-uid program never writes where an unprivileged
# user points it.  The dynamic linker already ignores LD_PRELOAD for
# set-uid programs; this program is linked with the recorder instead
# ("preloaded or linked"), made set-uid root and run as nobody.
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	test_skip 'a set-uid program ignores MALLOC_TRACE' 'needs root, setpriv and a nobody user'
	test_done
	exit $?
fi

# A directory nobody can reach and write, outside the test tree (whose
# parents may be closed to others).
pub=$(mktemp -d /tmp/mtrec-suid.XXXXXX) && chmod 1777 "$pub"
trap 'rm -rf "$pub"' EXIT
cp "$LIBMTREC" "$pub/libmtrec.so" && chmod 755 "$pub/libmtrec.so"
cat >"$pub/prog.c" <<'PROG'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	char *volatile p = malloc(100);
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	free(p);
	return 0;
}
PROG

test_expect_success 'build a program linked with the recorder, set-uid root' '
	$CC -O1 -o "$pub/prog" "$pub/prog.c" "$pub/libmtrec.so" -Wl,-rpath,"$pub" &&
	chown root:root "$pub/prog" && chmod 4755 "$pub/prog"
'

test_expect_success 'run by root it records (the program is traced when linked)' '
	MALLOC_TRACE="$pub/root.log" "$pub/prog" >out &&
	grep -q "^@ .* + 0x[0-9a-f]* 0x64\$" "$pub/root.log"
'

test_expect_success 'run set-uid by nobody it ignores MALLOC_TRACE and writes nothing' '
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env MALLOC_TRACE="$pub/evil.log" MTREC_DEPTH=8 "$pub/prog" >out 2>err &&
	grep -q "^uid [1-9][0-9]* euid 0\$" out &&
	test ! -e "$pub/evil.log" && test ! -s err
'

test_expect_success 'the same program without set-uid, run by nobody, records (mode 0600)' '
	chmod 755 "$pub/prog" &&
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env MALLOC_TRACE="$pub/plain.log" "$pub/prog" >out &&
	grep -q "^uid [1-9][0-9]* euid [1-9]" out &&
	test -f "$pub/plain.log" &&
	test "$(stat -c %a "$pub/plain.log")" = 600
'

test_done
