#!/usr/bin/python3
"""The self-test of tests/check_mpi.py: a small MPI archive of its own and
the breakages the checker must catch. Run through check_mpi.py:

       check_mpi.py --self-test [ARCHIVE/traces.otf2 EXPECT_DIR]
       check_mpi.py --write-sample DIR

--self-test with no archive writes the sample (4 ranks: messages on the
world, on a dup and on an intercommunicator, a failed Test, a Bcast with
root 2, an Ibarrier, RMA in a fence epoch, a lock epoch and post/start/
complete/wait), which must pass both readers and the checker, then breaks
one thing at a time (a count off, a tag, a request id, a root, a member, a
receive dropped, two communicators made one, ...) and each must be caught
with the right message; with ARCHIVE and EXPECT_DIR it does the same to a
real run. --write-sample writes the sample archive in DIR/archive and its
expectation in DIR/expect.
"""
import collections
import copy
import json
import os
import sys
import tempfile

import check_mpi as cm
import mpi_archive
from check_mpi import CONTRACT_CALLS, UNDEF32, check, report

def mutations(arch, exp):
    """(name, what the problem says, arch', exp') with one thing broken,
    for each breakage this archive allows."""
    out = []

    def first_event(kind, pred=lambda f: True):
        for loc in sorted(arch.events):
            for i, (k, _t, f) in enumerate(arch.events[loc]):
                if k == kind and pred(f):
                    return loc, i
        return None

    def with_event(name, expect, kind, change, pred=lambda f: True):
        hit = first_event(kind, pred)
        if hit is None:
            return
        a2 = copy.deepcopy(arch)
        loc, i = hit
        if change is None:
            del a2.events[loc][i]
            a2.locations[loc]["events"] -= 1
        else:
            change(a2.events[loc][i][2])
        out.append((name, expect, a2, exp))

    def with_exp(name, expect, change):
        e2 = copy.deepcopy(exp)
        if change(e2) is not False:
            out.append((name, expect, arch, e2))

    rank0 = min(exp)

    def count_off(e):
        ev = e[rank0]["events"]
        k = next(k for k in sorted(ev) if ev[k])
        ev[k] += 1
    with_exp("an event count off by one", "events, the program caused", count_off)

    def call_off(e):
        c = e[rank0]["calls"]
        fn = next((f for f in sorted(c) if f in CONTRACT_CALLS), None)
        if fn is None:
            return False
        c[fn] += 1
    with_exp("a call count off by one", "visited", call_off)

    def send_tag(e):
        if not e[rank0].get("sends"):
            return False
        e[rank0]["sends"][0][2] += 1000
    with_exp("a send's tag in the expectation", "sends", send_tag)

    def members(e):
        for c in e[rank0].get("comms", []):
            if "members" in c and len(c["members"]) > 1:
                c["members"] = c["members"][::-1]
                return
        return False
    with_exp("a communicator's member order", "group lists world ranks", members)

    def rename(e):
        cs = [c for c in e[rank0].get("comms", [])
              if c["name"] not in ("MPI_COMM_WORLD",)]
        if not cs:
            return False
        cs[0]["name"] += ".x"
    with_exp("a communicator's name", "no Comm named", rename)

    def root(e):
        for c in e[rank0].get("collectives", []):
            if c[2] is not None:
                c[2] += 1
                return
        return False
    with_exp("a collective's root in the expectation", "blocking collectives", root)

    with_event("a receive dropped", "never received", "MpiRecv", None)
    with_event("an MpiSend's tag", "never received", "MpiSend",
               lambda f: f.__setitem__("msgTag", f["msgTag"] + 1))
    with_event("an MpiIrecv's length", "never sent", "MpiIrecv",
               lambda f: f.__setitem__("msgLength", f["msgLength"] + 1))
    with_event("an MpiIsendComplete's requestID", "requestID",
               "MpiIsendComplete",
               lambda f: f.__setitem__("requestID", f["requestID"] + 999983))
    with_event("an MpiIrecvRequest dropped", "not pending", "MpiIrecvRequest",
               None)
    with_event("a NonBlockingCollectiveComplete dropped", "never completes",
               "NonBlockingCollectiveComplete", None)
    with_event("a root changed on one rank", "differ from rank",
               "MpiCollectiveEnd",
               lambda f: f.__setitem__("root", (f["root"] + 1) % 2),
               lambda f: f["root"] != UNDEF32)
    with_event("a CommCreate dropped", "CommCreate", "CommCreate", None)
    with_event("an RmaOpCompleteBlocking dropped", "never completes",
               "RmaOpCompleteBlocking", None)
    with_event("an RmaPut's window", "window", "RmaPut",
               lambda f: f.__setitem__("win", f["win"] + 1000))
    with_event("an RmaReleaseLock dropped", "never released",
               "RmaReleaseLock", None)
    with_event("an RmaGroupSync's group", "group", "RmaGroupSync",
               lambda f: f.__setitem__("group", f["group"] + 1000))
    with_event("an RmaGet's remote", "RMA operations", "RmaGet",
               lambda f: f.__setitem__("remote", (f["remote"] + 1) % 4))
    with_event("an MpiRequestTest's requestID", "not pending", "MpiRequestTest",
               lambda f: f.__setitem__("requestID", f["requestID"] + 999983))
    with_event("an MpiRequestTest dropped", "the program expects",
               "MpiRequestTest", None)

    def created_name(e):
        if not e[rank0].get("created"):
            return False
        e[rank0]["created"][0] += ".x"
    with_exp("a created communicator's name", "the program named it",
             created_name)

    # Two communicators made one: every rank's second CommCreate (and
    # everything on that comm) refers to the comm of its first.
    firsts = {}
    for loc, evs in arch.events.items():
        made = [f["communicator"] for k, _t, f in evs if k == "CommCreate"]
        if len(made) >= 2:
            firsts[loc] = made[:2]
    if firsts:
        a2 = copy.deepcopy(arch)
        for loc, (c1, c2) in firsts.items():
            for k, _t, f in a2.events[loc]:
                if f.get("communicator") == c2:
                    f["communicator"] = c1
        out.append(("two communicators one Comm", "two communicators are one",
                    a2, exp))

    for cid, c in arch.comms.items():
        if "groupA" in c and len(arch.groups[c["groupA"]]["members"]) > 1:
            a2 = copy.deepcopy(arch)
            g = a2.groups[c["groupA"]]
            g["members"] = g["members"][::-1]
            out.append(("an InterComm group's order", "InterComm", a2, exp))
            break
    for rid, reg in arch.regions.items():
        if reg["name"] == "MPI_Recv":
            a2 = copy.deepcopy(arch)
            a2.regions[rid]["name"] = "MPI_Irecv"
            out.append(("MpiRecv inside MPI_Irecv", "recorded in", a2, exp))
    for cid, c in arch.comms.items():
        if c["name"] == "MPI_COMM_WORLD" and "group" in c:
            a2 = copy.deepcopy(arch)
            g = a2.groups[c["group"]]
            g["members"] = g["members"][::-1]
            out.append(("the world's group reversed", "", a2, exp))
    return out


