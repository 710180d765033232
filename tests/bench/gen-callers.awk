# SPDX-License-Identifier: LGPL-2.1-or-later
# gen-callers.awk -v N=COUNT: a trace of COUNT distinct callers, each with
# a stack of its own (3 frames) and one leaked block of 16 bytes -- every
# caller a site, a call path and a leak (t4070, t4071, make bench's
# sites part).
BEGIN {
	print "= Start"
	for (i = 0; i < N; i++) {
		printf "# stack %d 0x%x 0x%x 0x%x\n", i + 1, 4096 + i * 16, 5242880 + (i % 1000) * 16, 6291456
		printf "@ [0x%x] + 0x%x 0x10 s=%d\n", 4096 + i * 16, 16777216 + i * 32, i + 1
	}
	print "= End"
}
