#!/usr/bin/python3
"""Checks the OTF2 archive of a program traced by libweft-io.

usage: check_io.py ARCHIVE/traces.otf2 REPORT.json
       check_io.py ARCHIVE/traces.otf2 --sizes PATH=BYTES...

REPORT.json is what tests/io/iotest.c says its trace must hold: calls
(region name -> calls made, exact, and no other region: its visits plus
the calls counted instead of recorded, proto/counts.h), written and read
(absolute path -> bytes transferred through the handles of that file),
deleted (the IoDeleteFile paths), absent (paths no file may name), dups
(IoDuplicateHandle events), seeks (IoSeek events). --sizes: a program
that is not ours (tar): only the bytes written to those files.

Always checked, with Debian's python3-otf2 reader: the two I/O paradigms
are POSIX ("POSIX I/O", flag OS) and ISOC ("ISO C I/O"); one file
definition per path; each event
sits in a region entered and left in order (but the bytes of counted
calls paid as a thread ends: a Begin and Complete at one time); every IoOperationBegin is
followed on its location by its IoOperationComplete (same handle and
matchingId) before any other operation begins; every handle an event
names was created in its process, on any thread (IoCreateHandle,
IoDuplicateHandle), or is pre-created (with an IoPreCreatedHandleState)
and is not used after its IoDestroyHandle; the standard streams are pre-created handles of both
paradigms.

Prints a JSON summary on success; exits 1 with one problem per line.
"""
import collections
import json
import sys

import otf2

UNDEF64 = 0xFFFFFFFFFFFFFFFF
COUNTS_CALLS = "weft: calls counted, not recorded one by one"


