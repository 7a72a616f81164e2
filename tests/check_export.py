#!/usr/bin/python3
"""Checks what `weft export --format chrome-json` wrote against the archive,
as otf2-print (an independent reader) prints it.

usage:
  check_export.py full EXPORT ARCHIVE/traces.otf2 [--mpi]
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
send to a receive whose peer ranks, communicator, tag and length agree,
not backwards in time); counters are per location (a name on one thread
only, naming its location). --mpi: every send has its arrow.

filtered: PART is FULL cut by the filters (times in microseconds as in
the export): exactly the events of FULL that the filters keep, and its
arrows complete. Prints a JSON summary; exits 1 listing problems.
"""
import collections
import fnmatch
import gzip
import json
import re
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
        if f["ts"] < s["ts"] - SKEW:
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


def full(path, anchor, mpi):
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
    return {"events": len(ev), "kinds": len(in_archive),
            "processes": len(procs), "flows": dict(flows),
            "counters": counters, "resolution": res}


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
        summary = full(sys.argv[2], sys.argv[3], "--mpi" in sys.argv[4:])
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
