/* seeds_journal.c - mkseeds' seeds of fuzz_journal: member journals,
 * well formed, with gaps, and two that differ where conversion must
 * notice.
 */
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "codec.h"
#include "frame.h"
#include "journal.h"
#include "seeds.h"
#include "weft_errors.h"

/* ---- member journals ----------------------------------------------------- */

/* One journal entry (journal.h): its header, crc32 and payload. */
static void put_entry(buf *b, uint8_t kind, uint32_t location, uint32_t count,
                      uint64_t seq, uint64_t base_time, const void *payload,
                      size_t len)
{
    size_t at = b->len;
    uLong crc;

    put_u32le(b, (uint32_t)len);
    put_byte(b, kind);
    put_byte(b, 0);
    put_byte(b, 0);
    put_byte(b, 0);
    put_u32le(b, location);
    put_u32le(b, count);
    put_u64le(b, seq);
    put_u64le(b, base_time);
    crc = crc32(crc32(0L, Z_NULL, 0), b->b + at, (uInt)(b->len - at));
    crc = crc32(crc, payload, (uInt)len);
    put_u32le(b, (uint32_t)crc);
    put(b, payload, len);
}

/* The journal of rank of a trace of size members as weftd writes it: the
 * magic, the Hello, Definitions, a batch of each of two threads and, if
 * goodbye, the Goodbye. Returns where the Definitions entry starts in b. */
static size_t member_journal(buf *b, uint32_t rank, uint32_t size,
                             int goodbye)
{
    Weft__Hello hello = WEFT__HELLO__INIT;
    Weft__Goodbye bye = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[2], *pe[2];
    buf p = { .len = 0 };
    unsigned n[2];
    size_t defs;

    put(b, WEFT_JOURNAL_MAGIC, strlen(WEFT_JOURNAL_MAGIC));
    hello.protocol_version = WEFT_PROTOCOL_VERSION;
    hello.trace = "job-42";
    hello.rank = rank;
    hello.size = size;
    hello.hostname = "node1";
    hello.pid = 4242 + rank;
    hello.uid = 1000;
    hello.command = "./app -n 4";
    hello.job_id = "42";
    hello.timer_resolution = 1000000000;
    hello.realtime_ns = 1700000000000000000ull;
    hello.clock_at_realtime = 1000;
    hello.run = "run-42";
    p.len = weft__hello__pack(&hello, p.b);
    put_entry(b, WEFT_JE_HELLO, 0, 0, 0, 0, p.b, p.len);
    p.len = 0;
    definitions(&p);
    defs = b->len;
    put_entry(b, WEFT_JE_DEFS, 0, 0, 1, 0, p.b, p.len);
    for (uint32_t loc = 0; loc < 2; loc++) {
        p.len = 0;
        n[loc] = events(&p, 1000000 + 500 * loc);
        put_entry(b, WEFT_JE_EVENTS, loc, n[loc], 1, 1000000 + 500 * loc,
                  p.b, p.len);
    }
    if (!goodbye)
        return defs;
    for (uint32_t loc = 0; loc < 2; loc++) {
        weft__location_end__init(&ends[loc]);
        ends[loc].location = loc;
        ends[loc].events = n[loc];
        pe[loc] = &ends[loc];
    }
    bye.n_locations = 2;
    bye.locations = pe;
    p.len = weft__goodbye__pack(&bye, p.b);
    put_entry(b, WEFT_JE_GOODBYE, 0, 0, 0, 0, p.b, p.len);
    return defs;
}

/* ---- members that differ (fuzz_journal) --------------------------------- */

/* Strings 6..10 of rank's second definitions, defined in another order by
 * rank 1, so that the members' ids of the same text differ. */
#define XS(rank, i) ((uint32_t)(6 + ((rank) ? 4 - (i) : (i))))

static void string_def(buf *b, uint32_t id, const char *s)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_String;
    r.u.String.self = id;
    r.u.String.string = s;
    put_record(b, &r, NULL);
}

