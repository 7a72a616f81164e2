#!/usr/bin/python3
"""Checks the OTF2 archive of a program traced by libweft-pthread
(tests/pthread/pthtest.c, or any program run with weft run -t pthread)
against libweft-pthread's contract and, given one, against the program's
report of what it did.

usage: check_pthread.py ARCHIVE/traces.otf2 CALLS_DEF [REPORT] [--open-ok]

CALLS_DEF is recorders/pthread/calls.def: the names of the wrapped calls
(plus the hand-written thread calls), whose regions are the only PTHREAD
regions allowed. REPORT (pthtest's) holds "call NAME COUNT" lines
(COUNT "N+": at least N, where the C runtime may make calls too),
"acquire N", "release N" and "threads N", and may hold "total NAME
COUNT" lines: every call made, recorded one by one or counted.

Checks, read with the python module's reader (otf2.reader):
  - per location, Enter/Leave nest and every region is left;
  - lock events lie inside the region of a wrapped call, every
    ThreadAcquireLock has its ThreadReleaseLock (same lock id and
    acquisition order) later on the same location, no release comes
    without its acquisition, and per process each lock's acquisition
    orders are distinct and dense (0..n-1);
  - per thread contingent (one per process, paradigm PTHREAD): each
    sequence number has one ThreadCreate and one ThreadBegin on another
    location, at most one ThreadEnd, on the location of its Begin, and at
    most one ThreadWait, which comes with an End;
  - with REPORT: the visits of each call's region, the acquisitions,
    releases and threads (created, begun, ended and joined) are the
    program's; a call's visits and the calls the recorder counted instead
    (Metric events of the members proto/counts.h describes) add up to
    its total.
--open-ok: locks still held and threads not joined when the process
ended are allowed (a real program that exits without joining).

Prints a JSON summary on success; exits 1 with one problem per line.
"""
import collections
import json
import re
import sys

import otf2

HAND_WRITTEN = ("pthread_create", "pthread_join", "pthread_tryjoin_np",
                "pthread_timedjoin_np", "pthread_clockjoin_np")
MAX_PROBLEMS = 100
# proto/counts.h: the description of a member counting calls
COUNTS_CALLS = "weft: calls counted, not recorded one by one"


def call_names(path):
    names = set(HAND_WRITTEN)
    with open(path) as f:
        for m in re.finditer(r"^PT\((\w+),", f.read(), re.M):
            names.add(m.group(1))
    return names


def read_report(path):
    rep = {"calls": {}, "totals": {}}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) == 3 and w[0] == "call":
                # "N+": at least N (the C runtime may call it too)
                rep["calls"][w[1]] = (int(w[2].rstrip("+")),
                                      w[2].endswith("+"))
            elif len(w) == 3 and w[0] == "total":
                rep["totals"][w[1]] = int(w[2])
            elif len(w) == 2:
                rep[w[0]] = int(w[1])
    return rep


