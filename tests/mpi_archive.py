"""How tests/check_mpi.py reads an OTF2 archive: with libotf2's Python
binding at its lowest level (_otf2), into an Archive (definitions by id,
each location's events in order with the fields the checks use, FIELDS);
and with the otf2 module's high-level reader (python_reader), whose
InterComm field list Debian's python3-otf2 gets wrong (fix_intercomm).
"""
import collections
import re

import _otf2

# Fields kept per event kind, in the order the binding hands them out.
LOCK = ("win", "remote", "lockId", "lockType")
RMA_OP = ("win", "remote", "bytes", "matchingId")
FIELDS = {
    "Enter": ("region",), "Leave": ("region",),
    "MpiSend": ("receiver", "communicator", "msgTag", "msgLength"),
    "MpiIsend": ("receiver", "communicator", "msgTag", "msgLength",
                 "requestID"),
    "MpiIsendComplete": ("requestID",), "MpiIrecvRequest": ("requestID",),
    "MpiRecv": ("sender", "communicator", "msgTag", "msgLength"),
    "MpiIrecv": ("sender", "communicator", "msgTag", "msgLength",
                 "requestID"),
    "MpiRequestTest": ("requestID",), "MpiRequestCancelled": ("requestID",),
    "MpiCollectiveBegin": (),
    "MpiCollectiveEnd": ("collectiveOp", "communicator", "root", "sizeSent",
                         "sizeReceived"),
    "NonBlockingCollectiveRequest": ("requestID",),
    "NonBlockingCollectiveComplete": ("collectiveOp", "communicator", "root",
                                      "sizeSent", "sizeReceived",
                                      "requestID"),
    "CommCreate": ("communicator",), "CommDestroy": ("communicator",),
    "RmaWinCreate": ("win",), "RmaWinDestroy": ("win",),
    "RmaCollectiveBegin": (),
    "RmaCollectiveEnd": ("collectiveOp", "syncLevel", "win", "root",
                         "bytesSent", "bytesReceived"),
    "RmaGroupSync": ("syncLevel", "win", "group"),
    "RmaRequestLock": LOCK, "RmaAcquireLock": LOCK, "RmaTryLock": LOCK,
    "RmaReleaseLock": ("win", "remote", "lockId"),
    "RmaSync": ("win", "remote", "syncType"), "RmaWaitChange": ("win",),
    "RmaPut": RMA_OP, "RmaGet": RMA_OP,
    "RmaAtomic": ("win", "remote", "type", "bytesSent", "bytesReceived",
                  "matchingId"),
    "RmaOpCompleteBlocking": ("win", "matchingId"),
    "RmaOpCompleteNonBlocking": ("win", "matchingId"),
    "RmaOpTest": ("win", "matchingId"),
    "RmaOpCompleteRemote": ("win", "matchingId"),
    "ProgramBegin": (), "ProgramEnd": (),
}


def to_int(x):
    if isinstance(x, int):
        return x
    if hasattr(x, "value"):
        v = x.value
        return v if isinstance(v, int) else int(v)
    return int(x)