/* A *Property record (LocationGroupProperty, SystemTreeNodeProperty,
 * LocationProperty) of a uint64 value. */
static void property_def(buf *b, uint32_t type, uint64_t ref, uint32_t name,
                         uint64_t value)
{
    weft_record r;

    memset(&r, 0, sizeof r);
    r.type = type;
    switch (type) {
    case WEFT_REC_LocationGroupProperty:
        r.u.LocationGroupProperty.locationGroup = (uint32_t)ref;
        r.u.LocationGroupProperty.name = name;
        r.u.LocationGroupProperty.type = OTF2_TYPE_UINT64;
        r.u.LocationGroupProperty.value.uint64 = value;
        break;
    case WEFT_REC_SystemTreeNodeProperty:
        r.u.SystemTreeNodeProperty.systemTreeNode = (uint32_t)ref;
        r.u.SystemTreeNodeProperty.name = name;
        r.u.SystemTreeNodeProperty.type = OTF2_TYPE_UINT64;
        r.u.SystemTreeNodeProperty.value.uint64 = value;
        break;
    default:
        r.u.LocationProperty.location = ref;
        r.u.LocationProperty.name = name;
        r.u.LocationProperty.type = OTF2_TYPE_UINT64;
        r.u.LocationProperty.value.uint64 = value;
        break;
    }
    put_record(b, &r, NULL);
}

/* What follows definitions(): attributes (one naming locations), the MPI
 * paradigm and a property of it (of another value in rank 1's when
 * conflict), groups naming an idle thread of each member, communicators
 * and their names, a thread team of threads 0 and 1 (TeamMembers, one
 * naming an idle thread too late), properties of derived definitions
 * (location groups of both ranks, the host, a location) and, if
 * offsets, ClockOffsets out of time order. */
