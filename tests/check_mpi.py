#!/usr/bin/python3
"""Checks the OTF2 archive of a traced MPI program (tests/mpi/every.c,
tests/mpi/ring.f90) against what the program says its trace must hold and
against libweft-mpi's contract (the MPI calls and the events each records).

usage: check_mpi.py ARCHIVE/traces.otf2 EXPECT_DIR
       check_mpi.py --readers-only ARCHIVE/traces.otf2
       check_mpi.py --self-test [ARCHIVE/traces.otf2 EXPECT_DIR]
       check_mpi.py --write-sample DIR

EXPECT_DIR holds one rank-N.json per rank, written by the program (keys:
events, calls, sends, recvs, collectives, nbcollectives, rma, comms,
windows, created: the communicators in the order of its CommCreate
events, by which the checker finds them whatever their names, and log:
its calls in order with the events each caused, by which it names the
first call that differs; see every.c). The archive is read with libotf2's Python binding
at its lowest level (_otf2): Debian's python3-otf2 cannot build an
InterComm definition with its high-level reader. That reader reads it
too, with its field list corrected (see python_reader), so both readers
of the module must accept the archive.

Checks, per rank (location group): the count of each MPI event kind; the
visits of each MPI function's region (exact for the contract's functions,
0 or exact for the others the program calls; a region the program never
called is an error); its messages (communicator name, peer world rank,
tag, bytes), blocking collectives in order, non-blocking ones, RMA
operations and windows against the expectation. Across ranks: every send
has exactly one matching receive (same communicator, sender's world rank
== the receiver's peer translated through the Comm's Group, tag, bytes)
and none is left over; every request id pairs up on its location
(MpiIsend with MpiIsendComplete or MpiRequestCancelled, MpiIrecvRequest
with MpiIrecv or MpiRequestCancelled, NonBlockingCollectiveRequest with
NonBlockingCollectiveComplete; MpiRequestTest only on a pending request);
each communicator's collectives are seen by every member of its group,
with the same op and root, and by no one else; communicators are named as
the program named them, with its members, distinct Comms for distinct
communicators, CommCreate on every member; RMA events name a window whose
Comm exists, operations complete, locks are released. Each event must sit
in the region of a call that records it (MpiSend inside MPI_Send, ...).

--readers-only: both readers accept the archive (a partial trace).
--self-test, --write-sample: the checker's own test, which must catch
breakages of a small archive or of a real run (check_mpi_selftest.py).

Prints a JSON summary on success; exits 1 with one problem per line.
"""
import collections
import glob
import json
import os
import sys

import _otf2

from mpi_archive import Archive, python_reader

UNDEF32 = 0xFFFFFFFF
MAX_PROBLEMS = 200

# The event kinds of the contract, as every.c counts them.
KINDS = ("ProgramBegin", "ProgramEnd", "MpiSend", "MpiRecv", "MpiIsend",
         "MpiIsendComplete", "MpiIrecvRequest", "MpiIrecv", "MpiRequestTest",
         "MpiRequestCancelled", "MpiCollectiveBegin", "MpiCollectiveEnd",
         "NonBlockingCollectiveRequest", "NonBlockingCollectiveComplete",
         "CommCreate", "CommDestroy", "RmaWinCreate", "RmaWinDestroy",
         "RmaPut", "RmaGet", "RmaAtomic", "RmaOpCompleteBlocking",
         "RmaCollectiveBegin", "RmaCollectiveEnd", "RmaAcquireLock",
         "RmaReleaseLock", "RmaGroupSync")
# MPI kinds the contract never records: each must not occur (unless the
# expectation counts it).
OTHER_MPI_KINDS = ("RmaRequestLock", "RmaTryLock", "RmaSync", "RmaWaitChange",
                   "RmaOpCompleteNonBlocking", "RmaOpTest",
                   "RmaOpCompleteRemote")
CHECKED_KINDS = KINDS + OTHER_MPI_KINDS

COLLECTIVE_OPS = ("BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER",
                  "SCATTERV", "ALLGATHER", "ALLGATHERV", "ALLTOALL",
                  "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE",
                  "REDUCE_SCATTER", "SCAN", "EXSCAN", "REDUCE_SCATTER_BLOCK",
                  "CREATE_HANDLE", "DESTROY_HANDLE", "ALLOCATE", "DEALLOCATE",
                  "CREATE_HANDLE_AND_ALLOCATE",
                  "DESTROY_HANDLE_AND_DEALLOCATE")
