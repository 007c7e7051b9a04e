#!/usr/bin/env python3
"""plot.py RESULTS.json OUT.svg: start-up bars, one group per user, one bar per
launcher, drawn as a plain SVG (no plotting library needed).

RESULTS.json: {"runs": N, "users": {"root": {"/bin/true": ms, "floor": ms, ...}}}"""
import json
import sys
from xml.sax.saxutils import escape

ORDER = ["/bin/true", "floor", "landlock", "mountns", "stacked", "bwrap", "firejail"]
COLORS = {"/bin/true": "#bbbbbb", "floor": "#8da0cb", "landlock": "#66c2a5",
          "mountns": "#fc8d62", "stacked": "#e78ac3", "bwrap": "#a6d854",
          "firejail": "#ffd92f"}


def svg(results):
    users = list(results["users"])
    top = max(v for u in users for v in results["users"][u].values())
    scale = 300.0 / (top * 1.1)
    bar, gap, group_gap, left, base = 34, 6, 40, 60, 340
    width = left + len(users) * (len(ORDER) * (bar + gap) + group_gap) + 20
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="420" '
           'font-family="sans-serif" font-size="11">' % width,
           '<text x="%d" y="18" font-size="14">stepbox run -- /bin/true: start-up in ms, '
           'mean of %d runs (lower is better)</text>' % (left, results["runs"])]
    for ms in range(0, int(top * 1.1) + 1, 2):
        y = base - ms * scale
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eeeeee"/>'
                   % (left - 5, width - 10, y, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (left - 8, y + 4, ms))
    x = left
    for u in users:
        for name in ORDER:
            v = results["users"][u].get(name)
            if v is None:
                continue
            h = v * scale
            out.append('<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>'
                       % (x, base - h, bar, h, COLORS[name]))
            out.append('<text x="%d" y="%.1f" text-anchor="middle">%.1f</text>'
                       % (x + bar / 2, base - h - 4, v))
            out.append('<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)">%s'
                       '</text>' % (x + bar / 2, base + 14, x + bar / 2, base + 14, escape(name)))
            x += bar + gap
        out.append('<text x="%d" y="%d" font-size="13">%s</text>'
                   % (x - (len(ORDER) * (bar + gap)) / 2 - 30, base + 70, escape(u)))
        x += group_gap
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    with open(sys.argv[2], "w") as f:
        f.write(svg(json.load(open(sys.argv[1]))))
