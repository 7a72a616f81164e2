#!/usr/bin/python3
"""Compares an OTF2 archive written by weftd, record by record and field by
field, with what `weft-demo --all-records --sent SENT.jsonl` sent.

usage: check_allrecords.py ARCHIVE/traces.otf2 SENT.jsonl [REPORT.json]

The archive is read with libotf2's Python binding at its lowest level
(_otf2, part of python3-otf2): raw callbacks, every field as libotf2 hands
it out. Ids differ between archive and processes (weftd unifies them), so
both sides are compared in id-free form: a reference becomes the content
of what it refers to, recursively (a string its text); locations are
global ids on both sides, location groups ranks, system tree nodes the
machine or a host. Everything needed to do that generically (fields,
their id spaces, selector maps, typed value widths) comes from the
schema line the demo writes first.

Checks: every sent definition is in the archive and every client
definition of the archive was sent; each location's events, in order,
equal the sent ones (kind, time, fields, attributes); each location has
its process's clock offsets; numberOfEvents; the report's counts; and
every definition and event kind of the table occurs in the archive (a
missing kind is named). Prints a JSON summary (with the table's own
counts of definition and event kinds, from the schema); exits 1 listing
the differences.
"""
import collections
import ctypes
import json
import sys

import _otf2

MAX_PROBLEMS = 40


class Problems(list):
    def add(self, msg):
        self.append(msg)


def load_sent(path):
    schema, records = None, []
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "schema" in j:
                schema = j["schema"]
            else:
                records.append(j)
    if schema is None:
        raise SystemExit("check_allrecords: %s has no schema line" % path)
    return schema, records


def to_int(x):
    if isinstance(x, int):
        return x
    if isinstance(x, float):
        return x
    if hasattr(x, "value"):
        v = x.value
        if isinstance(v, bytes):
            return int.from_bytes(v, "little")
        return v
    return int(x)


def union_bits(v):
    """The 64 bits of an AttributeValue or MetricValue union."""
    return int.from_bytes(ctypes.string_at(ctypes.addressof(v), 8), "little")


class Schema:
    def __init__(self, j):
        self.refkinds = j["refkinds"]
        self.maps = {m: {int(k): v for k, v in d.items()}
                     for m, d in j["maps"].items()}
        self.width = {int(k): v for k, v in j["typed_width"].items()}
        self.records = j["records"]

    def fields(self, name):
        # weft's own fields (WX in the record table: the identity of a
        # Comm) are sent but never in the archive; they come last.
        return [f for f in self.records[name]["fields"] if not f["weft"]]

    def canon_bits(self, type_id, bits):
        w = self.width.get(type_id, 8)
        return bits if w >= 8 else bits & ((1 << (8 * w)) - 1)

    def kind_of(self, rec_fields, f, values, k):
        """Id space of value k of field f, None for plain values."""
        if f["map"]:
            sel = values[rec_fields[f["sel"]]["name"]]
            if isinstance(sel, list):
                sel = sel[k]
            return self.maps[f["map"]].get(sel)
        return f["ref"]


def normalize(schema, name, args):
    """Raw callback arguments -> {field: value} with arrays as lists, typed
    values as their canonical bits, doubles as their bits."""
    fields = schema.fields(name)
    values = {}
    omitted_counts = len(args) < len(fields)
    counts = {f["count"] for f in fields if f["array"]}
    ai = 0
    for i, f in enumerate(fields):
        if omitted_counts and i in counts:
            values[f["name"]] = None  # filled from the array below
            continue
        a = args[ai]
        ai += 1
        if f["array"]:
            if isinstance(a, list):
                n = len(a)
                cname = fields[f["count"]]["name"]
                if values.get(cname) is None:
                    values[cname] = n
                elems = a
            else:
                n = values[fields[f["count"]]["name"]]
                elems = [a[k] for k in range(n)]
            out = []
            for k, e in enumerate(elems):
                if f["wire"] == "T":
                    tsel = values[fields[f["sel"]]["name"]][k]
                    out.append(schema.canon_bits(tsel, union_bits(e)))
                else:
                    out.append(to_int(e))
            values[f["name"]] = out
        elif f["wire"] == "Z":
            values[f["name"]] = a.decode("utf-8") if isinstance(a, bytes) else a
        elif f["wire"] == "T":
            tsel = values[fields[f["sel"]]["name"]]
            bits = union_bits(a) if not isinstance(a, int) else a
            values[f["name"]] = schema.canon_bits(tsel, bits)
        elif f["wire"] == "D":
            values[f["name"]] = int.from_bytes(bytes(ctypes.c_double(a)),
                                               "little")
        else:
            values[f["name"]] = to_int(a)
    return values