def field(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def main(argv):
    path = argv[1]
    expect = None
    sizes = {}
    if argv[2] == "--sizes":
        for a in argv[3:]:
            p, _, n = a.rpartition("=")
            sizes[p] = int(n)
    else:
        with open(argv[2]) as f:
            expect = json.load(f)
    problems = []
    visits = collections.Counter()
    bytes_by = {"written": collections.Counter(), "read": collections.Counter()}
    deleted, dups, seeks, ops, counted = [], 0, 0, 0, 0
    last_begin = {}

    def owed(t, ev):
        """The bytes of counted calls, paid outside any region when a
        thread ends or the process exits: a Begin and its Complete at the
        same time."""
        if t == "IoOperationBegin":
            last_begin[ev.handle] = ev.time
            return True
        return t == "IoOperationComplete" and last_begin.get(ev.handle) == ev.time

    with otf2.reader.open(path) as trace:
        defs = trace.definitions
        paradigms = {p.identification: p for p in defs.io_paradigms}
        if set(paradigms) != {"POSIX", "ISOC"}:
            problems.append("I/O paradigms %s, expected POSIX and ISOC"
                            % sorted(paradigms))
        else:
            if paradigms["POSIX"].name != "POSIX I/O" or \
               paradigms["POSIX"].io_paradigm_flags != otf2.IoParadigmFlag.OS:
                problems.append("POSIX paradigm is %r" % paradigms["POSIX"])
            if paradigms["ISOC"].name != "ISO C I/O":
                problems.append("ISOC paradigm is %r" % paradigms["ISOC"])
        precreated = {s.io_handle for s in defs.io_pre_created_handle_states}
        # Each process pre-creates its three of each paradigm; those of
        # several processes (a process tree) that are alike unify.
        std = set()
        nstd = 0
        for h in defs.io_handles:
            if h.io_handle_flags & otf2.IoHandleFlag.PRE_CREATED:
                if h not in precreated:
                    problems.append("pre-created handle %s has no state"
                                    % h.name)
                if h.name in ("stdin", "stdout", "stderr"):
                    std.add((h.io_paradigm.identification, h.name))
                    nstd += 1
        want = {(p, n) for p in ("POSIX", "ISOC")
                for n in ("stdin", "stdout", "stderr")}
        if std != want or (len(defs.location_groups) == 1 and nstd != 6):
            problems.append("standard streams: %d pre-created, %s, "
                            "expected stdin, stdout and stderr of POSIX and "
                            "ISOC (once in a trace of one process)"
                            % (nstd, sorted(std)))
        files = {f.name for f in defs.io_files}
        per_name = collections.Counter((type(f).__name__, f.name)
                                       for f in defs.io_files)
        for (kind, name), n in per_name.items():
            if n > 1:
                problems.append("%d %s definitions of %s (one per path)"
                                % (n, kind, name))

        stacks = collections.defaultdict(list)
        pending = {}            # location -> (handle, mode, matching id)
        # Handles are the process's (a descriptor opened by one thread is
        # written by another): alive per location group, in time order.
        live = collections.defaultdict(set)
        dead = collections.defaultdict(set)

        def use(loc, h, what):
            proc = loc.group
            if h in dead[proc] and h not in live[proc]:
                problems.append("%s on handle %s after its destruction"
                                % (what, h.name))
            elif h not in live[proc] and h not in precreated:
                problems.append("%s on handle %s that was never created"
                                % (what, h.name))

        for loc, ev in trace.events:
            t = type(ev).__name__
            if t == "Metric":
                for mem, val in zip(ev.metric.members, ev.values):
                    if mem.description == COUNTS_CALLS:
                        visits[mem.name] += val
                        counted += val
                continue
            if t == "Enter":
                stacks[loc].append(ev.region)
                visits[ev.region.name] += 1
                continue
            if t == "Leave":
                if not stacks[loc] or stacks[loc][-1] != ev.region:
                    problems.append("Leave of %s does not match" %
                                    ev.region.name)
                else:
                    stacks[loc].pop()
                continue
            if not t.startswith("Io"):
                continue
            if not stacks[loc] and not owed(t, ev):
                problems.append("%s outside any region" % t)
            if t == "IoCreateHandle":
                live[loc.group].add(ev.handle)
                dead[loc.group].discard(ev.handle)
            elif t == "IoDestroyHandle":
                use(loc, ev.handle, t)
                live[loc.group].discard(ev.handle)
                dead[loc.group].add(ev.handle)
            elif t == "IoDuplicateHandle":
                use(loc, field(ev, "old_handle", "oldHandle"), t)
                live[loc.group].add(field(ev, "new_handle", "newHandle"))
                dups += 1
            elif t == "IoSeek":
                use(loc, ev.handle, t)
                seeks += 1
            elif t == "IoDeleteFile":
                deleted.append(ev.file.name)
            elif t == "IoOperationBegin":
                use(loc, ev.handle, t)
                if loc in pending:
                    problems.append("IoOperationBegin on %s while another "
                                    "operation is in progress" % ev.handle.name)
                pending[loc] = (ev.handle, ev.mode,
                                field(ev, "matching_id", "matchingId"))
                ops += 1
            elif t == "IoOperationComplete":
                p = pending.pop(loc, None)
                mid = field(ev, "matching_id", "matchingId")
                if not p or p[0] != ev.handle or p[2] != mid:
                    problems.append("IoOperationComplete on %s matches no "
                                    "Begin" % ev.handle.name)
                    continue
                n = field(ev, "bytes_result", "bytesResult")
                if n == UNDEF64 or ev.handle.file is None:
                    continue
                if p[1] == otf2.IoOperationMode.WRITE:
                    bytes_by["written"][ev.handle.file.name] += n
                elif p[1] == otf2.IoOperationMode.READ:
                    bytes_by["read"][ev.handle.file.name] += n
        for loc, p in pending.items():
            problems.append("IoOperationBegin on %s never completed"
                            % p[0].name)
        for loc, st in stacks.items():
            if st:
                problems.append("regions never left: %s"
                                % [r.name for r in st])

    if expect is not None:
        want = collections.Counter(expect["calls"])
        for name in sorted(set(want) | set(visits)):
            if want[name] != visits[name]:
                problems.append("region %s visited %d times, expected %d"
                                % (name, visits[name], want[name]))
        for key in ("written", "read"):
            got = {k: v for k, v in bytes_by[key].items() if v}
            if got != expect[key]:
                problems.append("bytes %s per file: %s, expected %s"
                                % (key, got, expect[key]))
        if sorted(deleted) != sorted(expect["deleted"]):
            problems.append("deleted %s, expected %s"
                            % (sorted(deleted), sorted(expect["deleted"])))
        for p in expect["absent"]:
            if p in files:
                problems.append("%s is in the trace (a forked child's file)"
                                % p)
        if dups != expect["dups"]:
            problems.append("%d IoDuplicateHandle, expected %d"
                            % (dups, expect["dups"]))
        if seeks != expect["seeks"]:
            problems.append("%d IoSeek, expected %d" % (seeks, expect["seeks"]))
    for p, n in sizes.items():
        if bytes_by["written"][p] != n:
            problems.append("%d bytes written to %s in the trace, the file "
                            "has %d" % (bytes_by["written"][p], p, n))
    if problems:
        for p in problems[:200]:
            print(p)
        return 1
    print(json.dumps({"operations": ops, "visits": sum(visits.values()),
                      "counted": counted,
                      "written": dict(bytes_by["written"]),
                      "dups": dups, "seeks": seeks}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