HANDLE_OPS = {"CREATE_HANDLE", "DESTROY_HANDLE"}
ROOTED = {"BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "REDUCE"}

# Region of each collective and its op.
BLOCKING = {"MPI_Barrier": "BARRIER", "MPI_Bcast": "BCAST",
            "MPI_Gather": "GATHER", "MPI_Gatherv": "GATHERV",
            "MPI_Scatter": "SCATTER", "MPI_Scatterv": "SCATTERV",
            "MPI_Allgather": "ALLGATHER", "MPI_Allgatherv": "ALLGATHERV",
            "MPI_Alltoall": "ALLTOALL", "MPI_Alltoallv": "ALLTOALLV",
            "MPI_Alltoallw": "ALLTOALLW", "MPI_Reduce": "REDUCE",
            "MPI_Allreduce": "ALLREDUCE",
            "MPI_Reduce_scatter": "REDUCE_SCATTER",
            "MPI_Reduce_scatter_block": "REDUCE_SCATTER_BLOCK",
            "MPI_Scan": "SCAN", "MPI_Exscan": "EXSCAN"}
NONBLOCKING = {"MPI_I" + k[4].lower() + k[5:]: v for k, v in BLOCKING.items()}
SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend"}
ISENDS = {"MPI_Isend", "MPI_Ibsend", "MPI_Issend", "MPI_Irsend"}
STARTS = {"MPI_Start", "MPI_Startall"}
WAITS = {"MPI_Wait", "MPI_Waitany", "MPI_Waitsome", "MPI_Waitall"}
TESTS = {"MPI_Test", "MPI_Testany", "MPI_Testsome", "MPI_Testall"}
CREATORS = {"MPI_Comm_dup", "MPI_Comm_split", "MPI_Comm_split_type",
            "MPI_Comm_create", "MPI_Comm_create_group", "MPI_Cart_create",
            "MPI_Intercomm_create", "MPI_Intercomm_merge", "MPI_Comm_idup"}
SENDRECV = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}
PSCW = {"MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait"}

# The regions an event may sit in (the innermost open one).
WHERE = {
    "MpiSend": SENDS | SENDRECV,
    "MpiRecv": {"MPI_Recv"} | SENDRECV,
    "MpiIsend": ISENDS | STARTS,
    "MpiIrecvRequest": {"MPI_Irecv"} | STARTS,
    "MpiIsendComplete": WAITS | TESTS, "MpiIrecv": WAITS | TESTS,
    "MpiRequestCancelled": WAITS | TESTS,
    "NonBlockingCollectiveComplete": WAITS | TESTS,
    "MpiRequestTest": TESTS,
    "MpiCollectiveBegin": set(BLOCKING) | CREATORS | {"MPI_Comm_free"},
    "MpiCollectiveEnd": set(BLOCKING) | CREATORS | {"MPI_Comm_free"},
    "NonBlockingCollectiveRequest": set(NONBLOCKING),
    "CommCreate": CREATORS, "CommDestroy": {"MPI_Comm_free"},
    "RmaWinCreate": {"MPI_Win_create", "MPI_Win_allocate"},
    "RmaWinDestroy": {"MPI_Win_free"},
    "RmaPut": {"MPI_Put"}, "RmaGet": {"MPI_Get"},
    "RmaAtomic": {"MPI_Accumulate"},
    "RmaOpCompleteBlocking": {"MPI_Win_fence", "MPI_Win_unlock",
                              "MPI_Win_complete"},
    "RmaCollectiveBegin": {"MPI_Win_fence"},
    "RmaCollectiveEnd": {"MPI_Win_fence"},
    "RmaAcquireLock": {"MPI_Win_lock"}, "RmaReleaseLock": {"MPI_Win_unlock"},
    "RmaGroupSync": PSCW,
}

# Functions whose region visits must equal the program's calls: those of
# the contract's table, and MPI_Comm_set_name (names are in the contract,
# so it is wrapped, and every wrapped call is a region).
CONTRACT_CALLS = (
    {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Recv", "MPI_Irecv",
     "MPI_Send_init", "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init",
     "MPI_Recv_init", "MPI_Cancel", "MPI_Comm_free", "MPI_Win_create",
     "MPI_Win_allocate", "MPI_Win_free", "MPI_Put", "MPI_Get",
     "MPI_Accumulate", "MPI_Win_fence", "MPI_Win_lock", "MPI_Win_unlock",
     "MPI_Comm_set_name"}
    | SENDS | ISENDS | STARTS | WAITS | TESTS | SENDRECV | CREATORS | PSCW
    | set(BLOCKING) | set(NONBLOCKING))


class Problems(list):
    def add(self, msg):
        self.append(msg)


# ---- expectations ------------------------------------------------------------

def load_expectations(path):
    exp = {}
    for f in sorted(glob.glob(os.path.join(path, "rank-*.json"))):
        with open(f) as fh:
            j = json.load(fh)
        exp[j["rank"]] = j
    if not exp:
        raise SystemExit("check_mpi: no rank-*.json in %s" % path)
    return exp


# ---- the checks --------------------------------------------------------------