class Archive:
    """Everything in the archive, read with raw callbacks."""

    def __init__(self, anchor, schema):
        self.schema = schema
        self.defs = collections.defaultdict(list)      # name -> [values]
        self.events = collections.defaultdict(list)    # loc -> [(name,t,v,a)]
        self.clock_offsets = collections.defaultdict(list)
        self.read(anchor)

    def read(self, anchor):
        s = self.schema
        r = _otf2.Reader_Open(anchor)
        _otf2.Reader_SetSerialCollectiveCallbacks(r)
        g = _otf2.Reader_GetGlobalDefReader(r)
        cbs = _otf2.GlobalDefReaderCallbacks_New()
        keep = []
        for name, rec in s.records.items():
            if rec["class"] != "definition" or rec["flags"] & 6:  # LOCAL, weft's own
                continue

            def cb(_ud, *args, name=name):
                self.defs[name].append(normalize(s, name, list(args)))
                return _otf2.CALLBACK_SUCCESS
            keep.append(cb)
            getattr(_otf2, "GlobalDefReaderCallbacks_Set%sCallback" % name)(
                cbs, cb)
        _otf2.Reader_RegisterGlobalDefCallbacks(r, g, cbs, None)
        _otf2.Reader_ReadAllGlobalDefinitions(r, g)
        _otf2.Reader_CloseGlobalDefReader(r, g)
        locations = [d["self"] for d in self.defs["Location"]]

        for loc in locations:
            _otf2.Reader_SelectLocation(r, loc)
        _otf2.Reader_OpenDefFiles(r)
        _otf2.Reader_OpenEvtFiles(r)
        for loc in locations:
            dr = _otf2.Reader_GetDefReader(r, loc)
            dcbs = _otf2.DefReaderCallbacks_New()

            def off(_ud, *args, loc=loc):
                self.clock_offsets[loc].append(
                    normalize(s, "ClockOffset", list(args)))
                return _otf2.CALLBACK_SUCCESS
            keep.append(off)
            _otf2.DefReaderCallbacks_SetClockOffsetCallback(dcbs, off)
            _otf2.Reader_RegisterDefCallbacks(r, dr, dcbs, None)
            _otf2.Reader_ReadAllLocalDefinitions(r, dr)
            _otf2.Reader_CloseDefReader(r, dr)
            _otf2.Reader_GetEvtReader(r, loc)
        _otf2.Reader_CloseDefFiles(r)

        ge = _otf2.Reader_GetGlobalEvtReader(r)
        ecbs = _otf2.GlobalEvtReaderCallbacks_New()
        for name, rec in s.records.items():
            if rec["class"] != "event":
                continue

            def ecb(loc, time, _ud, al, *args, name=name):
                self.events[to_int(loc)].append(
                    (name, to_int(time), normalize(s, name, list(args)),
                     self.attributes(al)))
                return _otf2.CALLBACK_SUCCESS
            keep.append(ecb)
            getattr(_otf2, "GlobalEvtReaderCallbacks_Set%sCallback" % name)(
                ecbs, ecb)
        _otf2.Reader_RegisterGlobalEvtCallbacks(r, ge, ecbs, None)
        _otf2.Reader_ReadAllGlobalEvents(r, ge)
        _otf2.Reader_CloseGlobalEvtReader(r, ge)
        _otf2.Reader_CloseEvtFiles(r)
        _otf2.Reader_Close(r)

    def attributes(self, al):
        if not al:
            return None
        n = _otf2.AttributeList_GetNumberOfElements(al)
        if n == 0:
            return None
        ids, types, values = [], [], []
        for i in range(n):
            ref, typ, val = _otf2.AttributeList_GetAttributeByIndex(al, i)
            typ = to_int(typ)
            ids.append(to_int(ref))
            types.append(typ)
            values.append(self.schema.canon_bits(typ, union_bits(val)))
        return {"numberOfAttributes": n, "attributes": ids, "types": types,
                "values": values}