def main(argv):
    open_ok = "--open-ok" in argv
    args = [a for a in argv[1:] if a != "--open-ok"]
    if len(args) not in (2, 3):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    archive, names = args[0], call_names(args[1])
    report = read_report(args[2]) if len(args) == 3 else None
    problems = []

    def problem(msg):
        if len(problems) < MAX_PROBLEMS:
            problems.append(msg)

    kinds = collections.Counter()
    visits = collections.Counter()
    counted = collections.Counter()             # call -> calls counted
    stacks = collections.defaultdict(list)      # location -> open regions
    held = collections.defaultdict(list)        # location -> [(lock, order)]
    orders = collections.defaultdict(list)      # (group, lock) -> orders
    # (group, contingent, seq) -> {"create": [loc], "begin": ..., ...}
    threads = collections.defaultdict(lambda: collections.defaultdict(list))
    contingents = {}

    with otf2.reader.open(archive) as trace:
        for loc, ev in trace.events:
            kind = type(ev).__name__
            kinds[kind] += 1
            where = "%s (%s)" % (loc.name, loc.group.name)
            st = stacks[loc]
            if kind == "Enter":
                st.append(ev.region)
                if ev.region.paradigm == otf2.Paradigm.PTHREAD:
                    if ev.region.name not in names:
                        problem("%s: region %s of paradigm PTHREAD is no "
                                "wrapped call" % (where, ev.region.name))
                    visits[ev.region.name] += 1
            elif kind == "Leave":
                if not st or st[-1] != ev.region:
                    problem("%s: Leave %s does not close the open region %s"
                            % (where, ev.region.name,
                               st[-1].name if st else "(none)"))
                else:
                    st.pop()
            elif kind in ("ThreadAcquireLock", "ThreadReleaseLock"):
                if ev.model != otf2.Paradigm.PTHREAD:
                    problem("%s: %s of paradigm %s" % (where, kind, ev.model))
                if not st or st[-1].name not in names:
                    problem("%s: %s outside a wrapped call" % (where, kind))
                key = (ev.lock_id, ev.acquisition_order)
                if kind == "ThreadAcquireLock":
                    held[loc].append(key)
                    orders[(loc.group, ev.lock_id)].append(
                        ev.acquisition_order)
                elif key in held[loc]:
                    held[loc].remove(key)
                else:
                    problem("%s: ThreadReleaseLock of lock %d order %d "
                            "without its ThreadAcquireLock" % ((where,) + key))
            elif kind == "Metric":
                for mem, val in zip(ev.metric.members, ev.values):
                    if mem.description == COUNTS_CALLS:
                        counted[mem.name] += val
            elif kind in ("ThreadCreate", "ThreadBegin", "ThreadEnd",
                          "ThreadWait"):
                comm = ev.thread_contingent
                if comm.group.paradigm != otf2.Paradigm.PTHREAD:
                    problem("%s: %s in a contingent of paradigm %s" %
                            (where, kind, comm.group.paradigm))
                owner = contingents.setdefault(comm, loc.group)
                if owner != loc.group:
                    problem("%s: contingent %s is also used by %s: each "
                            "process must have its own" %
                            (where, comm.name, owner.name))
                entry = threads[(loc.group, comm, ev.sequence_count)]
                entry[kind[6:].lower()].append(loc)

    for loc, st in stacks.items():
        if st:
            problem("%s: regions never left: %s" %
                    (loc.name, [r.name for r in st]))
    if not open_ok:
        for loc, h in held.items():
            if h:
                problem("%s: locks acquired and never released (lock, "
                        "order): %s" % (loc.name, h[:10]))
    for (group, lock), o in orders.items():
        if sorted(o) != list(range(len(o))):
            problem("%s: lock %d: acquisition orders are not 0..%d once "
                    "each: %s" % (group.name, lock, len(o) - 1,
                                  sorted(o)[:20]))
    created = begun = ended = waited = 0
    for (group, comm, seq), e in threads.items():
        what = "%s: thread %d of %s" % (group.name, seq, comm.name)
        created += len(e["create"])
        begun += len(e["begin"])
        ended += len(e["end"])
        waited += len(e["wait"])
        if len(e["create"]) != 1 or len(e["begin"]) != 1:
            problem("%s: %d ThreadCreate and %d ThreadBegin, not one each" %
                    (what, len(e["create"]), len(e["begin"])))
            continue
        if e["begin"][0] == e["create"][0]:
            problem("%s: begins on the location that created it" % what)
        if len(e["end"]) > 1 or len(e["wait"]) > 1:
            problem("%s: %d ThreadEnd, %d ThreadWait" %
                    (what, len(e["end"]), len(e["wait"])))
        if e["end"] and e["end"][0] != e["begin"][0]:
            problem("%s: ends on another location than it began" % what)
        if e["wait"] and not e["end"]:
            problem("%s: waited for, never ended" % what)
        if not open_ok and not (e["end"] and e["wait"]):
            problem("%s: %s" % (what, "never ended" if not e["end"]
                                else "never waited for"))

    if report:
        for name, (n, more) in sorted(report["calls"].items()):
            if visits[name] != n and not (more and visits[name] > n):
                problem("%s: %d visits in the trace, the program made %d%s "
                        "calls" % (name, visits[name], n, "+" if more
                                   else ""))
        for name in visits:
            if name not in report["calls"]:
                problem("%s: %d visits, the program reports none" %
                        (name, visits[name]))
        for name, n in sorted(report["totals"].items()):
            if visits[name] + counted[name] != n:
                problem("%s: %d visits and %d calls counted in the trace, "
                        "the program made %d calls" %
                        (name, visits[name], counted[name], n))
        for kind, key in (("ThreadAcquireLock", "acquire"),
                          ("ThreadReleaseLock", "release")):
            if kinds[kind] != report.get(key):
                problem("%s: %d in the trace, the program did %s" %
                        (kind, kinds[kind], report.get(key)))
        for what, n in (("ThreadCreate", created), ("ThreadBegin", begun),
                        ("ThreadEnd", ended), ("ThreadWait", waited)):
            if n != report.get("threads"):
                problem("%s: %d in the trace, the program started %s "
                        "threads and joined them all" %
                        (what, n, report.get("threads")))

    if problems:
        for p in problems:
            print(p)
        return 1
    print(json.dumps({"events": dict(kinds), "threads": created,
                      "counted": dict(counted),
                      "locks": len(orders), "contingents": len(contingents)},
                     sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
