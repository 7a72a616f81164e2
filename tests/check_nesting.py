#!/usr/bin/python3
"""Checks that Enter and Leave nest on every location of an OTF2 archive,
and that weft's region profile equals one recomputed from the archive.

usage: check_nesting.py ARCHIVE/traces.otf2 [PROFILE.json]

Nesting: every Leave closes the innermost open region, no region is open
at a MeasurementOnOff OFF or at the end of its location. PROFILE.json is
`weft profile --json --limit 0`: per region name, its visits must equal
the Enters in the archive, and its inclusive and exclusive seconds what
this reader computes the way convert.c defines them (exclusive: a visit's
duration less that of its direct children; inclusive: once per outermost
visit of a region), and its row "outside traced calls" (issue #32) each
location's time from its first event to its last less its outermost
visits. Prints a JSON summary on success; exits 1 with the problems
otherwise.
"""
import collections
import json
import sys

import otf2

OUTSIDE = "outside traced calls"


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = []
    visits = collections.Counter()
    incl = collections.Counter()
    excl = collections.Counter()
    stacks = collections.defaultdict(list)   # location: [name, enter, child]
    depth = collections.defaultdict(collections.Counter)
    span = {}                                 # location: [first, last]
    top = collections.Counter()               # location: outermost visits
    events = offs = 0
    with otf2.reader.open(sys.argv[1]) as trace:
        res = trace.definitions.clock_properties.timer_resolution
        for loc, ev in trace.events:
            key = "%d.%d" % (loc._ref >> 32, loc._ref & 0xFFFFFFFF)
            kind = type(ev).__name__
            events += 1
            span.setdefault(key, [ev.time, ev.time])[1] = ev.time
            st = stacks[key]
            if kind == "Enter":
                name = ev.region.name
                st.append([name, ev.time, 0])
                depth[key][name] += 1
                visits[name] += 1
            elif kind == "Leave":
                name = ev.region.name
                if not st or st[-1][0] != name:
                    if len(problems) < 20:
                        problems.append("location %s: Leave %s at %d, open: %s"
                                        % (key, name, ev.time,
                                           [f[0] for f in st[-3:]]))
                    continue
                _, t0, child = st.pop()
                dur = ev.time - t0
                excl[name] += max(dur - child, 0)
                depth[key][name] -= 1
                if depth[key][name] == 0:
                    incl[name] += dur
                if st:
                    st[-1][2] += dur
                else:
                    top[key] += dur
            elif kind == "MeasurementOnOff":
                if ev.measurement_mode != otf2.MeasurementMode.ON:
                    offs += 1
                    if st and len(problems) < 20:
                        problems.append("location %s: %s open at the "
                                        "MeasurementOnOff OFF at %d"
                                        % (key, [f[0] for f in st], ev.time))
    for key, st in stacks.items():
        if st:
            problems.append("location %s: left open at its end: %s"
                            % (key, [f[0] for f in st]))
    if visits:
        visits[OUTSIDE] = 0
        excl[OUTSIDE] = incl[OUTSIDE] = sum(
            max(s[1] - s[0] - top[k], 0) for k, s in span.items())
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            rows = json.load(f)["regions"]
        got = {}
        for r in rows:
            g = got.setdefault(r["region"], [0, 0.0, 0.0])
            g[0] += r["visits"]
            g[1] += r["incl_s"]
            g[2] += r["excl_s"]
        for name in set(visits) | set(got):
            v, i, e = got.get(name, [0, 0.0, 0.0])
            want = (visits[name], incl[name] / res, excl[name] / res)
            if v != want[0]:
                problems.append("region %s: profile has %d visits, the "
                                "archive %d Enters" % (name, v, want[0]))
            for what, x, y in (("inclusive", i, want[1]),
                               ("exclusive", e, want[2])):
                # weft prints 6 significant digits; clock offsets may
                # stretch a duration by a few ns
                if abs(x - y) > 1e-4 * max(abs(y), 1e-3) + 1e-6:
                    problems.append("region %s: profile says %g s %s, the "
                                    "archive %g s" % (name, x, what, y))
    if problems:
        for p in problems:
            print("check_nesting: " + p, file=sys.stderr)
        return 1
    print(json.dumps({"locations": len(stacks), "events": events,
                      "gaps": offs, "regions": len(visits) - bool(visits)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
