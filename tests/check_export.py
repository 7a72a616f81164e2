#!/usr/bin/python3
"""Checks what `weft export --format chrome-json` wrote against the archive,
as otf2-print (an independent reader) prints it.

usage:
  check_export.py full EXPORT ARCHIVE/traces.otf2 [--mpi] [--sent SENT]
  check_export.py filtered FULL PART ARCHIVE/traces.otf2 [--from US]
      [--to US] [--ranks R,R..] [--regions GLOB] [--min-duration US]

full: EXPORT (.json or .json.gz) is valid strict JSON (UTF-8, no NaN);
processes are numbered from 1 (pid = rank + 1, "rank R (host)", sort
index R) with a thread_name per location; every event kind otf2-print
shows arrived (as a category, region slices for Enter/Leave, counters
for Metric) and as often as the archive holds it where one event makes
one output event; region slices start and end at otf2-print's times
after unit conversion (ticks per second, global offset), and so do the
other events; flow arrows pair up ("s" and "f" of each id once, from a
send to a receive whose peer ranks, communicator, tag and length agree);
counters are per location (a name on one thread only, naming its
location). --mpi (a real MPI program): every send has its arrow, and no
arrow goes backwards in time (weft-demo --all-records records the ends of
an arrow on independent threads, in no order).
--sent SENT (what `weft-demo --all-records --sent` wrote; only its schema
line, the record table's fields, is used): the archive is read a second
time with libotf2's Python binding (check_allrecords.Archive), and every
event's fields (but Enter's, Leave's and Metric's, which the slice or
counter itself says) are its args, by field name, with the archive's
values (references as the name of what they refer to, or its id when
nameless, null when undefined; doubles not finite as null), and every
event's attributes are its args' "attributes" ("leave attributes" of a
region slice's Leave), attribute name -> value; an exported event with
attributes the archive's event lacks is a problem too.

filtered: PART is FULL cut by the filters (times in microseconds as in
the export): exactly the events of FULL that the filters keep, and its
arrows complete. Prints a JSON summary; exits 1 listing problems.
"""
import collections
import fnmatch
import gzip
import json
import math
import os
import re
import struct
import subprocess
import sys

TOL = 0.0015  # µs: both sides round to the ns
# µs a receive may seem to end before its send: the clocks of two
# processes, corrected by ClockOffsets, agree only so well.
SKEW = 1000

# otf2-print's names that are not the kind's name in upper snake case.
PRINTED = {"IO_CHANGE_FLAGS": "IoChangeStatusFlags",
           "PARAMETER_INT64": "ParameterInt",
           "PARAMETER_UINT64": "ParameterUnsignedInt"}
# Kinds that begin an async slice.
BEGINS = {"MpiCollectiveBegin", "NonBlockingCollectiveRequest",
          "RmaCollectiveBegin", "IoOperationBegin", "ThreadAcquireLock",
          "IoAcquireLock", "RmaAcquireLock", "ThreadTeamBegin",
          "ThreadFork", "CallingContextEnter", "ProgramBegin"}

problems = []


def bad(msg):
    if len(problems) < 40:
        problems.append(msg)


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # strict: invalid UTF-8 fails here

    def no_constant(c):
        raise ValueError("non-JSON number " + c)
    return json.loads(text, parse_constant=no_constant)["traceEvents"]


def kind_of(printed):
    if printed in PRINTED:
        return PRINTED[printed]
    return "".join(w.capitalize() for w in printed.split("_"))


def otf2_print(anchor):
    """(resolution, offset), {location: [(kind, time in µs, text)]}."""
    g = subprocess.run(["otf2-print", "-G", anchor], capture_output=True,
                       text=True, errors="replace", check=True).stdout
    m = re.search(r"Ticks per Seconds: (\d+), Global Offset: (\d+)", g)
    res, off = int(m.group(1)), int(m.group(2))
    out = subprocess.run(["otf2-print", anchor], capture_output=True,
                         text=True, errors="replace", check=True).stdout
    events = collections.defaultdict(list)
    for line in out.splitlines():
        f = line.split(None, 3)
        if len(f) < 3 or not f[1].isdigit() or not f[2].isdigit():
            continue
        us = (int(f[2]) - off) * 1e6 / res
        events[int(f[1])].append((kind_of(f[0]), us, f[3] if len(f) > 3 else ""))
    return res, off, events


