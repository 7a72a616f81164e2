#!/usr/bin/python3
"""view_marks.py URL TRACE ANCHOR - weft view's marks (issue #36: MPI
collectives, threads created and joined, locks held, I/O operations)
checked over HTTP against the archive ANCHOR as otf2-print (an
independent reader) prints it; TRACE is the archive's index among the
traces weft view at URL serves.

From otf2-print, the marks are: MPI_COLLECTIVE_BEGIN .. END (operation,
communicator, root, bytes sent + received); THREAD_CREATE to the
THREAD_BEGIN of the same contingent and sequence count, THREAD_END to
its THREAD_WAIT (arrows across locations); THREAD_ACQUIRE_LOCK ..
THREAD_RELEASE_LOCK of a lock at one location (the latest acquisition
of that lock); IO_OPERATION_BEGIN .. COMPLETE (handle and matching id;
mode, bytes of the result). The checks:
  - api/traces counts each kind as the archive has it, none unmatched;
  - for windows (the whole trace at 16384 and 1000 columns, narrow
    windows around marks, one location only): every mark api/window
    sends is one of the archive's, exactly (kind, location, times in
    ticks since the clock offset, the other end's location, operation,
    reference, peer, bytes), none twice; every archive mark overlapping
    the window at a location asked for is sent when it is at least a
    column wide, and when narrower a mark of its location and kind is
    sent in its column (the thinning api/window promises), none left
    out ("marks_more" 0).
Archives with RMA events are not read here (none of the e2e traces has
any). Everything it waits for has a timeout."""
import json
import re
import subprocess
import sys
import urllib.request

COLL = ["BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV",
        "ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW",
        "ALLREDUCE", "REDUCE", "REDUCE_SCATTER", "SCAN", "EXSCAN",
        "REDUCE_SCATTER_BLOCK", "CREATE_HANDLE", "DESTROY_HANDLE", "ALLOCATE",
        "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE",
        "DESTROY_HANDLE_AND_DEALLOCATE"]
MODES = ["READ", "WRITE", "FLUSH"]
KINDS = {1: "collective", 2: "rma", 3: "rma_sync", 4: "create", 5: "join",
         6: "lock", 7: "io"}
UNDEF32 = 4294967295

LINE = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s*(.*)$")


def field(rest, name, pat=r"(\d+|NONE|UNDEFINED)"):
    m = re.search(r"\b" + name + r": " + pat, rest)
    if not m:
        raise SystemExit("otf2-print: no %s in %r" % (name, rest))
    v = m.group(1)
    return UNDEF32 if v in ("NONE", "UNDEFINED") else int(v) if v.isdigit() else v


def ref(rest, name):
    """The id <N> of a reference field ("Name: "text" <N>")."""
    m = re.search(r"\b" + name + r': (?:".*?" )?<(\d+)>', rest)
    if not m:
        raise SystemExit("otf2-print: no %s reference in %r" % (name, rest))
    return int(m.group(1))