class Resolver:
    """Id-free form of records: references replaced by what they name."""

    def __init__(self, schema, derived):
        self.schema = schema
        self.derived = derived  # (kind, value) -> canonical
        self.spaces = collections.defaultdict(dict)  # kind -> id -> (n, v)
        self.memo = {}

    def define(self, name, values):
        for f in self.schema.fields(name):
            if f["self"]:
                self.spaces[f["ref"]][values[f["name"]]] = (name, values)

    def ref(self, kind, v, stack=()):
        info = self.schema.refkinds[kind]
        if v == info["undefined"]:
            return ("undefined", kind)
        if info["scope"] == "DERIVED":
            return self.derived(kind, v)
        key = (kind, v)
        if key in self.memo:
            return self.memo[key]
        if key in stack:
            return ("cycle", kind, v)
        d = self.spaces[kind].get(v)
        if d is None:
            return ("dangling", kind, v)
        c = self.record(d[0], d[1], stack + (key,))
        self.memo[key] = c
        return c

    def value(self, fields, f, values, k, v, stack):
        kind = self.schema.kind_of(fields, f, values, k)
        if kind is None:
            return v
        return self.ref(kind, v, stack)

    def record(self, name, values, stack=()):
        fields = self.schema.fields(name)
        out = [name]
        for f in fields:
            if f["self"]:
                continue
            v = values[f["name"]]
            if f["array"]:
                out.append(tuple(self.value(fields, f, values, k, e, stack)
                                 for k, e in enumerate(v)))
            else:
                out.append(self.value(fields, f, values, 0, v, stack))
        return tuple(out)

    def attributes(self, a):
        if not a:
            return None
        return self.record("AttributeList", a)