def where(loc):
    """(pid, tid) of a weft location id (rank << 32 | thread)."""
    return (loc >> 32) + 1, loc & 0xffffffff


def cats(e):
    return [c for c in e.get("cat", "").split(",") if c]


def near(a, b):
    return abs(a - b) <= TOL


def check_meta(ev, locs):
    procs = {e["pid"]: e["args"]["name"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_name"}
    order = {e["pid"]: e["args"]["sort_index"] for e in ev
             if e["ph"] == "M" and e["name"] == "process_sort_index"}
    threads = {(e["pid"], e["tid"]) for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name"}
    for pid, name in procs.items():
        if pid < 1 or not re.fullmatch(r"rank %d \(.+\)" % (pid - 1), name):
            bad("process %d named %r" % (pid, name))
        if order.get(pid) != pid - 1:
            bad("process %d has sort index %r" % (pid, order.get(pid)))
    if any(e["pid"] < 1 for e in ev):
        bad("a pid below 1")
    for loc in locs:
        if where(loc) not in threads:
            bad("no thread_name for location %d" % loc)
    return procs


def groups(ev):
    """Kind -> the categories of the async slices it begins or ends."""
    g = {}
    for e in ev:
        if e["ph"] in "be":
            for c in cats(e):
                g[c] = e["cat"]
    return g


def exported_times(ev, group):
    """{(pid, tid): {label: [µs]}}: region slices give Enter and Leave,
    counters Metric, zero-length slices and instants their category, the
    two ends of async slices (but those cut at the location's end) their
    categories; a kind of an async slice is labelled with its group."""
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    for e in ev:
        t = by[(e.get("pid"), e.get("tid"))]
        if e["ph"] == "X" and "cat" not in e:
            t["Enter"].append(e["ts"])
            t["Leave"].append(e["ts"] + e["dur"])
        elif e["ph"] == "C":
            t["Metric"].append(e["ts"])
        elif e["ph"] in "Xib" or (e["ph"] == "e" and
                                  not e.get("args", {}).get("unfinished")):
            t[group.get(cats(e)[0], cats(e)[0])].append(e["ts"])
    return by


def check_times(ev, printed):
    """Each location's events at otf2-print's times, as many as it has."""
    group = groups(ev)
    by = exported_times(ev, group)
    for loc, evs in printed.items():
        mine = by[where(loc)]
        want = collections.defaultdict(list)
        for k, us, _ in evs:
            want[group.get(k, k)].append(us)
        for label in set(want) | set(mine):
            w, g = sorted(want[label]), sorted(mine.get(label, []))
            if len(w) != len(g):
                bad("location %d: %d %s in the archive, %d exported"
                    % (loc, len(w), label, len(g)))
            elif not all(near(a, b) for a, b in zip(w, g)):
                diff = max(abs(a - b) for a, b in zip(w, g))
                bad("location %d: %s times differ from otf2-print's by up "
                    "to %.3f us" % (loc, label, diff))


def check_flows(ev, all_sends):
    marks = {}
    for e in ev:
        if e["ph"] == "X" and e.get("dur") == 0 and "cat" in e:
            marks.setdefault((e["pid"], e["tid"], e["ts"]), []).append(e)
    ends = collections.defaultdict(dict)
    for e in ev:
        if e["ph"] in "sf":
            if e["ph"] in ends[(e["cat"], e["id"])]:
                bad("flow %s %d has two '%s'" % (e["cat"], e["id"], e["ph"]))
            ends[(e["cat"], e["id"])][e["ph"]] = e
    n = collections.Counter()
    for (cat, fid), sf in ends.items():
        if set(sf) != {"s", "f"}:
            bad("flow %s %d has only %s" % (cat, fid, list(sf)))
            continue
        s, f = sf["s"], sf["f"]
        n[cat] += 1
        # Only a real program orders an arrow's ends: weft-demo
        # --all-records records each end on its own thread, at any time.
        if all_sends and f["ts"] < s["ts"] - SKEW:
            bad("flow %s %d goes back in time" % (cat, fid))
        if cat != "mpi":
            continue
        snd = [m for m in marks.get((s["pid"], s["tid"], s["ts"]), [])
               if m["cat"] in ("MpiSend", "MpiIsend")]
        rcv = [m for m in marks.get((f["pid"], f["tid"], f["ts"]), [])
               if m["cat"] in ("MpiRecv", "MpiIrecv")]
        if not snd or not rcv:
            bad("flow %d: no send or receive where it starts or ends" % fid)
            continue
        a, b = snd[0]["args"], rcv[0]["args"]
        if not any(x["args"]["peer rank"] == f["pid"] - 1 for x in snd) or \
           not any(y["args"]["peer rank"] == s["pid"] - 1 for y in rcv) or \
           a["msgTag"] != b["msgTag"] or a["communicator"] != b["communicator"]:
            bad("flow %d joins a send and a receive that do not match: %s %s"
                % (fid, a, b))
    sends = sum(1 for e in ev if e["ph"] == "X" and
                e.get("cat") in ("MpiSend", "MpiIsend"))
    if all_sends and n["mpi"] != sends:
        bad("%d sends, %d arrows" % (sends, n["mpi"]))
    return n


def check_counters(ev):
    """Counters are a process's, by name: one name, one thread."""
    tids = collections.defaultdict(set)
    for e in ev:
        if e["ph"] == "C":
            tids[(e["pid"], e["name"])].add(e["tid"])
    for (pid, name), t in tids.items():
        if len(t) != 1 or not name.endswith("tid %d)" % next(iter(t))):
            bad("counter %r of process %d is on threads %s"
                % (name, pid, sorted(t)))
    return len(tids)


# ---- fields and attributes as args (--sent) -------------------------------

# Args members that are not an OTF2 field of the event.
NOT_FIELDS = {"attributes", "leave attributes", "peer rank", "unmatched",
              "unfinished"}
# Kinds whose fields the export does not list as args.
NO_FIELDS = {"Enter", "Leave", "Metric"}


def typed_value(width, type_id, bits):
    """The JSON value of an OTF2_Type type_id's canonical bits (plain
    numbers only; None for a reference type)."""
    names = {1: "B", 2: "H", 3: "I", 4: "Q", 5: "b", 6: "h", 7: "i", 8: "q",
             9: "f", 10: "d"}
    if type_id not in names:
        return None
    raw = bits.to_bytes(8, "little")[:width.get(type_id, 8)]
    v = struct.unpack("<" + names[type_id], raw)[0]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


class Expect:
    """What the export should say of the archive's values: references
    resolved the way an OTF2 reader names them."""

    def __init__(self, schema, arch):
        self.schema = schema
        self.strings = {d["self"]: d["string"] for d in arch.defs["String"]}
        self.names = collections.defaultdict(dict)  # kind -> id -> name|id
        for name, lst in arch.defs.items():
            fields = schema.fields(name)
            own = [f for f in fields if f["self"]]
            named = any(f["name"] == "name" and f["ref"] == "STRING"
                        for f in fields)
            for d in lst:
                for f in own:
                    text = self.strings.get(d["name"], "") if named else ""
                    self.names[f["ref"]][d[f["name"]]] = text or d[f["name"]]

    def ref(self, kind, v):
        if v == self.schema.refkinds[kind]["undefined"]:
            return None
        if kind == "STRING":
            return self.strings.get(v, "")
        return self.names[kind].get(v, v)

    def value(self, fields, f, values, k, v):
        if f["wire"] == "T":
            tsel = values[fields[f["sel"]]["name"]]
            tsel = tsel[k] if isinstance(tsel, list) else tsel
            plain = typed_value(self.schema.width, tsel, v)
            if plain is not None or tsel in (9, 10):
                return plain
            kind = self.schema.maps["TYPE"].get(tsel)
            return self.ref(kind, v) if kind else v
        if f["wire"] == "D":
            return typed_value({10: 8}, 10, v)
        kind = self.schema.kind_of(fields, f, values, k)
        return v if kind is None else self.ref(kind, v)

    def fields(self, name, values):
        fields = self.schema.fields(name)
        out = {}
        for f in fields:
            if f["wire"] == "Z":
                continue
            v = values[f["name"]]
            if f["array"]:
                out[f["name"]] = [self.value(fields, f, values, k, e)
                                  for k, e in enumerate(v)]
            else:
                out[f["name"]] = self.value(fields, f, values, 0, v)
        return out

    def attributes(self, a):
        if not a:
            return None
        out = {}
        for ref, typ, bits in zip(a["attributes"], a["types"], a["values"]):
            key = self.names["ATTRIBUTE"].get(ref, ref)
            if not isinstance(key, str):
                key = "attribute %d" % key
            vf = {"name": "v", "wire": "T", "sel": 0}
            out[key] = self.value([{"name": "t"}], vf, {"t": typ}, 0, bits)
        return out


def same(a, b):
    """Equal as JSON values, floats to float32's precision (a FLOAT
    attribute is printed as the double it widens to)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and not isinstance(b, bool) \
            and math.isclose(a, b, rel_tol=1e-15, abs_tol=0)
    return type(a) is type(b) and a == b


def exported_records(ev):
    """{(pid, tid): [[kinds, µs, fields or None, attributes or None,
    used]]}: what each exported event says of the archive's events."""
    out = collections.defaultdict(list)
    for e in ev:
        if e["ph"] in "MsfC" and e["ph"] != "C":
            continue
        args = e.get("args", {})
        mine = out[(e["pid"], e["tid"])]
        fields = {k: v for k, v in args.items() if k not in NOT_FIELDS}
        if e["ph"] == "C":
            mine.append([["Metric"], e["ts"], None, args.get("attributes"), 0])
        elif e["ph"] == "X" and "cat" not in e:
            mine.append([["Enter"], e["ts"], None, args.get("attributes"), 0])
            if not args.get("unfinished"):
                mine.append([["Leave"], e["ts"] + e["dur"], None,
                             args.get("leave attributes"), 0])
        elif e["ph"] == "e" and args.get("unfinished"):
            continue
        else:
            kinds = cats(e)
            if e["ph"] == "b" and kinds[0] != "MeasurementOnOff":
                kinds = kinds[:1]
            elif e["ph"] == "e" and kinds[0] != "MeasurementOnOff":
                kinds = kinds[1:]
            mine.append([kinds, e["ts"], fields, args.get("attributes"), 0])
    return out


def check_args(ev, anchor, printed, sent):
    """Fields and attributes as args (see --sent); returns how many
    events' fields and attributes were compared."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from check_allrecords import Archive, Schema, load_sent
    schema = Schema(load_sent(sent)[0])
    arch = Archive(anchor, schema)
    want = Expect(schema, arch)
    mine = exported_records(ev)
    n = collections.Counter()
    for loc, evs in arch.events.items():
        shown = printed.get(loc, [])
        if [k for k, _, _ in shown] != [name for name, _, _, _ in evs]:
            bad("location %d: otf2-print and libotf2 read different events"
                % loc)
            continue
        recs = mine[where(loc)]
        for (name, _, values, attrs), (_, us, _) in zip(evs, shown):
            f = None if name in NO_FIELDS else want.fields(name, values)
            a = want.attributes(attrs)
            if f is None and a is None:
                continue
            at = [r for r in recs if name in r[0] and near(r[1], us)]
            ok = [r for r in at if not r[4] and same(r[3], a) and
                  (f is None or same(r[2], f))]
            if ok:
                ok[0][4] = 1
                n["fields"] += f is not None
                n["attributes"] += a is not None
                continue
            bad("location %d: %s at %.3f us: fields %s attributes %s in the "
                "archive; exported %s" % (
                    loc, name, us, json.dumps(f)[:300], json.dumps(a)[:300],
                    json.dumps([r[2:4] for r in at])[:600] if at
                    else "nothing there"))
    for loc, recs in mine.items():
        for r in recs:
            if r[3] and not r[4]:
                bad("process %d thread %d: %s at %.3f us has attributes the "
                    "archive's event lacks: %s" % (
                        loc[0], loc[1], r[0], r[1], json.dumps(r[3])[:300]))
    return dict(n)


def full(path, anchor, mpi, sent=None):
    ev = load(path)
    res, off, printed = otf2_print(anchor)
    in_archive = collections.Counter(k for evs in printed.values()
                                     for k, _, _ in evs)
    procs = check_meta(ev, printed.keys())
    got = {c for e in ev for c in cats(e)}
    got |= {"Metric"} if any(e["ph"] == "C" for e in ev) else set()
    if any(e["ph"] == "X" and "cat" not in e for e in ev):
        got |= {"Enter", "Leave"}
    missing = sorted(k for k in in_archive if k not in got)
    if missing:
        bad("kinds in the archive but not exported: %s" % missing)
    check_times(ev, printed)
    flows = check_flows(ev, mpi)
    counters = check_counters(ev)
    summary = {"events": len(ev), "kinds": len(in_archive),
               "processes": len(procs), "flows": dict(flows),
               "counters": counters, "resolution": res}
    if sent:
        summary["args"] = check_args(ev, anchor, printed, sent)
    return summary


def key(e):
    return json.dumps(e, sort_keys=True)


def filtered(full_path, part_path, anchor, opts):
    fev, pev = load(full_path), load(part_path)
    lo = float(opts.get("--from", "-inf"))
    hi = float(opts.get("--to", "inf"))
    ranks = ({int(r) for r in opts["--ranks"].split(",")}
             if "--ranks" in opts else None)
    glob = opts.get("--regions")
    mind = float(opts.get("--min-duration", 0))
    begins = {}
    for e in fev:
        if e["ph"] == "b":
            begins[e["id"]] = e

    def keep(e):
        if e["ph"] == "M":
            return ranks is None or e["pid"] - 1 in ranks
        if ranks is not None and e["pid"] - 1 not in ranks:
            return False
        if e["ph"] == "X" and "cat" not in e:
            if glob and not fnmatch.fnmatchcase(e["name"], glob):
                return False
            return e["dur"] >= mind - TOL and \
                e["ts"] + e["dur"] >= lo and e["ts"] <= hi
        if e["ph"] in "be":
            b = begins[e["id"]]
            end = [x for x in fev if x["ph"] == "e" and x["id"] == e["id"]][0]
            return end["ts"] - b["ts"] >= mind - TOL and \
                end["ts"] >= lo and b["ts"] <= hi
        return lo <= e["ts"] <= hi

    # Ids of async slices and flows are numbered afresh: compare without.
    def strip(e):
        return {k: v for k, v in e.items() if k != "id" or e["ph"] not in "besf"}
    want = collections.Counter(key(strip(e)) for e in fev
                               if e["ph"] not in "sf" and keep(e))
    got = collections.Counter(key(strip(e)) for e in pev if e["ph"] not in "sf")
    if want != got:
        extra = list((got - want).elements())[:3]
        lost = list((want - got).elements())[:3]
        bad("filtered export differs: %d extra %s, %d missing %s"
            % (sum((got - want).values()), extra,
               sum((want - got).values()), lost))
    flows = check_flows(pev, False)
    # An arrow of FULL stays exactly when both of its ends stay.
    fl = collections.defaultdict(dict)
    for e in fev:
        if e["ph"] in "sf":
            fl[(e["cat"], e["id"])][e["ph"]] = e
    expect = collections.Counter(
        c for (c, _), sf in fl.items()
        if len(sf) == 2 and all(keep(x) for x in sf.values()))
    if dict(expect) != dict(flows):
        bad("arrows: %s kept, %s expected" % (dict(flows), dict(expect)))
    return {"events": len(pev), "of": len(fev), "flows": dict(flows)}


def main():
    mode = sys.argv[1]
    if mode == "full":
        rest = sys.argv[4:]
        sent = rest[rest.index("--sent") + 1] if "--sent" in rest else None
        summary = full(sys.argv[2], sys.argv[3], "--mpi" in rest, sent)
    else:
        args = sys.argv[5:]
        opts = dict(zip(args[::2], args[1::2]))
        summary = filtered(sys.argv[2], sys.argv[3], sys.argv[4], opts)
    if problems:
        for p in problems:
            print("check_export:", p, file=sys.stderr)
        sys.exit(1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
