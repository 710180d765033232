#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# stack-frames.py TRACE SIZE [CALLER] -- for each "+" event of SIZE bytes
# in TRACE (made by a caller whose text holds CALLER, when given), the
# frames of its "# stack" as "OBJECT OFFSET" lines, then a "--" line.
# OBJECT is the path of the "# object" holding the frame ("-" for the
# executable), "recorder" for a frame inside libmtrec.so (which must never
# be recorded), "unknown" for an address no object holds.  For t2645 and
# t2725, whose shells turn the offsets into names with addr2line.
import sys

objs, stacks, events = [], {}, []
size = "%#x" % int(sys.argv[2])
caller = sys.argv[3] if len(sys.argv) > 3 else None
for line in open(sys.argv[1], errors="replace"):
    f = line.replace("\0", "").split()
    if len(f) >= 6 and f[:2] == ["#", "object"]:
        lo, hi = (int(x, 16) for x in f[3].split("-"))
        objs.append((lo, hi, int(f[2], 16), f[5]))
    elif len(f) >= 3 and f[:2] == ["#", "stack"]:
        stacks[f[2]] = [int(x, 16) for x in f[3:]]
    elif len(f) >= 5 and f[0] == "@" and f[-4] == "+" and f[-2] == size \
            and f[-1].startswith("s=") and (caller is None or caller in f[1]):
        events.append(f[-1][2:])
for sid in events:
    for ip in stacks[sid]:
        o = [(lo, b, p) for lo, hi, b, p in objs if lo <= ip < hi]
        if not o:
            print("unknown %#x" % ip)
        elif o[-1][2].endswith("/libmtrec.so"):
            print("recorder %#x" % ip)
        else:
            print("%s %#x" % (o[-1][2], ip - o[-1][1]))
    print("--")