class Archive:
    """What the checks need from an archive: definitions by id, and per
    location its events in order as [kind, time, {field: int}]."""

    def __init__(self):
        self.strings = {}
        self.regions = {}      # id -> {name, paradigm, role}
        self.groups = {}       # id -> {name, type, paradigm, members}
        self.comms = {}        # id -> {name, group | groupA/groupB, flags}
        self.wins = {}         # id -> {name, comm, flags}
        self.location_groups = {}  # id -> name
        self.locations = {}    # id -> {group, events}
        self.events = collections.defaultdict(list)

    @classmethod
    def read(cls, anchor):
        a = cls()
        keep = []
        r = _otf2.Reader_Open(anchor)
        _otf2.Reader_SetSerialCollectiveCallbacks(r)
        g = _otf2.Reader_GetGlobalDefReader(r)
        cbs = _otf2.GlobalDefReaderCallbacks_New()

        def defcb(name, fn):
            def cb(_ud, *args):
                fn(*args)
                return _otf2.CALLBACK_SUCCESS
            keep.append(cb)
            getattr(_otf2, "GlobalDefReaderCallbacks_Set%sCallback" % name)(
                cbs, cb)

        def string(ref, s):
            a.strings[to_int(ref)] = s.decode() if isinstance(s, bytes) else s

        def region(ref, name, _canon, _desc, role, paradigm, *_rest):
            a.regions[to_int(ref)] = {"name": to_int(name),
                                      "role": to_int(role),
                                      "paradigm": to_int(paradigm)}

        def group(ref, name, gtype, paradigm, _flags, members):
            a.groups[to_int(ref)] = {"name": to_int(name),
                                     "type": to_int(gtype),
                                     "paradigm": to_int(paradigm),
                                     "members": [to_int(m) for m in members]}

        def comm(ref, name, grp, parent, flags):
            a.comms[to_int(ref)] = {"name": to_int(name), "group": to_int(grp),
                                    "parent": to_int(parent),
                                    "flags": to_int(flags)}

        def intercomm(ref, name, ga, gb, common, flags):
            a.comms[to_int(ref)] = {"name": to_int(name), "groupA": to_int(ga),
                                    "groupB": to_int(gb),
                                    "parent": to_int(common),
                                    "flags": to_int(flags)}

        def rmawin(ref, name, cm, flags):
            a.wins[to_int(ref)] = {"name": to_int(name), "comm": to_int(cm),
                                   "flags": to_int(flags)}

        def locgroup(ref, name, *_rest):
            a.location_groups[to_int(ref)] = to_int(name)

        def location(ref, name, _ltype, nevents, grp):
            a.locations[to_int(ref)] = {"group": to_int(grp),
                                        "events": to_int(nevents)}

        defcb("String", string)
        defcb("Region", region)
        defcb("Group", group)
        defcb("Comm", comm)
        defcb("InterComm", intercomm)
        defcb("RmaWin", rmawin)
        defcb("LocationGroup", locgroup)
        defcb("Location", location)
        _otf2.Reader_RegisterGlobalDefCallbacks(r, g, cbs, None)
        _otf2.Reader_ReadAllGlobalDefinitions(r, g)
        _otf2.Reader_CloseGlobalDefReader(r, g)
        for d in list(a.regions.values()) + list(a.groups.values()) + \
                list(a.comms.values()) + list(a.wins.values()):
            d["name"] = a.strings.get(d["name"], None)
        for k, v in a.location_groups.items():
            a.location_groups[k] = a.strings.get(v, None)

        for loc in a.locations:
            _otf2.Reader_SelectLocation(r, loc)
        _otf2.Reader_OpenDefFiles(r)
        _otf2.Reader_OpenEvtFiles(r)
        for loc in a.locations:
            dr = _otf2.Reader_GetDefReader(r, loc)
            if dr:
                dcbs = _otf2.DefReaderCallbacks_New()
                _otf2.Reader_RegisterDefCallbacks(r, dr, dcbs, None)
                _otf2.Reader_ReadAllLocalDefinitions(r, dr)
                _otf2.Reader_CloseDefReader(r, dr)
            _otf2.Reader_GetEvtReader(r, loc)
        _otf2.Reader_CloseDefFiles(r)

        ge = _otf2.Reader_GetGlobalEvtReader(r)
        ecbs = _otf2.GlobalEvtReaderCallbacks_New()
        for setter in dir(_otf2):
            m = re.match(r"GlobalEvtReaderCallbacks_Set(\w+)Callback$", setter)
            if not m or m.group(1) == "Unknown":
                continue
            kind = m.group(1)
            names = FIELDS.get(kind, ())

            def ecb(loc, time, _ud, _al, *args, kind=kind, names=names):
                a.events[to_int(loc)].append(
                    [kind, to_int(time),
                     {n: to_int(v) for n, v in zip(names, args)}])
                return _otf2.CALLBACK_SUCCESS
            keep.append(ecb)
            getattr(_otf2, setter)(ecbs, ecb)
        _otf2.Reader_RegisterGlobalEvtCallbacks(r, ge, ecbs, None)
        _otf2.Reader_ReadAllGlobalEvents(r, ge)
        _otf2.Reader_CloseGlobalEvtReader(r, ge)
        _otf2.Reader_CloseEvtFiles(r)
        _otf2.Reader_Close(r)
        return a


def fix_intercomm(otf2):
    """Debian's python3-otf2 3.0.2 declares InterComm's fields after Comm's
    inherited ones (name, group, parent, flags, groupA, ...), so its reader
    takes an InterComm's groupB for a Comm and fails with KeyError (and its
    writer cannot write one): put them in the order of the record (name,
    groupA, groupB, commonCommunicator, flags) where they are not."""
    fields = otf2.definitions.InterComm._fields
    names = [f.name for f in fields]
    if names[:4] == ["name", "group", "parent", "flags"] and len(names) == 8:
        otf2.definitions.InterComm._fields = (fields[0], fields[4], fields[5],
                                              fields[2], fields[7])


def python_reader(anchor):
    """Reads the whole archive with the otf2 module's high-level reader
    (InterComm fixed, see fix_intercomm); returns {location id: number of
    events}."""
    import otf2
    fix_intercomm(otf2)
    counts = collections.Counter()
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        for registry in (defs.strings, defs.regions, defs.groups, defs.comms,
                         defs.rma_wins, defs.locations, defs.location_groups):
            for _ in registry:
                pass
        for loc, _event in trace.events:
            counts[loc._ref] += 1
    return counts
