#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""html-kinds.py DOM JSON -- the tracked kinds as a report page shows them
(the section "kinds" of the DOM headless Chromium dumped) and as --json
gives them, one fact a line, each prefixed "page" or "json" (t8010):

  kind NAME ALLOCATIONS RELEASES
  not-released KIND BLOCKS BYTES FUNCTION
  refs KIND TAKEN DROPPED OBJECTS
  refgroup OBJECTS NET EXAMPLE
"""
import json
import re
import sys


def text(html):
    return " ".join(re.sub(r"<[^>]*>", " ", html).split())


def page(dom):
    sec = re.search(r'<section id="kinds">(.*?)</section>', dom, re.S)
    if sec is None:
        return
    parts = re.split(r'<h3 class="kind">Kind ([^<]*)</h3>', sec.group(1))
    for name, body in zip(parts[1::2], parts[2::2]):
        m = re.search(r"<p>(\d+) allocations, (\d+) releases", body)
        yield "kind %s %s %s" % (name, m.group(1), m.group(2))
        nr = re.search(r"<h3>Not released</h3>(.*?)</table>", body, re.S)
        if nr:
            for row in re.findall(r"<tbody>(.*?)</tbody>", nr.group(1), re.S)[0].split("</tr>"):
                c = re.findall(r"<td[^>]*>(.*?)(?=<td|$)", row, re.S)
                if len(c) >= 3:
                    yield "not-released %s %s %s %s" % (name, text(c[0]), text(c[1]), text(c[2]).split()[0])
        m = re.search(r"<p>(\d+) references taken, (\d+) dropped, of (\d+) objects", body)
        if m:
            yield "refs %s %s %s %s" % ((name,) + m.groups())
        for objs, net, ex in re.findall(
                r"<summary>(\d+) objects? with net count ([-+]\d+), e\.g\. (0x[0-9a-f]+)</summary>", body):
            yield "refgroup %s %d %s" % (objs, int(net), ex)


def from_json(d):
    groups = {}
    for r in d.get("refcounts", []):
        groups.setdefault(r["kind"], []).append(r)
    for k in d.get("kinds", []):
        yield "kind %s %d %d" % (k["kind"], k["allocations"], k["releases"])
        for s in k["leak_sites"]:
            yield "not-released %s %d %d %s" % (k["kind"], s["leaked_blocks"], s["leaked_bytes"], s["function"])
        if k.get("references") or k.get("unreferences"):
            yield "refs %s %d %d %d" % (k["kind"], k["references"], k["unreferences"], k["objects"])
        for r in groups.get(k["kind"], []):
            if not r["below_zero"]:
                yield "refgroup %d %d %s" % (r["objects"], r["net_count"], r["example"])


def main():
    for f in page(open(sys.argv[1]).read()):
        print("page", f)
    for f in from_json(json.load(open(sys.argv[2]))):
        print("json", f)


if __name__ == "__main__":
    main()
