#!/usr/bin/python3
"""Checks an OTF2 archive written by weftd with the otf2 Python module (an
independent reader) against what the client says it recorded.

usage: check_archive.py ARCHIVE/traces.otf2 REPORT.json [--expect-gaps]
                        [--unacked] [--regions a,b,...]

REPORT.json maps "RANK.THREAD" to counts per record kind, as written by
weft-demo --report; its "dropped" count is not a record kind. Enter and
Leave must nest on every location, gaps or not: weftd leaves the regions
open at a MeasurementOnOff OFF or at a location's end and enters them
again at ON, marking those events with the attribute weft::nesting; they
are not compared with the report. Where records were dropped, a Leave of a
region whose Enter was lost is left out: there the archive may hold fewer
Leaves than were recorded, never more. With --unacked the report's counts
are what weftd acknowledged and its "dropped" includes batches the client
gave up on unacknowledged, some of which weftd may have journaled (their
Ack was lost with the connection): a location may then hold up to that
many records more of a kind, never fewer than were acknowledged. Prints a
JSON summary (locations, events, added) on success; exits 1 with the
differences otherwise.
"""
import collections
import json
import sys

import otf2

# Report keys that are not record kinds ("dropped": records the client
# accepted but that never reached the trace).
NOT_RECORDS = {"dropped"}
# Marks the Enters and Leaves weftd wrote so that every location nests.
NESTING = "weft::nesting"


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    anchor, report_path = sys.argv[1], sys.argv[2]
    regions = []
    expect_gaps = "--expect-gaps" in sys.argv[3:]
    unacked = "--unacked" in sys.argv[3:]
    args = [a for a in sys.argv[3:] if a not in ("--expect-gaps", "--unacked")]
    if len(args) > 1 and args[0] == "--regions":
        regions = [r for r in args[1].split(",") if r]
    with open(report_path) as f:
        expected = json.load(f)

    problems = []
    counts = collections.defaultdict(collections.Counter)
    recorded = collections.defaultdict(collections.Counter)
    added = 0
    last_time = {}
    first_time = {}
    stacks = collections.defaultdict(list)
    modes = collections.defaultdict(list)  # MeasurementOnOff: True = ON
    gappy = {key for key, kinds in expected.items() if kinds.get("dropped")}
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        locations = {}
        for loc in defs.locations:
            ref = loc._ref
            key = "%d.%d" % (ref >> 32, ref & 0xFFFFFFFF)
            locations[key] = loc
            if loc.group._ref != ref >> 32:
                problems.append("location %s is in group %d, expected the "
                                "process of rank %d" % (key, loc.group._ref,
                                                        ref >> 32))
            if loc.group.location_group_type != otf2.LocationGroupType.PROCESS:
                problems.append("location %s: group is not a process" % key)
        names = {r.name for r in defs.regions}
        for name in regions:
            if name not in names:
                problems.append("region %r is not defined (have %s)"
                                % (name, sorted(names)))
        for loc, event in trace.events:
            ref = loc._ref
            key = "%d.%d" % (ref >> 32, ref & 0xFFFFFFFF)
            kind = type(event).__name__
            counts[key][kind] += 1
            if event.attributes and any(a.name == NESTING
                                        for a in event.attributes):
                added += 1
            else:
                recorded[key][kind] += 1
            if event.time < last_time.get(key, 0):
                problems.append("location %s: time goes backwards at %d"
                                % (key, event.time))
            last_time[key] = event.time
            first_time.setdefault(key, event.time)
            if kind == "MeasurementOnOff":
                on = event.measurement_mode == otf2.MeasurementMode.ON
                if on != (len(modes[key]) % 2 == 1):
                    problems.append("location %s: MeasurementOnOff %s out of "
                                    "turn" % (key, "ON" if on else "OFF"))
                modes[key].append(on)
            if kind == "Enter":
                stacks[key].append(event.region.name)
            elif kind == "Leave":
                if not stacks[key] or stacks[key][-1] != event.region.name:
                    problems.append("location %s: Leave %s does not match "
                                    "the open region" % (key, event.region.name))
                else:
                    stacks[key].pop()

        clock = defs.clock_properties
        if last_time:
            first = min(first_time.values())
            last = max(last_time.values())
            if first < clock.global_offset or \
                    last >= clock.global_offset + clock.trace_length:
                problems.append("ClockProperties [%d, +%d) do not cover the "
                                "events [%d, %d]" % (clock.global_offset,
                                                     clock.trace_length,
                                                     first, last))
        for key, loc in locations.items():
            total = sum(counts[key].values())
            if loc.number_of_events != total:
                problems.append("location %s: numberOfEvents is %d but %d "
                                "events were read" % (key, loc.number_of_events,
                                                      total))
    for key, m in modes.items():
        if len(m) % 2:
            problems.append("location %s: a MeasurementOnOff OFF without ON"
                            % key)
    if expect_gaps and gappy and not any(modes.values()):
        problems.append("records were dropped but no MeasurementOnOff marks "
                        "a gap")
    for key, stack in stacks.items():
        if stack:
            problems.append("location %s: regions left open: %s" % (key, stack))
    for key, kinds in expected.items():
        got = recorded.get(key, collections.Counter())
        for kind, n in kinds.items():
            if kind in NOT_RECORDS:
                continue
            if unacked and (n <= got[kind] or kind == "Leave") and \
                    got[kind] <= n + kinds.get("dropped", 0):
                continue
            if kind == "Leave" and key in gappy and got[kind] <= n:
                continue
            if got[kind] != n:
                problems.append("location %s: %d %s events in the archive, "
                                "%d recorded" % (key, got[kind], kind, n))
        acked = any(n for kind, n in kinds.items() if kind not in NOT_RECORDS)
        if key not in locations and (acked or not unacked):
            problems.append("location %s is not defined in the archive" % key)
    for key, kinds in counts.items():
        if key not in expected and sum(kinds.values()):
            problems.append("location %s has events but was not recorded"
                            % key)
    if problems:
        for p in problems:
            print("check_archive: " + p, file=sys.stderr)
        return 1
    print(json.dumps({"locations": len(locations),
                      "events": sum(sum(c.values()) for c in counts.values()),
                      "added": added}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
