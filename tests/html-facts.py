#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""html-facts.py -- the facts a report page shows, one a line, from the DOM
that headless Chromium dumped after the page's script ran (t8000).

  summary KEY VALUE          a row of the summary table (data-key)
  leak BLOCKS BYTES GROWTH SITE
                             a row of the leak sites table, as shown
  leak-reach SITE: TEXT      its reachability cell, when the table has one
  reach KIND BYTES BLOCKS    a row of the leak summary (data-reach)
  growth CLASS N             the count of leak sites of a growth class
  axis time|lines            the chart's x axis, and its label
  x-tick VALUE               a label of the chart's x axis, as shown
  stacks N                   <details> of stacks in the leak table
  series CLASS MAX           a polyline of the live bytes chart
  flame-boxes N              boxes the flame graph drew
  flame-root VALUE           the value of its widest (first) box
  flame-matched VALUE        what the search matched (data-matched)
  table ID ROWS              rows of each table
  change WORD SITE           a row of a diff's change table
"""
import re
import sys
from html.parser import HTMLParser


class Facts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.out = []
        self.table = None
        self.rows = {}
        self.row = None
        self.cell = None
        self.key = None
        self.flame_boxes = 0
        self.reach = None
        self.span = None
        self.label = None
        self.tick = None
        self.stacks = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id", "summary")
            self.rows.setdefault(self.table, 0)
        elif tag == "tr" and self.table:
            self.row = []
            self.key = a.get("data-key")
            self.reach = a.get("data-reach")
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "details" and self.table == "leak-sites":
            self.stacks += 1
        elif tag == "polyline" and "series" in a.get("class", ""):
            self.out.append("series %s %s" % (a["class"].split()[1], a["data-max"]))
        elif tag == "g" and "frame" in a.get("class", "").split():
            if self.flame_boxes == 0:
                self.out.append("flame-root %s" % a["data-value"])
            self.flame_boxes += 1
        elif tag == "span" and a.get("data-growth"):
            self.growth = a["data-growth"]
            self.span = ""
        elif tag == "p" and a.get("id") == "axis":
            self.out.append("axis %s" % a.get("data-axis"))
        elif tag == "text" and "x-label" in a.get("class", "").split():
            self.label = ""
        elif tag == "text" and "x-tick" in a.get("class", "").split():
            self.tick = ""
        elif tag == "span" and a.get("id") == "flame-status":
            self.out.append("flame-matched %s" % a.get("data-matched"))

    def handle_endtag(self, tag):
        if tag == "span" and self.span is not None:
            self.out.append("growth %s %s" % (self.growth, self.span.split()[0]))
            self.span = None
        if tag == "text" and self.tick is not None:
            self.out.append("x-tick %s" % self.tick.strip())
            self.tick = None
        if tag == "text" and self.label is not None:
            self.out.append("x-label %s" % " ".join(self.label.split()))
            self.label = None
        if tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join(self.cell.split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.end_row()
            self.row = None
        elif tag == "table":
            self.table = None

    def end_row(self):
        r = self.row
        if self.key:
            self.out.append("summary %s %s" % (self.key, r[-1]))
        elif self.reach:
            self.out.append("reach %s %s %s" % (self.reach, r[1], r[2]))
        elif r and self.table == "leak-sites" and r[0] != "#":
            self.out.append("leak %s %s %s %s" % (r[1], r[2], r[3], r[-1]))
            if len(r) > 6:
                self.out.append("leak-reach %s: %s" % (r[-1], r[5]))
        elif r and self.table in ("diff-grown", "diff-shrunk") and r[0] != "Change":
            self.out.append("change %s %s" % (r[0], r[-1]))
        if r and r[0] not in ("#", "Bytes", "Frees", "Temporary", "Change") and self.table:
            self.rows[self.table] += 1

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data
        if self.span is not None:
            self.span += data
        if self.label is not None:
            self.label += data
        if self.tick is not None:
            self.tick += data

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)


def main():
    p = Facts()
    src = open(sys.argv[1], encoding="utf-8").read()
    # the stacks under a site are not the site's name
    src = re.sub(r"(<summary>.*?</summary>).*?</details>", r"\1", src, flags=re.S)
    p.feed(src)
    p.out.append("stacks %d" % p.stacks)
    p.out.append("flame-boxes %d" % p.flame_boxes)
    for t, n in sorted(p.rows.items()):
        p.out.append("table %s %d" % (t, n))
    print("\n".join(p.out))


if __name__ == "__main__":
    main()
