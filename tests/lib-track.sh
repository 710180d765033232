# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/lib-track.sh -- shared by the MTREC_TRACK tests (t2600-t2619).

POOL="$HELPER/rec-pool"
REFOBJ="$HELPER/rec-refobj"
POOL_SPEC='pool_get:alloc:1:pool,pool_put:free:1:pool'
REF_SPEC='obj_new:ref:0:obj,obj_ref:ref:1:obj,obj_unref:unref:1:obj'

# kcount TRACE KIND OP: the "# k KIND ... OP ADDR" lines of TRACE.
kcount() {
	tr -d '\000' <"$1" | grep -c "^# k $2 @ [^ ]* $3 0x" || true
}

# klines TRACE KIND OP: "FILE:LINE" of the caller of each such line
# (addr2line on the offset the caller carries, minus one: the return
# address is that of the next instruction), one a line.
klines() {
	tr -d '\000' <"$1" | awk -v kind="$2" -v op="$3" '
		$1 == "#" && $2 == "k" && $3 == kind && $4 == "@" && $6 == op {
			obj = $5; sub(/:[([].*$/, "", obj)
			rel = $5; sub(/.*\[/, "", rel); sub(/\].*/, "", rel)
			print obj, rel
		}' | while read -r obj rel; do
		addr2line -e "$obj" "$(printf '%#x' $((rel - 1)))" | sed 's/ (discriminator.*//' || return 1
	done
}

# in_order TRACE: no "+" of an address of a KIND while it is live, no "-"
# of one that is not (parts and processes are read one by one).
in_order() {
	tr -d '\000' <"$1" | awk '$1 == "#" && $2 == "k" && ($6 == "+" || $6 == "-") {
		key = $3 " " $7
		if ($6 == "+") { if (key in live) bad++; live[key] = 1 }
		else { if (!(key in live)) bad++; delete live[key] }
	} END { print bad + 0 }'
}