class Checker:
    def __init__(self, arch, exp):
        self.a = arch
        self.exp = exp
        self.p = Problems()
        self.rank_of = {}  # location -> rank
        self.member_rank = None  # COMM_LOCATIONS index -> world rank

    def run(self):
        self.ranks()
        self.identify()
        self.definitions()
        seen = self.walk()
        self.compare_counts(seen)
        self.compare_log(seen)
        self.compare_records(seen)
        self.matching(seen)
        self.collective_consistency(seen)
        self.comm_events(seen)
        return self.p

    # -- who is who

    def ranks(self):
        a, p = self.a, self.p
        for loc, d in a.locations.items():
            self.rank_of[loc] = d["group"]
            name = a.location_groups.get(d["group"])
            if name is not None and name != "Process %d" % d["group"]:
                p.add("location group %d is named %r, not 'Process %d'"
                      % (d["group"], name, d["group"]))
        for loc, evs in a.events.items():
            if loc not in a.locations:
                p.add("events on location %d, which is not defined" % loc)
        ranks = set(self.rank_of.values())
        if ranks != set(self.exp):
            p.add("the archive has ranks %s, the program ran %s"
                  % (sorted(ranks), sorted(self.exp)))
        for loc, d in a.locations.items():
            if d["events"] != len(a.events.get(loc, [])):
                p.add("location %d: numberOfEvents %d, %d events read"
                      % (loc, d["events"], len(a.events.get(loc, []))))
        # COMM_GROUP members are indices into the MPI COMM_LOCATIONS group,
        # which must list rank i's location at i ("members are world ranks").
        mpi = _otf2.PARADIGM_MPI.value
        cl = [g for g in a.groups.values()
              if g["type"] == _otf2.GROUP_TYPE_COMM_LOCATIONS.value
              and g["paradigm"] == mpi]
        if len(cl) != 1:
            p.add("%d COMM_LOCATIONS groups of paradigm MPI, expected 1"
                  % len(cl))
            return
        self.member_rank = []
        for i, loc in enumerate(cl[0]["members"]):
            r = self.rank_of.get(loc)
            if r is None:
                p.add("COMM_LOCATIONS member %d is location %d, not defined"
                      % (i, loc))
            elif r != i:
                p.add("COMM_LOCATIONS member %d is a location of rank %d: "
                      "group members would not be world ranks" % (i, r))
            self.member_rank.append(r)

    def world_ranks(self, group_id, what):
        g = self.a.groups.get(group_id)
        if g is None:
            self.p.add("%s: group %d is not defined" % (what, group_id))
            return []
        if g["type"] == _otf2.GROUP_TYPE_COMM_SELF.value:
            return None  # every process, each on its own
        if g["type"] != _otf2.GROUP_TYPE_COMM_GROUP.value:
            self.p.add("%s: group %d (%r) has type %d, not COMM_GROUP"
                       % (what, group_id, g["name"], g["type"]))
        out = []
        for m in g["members"]:
            if self.member_rank is None:
                out.append(m)
            elif m >= len(self.member_rank):
                self.p.add("%s: group member %d is not an MPI location"
                           % (what, m))
            else:
                out.append(self.member_rank[m])
        return out

    def identify(self):
        """The program's name of each Comm its ranks created: the k-th
        CommCreate of a rank is the k-th communicator it lists as
        "created". Independent of the names in the archive, so that a
        communicator is found even when its name is wrong; a Comm two
        communicators map to (or one communicator split in two Comms)
        is reported here."""
        self.expected_name = {}
        where = {}
        ids = collections.defaultdict(set)
        for loc in sorted(self.a.events):
            rank = self.rank_of.get(loc)
            if rank not in self.exp:
                continue
            made = [f["communicator"] for k, _t, f in self.a.events[loc]
                    if k == "CommCreate"]
            for cid, name in zip(made, self.exp[rank].get("created", [])):
                ids[name].add(cid)
                old = self.expected_name.setdefault(cid, name)
                where.setdefault(cid, rank)
                if old != name:
                    self.p.add("comm %d is %r on rank %d and %r on rank %d: two "
                               "communicators are one Comm" % (
                                   cid, old, where[cid], name, rank))
        for name, cids in sorted(ids.items()):
            if len(cids) > 1:
                self.p.add("communicator %r is %d Comms in the archive: %s "
                           "(its members disagree)" % (name, len(cids),
                                                       sorted(cids)))

    def definitions(self):
        a, p = self.a, self.p
        self.members = {}   # comm -> world ranks (A + B for intercomms)
        self.sides = {}     # intercomm -> (A, B)
        self.self_comms = set()
        names = collections.defaultdict(list)
        for cid, c in a.comms.items():
            what = "comm %d (%r)" % (cid, c["name"])
            names[c["name"]].append(cid)
            if "group" in c:
                m = self.world_ranks(c["group"], what)
                if m is None:
                    self.self_comms.add(cid)
                    m = []
                self.members[cid] = m
            else:
                ga = self.world_ranks(c["groupA"], what) or []
                gb = self.world_ranks(c["groupB"], what) or []
                self.sides[cid] = (ga, gb)
                self.members[cid] = ga + gb
                if set(ga) & set(gb):
                    p.add("%s: its groups overlap: %s and %s" % (what, ga, gb))
            if len(set(self.members[cid])) != len(self.members[cid]):
                p.add("%s: a rank is twice in its group: %s"
                      % (what, self.members[cid]))
        wanted = {c["name"] for e in self.exp.values()
                  for c in e.get("comms", [])}
        for name, ids in names.items():
            if len(ids) > 1 and name in wanted:
                p.add("%d Comms are named %r: %s" % (len(ids), name, ids))
        for cid, name in sorted(self.expected_name.items()):
            got = a.comms.get(cid, {}).get("name")
            if got != name:
                p.add("comm %d is named %r, the program named it %r"
                      % (cid, got, name))
        self.by_name = {n: ids[0] for n, ids in names.items()}
        self.by_name.update({n: cid for cid, n in self.expected_name.items()})
        world = self.by_name.get("MPI_COMM_WORLD")
        if world is None:
            p.add("no Comm named MPI_COMM_WORLD")
        elif sorted(self.members[world]) != sorted(self.exp):
            p.add("MPI_COMM_WORLD has members %s" % self.members[world])
        s = self.by_name.get("MPI_COMM_SELF")
        if s is None or s not in self.self_comms:
            p.add("no Comm named MPI_COMM_SELF with a COMM_SELF group")
        for wid, w in a.wins.items():
            if w["comm"] not in a.comms:
                p.add("RmaWin %d (%r) refers to comm %d, not defined"
                      % (wid, w["name"], w["comm"]))
        for rid, reg in a.regions.items():
            if reg["name"] is None:
                p.add("region %d has no name" % rid)
            elif reg["name"].startswith("MPI_") and \
                    reg["paradigm"] != _otf2.PARADIGM_MPI.value:
                p.add("region %s has paradigm %d, not MPI"
                      % (reg["name"], reg["paradigm"]))
        # The expectation's communicators: by name, with their members.
        for rank, e in self.exp.items():
            for c in e.get("comms", []):
                cid = self.by_name.get(c["name"])
                if cid is None:
                    p.add("rank %d: no Comm named %r (have %s)"
                          % (rank, c["name"], sorted(n for n in names
                                                     if n is not None)))
                    continue
                if "members" in c:
                    if cid in self.sides:
                        p.add("comm %r is an InterComm, expected an "
                              "intra-communicator" % c["name"])
                    elif self.members[cid] != c["members"]:
                        p.add("comm %r: group lists world ranks %s, expected "
                              "%s" % (c["name"], self.members[cid],
                                      c["members"]))
                else:
                    got = sorted(self.sides.get(cid, ([], [])))
                    if cid not in self.sides:
                        p.add("comm %r is not an InterComm" % c["name"])
                    elif got != sorted(c["groups"]):
                        p.add("InterComm %r: groups %s, expected %s"
                              % (c["name"], got, sorted(c["groups"])))

    def comm_name(self, cid):
        """The program's name of comm CID if it created it, else the
        archive's."""
        if cid in self.expected_name:
            return self.expected_name[cid]
        c = self.a.comms.get(cid)
        return c["name"] if c else "<undefined comm %d>" % cid

    def peer(self, cid, peer, me, what):
        """World rank of PEER (a rank in CID) as seen by world rank ME."""
        if cid not in self.a.comms:
            self.p.add("%s: comm %d is not defined" % (what, cid))
            return None
        if cid in self.sides:
            ga, gb = self.sides[cid]
            remote = gb if me in ga else ga if me in gb else None
        elif cid in self.self_comms:
            remote = [me]
        else:
            remote = self.members[cid] if me in self.members[cid] else None
        if remote is None:
            self.p.add("%s: rank %d is not a member of comm %r"
                       % (what, me, self.comm_name(cid)))
            return None
        if peer >= len(remote):
            self.p.add("%s: peer %d is out of comm %r (%d ranks)"
                       % (what, peer, self.comm_name(cid), len(remote)))
            return None
        return remote[peer]

    # -- one pass over each location

    def walk(self):
        """Nesting, the region around each event, request and RMA pairing;
        collects what the other checks compare. Returns per rank a dict."""
        a, p = self.a, self.p
        seen = collections.defaultdict(lambda: {
            "kinds": collections.Counter(), "visits": collections.Counter(),
            "sends": [], "recvs": [], "colls": [], "nbcolls": [], "rma": [],
            "windows": [], "creates": [], "destroys": [],
            "handle_colls": 0, "calls": []})
        self.coll_seq = collections.defaultdict(lambda: collections.defaultdict(list))
        self.nbc_seq = collections.defaultdict(lambda: collections.defaultdict(list))
        self.isend_cancelled = set()  # (loc, index of the MpiIsend)
        for loc in sorted(a.events):
            rank = self.rank_of.get(loc)
            if rank is None:
                continue
            s = seen[rank]
            stack = []          # [region name, events in this visit]
            pending = {}        # requestID -> (kind, index, region)
            rma_pending = collections.Counter()   # (win, matchingId)
            locks = collections.Counter()         # (win, remote, lockId)
            wins_open = set()
            dead_comms = set()
            begun = []          # MpiCollectiveBegin not yet ended
            evs = a.events[loc]
            for i, (kind, _t, f) in enumerate(evs):
                where = "rank %d location %d event %d (%s)" % (rank, loc, i, kind)
                if kind == "Enter":
                    reg = a.regions.get(f["region"])
                    name = reg["name"] if reg else "<region %d>" % f["region"]
                    stack.append([name, []])
                    s["visits"][name] += 1
                    continue
                if kind == "Leave":
                    reg = a.regions.get(f["region"])
                    name = reg["name"] if reg else "<region %d>" % f["region"]
                    if not stack or stack[-1][0] != name:
                        p.add("%s: Leave %s, but %s is open" % (
                            where, name, stack[-1][0] if stack else "nothing"))
                        continue
                    kinds = stack.pop()[1]
                    self.visit(where, name, kinds)
                    s["calls"].append((name, kinds))
                    continue
                if kind not in CHECKED_KINDS:
                    continue
                s["kinds"][kind] += 1
                inner = stack[-1][0] if stack else None
                if stack:
                    stack[-1][1].append(kind)
                if kind == "ProgramBegin":
                    nxt = evs[i + 1] if i + 1 < len(evs) else None
                    if stack or not nxt or nxt[0] != "Enter" or \
                            self.region_name(nxt[2]["region"]) not in \
                            ("MPI_Init", "MPI_Init_thread"):
                        p.add("%s: ProgramBegin is not right before Enter "
                              "MPI_Init" % where)
                    continue
                if kind == "ProgramEnd":
                    prv = evs[i - 1] if i > 0 else None
                    if stack or not prv or prv[0] != "Leave" or \
                            self.region_name(prv[2]["region"]) != "MPI_Finalize":
                        p.add("%s: ProgramEnd is not right after Leave "
                              "MPI_Finalize" % where)
                    continue
                allowed = WHERE.get(kind)
                if allowed is not None and inner not in allowed:
                    p.add("%s: recorded in %s, expected inside one of %s"
                          % (where, inner or "no region", sorted(allowed)))
                cid = f.get("communicator")
                if cid is not None and cid in dead_comms:
                    p.add("%s: comm %r used after its CommDestroy"
                          % (where, self.comm_name(cid)))
                rid = f.get("requestID")

                if kind == "MpiSend" or kind == "MpiIsend":
                    to = self.peer(cid, f["receiver"], rank, where)
                    msg = [self.comm_name(cid), to, f["msgTag"], f["msgLength"]]
                    s["sends"].append(msg + [loc, i])
                elif kind == "MpiRecv" or kind == "MpiIrecv":
                    frm = self.peer(cid, f["sender"], rank, where)
                    msg = [self.comm_name(cid), frm, f["msgTag"], f["msgLength"]]
                    s["recvs"].append(msg + [loc, i])
                if kind in ("MpiIsend", "MpiIrecvRequest",
                            "NonBlockingCollectiveRequest"):
                    if rid in pending:
                        p.add("%s: requestID %d is already pending (since "
                              "event %d)" % (where, rid, pending[rid][1]))
                    pending[rid] = (kind, i, inner)
                elif kind in ("MpiIsendComplete", "MpiIrecv",
                              "NonBlockingCollectiveComplete",
                              "MpiRequestCancelled"):
                    want = {"MpiIsendComplete": ("MpiIsend",),
                            "MpiIrecv": ("MpiIrecvRequest",),
                            "NonBlockingCollectiveComplete":
                                ("NonBlockingCollectiveRequest",),
                            "MpiRequestCancelled":
                                ("MpiIsend", "MpiIrecvRequest")}[kind]
                    got = pending.pop(rid, None)
                    if got is None:
                        p.add("%s: requestID %d is not pending" % (where, rid))
                    elif got[0] not in want:
                        p.add("%s: requestID %d was started by %s (event %d)"
                              % (where, rid, got[0], got[1]))
                    elif kind == "MpiRequestCancelled" and got[0] == "MpiIsend":
                        self.isend_cancelled.add((loc, got[1]))
                    elif kind == "NonBlockingCollectiveComplete":
                        op = self.op(f["collectiveOp"])
                        if NONBLOCKING.get(got[2]) != op:
                            p.add("%s: %s completes the request of %s (event "
                                  "%d)" % (where, op, got[2], got[1]))
                elif kind == "MpiRequestTest":
                    if rid not in pending:
                        p.add("%s: requestID %d is not pending" % (where, rid))
                if kind == "MpiCollectiveBegin":
                    begun.append(i)
                elif kind == "MpiCollectiveEnd":
                    if not begun:
                        p.add("%s: no MpiCollectiveBegin before it" % where)
                    else:
                        begun.pop()
                    op = self.op(f["collectiveOp"])
                    root = None if f["root"] == UNDEF32 else f["root"]
                    if op in HANDLE_OPS:
                        s["handle_colls"] += 1
                    else:
                        if inner in BLOCKING and BLOCKING[inner] != op:
                            p.add("%s: op %s in %s" % (where, op, inner))
                        self.check_root(where, op, root, cid)
                        s["colls"].append([self.comm_name(cid), op, root])
                        self.coll_seq[cid][rank].append((op, root))
                elif kind == "NonBlockingCollectiveComplete":
                    op = self.op(f["collectiveOp"])
                    root = None if f["root"] == UNDEF32 else f["root"]
                    self.check_root(where, op, root, cid)
                    s["nbcolls"].append([self.comm_name(cid), op, root])
                    self.nbc_seq[cid][rank].append((op, root))
                elif kind == "CommCreate":
                    s["creates"].append((cid, loc, i))
                    if cid not in a.comms:
                        p.add("%s: comm %d is not defined" % (where, cid))
                elif kind == "CommDestroy":
                    s["destroys"].append((cid, loc, i))
                    dead_comms.add(cid)
                    if cid not in a.comms:
                        p.add("%s: comm %d is not defined" % (where, cid))
                if kind.startswith("Rma"):
                    self.rma_event(where, kind, f, rank, s, wins_open,
                                   rma_pending, locks)
            for name, _evs in stack:
                p.add("rank %d location %d: region %s is never left"
                      % (rank, loc, name))
            for rid, (kind, i, _r) in pending.items():
                p.add("rank %d location %d: requestID %d of %s (event %d) "
                      "never completes" % (rank, loc, rid, kind, i))
            for (win, mid), n in rma_pending.items():
                if n:
                    p.add("rank %d location %d: RMA operation %d on window %d "
                          "never completes" % (rank, loc, mid, win))
            for (win, remote, lid), n in locks.items():
                if n:
                    p.add("rank %d location %d: lock %d of rank %d on window "
                          "%d is never released" % (rank, loc, lid, remote, win))
            if begun:
                p.add("rank %d location %d: %d MpiCollectiveBegin without End"
                      % (rank, loc, len(begun)))
        return seen

    def region_name(self, rid):
        r = self.a.regions.get(rid)
        return r["name"] if r else None

    def op(self, v):
        return COLLECTIVE_OPS[v] if v < len(COLLECTIVE_OPS) else "op %d" % v

    def check_root(self, where, op, root, cid):
        if op in ROOTED:
            if root is None:
                self.p.add("%s: %s without a root" % (where, op))
            elif cid in self.members and cid not in self.sides and \
                    root >= len(self.members[cid]):
                self.p.add("%s: root %d is out of comm %r" % (
                    where, root, self.comm_name(cid)))
        elif root is not None and op not in HANDLE_OPS:
            self.p.add("%s: %s with root %d (expected OTF2_UNDEFINED_UINT32)"
                       % (where, op, root))

    def visit(self, where, name, kinds):
        """The events of one visit of region NAME, in order."""
        mpi = [k for k in kinds if k in CHECKED_KINDS]
        if name in BLOCKING:
            plain = [k for k in mpi if k in ("MpiCollectiveBegin",
                                             "MpiCollectiveEnd")]
            if plain != ["MpiCollectiveBegin", "MpiCollectiveEnd"]:
                self.p.add("%s: %s holds %s, expected MpiCollectiveBegin, "
                           "MpiCollectiveEnd" % (where, name, mpi))
        elif name == "MPI_Win_fence":
            if not mpi or mpi[0] != "RmaCollectiveBegin" or \
                    mpi[-1] != "RmaCollectiveEnd":
                self.p.add("%s: MPI_Win_fence holds %s, expected "
                           "RmaCollectiveBegin ... RmaCollectiveEnd"
                           % (where, mpi))
        elif name in SENDRECV:
            if "MpiRecv" in mpi and "MpiSend" in mpi and \
                    mpi.index("MpiRecv") < mpi.index("MpiSend"):
                self.p.add("%s: %s records MpiRecv before MpiSend"
                           % (where, name))

    def rma_event(self, where, kind, f, rank, s, wins_open, rma_pending, locks):
        a, p = self.a, self.p
        win = f.get("win")
        if win is None:
            return
        w = a.wins.get(win)
        if w is None:
            p.add("%s: window %d is not defined" % (where, win))
            return
        if kind == "RmaWinCreate":
            if win in wins_open:
                p.add("%s: window %d created twice" % (where, win))
            wins_open.add(win)
            s["windows"].append(self.comm_name(w["comm"]))
            if not w["flags"] & _otf2.RMA_WIN_FLAG_CREATE_DESTROY_EVENTS.value:
                p.add("%s: window %d lacks the flag CREATE_DESTROY_EVENTS"
                      % (where, win))
            return
        if win not in wins_open:
            p.add("%s: window %d is not open here" % (where, win))
        if kind == "RmaWinDestroy":
            wins_open.discard(win)
        elif kind in ("RmaPut", "RmaGet", "RmaAtomic"):
            to = self.peer(w["comm"], f["remote"], rank, where)
            nbytes = f["bytesSent"] if kind == "RmaAtomic" else f["bytes"]
            s["rma"].append([kind, self.comm_name(w["comm"]), to, nbytes])
            rma_pending[(win, f["matchingId"])] += 1
        elif kind in ("RmaOpCompleteBlocking", "RmaOpCompleteNonBlocking",
                      "RmaOpCompleteRemote"):
            if rma_pending[(win, f["matchingId"])] <= 0:
                p.add("%s: no pending operation %d on window %d"
                      % (where, f["matchingId"], win))
            else:
                rma_pending[(win, f["matchingId"])] -= 1
        elif kind == "RmaAcquireLock":
            locks[(win, f["remote"], f["lockId"])] += 1
        elif kind == "RmaReleaseLock":
            key = (win, f["remote"], f["lockId"])
            if locks[key] <= 0:
                p.add("%s: releases lock %d of rank %d on window %d, not held"
                      % (where, f["lockId"], f["remote"], win))
            else:
                locks[key] -= 1
        elif kind == "RmaGroupSync":
            if f["group"] not in a.groups:
                p.add("%s: group %d is not defined" % (where, f["group"]))

    # -- against the expectation

    def compare_counts(self, seen):
        p = self.p
        for rank, e in sorted(self.exp.items()):
            s = seen.get(rank)
            if s is None:
                p.add("rank %d: no events at all" % rank)
                continue
            want = e.get("events", {})
            for kind in sorted(set(CHECKED_KINDS) | set(want)):
                got = s["kinds"][kind]
                if kind in ("MpiCollectiveBegin", "MpiCollectiveEnd"):
                    got -= s["handle_colls"]
                if got != want.get(kind, 0):
                    p.add("rank %d: %d %s events, the program caused %d"
                          % (rank, got, kind, want.get(kind, 0)))
            calls = e.get("calls", {})
            for fn, n in sorted(calls.items()):
                got = s["visits"][fn]
                if got == n:
                    continue
                if fn in CONTRACT_CALLS:
                    p.add("rank %d: region %s visited %d times, the program "
                          "called it %d times" % (rank, fn, got, n))
                elif got != 0:
                    p.add("rank %d: region %s visited %d times, the program "
                          "called it %d times (not in the contract: 0 or all "
                          "of them)" % (rank, fn, got, n))
            for fn, got in sorted(s["visits"].items()):
                if fn.startswith(("MPI_", "mpi_", "PMPI_")) and fn not in calls:
                    p.add("rank %d: region %s visited %d times, the program "
                          "never called it" % (rank, fn, got))

    def compare_log(self, seen, most=8):
        """Where counts differ, which calls: the program's calls in order
        with the events each caused ("log") against the visits of the
        trace's regions, both without ProgramBegin/End and limited to the
        functions the trace has regions for (a missing one is reported by
        compare_counts)."""
        for rank, e in sorted(self.exp.items()):
            s = seen.get(rank)
            if s is None or "log" not in e:
                continue
            have = set(s["visits"])
            prog = [(fn, sorted(k for k in kinds if not k.startswith("Program")))
                    for fn, kinds in e["log"] if fn in have]
            trace = [(fn, sorted(k for k in kinds if k in CHECKED_KINDS and
                                 not k.startswith("Program")))
                     for fn, kinds in s["calls"]
                     if fn.startswith(("MPI_", "mpi_", "PMPI_"))]
            shown = 0
            for i, (want, got) in enumerate(zip(prog, trace)):
                before = ", ".join(fn for fn, _k in prog[max(0, i - 3):i])
                if want[0] != got[0]:
                    self.p.add("rank %d: call #%d (after %s): the program "
                               "called %s, the trace has %s; calls not "
                               "compared further" % (rank, i, before or "none",
                                                     want[0], got[0]))
                    break
                if want[1] != got[1]:
                    self.p.add("rank %d: call #%d %s (after %s): the program "
                               "expects %s, the trace has %s"
                               % (rank, i, want[0], before or "none",
                                  _counted(want[1]), _counted(got[1])))
                    shown += 1
                    if shown == most:
                        self.p.add("rank %d: ... calls not compared further"
                                   % rank)
                        break
            else:
                if len(prog) != len(trace):
                    self.p.add("rank %d: the program made %d calls the trace "
                               "has regions for, the trace has %d"
                               % (rank, len(prog), len(trace)))

    def compare_records(self, seen):
        for rank, e in sorted(self.exp.items()):
            s = seen.get(rank)
            if s is None:
                continue
            sends = [m[:4] for m in s["sends"]
                     if (m[4], m[5]) not in self.isend_cancelled]
            for what, got, want, ordered in (
                    ("sends", sends, e.get("sends", []), False),
                    ("receives", [m[:4] for m in s["recvs"]],
                     e.get("recvs", []), False),
                    ("blocking collectives", s["colls"],
                     e.get("collectives", []), True),
                    ("non-blocking collectives", s["nbcolls"],
                     e.get("nbcollectives", []), False),
                    ("RMA operations", s["rma"], e.get("rma", []), False),
                    ("windows", s["windows"], e.get("windows", []), False)):
                self.same(rank, what, got, want, ordered)

    def same(self, rank, what, got, want, ordered):
        got = [tuple(x) if isinstance(x, list) else x for x in got]
        want = [tuple(x) if isinstance(x, list) else x for x in want]
        if ordered:
            if got == want:
                return
            for i, (g, w) in enumerate(zip(got, want)):
                if g != w:
                    self.p.add("rank %d: %s #%d is %s, the program did %s"
                               % (rank, what, i, list(g), list(w)))
                    break
            if len(got) != len(want):
                self.p.add("rank %d: %d %s in the trace, the program did %d"
                           % (rank, len(got), what, len(want)))
            return
        extra = collections.Counter(got) - collections.Counter(want)
        missing = collections.Counter(want) - collections.Counter(got)
        for x, n in sorted(extra.items(), key=str):
            self.p.add("rank %d: %s: %s in the trace %d time(s) more than the "
                       "program did" % (rank, what, _show(x), n))
        for x, n in sorted(missing.items(), key=str):
            self.p.add("rank %d: %s: %s missing from the trace (%d time(s))"
                       % (rank, what, _show(x), n))

    # -- across ranks

    def matching(self, seen):
        sends, recvs = collections.Counter(), collections.Counter()
        for rank, s in seen.items():
            for m in s["sends"]:
                if (m[4], m[5]) in self.isend_cancelled:
                    continue
                sends[(m[0], rank, m[1], m[2], m[3])] += 1
            for m in s["recvs"]:
                recvs[(m[0], m[1], rank, m[2], m[3])] += 1
        for k, n in sorted((sends - recvs).items(), key=str):
            self.p.add("%d message(s) comm %r from rank %s to rank %s tag %d, "
                       "%d bytes: sent, never received" % ((n,) + k))
        for k, n in sorted((recvs - sends).items(), key=str):
            self.p.add("%d message(s) comm %r from rank %s to rank %s tag %d, "
                       "%d bytes: received, never sent" % ((n,) + k))

    def collective_consistency(self, seen):
        for table, what, ordered in ((self.coll_seq, "blocking collectives",
                                      True),
                                     (self.nbc_seq, "non-blocking collectives",
                                      False)):
            for cid, per_rank in sorted(table.items()):
                name = self.comm_name(cid)
                members = self.members.get(cid, [])
                if cid in self.self_comms:
                    continue
                for r in sorted(per_rank):
                    if r not in members:
                        self.p.add("rank %d records %s on comm %r, which it is "
                                   "not a member of (%s)" % (r, what, name,
                                                             members))
                ref = None
                for r in members:
                    got = per_rank.get(r, [])
                    key = got if ordered else sorted(got, key=str)
                    if ref is None:
                        ref = (r, key)
                    elif key != ref[1]:
                        self.p.add("comm %r: rank %d's %s %s differ from rank "
                                   "%d's %s" % (name, r, what, _brief(key),
                                                ref[0], _brief(ref[1])))

    def comm_events(self, seen):
        created = collections.defaultdict(list)
        destroyed = collections.defaultdict(list)
        for rank, s in seen.items():
            for cid, _loc, _i in s["creates"]:
                created[cid].append(rank)
            for cid, _loc, _i in s["destroys"]:
                destroyed[cid].append(rank)
        for cid, ranks in sorted(created.items()):
            name = self.comm_name(cid)
            c = self.a.comms.get(cid)
            if c is None:
                continue
            if name in ("MPI_COMM_WORLD", "MPI_COMM_SELF"):
                self.p.add("CommCreate of %s" % name)
            if sorted(ranks) != sorted(self.members.get(cid, [])):
                self.p.add("comm %r: CommCreate on ranks %s, its members are "
                           "%s" % (name, sorted(ranks),
                                   sorted(self.members.get(cid, []))))
            if not c["flags"] & _otf2.COMM_FLAG_CREATE_DESTROY_EVENTS.value:
                self.p.add("comm %r has CommCreate events but lacks the flag "
                           "CREATE_DESTROY_EVENTS" % name)
        for cid, ranks in sorted(destroyed.items()):
            name = self.comm_name(cid)
            if len(set(ranks)) != len(ranks):
                self.p.add("comm %r destroyed twice by a rank: %s"
                           % (name, sorted(ranks)))
            for r in ranks:
                if r not in created.get(cid, []):
                    self.p.add("rank %d destroys comm %r it did not create"
                               % (r, name))


