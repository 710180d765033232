#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t6000-analyzer-object-paths: the analyzer opens only regular files for the
# object paths a trace names.  A trace is input, and may come from anywhere:
# a caller field or an "# exe"/"# object" line that names /dev/zero, a FIFO,
# /proc/self/mem or a 2 GiB sparse file must not hang mtanalyze, crash it or
# make it read the file into memory; such callers stay unresolved, as
# /usr/bin/mtrace leaves them.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer; then
	test_skip 'object paths' 'needs the analyzer'
	test_done; exit
fi

# run_bounded ARGS...: mtanalyze with a time limit and, in the plain build,
# 4 GiB of address space at most (ASan reserves terabytes of it, valgrind
# has its own); stdout to out, stderr to err, status to st.  A hang, a
# crash or a peak RSS above 256 MiB (512 under ASan) fails the test.
run_bounded() {
	st=0
	if [ -n "${MTA_VALGRIND:-}" ]; then
		timeout 300 "$MTANALYZE" "$@" >out 2>err || st=$?
		echo 0 >rss
	elif [ -n "${SAN_CFLAGS:-}" ]; then
		/usr/bin/time -f %M -o rss timeout 120 "$MTANALYZE" "$@" >out 2>err || st=$?
	else
		(ulimit -v 4194304; exec /usr/bin/time -f %M -o rss timeout 30 "$MTANALYZE" "$@") \
			>out 2>err || st=$?
	fi
	echo "status $st, peak RSS $(tail -n 1 rss) KiB"
	test "$st" -le 2 && test "$(tail -n 1 rss)" -lt $((${SAN_CFLAGS:+2 *} 262144))
}

# trace_naming PATH: a trace whose callers, executable and objects are PATH.
trace_naming() {
	cat <<-END
	# mtrec 1
	# exe $1
	# object 0x7f0000000000 0x7f0000000000-0x7f0000100000 - $1
	= Start
	@ $1:(f+10)[0x1234] + 0x55d0c07c52a0 0x10
	@ $1:[0x1240] + 0x55d0c07c52c0 0x20
	@ [0x7f0000001234] + 0x55d0c07c52e0 0x30
	= End
	END
}

# check_path PATH: every report reads the whole trace and counts its leaks.
check_path() {
	trace_naming "$1" >t.log &&
	run_bounded t.log && test "$st" = 1 &&
	test "$(grep -c "^0x000055d0c07c52.0 " out)" = 3 &&
	run_bounded --by-site t.log && test "$st" = 1 &&
	run_bounded --json t.log && test "$st" = 1 &&
	grep -q "\"leaked_bytes\": *96" out &&
	rm -f t.db && run_bounded --db t.db t.log && test "$st" = 1 &&
	test "$(sqlite3 t.db "SELECT count(*) FROM runs")" = 1
}

test_expect_success '/dev/zero' '
	check_path /dev/zero
'

test_expect_success 'a FIFO with no writer' '
	mkfifo fifo &&
	check_path "$PWD/fifo"
'

test_expect_success '/proc/self/mem and /proc/self/maps' '
	check_path /proc/self/mem &&
	check_path /proc/self/maps
'

test_expect_success 'a directory' '
	mkdir adir &&
	check_path "$PWD/adir"
'

test_expect_success 'a 2 GiB sparse file of zeros' '
	truncate -s 2G sparse &&
	check_path "$PWD/sparse"
'

# An ELF header (that of a real program) at the start of a 2 GiB hole,
# claiming through extended numbering 4 million section headers, which the
# hole holds: libelf, believing it, spent 2.4 GB (and 20 GB for the 33
# million the file could hold) before the header was checked first.
test_expect_success 'a 2 GiB sparse file that starts like an ELF object' '
	head -c 64 "$TOP/analyzer/mtanalyze" >elf &&
	truncate -s 2G elf &&
	# e_shoff = 64, e_shnum = 0 (count in section 0), e_shstrndx = 0xffff
	printf "\100\0\0\0\0\0\0\0" | dd of=elf bs=1 seek=40 conv=notrunc 2>/dev/null &&
	printf "\0\0\377\377" | dd of=elf bs=1 seek=60 conv=notrunc 2>/dev/null &&
	# section 0: sh_size (at 32) = 0x400000 sections, sh_link = 0
	printf "\0\0\100\0\0\0\0\0" | dd of=elf bs=1 seek=$((64 + 32)) conv=notrunc 2>/dev/null &&
	check_path "$PWD/elf"
'

test_expect_success 'a symbolic link to /dev/zero' '
	ln -s /dev/zero zlink &&
	check_path "$PWD/zlink"
'

# A FIFO among the arguments is a trace, read once: deciding whether the
# first argument is the BINARY must not open it (that read its first bytes).
test_expect_success 'a trace through a FIFO as first argument is read whole' '
	printf "= Start\n@ ./x:[0x10] + 0x1000 0x10\n@ ./x:[0x10] + 0x2000 0x20\n= End\n" >user.log &&
	printf "= Start\n= End\n" >empty.log &&
	{ "$MTANALYZE" user.log empty.log >expect || test $? = 1; } &&
	mkfifo tfifo &&
	{ cat user.log >tfifo & } &&
	test_expect_code 1 timeout 20 "$MTANALYZE" tfifo empty.log >actual && test_cmp expect actual
'

test_done