def self_test(arch, exp):
    """0 if ARCH/EXP pass and every mutation of them is caught."""
    p = check(arch, exp)
    if p:
        report(p, "check_mpi: self-test: the unbroken archive fails: ")
        return 1
    bad = 0
    muts = mutations(arch, exp)
    for name, expect, a2, e2 in muts:
        p2 = check(a2, e2)
        if not p2:
            print("check_mpi: self-test: not caught: %s" % name, file=sys.stderr)
            bad += 1
        elif expect and not any(expect in m for m in p2):
            print("check_mpi: self-test: %s caught, but not as %r: %s"
                  % (name, expect, p2[:3]), file=sys.stderr)
            bad += 1
    print(json.dumps({"self_test": "ok" if not bad else "failed",
                      "mutations": len(muts), "missed": bad}))
    return 1 if bad else 0


def write_sample(path):
    """A small 4-rank MPI archive, as libweft-mpi would record it, and the
    expectation files of the program it stands for: p2p on the world and a
    dup, Isend/Irecv with a failed Test, a Bcast with root 2, an Ibarrier,
    messages on an intercommunicator, an RMA fence epoch with a Put;
    returns the anchor file's path."""
    import otf2
    mpi_archive.fix_intercomm(otf2)
    from otf2.enums import (CollectiveOp, CommFlag, GroupType, LocationGroupType,
                            LocationType, LockType, Paradigm, RegionRole,
                            RmaAtomicType, RmaSyncLevel, RmaWinFlag)
    n = 4
    os.makedirs(os.path.join(path, "expect"))
    exp = {r: {"program": "sample", "rank": r, "size": n,
               "events": collections.Counter(), "calls": collections.Counter(),
               "sends": [], "recvs": [], "collectives": [], "nbcollectives": [],
               "rma": [], "windows": [],
               "created": ["sample.dup", "sample.inter"], "log": [],
               "comms": [{"name": "MPI_COMM_WORLD", "members": list(range(n))},
                         {"name": "sample.dup", "members": list(range(n))},
                         {"name": "sample.inter", "groups": [[0, 2], [1, 3]]}]}
           for r in range(n)}
    with otf2.writer.open(os.path.join(path, "archive"), timer_resolution=10**9) as w:
        d = w.definitions
        node = d.system_tree_node("node")
        locs = []
        for r in range(n):
            lg = d.location_group("Process %d" % r, system_tree_parent=node,
                                  location_group_type=LocationGroupType.PROCESS)
            locs.append(d.location("Master thread", group=lg,
                                   type=LocationType.CPU_THREAD))
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS,
                paradigm=Paradigm.MPI, members=locs)
        gw = d.group("world", group_type=GroupType.COMM_GROUP,
                     paradigm=Paradigm.MPI, members=list(range(n)))
        gs = d.group("self", group_type=GroupType.COMM_SELF,
                     paradigm=Paradigm.MPI, members=[])
        world = d.comm("MPI_COMM_WORLD", group=gw, parent=None)
        d.comm("MPI_COMM_SELF", group=gs, parent=world)
        gd = d.group("sample.dup", group_type=GroupType.COMM_GROUP,
                     paradigm=Paradigm.MPI, members=list(range(n)))
        dup = d.comm("sample.dup", group=gd, parent=world,
                     flags=CommFlag.CREATE_DESTROY_EVENTS)
        ga = d.group("even", group_type=GroupType.COMM_GROUP,
                     paradigm=Paradigm.MPI, members=[0, 2])
        gb = d.group("odd", group_type=GroupType.COMM_GROUP,
                     paradigm=Paradigm.MPI, members=[1, 3])
        inter = d.inter_comm("sample.inter", groupA=ga, groupB=gb,
                             parent=world, flags=CommFlag.CREATE_DESTROY_EVENTS)
        win = d.rma_win("window", comm=world,
                        flags=RmaWinFlag.CREATE_DESTROY_EVENTS)
        regions = {}

        def region(name):
            if name not in regions:
                regions[name] = d.region(name, paradigm=Paradigm.MPI,
                                         region_role=RegionRole.FUNCTION)
            return regions[name]

        for r in range(n):
            ew = w.event_writer_from_location(locs[r])
            e = exp[r]
            t = [1000]
            right, left = (r + 1) % n, (r + n - 1) % n

            def now():
                t[0] += 10
                return t[0]

            def call(name, *records):
                ew.enter(now(), region(name))
                kinds = []
                for kind, rec in records:
                    rec()
                    kinds.append(kind)
                ew.leave(now(), region(name))
                e["calls"][name] += 1
                e["log"].append([name, kinds])

            def ev(kind, fn, *args):
                e["events"][kind] += 1
                return kind, lambda: fn(now(), *args)

            e["events"]["ProgramBegin"] += 1
            ew.program_begin(now(), "sample", [])
            call("MPI_Init")
            call("MPI_Comm_rank")
            # Send right, receive from the left, on the world.
            call("MPI_Send", ev("MpiSend", ew.mpi_send, right, world, 7, 40))
            e["sends"].append(["MPI_COMM_WORLD", right, 7, 40])
            call("MPI_Recv", ev("MpiRecv", ew.mpi_recv, left, world, 7, 40))
            e["recvs"].append(["MPI_COMM_WORLD", left, 7, 40])
            # A dup, named; Isend left, Irecv right on it; a failed Test.
            call("MPI_Comm_dup", ev("CommCreate", ew.comm_create, dup))
            call("MPI_Comm_set_name")
            req = 100 * r
            call("MPI_Irecv", ev("MpiIrecvRequest", ew.mpi_irecv_request, req))
            call("MPI_Test", ev("MpiRequestTest", ew.mpi_request_test, req))
            call("MPI_Isend", ev("MpiIsend", ew.mpi_isend, left, dup, 9, 8,
                                 req + 1))
            e["sends"].append(["sample.dup", left, 9, 8])
            call("MPI_Waitall",
                 ev("MpiIrecv", ew.mpi_irecv, right, dup, 9, 8, req),
                 ev("MpiIsendComplete", ew.mpi_isend_complete, req + 1))
            e["recvs"].append(["sample.dup", right, 9, 8])
            # Bcast from rank 2 of the dup.
            call("MPI_Bcast",
                 ev("MpiCollectiveBegin", ew.mpi_collective_begin),
                 ev("MpiCollectiveEnd", ew.mpi_collective_end,
                    CollectiveOp.BCAST, dup, 2, 4 if r == 2 else 0,
                    0 if r == 2 else 4))
            e["collectives"].append(["sample.dup", "BCAST", 2])
            # Ibarrier, completed by Wait.
            call("MPI_Ibarrier", ev("NonBlockingCollectiveRequest",
                                    ew.non_blocking_collective_request, req + 2))
            call("MPI_Wait", ev("NonBlockingCollectiveComplete",
                                ew.non_blocking_collective_complete,
                                CollectiveOp.BARRIER, world, UNDEF32, 0, 0,
                                req + 2))
            e["nbcollectives"].append(["MPI_COMM_WORLD", "BARRIER", None])
            call("MPI_Comm_free", ev("CommDestroy", ew.comm_destroy, dup))
            # Rank I of each side of the intercommunicator with rank I of
            # the other (world 0 with 1, 2 with 3).
            call("MPI_Intercomm_create", ev("CommCreate", ew.comm_create, inter))
            call("MPI_Comm_set_name")
            peer = r // 2
            call("MPI_Sendrecv",
                 ev("MpiSend", ew.mpi_send, peer, inter, 11, 4),
                 ev("MpiRecv", ew.mpi_recv, peer, inter, 11, 4))
            e["sends"].append(["sample.inter", r ^ 1, 11, 4])
            e["recvs"].append(["sample.inter", r ^ 1, 11, 4])
            call("MPI_Comm_free", ev("CommDestroy", ew.comm_destroy, inter))
            # A window, a fence epoch with one Put.
            call("MPI_Win_create", ev("RmaWinCreate", ew.rma_win_create, win))
            e["windows"].append("MPI_COMM_WORLD")

            def fence(*inner):
                call("MPI_Win_fence",
                     ev("RmaCollectiveBegin", ew.rma_collective_begin),
                     *inner,
                     ev("RmaCollectiveEnd", ew.rma_collective_end,
                        CollectiveOp.BARRIER, RmaSyncLevel.MEMORY, win,
                        UNDEF32, 0, 0))
            fence()
            call("MPI_Put", ev("RmaPut", ew.rma_put, win, right, 4, 1))
            e["rma"].append(["RmaPut", "MPI_COMM_WORLD", right, 4])
            fence(ev("RmaOpCompleteBlocking", ew.rma_op_complete_blocking,
                     win, 1))
            # A lock epoch with a Get from the left.
            call("MPI_Win_lock", ev("RmaAcquireLock", ew.rma_acquire_lock,
                                    win, left, 7, LockType.SHARED))
            call("MPI_Get", ev("RmaGet", ew.rma_get, win, left, 8, 2))
            e["rma"].append(["RmaGet", "MPI_COMM_WORLD", left, 8])
            call("MPI_Win_unlock",
                 ev("RmaOpCompleteBlocking", ew.rma_op_complete_blocking, win, 2),
                 ev("RmaReleaseLock", ew.rma_release_lock, win, left, 7))
            # Post/start/complete/wait with an Accumulate to the right.
            sync = RmaSyncLevel.PROCESS | RmaSyncLevel.MEMORY
            call("MPI_Win_post", ev("RmaGroupSync", ew.rma_group_sync, sync,
                                    win, gw))
            call("MPI_Win_start", ev("RmaGroupSync", ew.rma_group_sync, sync,
                                     win, gw))
            call("MPI_Accumulate", ev("RmaAtomic", ew.rma_atomic, win, right,
                                      RmaAtomicType.ACCUMULATE, 4, 0, 3))
            e["rma"].append(["RmaAtomic", "MPI_COMM_WORLD", right, 4])
            call("MPI_Win_complete",
                 ev("RmaGroupSync", ew.rma_group_sync, sync, win, gw),
                 ev("RmaOpCompleteBlocking", ew.rma_op_complete_blocking, win, 3))
            call("MPI_Win_wait", ev("RmaGroupSync", ew.rma_group_sync, sync,
                                    win, gw))
            call("MPI_Win_free", ev("RmaWinDestroy", ew.rma_win_destroy, win))
            call("MPI_Finalize")
            e["events"]["ProgramEnd"] += 1
            ew.program_end(now(), 0)
    for r, e in exp.items():
        with open(os.path.join(path, "expect", "rank-%d.json" % r), "w") as f:
            json.dump(e, f)
    return os.path.join(path, "archive", "traces.otf2")


def main(argv):
    if argv[0] == "--write-sample" and len(argv) == 2:
        print(write_sample(argv[1]))
        return 0
    if argv[0] == "--self-test" and len(argv) == 3:
        return self_test(mpi_archive.Archive.read(argv[1]),
                         cm.load_expectations(argv[2]))
    if argv[0] != "--self-test" or len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="check_mpi.") as tmp:
        anchor = write_sample(tmp)
        arch = mpi_archive.Archive.read(anchor)
        p = cm.Problems()
        cm.both_readers(anchor, arch, p)
        if p:
            report(p, "check_mpi: self-test: ")
            return 1
        return self_test(arch, cm.load_expectations(os.path.join(tmp, "expect")))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