def _show(x):
    return json.dumps(list(x)) if isinstance(x, tuple) else json.dumps(x)


def _counted(kinds):
    c = collections.Counter(kinds)
    return "[%s]" % ", ".join(k if n == 1 else "%s x%d" % (k, n)
                              for k, n in sorted(c.items())) if c else "nothing"


def _brief(seq):
    s = [list(x) for x in seq]
    return json.dumps(s) if len(s) <= 6 else "%s ... (%d)" % (
        json.dumps(s[:6]), len(s))


def check(arch, exp):
    return Checker(arch, exp).run()


def summary(arch):
    kinds = collections.Counter(e[0] for evs in arch.events.values()
                                for e in evs)
    return {"locations": len(arch.locations),
            "events": sum(kinds.values()),
            "comms": len(arch.comms), "windows": len(arch.wins),
            "mpi_events": {k: n for k, n in sorted(kinds.items())
                           if k in CHECKED_KINDS}}


def both_readers(anchor, arch, p):
    """The high-level reader reads as many events per location as _otf2."""
    try:
        counts = python_reader(anchor)
    except Exception as e:  # the reader's own error, whatever it is
        p.add("the otf2 module's reader rejects the archive: %s: %s"
              % (type(e).__name__, e))
        return
    for loc in set(counts) | set(arch.events):
        if counts.get(loc, 0) != len(arch.events.get(loc, [])):
            p.add("location %d: the otf2 reader reads %d events, _otf2 %d"
                  % (loc, counts.get(loc, 0), len(arch.events.get(loc, []))))


