#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# t4086-analyzer-plain-pairs: on threads, a reader pairs each "+" or ">"
# of a block of lines with the next event on its address when that is a
# "-" or "<", and the plain report drops a pair whose address was not
# live with one lookup (trace-blocks.c pair_event, mta_compat_events).
# A pair must leave nothing in the report, and whatever comes between its
# halves must still count: a duplicate allocation of the address, a
# double free, a line of another form on it (many columns: the script
# frees the block; leading zeros: another key), a comment, a pair whose
# first half finds the address live (the script's duplicate, the second
# half freeing the older block).  Blocks of 100 bytes to the default cut
# pairs at every place.  /usr/bin/mtrace, the serial reader and the
# threads must print the same.
. "$(dirname "$0")/lib.sh"

if ! need_analyzer || [ ! -x /usr/bin/mtrace ]; then
	test_skip 'pairs of events' 'needs the analyzer and /usr/bin/mtrace'
	test_done; exit
fi

# gen_pairs N SEED: about N events on 400 addresses, most of them
# short-lived blocks, with what the script reports between their halves
gen_pairs() {
	awk -v n="$1" -v x="$2" '
	function r(k) { x = (x * 69069 + 1) % 4294967296; return int(x / 65536) % k }
	function addr() { return sprintf("0x%x", 1431633920 + 16 * r(400)) }
	BEGIN {
		print "= Start"
		for (i = 0; i < n; i++) {
			a = addr(); c = sprintf("@ ./prog:[0x%x] ", 4352 + 8 * r(6)); k = r(100)
			if (k < 45) {
				printf "%s+ %s 0x%x\n", c, a, 1 + r(999)
				for (m = r(8); m > 0; m--)
					if (r(2)) printf "%s- %s\n", c, addr()
					else printf "%s+ %s 0x11\n", c, addr()
				w = r(16)
				if (w == 0) printf "%s+ %s 0x22\n", c, a
				else if (w == 1) printf "%s- %s 1 2 3 4 5 6 7 8 9 10\n", c, a
				else if (w == 2) printf "# a comment\n"
				else if (w == 3) printf "%s- %s\n", c, a
				else if (w == 4) printf "%s- 0x%016x\n", c, 1431633920 + 16 * r(400)
				else if (w == 5) printf "%s! %s 0x30\n", c, a
				if (r(5)) printf "%s- %s\n", c, a
				else printf "%s< %s\n%s> %s 0x40\n", c, a, c, addr()
			} else if (k < 60) printf "%s+ %s 0x%x\n", c, a, 1 + r(999)
			else if (k < 78) printf "%s- %s\n", c, a
			else if (k < 83) printf "%s< %s\n%s> %s 0x%x\n", c, a, c, addr(), 1 + r(99)
			else if (k < 86) printf "%s> %s 0x%x\n", c, a, 1 + r(99)
			else if (k < 88) printf "%s+ (nil) 0x10\n", c
			else if (k < 90) printf "%s< %s\n%s> (nil) 0\n", c, a, c
			else if (k < 93) printf "%s+ 0x%016x 0x10\n", c, 1431633920 + 16 * r(400)
			else if (k < 95) printf "%s + %s 0x20\n", c, a
			else if (k < 97) printf "%s+ %s 0\n", c, a
			else printf "+ %s 0x20 s=7\n", a
		}
		print "= End"
	}'
}

test_expect_success 'setup: pairs with all the script reports between their halves' '
	gen_pairs 20000 7 >pairs.log &&
	test "$(grep -c "^" pairs.log)" -gt 25000
'

test_expect_success 'serially: what mtrace prints' '
	MTANALYZE_THREADS=1 && export MTANALYZE_THREADS &&
	same_as_mtrace pairs.log -- pairs.log &&
	test "$(grep -c "Alloc [0-9]* duplicate" actual)" -gt 500 &&
	test "$(grep -c "Realloc [0-9]* duplicate" actual)" -gt 50 &&
	test "$(grep -c "Free [0-9]* was never" actual)" -gt 500 &&
	test "$(grep -c "Realloc [0-9]* was never" actual)" -gt 50 &&
	grep -q "^0x0*5555" actual
'

test_expect_success 'on threads, blocks cutting pairs anywhere: the same' '
	for b in 100 333 1000 4096 65536 1048576; do
		st=0 && MTANALYZE_THREADS=2 MTANALYZE_BLOCK_SIZE=$b "$MTANALYZE" pairs.log \
			>actual.$b 2>err.$b || st=$?
		echo "exit $st" >>actual.$b &&
		test_cmp expect actual.$b || return 1
	done
'

test_done