static void more_definitions(buf *b, uint32_t rank, int conflict,
                             int offsets)
{
    static const char *const xs[] = { "peer", "rank", "late", "world",
                                       "MPI" };
    uint64_t locs[2] = { (uint64_t)rank << 32 | 3,
                         (uint64_t)(rank ^ 1) << 32 | 2 };
    uint64_t ranks[2] = { 0, 1 };
    static const OTF2_GroupType group_types[4] = {
        OTF2_GROUP_TYPE_LOCATIONS, OTF2_GROUP_TYPE_COMM_GROUP,
        OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_GROUP_TYPE_COMM_GROUP
    };
    weft_record r;

    for (unsigned i = 0; i < 5; i++)
        string_def(b, XS(rank, rank ? 4 - i : i), xs[rank ? 4 - i : i]);
    for (uint32_t i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Attribute;
        r.u.Attribute.self = i;
        r.u.Attribute.name = XS(rank, i);
        r.u.Attribute.description = OTF2_UNDEFINED_STRING;
        r.u.Attribute.type = i ? OTF2_TYPE_UINT32 : OTF2_TYPE_LOCATION;
        put_record(b, &r, NULL);
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Paradigm;
    r.u.Paradigm.paradigm = OTF2_PARADIGM_MPI;
    r.u.Paradigm.name = XS(rank, 4);
    r.u.Paradigm.paradigmClass = OTF2_PARADIGM_CLASS_PROCESS;
    put_record(b, &r, NULL);
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_ParadigmProperty;
    r.u.ParadigmProperty.paradigm = OTF2_PARADIGM_MPI;
    r.u.ParadigmProperty.property = OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE;
    r.u.ParadigmProperty.type = OTF2_TYPE_STRING;
    r.u.ParadigmProperty.value.stringRef = XS(rank, conflict && rank ? 2 : 3);
    put_record(b, &r, NULL);
    /* Groups 0 and 1 (MPI's) name threads and ranks; 2 and 3 are the
     * empty ones a thread team's Comm is defined with (OpenMP's). */
    for (uint32_t i = 0; i < 4; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Group;
        r.u.Group.self = i;
        r.u.Group.name = XS(rank, i < 2 ? 3 : 1);
        r.u.Group.groupType = group_types[i];
        r.u.Group.paradigm = i < 2 ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_OPENMP;
        r.u.Group.groupFlags = OTF2_GROUP_FLAG_NONE;
        r.u.Group.numberOfMembers = i < 2 ? 2 : 0;
        r.u.Group.members = i == 1 ? ranks : locs;
        put_record(b, &r, NULL);
    }
    for (uint32_t i = 0; i < 4; i += 2) {   /* Comm 0, the team's 2 */
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Comm;
        r.u.Comm.self = i;
        r.u.Comm.name = XS(rank, i ? 1 : 3);
        r.u.Comm.group = i + 1;
        r.u.Comm.parent = OTF2_UNDEFINED_COMM;
        r.u.Comm.identity = i ? 8 + rank : 0;
        put_record(b, &r, NULL);
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_InterComm;
    r.u.InterComm.self = 1;
    r.u.InterComm.name = XS(rank, 3);
    r.u.InterComm.groupA = 1;
    r.u.InterComm.groupB = 1;
    r.u.InterComm.commonCommunicator = 0;
    r.u.InterComm.identity = 7;
    put_record(b, &r, NULL);
    for (uint32_t i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_CommName;
        r.u.CommName.comm = 1 - i;      /* the InterComm first */
        r.u.CommName.name = XS(rank, 2);
        put_record(b, &r, NULL);
    }
    /* The team's threads 0 and 1, and a later TeamMember for number 1
     * (ignored). */
    for (uint32_t i = 0; i < 3; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_TeamMember;
        r.u.TeamMember.comm = 2;
        r.u.TeamMember.index = i < 2 ? i : 1;
        r.u.TeamMember.thread = i < 2 ? i : 3;
        put_record(b, &r, NULL);
    }
    property_def(b, WEFT_REC_LocationGroupProperty, rank, XS(rank, 1), rank);
    property_def(b, WEFT_REC_LocationGroupProperty, rank ^ 1, XS(rank, 0), 9);
    property_def(b, WEFT_REC_SystemTreeNodeProperty, 1, XS(rank, 0), rank);
    property_def(b, WEFT_REC_LocationProperty, (uint64_t)rank << 32 | 1,
                 XS(rank, 0), 5);
    if (offsets)
        clock_offsets(b);
}

/* Events of thread 0 of rank in two entries' payloads (a, b) from time
 * base on: an Enter whose attributes name idle thread 3 of rank, a gap
 * (MeasurementOnOff) with regions open, a BufferFlush, a Leave of a region
 * not open. Counts in n[2]. */
static void gap_events(buf *a, buf *b, uint32_t rank, uint64_t base,
                       unsigned n[2])
{
    static const OTF2_AttributeRef attrs[2] = { 0, 1 };
    static const OTF2_Type types[2] = { OTF2_TYPE_LOCATION, OTF2_TYPE_UINT32 };
    OTF2_AttributeValue values[2];
    weft_record r, al;
    uint64_t prev = base, t = base;

    memset(&al, 0, sizeof al);
    al.type = WEFT_REC_AttributeList;
    al.u.AttributeList.numberOfAttributes = 2;
    al.u.AttributeList.attributes = attrs;
    al.u.AttributeList.types = types;
    al.u.AttributeList.values = values;
    values[0].locationRef = (uint64_t)rank << 32 | 3;
    values[1].uint32 = rank;
#define EV(to, TYPE, step, ...)                                              \
    do {                                                                     \
        memset(&r, 0, sizeof r);                                             \
        r.type = WEFT_REC_##TYPE;                                            \
        r.time = t += (step);                                                \
        __VA_ARGS__;                                                         \
        put_record(to, &r, &prev);                                           \
        n[to == b]++;                                                        \
    } while (0)
    n[0] = n[1] = 0;
    EV(a, Enter, 5, r.u.Enter.region = 0; r.attributes = &al);
    EV(a, Enter, 5, r.u.Enter.region = 1);
    EV(a, MeasurementOnOff, 10,
       r.u.MeasurementOnOff.measurementMode = OTF2_MEASUREMENT_OFF);
    EV(a, MeasurementOnOff, 10,
       r.u.MeasurementOnOff.measurementMode = OTF2_MEASUREMENT_OFF);
    EV(a, MeasurementOnOff, 100,
       r.u.MeasurementOnOff.measurementMode = OTF2_MEASUREMENT_ON);
    EV(a, BufferFlush, 3, r.u.BufferFlush.stopTime = t + 50);
    prev = t;
    EV(b, Leave, 60, r.u.Leave.region = 0);    /* leaves 1 first */
    EV(b, Leave, 1, r.u.Leave.region = 1);     /* not open */
    EV(b, Enter, 1, r.u.Enter.region = 1);     /* left open at the end */
#undef EV
}

/* How the members of differing_journal() differ. */
enum {
    DIFF_CONFLICT = 1,  /* a keyed definition of another value */
    DIFF_OFFSETS = 2,   /* rank 1 has ClockOffsets */
    DIFF_LIE = 4,       /* Goodbyes count otherwise */
    DIFF_TSC = 8        /* rank 0 counts 2.5 GHz ticks too */
};

/* The journal of rank of a trace of two members that differ (how): rank
 * 1 on another host with a clock of 2.5 GHz ticks, the definitions of
 * definitions() and more_definitions(), a resend of each kind (skipped),
 * thread 0's gap_events() and thread 1's events(), and a Goodbye. */
static void differing_journal(buf *b, uint32_t rank, unsigned how)
{
    Weft__Hello hello = WEFT__HELLO__INIT;
    Weft__Goodbye bye = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[2], *pe[2];
    buf p = { .len = 0 }, q = { .len = 0 };
    uint64_t base = 1000000 + 300 * rank, last;
    unsigned n[2], n1;

    put(b, WEFT_JOURNAL_MAGIC, strlen(WEFT_JOURNAL_MAGIC));
    hello.protocol_version = WEFT_PROTOCOL_VERSION;
    hello.trace = "job-43";
    hello.rank = rank;
    hello.size = 2;
    hello.hostname = rank ? "node2" : "node1";
    hello.pid = 4242 + rank;
    hello.uid = 1000;
    hello.command = "./app -n 2";
    hello.job_id = "43";
    hello.timer_resolution = rank || (how & DIFF_TSC) ? 2500000000u
                                                      : 1000000000u;
    hello.realtime_ns = 1700000000000000000ull;
    hello.clock_at_realtime = 1000;
    p.len = weft__hello__pack(&hello, p.b);
    put_entry(b, WEFT_JE_HELLO, 0, 0, 0, 0, p.b, p.len);
    p.len = 0;
    definitions(&p);
    put_entry(b, WEFT_JE_DEFS, 0, 0, 1, 0, p.b, p.len);
    p.len = 0;
    more_definitions(&p, rank, how & DIFF_CONFLICT,
                     (how & DIFF_OFFSETS) && rank);
    put_entry(b, WEFT_JE_DEFS, 0, 0, 2, 0, p.b, p.len);
    put_entry(b, WEFT_JE_DEFS, 0, 0, 1, 0, "", 0);     /* a resend */
    p.len = 0;
    gap_events(&p, &q, rank, base, n);
    put_entry(b, WEFT_JE_EVENTS, 0, n[0], 1, base, p.b, p.len);
    put_entry(b, WEFT_JE_EVENTS, 0, n[1], 2, base + 133, q.b, q.len);
    last = base + 133 + 62;
    put_entry(b, WEFT_JE_EVENTS, 0, 0, 1, last, "", 0); /* a resend */
    p.len = 0;
    n1 = events(&p, base + 7);
    put_entry(b, WEFT_JE_EVENTS, 1, n1, 1, base + 7, p.b, p.len);
    for (uint32_t loc = 0; loc < 2; loc++) {
        weft__location_end__init(&ends[loc]);
        ends[loc].location = loc;
        ends[loc].events = (loc ? n1 : n[0] + n[1]) +
                           (how & DIFF_LIE ? 1 + loc : 0);
        ends[loc].dropped = how & DIFF_LIE ? 1 : 0;
        pe[loc] = &ends[loc];
    }
    bye.n_locations = 2;
    bye.locations = pe;
    p.len = weft__goodbye__pack(&bye, p.b);
    put_entry(b, WEFT_JE_GOODBYE, 0, 0, 0, 0, p.b, p.len);
}

/* fuzz_journal's input of two differing journals (flags: the catalog has
 * the trace, two journals, checksums set by the harness). */
static void differing_seed(const char *name, unsigned how)
{
    buf b = { .len = 0 }, a = { .len = 0 };

    put_byte(&b, 0x86);
    differing_journal(&a, 0, how);
    put_byte(&b, (uint8_t)a.len);
    put_byte(&b, (uint8_t)(a.len >> 8));
    put(&b, a.b, a.len);
    differing_journal(&b, 1, how);
    write_seed("fuzz_journal", name, &b);
}

void journal_seeds(void)
{
    buf b = { .len = 0 }, a = { .len = 0 };
    size_t defs;

    /* Flags (fuzz_journal.c): 0x80 has the harness set the checksums of
     * what mutations change. */
    put_byte(&b, 0x80);         /* rank-0.wj */
    member_journal(&b, 0, 1, 1);
    write_seed("fuzz_journal", "complete", &b);

    b.len = 0;
    put_byte(&b, 0xa2);         /* the catalog has it; 2nd pass steps
                                   over events */
    member_journal(&b, 0, 1, 0);
    write_seed("fuzz_journal", "recording", &b);

    b.len = 0;
    put_byte(&b, 0x60);         /* ... from its 2nd entry on */
    member_journal(&b, 0, 1, 1);
    b.len -= 5;                 /* the Goodbye cut short: a torn tail */
    write_seed("fuzz_journal", "torn", &b);

    b.len = 0;
    put_byte(&b, 0x10);         /* 2nd pass steps over Definitions */
    defs = member_journal(&b, 0, 1, 1);
    b.b[defs + WEFT_JOURNAL_HEADER + 7] ^= 0x40; /* damage, not a tail */
    write_seed("fuzz_journal", "damaged", &b);

    b.len = 0;
    put_byte(&b, 0xb6);         /* the catalog has it; rank-0.wj and
                                   rank-1.wj; 2nd pass over Goodbyes */
    member_journal(&a, 0, 2, 1);
    put_byte(&b, (uint8_t)a.len);
    put_byte(&b, (uint8_t)(a.len >> 8));
    put(&b, a.b, a.len);
    member_journal(&b, 1, 2, 1);
    write_seed("fuzz_journal", "two", &b);

    b.len = 0;
    put_byte(&b, 0x88);         /* a name of the input's, malformed */
    put_byte(&b, (uint8_t)strlen("rank-01.wj"));
    put(&b, "rank-01.wj", strlen("rank-01.wj"));
    member_journal(&b, 0, 1, 1);
    write_seed("fuzz_journal", "named", &b);

    b.len = 0;
    put_byte(&b, 0x00);         /* the process never said Hello */
    put(&b, WEFT_JOURNAL_MAGIC, strlen(WEFT_JOURNAL_MAGIC));
    write_seed("fuzz_journal", "magic", &b);

    b.len = 0;
    put_byte(&b, 0x00);         /* an empty file */
    write_seed("fuzz_journal", "empty", &b);

    /* Two members that differ in host, clock, definitions; with
     * ClockOffsets and Goodbyes that count otherwise; with definitions
     * that conflict, both counting ticks. */
    differing_seed("differing", 0);
    differing_seed("differing-clocks", DIFF_OFFSETS | DIFF_LIE);
    differing_seed("differing-conflict", DIFF_CONFLICT | DIFF_OFFSETS |
                                         DIFF_TSC);
}