def diff_fields(schema, name, want, got):
    out = []
    fields = [f for f in schema.fields(name) if not f["self"]]
    for f, w, g in zip(fields, want[1:], got[1:]):
        if w != g:
            out.append("%s: sent %r, archive %r" % (f["name"], w, g))
    return "; ".join(out)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema, sent = load_sent(sys.argv[2])
    schema = Schema(schema)
    report = None
    if len(sys.argv) > 3:
        with open(sys.argv[3]) as f:
            report = json.load(f)
    arch = Archive(sys.argv[1], schema)
    problems = Problems()

    # What weftd derives: location groups are ranks, nodes the machine or
    # a host, locations their global ids.
    strings = {d["self"]: d["string"] for d in arch.defs["String"]}
    groups = {}
    group_node = {}
    for d in arch.defs["LocationGroup"]:
        name = strings.get(d["name"], "")
        if not name.startswith("Process "):
            problems.add("location group %d is named %r" % (d["self"], name))
            continue
        groups[d["self"]] = int(name.split()[1])
        group_node[int(name.split()[1])] = d["systemTreeParent"]
    nodes = {}
    for d in arch.defs["SystemTreeNode"]:
        parent = d["parent"]
        nodes[d["self"]] = ("machine",) if parent == 0xFFFFFFFF else \
            ("host", strings.get(d["name"]))

    def derived_archive(kind, v):
        if kind == "LOCATION":
            return ("location", v)
        if kind == "LOCATION_GROUP":
            return ("rank", groups.get(v, ("no group", v)))
        return nodes.get(v, ("no node", v))

    def derived_sent(rank):
        def f(kind, v):
            if kind == "LOCATION":
                return ("location", v)
            if kind == "LOCATION_GROUP":
                return ("rank", v)
            if v == 0:
                return ("machine",)
            if v == 1:
                return nodes.get(group_node.get(rank), ("no host of", rank))
            return ("bad node", v)
        return f

    # The archive's definitions, id-free.
    ares = Resolver(schema, derived_archive)
    for name, lst in arch.defs.items():
        for d in lst:
            ares.define(name, d)
    client = {n for n, r in schema.records.items()
              if r["class"] == "definition" and r["flags"] == 0}
    archive_defs = collections.defaultdict(set)
    for name, lst in arch.defs.items():
        for d in lst:
            archive_defs[name].add(ares.record(name, d))

    # The sent definitions, per process, id-free.
    by_rank = collections.defaultdict(list)
    sent_events = collections.defaultdict(list)
    for j in sent:
        if j["thread"] < 0:
            by_rank[j["rank"]].append(j)
        else:
            loc = j["rank"] << 32 | j["thread"]
            sent_events[loc].append(j)
    resolvers = {}
    sent_defs = collections.defaultdict(set)
    sent_offsets = collections.defaultdict(list)
    for rank, lst in by_rank.items():
        res = Resolver(schema, derived_sent(rank))
        resolvers[rank] = res
        for j in lst:
            res.define(j["kind"], j["fields"])
        for j in lst:
            if j["kind"] == "ClockOffset":
                sent_offsets[rank].append(res.record("ClockOffset", j["fields"]))
                continue
            c = res.record(j["kind"], j["fields"])
            sent_defs[j["kind"]].add(c)
            if c not in archive_defs[j["kind"]]:
                near = [diff_fields(schema, j["kind"], c, a)
                        for a in archive_defs[j["kind"]]]
                near.sort(key=lambda s: s.count(";"))
                problems.add("rank %d: %s %s is not in the archive%s" % (
                    rank, j["kind"], json.dumps(j["fields"])[:200],
                    "; closest: " + near[0][:300] if near else ""))
    for name in client:
        for a in archive_defs[name] - sent_defs[name]:
            if name == "String":
                continue  # weftd names hosts, processes and threads
            problems.add("archive has a %s nobody sent: %r" % (name, a[:6]))

    # Clock offsets: every location of a process has the process's.
    for d in arch.defs["Location"]:
        loc, rank = d["self"], d["self"] >> 32
        got = [ares.record("ClockOffset", x) for x in arch.clock_offsets[loc]]
        if got != sent_offsets[rank]:
            problems.add("location %d.%d: clock offsets %r, sent %r" % (
                rank, loc & 0xFFFFFFFF, got, sent_offsets[rank]))

    # Events, location by location, in order.
    nevents = 0
    for d in arch.defs["Location"]:
        loc = d["self"]
        got = arch.events.get(loc, [])
        want = sent_events.get(loc, [])
        nevents += len(got)
        if d["numberOfEvents"] != len(got):
            problems.add("location %d.%d: numberOfEvents %d, %d read" % (
                loc >> 32, loc & 0xFFFFFFFF, d["numberOfEvents"], len(got)))
        if len(got) != len(want):
            problems.add("location %d.%d: %d events in the archive, %d sent"
                         % (loc >> 32, loc & 0xFFFFFFFF, len(got), len(want)))
        res = resolvers.get(loc >> 32)
        for i, (g, w) in enumerate(zip(got, want)):
            where = "location %d.%d event %d (%s)" % (
                loc >> 32, loc & 0xFFFFFFFF, i, w["kind"])
            if g[0] != w["kind"]:
                problems.add("%s: archive has %s" % (where, g[0]))
                continue
            if g[1] != w["time"]:
                problems.add("%s: time %d, sent %d" % (where, g[1], w["time"]))
            cg = ares.record(g[0], g[2])
            cw = res.record(w["kind"], w["fields"])
            if cg != cw:
                problems.add("%s: %s" % (where, diff_fields(schema, g[0], cw,
                                                            cg)))
            ag, aw = ares.attributes(g[3]), res.attributes(w["attributes"])
            if ag != aw:
                problems.add("%s: attributes differ: sent %r, archive %r" % (
                    where, aw, ag))
    for loc in sent_events:
        if loc not in {d["self"] for d in arch.defs["Location"]}:
            problems.add("location %d.%d has sent events but is not in the "
                         "archive" % (loc >> 32, loc & 0xFFFFFFFF))

    # The report's counts.
    if report is not None:
        for key, kinds in report.items():
            rank, _, thread = key.partition(".")
            if thread == "definitions":
                continue
            loc = int(rank) << 32 | int(thread)
            got = collections.Counter(e[0] for e in arch.events.get(loc, []))
            for kind, n in kinds.items():
                if got[kind] != n:
                    problems.add("location %s: %d %s in the archive, report "
                                 "says %d" % (key, got[kind], kind, n))

    # Every kind of the table.
    found = {n for n, lst in arch.defs.items() if lst}
    found |= {e[0] for lst in arch.events.values() for e in lst}
    if any(arch.clock_offsets.values()):
        found.add("ClockOffset")
    # (weft's own records, flag 4, are never in an archive: CommName
    # renames a Comm; tests/e2e_mpi_ring.sh checks that.)
    kinds = [n for n, r in schema.records.items()
             if r["class"] != "pseudo" and not r["flags"] & 4]
    missing = [n for n in kinds if n not in found]
    if missing:
        problems.add("kinds missing from the archive (%d of %d): %s" % (
            len(missing), len(kinds), ", ".join(missing)))

    if problems:
        for p in problems[:MAX_PROBLEMS]:
            print("check_allrecords: " + p, file=sys.stderr)
        if len(problems) > MAX_PROBLEMS:
            print("check_allrecords: ... and %d more" %
                  (len(problems) - MAX_PROBLEMS), file=sys.stderr)
        return 1
    def count(names, cls):
        return len([k for k in names if schema.records[k]["class"] == cls])
    print(json.dumps({
        "kinds": len(found),
        "definition_kinds": count(found, "definition"),
        "event_kinds": count(found, "event"),
        "table_definition_kinds": count(kinds, "definition"),
        "table_event_kinds": count(kinds, "event"),
        "definitions": sum(len(v) for v in arch.defs.values()),
        "events": nevents,
        "locations": len(arch.defs["Location"])}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