def archive_marks(anchor, offset):
    """The archive's marks as api/window sends them: [kind, loc, t, end,
    other loc, op, ref, peer, bytes], times in ticks since offset."""
    out = subprocess.run(["otf2-print", anchor], capture_output=True,
                         text=True, timeout=120, check=True).stdout
    marks, coll, locks, io, threads = [], {}, {}, {}, {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        ev, loc, ts, rest = m.group(1), int(m.group(2)), int(m.group(3)) - offset, m.group(4)
        if ev == "MPI_COLLECTIVE_BEGIN":
            assert loc not in coll, ("a collective begun twice", loc, ts)
            coll[loc] = ts
        elif ev == "MPI_COLLECTIVE_END":
            t = coll.pop(loc)
            marks.append([1, loc, t, ts, loc, COLL.index(field(rest, "Operation", r"(\w+)")),
                          ref(rest, "Communicator"), field(rest, "Root"),
                          field(rest, "Sent") + field(rest, "Received")])
        elif ev in ("THREAD_CREATE", "THREAD_BEGIN", "THREAD_END", "THREAD_WAIT"):
            key = (ref(rest, "Thread Contingent"), field(rest, "Sequence Count"))
            side = ["THREAD_CREATE", "THREAD_BEGIN", "THREAD_END", "THREAD_WAIT"].index(ev)
            ends = threads.setdefault(key, {})
            assert side not in ends, ("a thread event twice", ev, key)
            ends[side] = (loc, ts)
        elif ev == "THREAD_ACQUIRE_LOCK":
            locks.setdefault((loc, ref(rest, "Model"), field(rest, "Lock")), []).append(ts)
        elif ev == "THREAD_RELEASE_LOCK":
            model, lock = ref(rest, "Model"), field(rest, "Lock")
            t = locks[(loc, model, lock)].pop()
            marks.append([6, loc, t, ts, loc, model, lock, 0, 0])
        elif ev == "IO_OPERATION_BEGIN":
            k = (loc, ref(rest, "Handle"), field(rest, "Matching Id"))
            assert k not in io, ("an I/O operation begun twice", k)
            io[k] = (ts, MODES.index(field(rest, "Mode", r"(\w+)")))
        elif ev == "IO_OPERATION_COMPLETE":
            h = ref(rest, "Handle")
            t, mode = io.pop((loc, h, field(rest, "Matching Id")))
            marks.append([7, loc, t, ts, loc, mode, h, 0, field(rest, "Bytes Result")])
        elif ev.startswith("RMA_") and ev not in ("RMA_WIN_CREATE", "RMA_WIN_DESTROY"):
            raise SystemExit("view_marks.py reads no RMA events (%s)" % ev)
    assert not coll and not io and not any(locks.values()), \
        ("marks never ended", coll, io, {k: v for k, v in locks.items() if v})
    for (comm, seq), ends in threads.items():
        for a, b, kind in ((0, 1, 4), (2, 3, 5)):
            assert (a in ends) == (b in ends), ("a thread event alone", comm, seq, ends)
            if a in ends:
                marks.append([kind, ends[a][0], ends[a][1], ends[b][1], ends[b][0], 0, comm, 0, seq])
    return marks


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def check_window(url, ti, marks, t0, t1, px, locs=None):
    """api/window's marks for [t0, t1) on px columns (at locations locs)
    against the archive's. Returns how many it sent."""
    q = "api/window?trace=%d&t0=%d&t1=%d&px=%d" % (ti, t0, t1, px)
    if locs is not None:
        q += "&locs=" + ",".join(str(x) for x in locs)
    j = get(url + q)
    sent = [tuple(m) for m in j["marks"]]
    want = {tuple(m) for m in marks}
    what = "trace %d, window [%d, %d) on %d columns%s" % (
        ti, t0, t1, px, " at %s" % locs if locs is not None else "")
    assert j["marks_more"] == 0, (what, j["marks_more"])
    assert len(set(sent)) == len(sent), (what, "a mark sent twice")
    stray = [m for m in sent if m not in want]
    assert not stray, (what, "marks the archive does not have", stray[:5])
    span = t1 - t0

    def col(m):
        return max(min(m[2], m[3]) - t0, 0) * px // span

    def narrow(m):
        return abs(m[3] - m[2]) < span // px
    shown = {(m[1], m[0], col(m)) for m in sent if narrow(m)}
    for m in marks:
        lo, hi = min(m[2], m[3]), max(m[2], m[3])
        if lo >= t1 or hi < t0 or (locs is not None and m[1] not in locs and m[4] not in locs):
            continue
        if narrow(m):
            assert (m[1], m[0], col(m)) in shown, (what, "no mark sent in the column of", m)
        else:
            assert tuple(m) in sent, (what, "not sent", m)
    return len(sent)


def main():
    url, ti, anchor = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    info = get(url + "api/traces")["traces"][ti]
    marks = archive_marks(anchor, info["offset"])
    counts = {name: sum(1 for m in marks if m[0] == k) for k, name in KINDS.items()}
    assert info["marks"] == counts, ("api/traces' marks", info["marks"], "the archive's", counts)
    assert info["unmatched_marks"] == 0, info["unmatched_marks"]
    assert marks, "trace %d: the archive has no marks" % ti
    t1 = info["t1"]
    n = [check_window(url, ti, marks, 0, t1, 16384), check_window(url, ti, marks, 0, t1, 1000)]
    # narrow windows around a few marks of each kind
    for k in KINDS:
        of = [m for m in marks if m[0] == k]
        for m in of[:: max(1, len(of) // 3)][:3]:
            lo, hi = min(m[2], m[3]), max(m[2], m[3])
            pad = max(50, (hi - lo) // 2)
            n.append(check_window(url, ti, marks, max(0, lo - pad), hi + pad, 500))
    loc = info["locations"][-1]["loc"]
    n.append(check_window(url, ti, marks, 0, t1, 4000, [loc]))
    print("marks of trace %d: %s as the archive has them; %d windows, %d marks sent" %
          (ti, counts, len(n), sum(n)))


if __name__ == "__main__":
    try:
        main()
    except (AssertionError, OSError, KeyError, ValueError) as e:
        sys.exit("view_marks.py: %r" % (e,))