def report(problems, prefix="check_mpi: "):
    for msg in problems[:MAX_PROBLEMS]:
        print(prefix + msg, file=sys.stderr)
    if len(problems) > MAX_PROBLEMS:
        print("%s... and %d more problems" % (prefix, len(problems) - MAX_PROBLEMS),
              file=sys.stderr)


# ---- main ------------------------------------------------------------------

def main(argv):
    if argv[:1] in (["--self-test"], ["--write-sample"]):
        import check_mpi_selftest
        return check_mpi_selftest.main(argv)
    if len(argv) == 2 and argv[0] == "--readers-only":
        arch = Archive.read(argv[1])
        p = Problems()
        both_readers(argv[1], arch, p)
        for loc, d in arch.locations.items():
            if d["events"] != len(arch.events.get(loc, [])):
                p.add("location %d: numberOfEvents %d, %d events read"
                      % (loc, d["events"], len(arch.events.get(loc, []))))
        if p:
            report(p)
            return 1
        print(json.dumps(summary(arch)))
        return 0
    if len(argv) != 2 or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    arch = Archive.read(argv[0])
    p = check(arch, load_expectations(argv[1]))
    both_readers(argv[0], arch, p)
    if p:
        report(p)
        return 1
    print(json.dumps(summary(arch)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
