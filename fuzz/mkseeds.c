/* mkseeds.c - writes the seed corpora of the fuzzers (fuzz/corpus/NAME/)
 * in the input formats their headers describe: a few valid record streams,
 * frames of every message kind, a member's Definitions and batches, and
 * member journals.
 * Run by `make fuzz-seeds`; the output is committed, as test input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bind.h"
#include "codec.h"
#include "frame.h"
#include "journal.h"
#include "weft_errors.h"

#define BUF_MAX 4096

typedef struct buf {
    uint8_t b[BUF_MAX];
    size_t len;
} buf;

static const char *outdir;

static void die(const char *what)
{
    fprintf(stderr, "mkseeds: %s\n", what);
    exit(1);
}

static void put(buf *b, const void *p, size_t n)
{
    if (b->len + n > BUF_MAX)
        die("seed too large");
    memcpy(b->b + b->len, p, n);
    b->len += n;
}

static void put_byte(buf *b, uint8_t v)
{
    put(b, &v, 1);
}

static void put_u64le(buf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        put_byte(b, (uint8_t)(v >> (8 * i)));
}

static void put_u32le(buf *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put_byte(b, (uint8_t)(v >> (8 * i)));
}

static void put_record(buf *b, const weft_record *r, uint64_t *prev)
{
    ssize_t n = weft_encode(r, prev, b->b + b->len, BUF_MAX - b->len);

    if (n < 0)
        die(weft_strerror((int)n));
    b->len += (size_t)n;
}

static void write_seed(const char *target, const char *name, const buf *b)
{
    char path[4096];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", outdir, target);
    if (mkdir(path, 0777) < 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    f = fopen(path, "wb");
    if (!f || fwrite(b->b, 1, b->len, f) != b->len || fclose(f) != 0)
        die(path);
}

/* ---- record streams ---------------------------------------------------- */

static void definitions(buf *b)
{
    static const OTF2_MetricMemberRef members[2] = { 0, 1 };
    static const char *const strings[] = { "main", "compute", "a.c",
                                           "cycles", "instructions", "#" };
    weft_record r;

    for (unsigned i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_String;
        r.u.String.self = i;
        r.u.String.string = strings[i];
        put_record(b, &r, NULL);
    }
    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Region;
        r.u.Region.self = i;
        r.u.Region.name = i;
        r.u.Region.canonicalName = i;
        r.u.Region.description = OTF2_UNDEFINED_STRING;
        r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
        r.u.Region.paradigm = OTF2_PARADIGM_USER;
        r.u.Region.sourceFile = 2;
        r.u.Region.beginLineNumber = 10 + 20 * i;
        r.u.Region.endLineNumber = 25 + 20 * i;
        put_record(b, &r, NULL);
    }
    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_MetricMember;
        r.u.MetricMember.self = i;
        r.u.MetricMember.name = 3 + i;
        r.u.MetricMember.description = 3 + i;
        r.u.MetricMember.metricType = OTF2_METRIC_TYPE_PAPI;
        r.u.MetricMember.metricMode = OTF2_METRIC_ACCUMULATED_START;
        r.u.MetricMember.valueType = OTF2_TYPE_UINT64;
        r.u.MetricMember.base = OTF2_BASE_DECIMAL;
        r.u.MetricMember.exponent = -3;
        r.u.MetricMember.unit = 5;
        put_record(b, &r, NULL);
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_MetricClass;
    r.u.MetricClass.self = 0;
    r.u.MetricClass.numberOfMetrics = 2;
    r.u.MetricClass.metricMembers = members;
    r.u.MetricClass.metricOccurrence = OTF2_METRIC_SYNCHRONOUS_STRICT;
    r.u.MetricClass.recorderKind = OTF2_RECORDER_KIND_CPU;
    put_record(b, &r, NULL);
}

/* Events of thread 0 from time `base` on; returns how many. */
static unsigned events(buf *b, uint64_t base)
{
    static const OTF2_Type types[2] = { OTF2_TYPE_UINT64, OTF2_TYPE_UINT64 };
    static OTF2_MetricValue values[2];
    uint64_t prev = base, t = base;
    unsigned n = 0;
    weft_record r;

    values[0].unsigned_int = 123456;
    values[1].unsigned_int = 0xffffffffffull;
    for (unsigned region = 0; region < 2; region++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Enter;
        r.time = t += 3;
        r.u.Enter.region = region;
        put_record(b, &r, &prev);
        n++;
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Metric;
    r.time = t += 200;
    r.u.Metric.metric = 0;
    r.u.Metric.numberOfMetrics = 2;
    r.u.Metric.typeIDs = types;
    r.u.Metric.metricValues = values;
    put_record(b, &r, &prev);
    n++;
    for (unsigned region = 2; region-- > 0;) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Leave;
        r.time = t += 1000;
        r.u.Leave.region = region;
        put_record(b, &r, &prev);
        n++;
    }
    return n;
}

static void record_seeds(void)
{
    buf b = { .len = 0 };

    put_byte(&b, 0);            /* definitions, default max_string */
    definitions(&b);
    write_seed("fuzz_records", "definitions", &b);

    b.len = 0;
    put_byte(&b, 1);            /* events */
    put_u64le(&b, 1000000);
    events(&b, 1000000);
    write_seed("fuzz_records", "events", &b);
}

/* ---- frames ------------------------------------------------------------ */

static void put_frame(buf *b, Weft__Envelope *env)
{
    uint8_t *frame;
    ssize_t n = weft_frame_pack(env, &frame);

    if (n < 0)
        die(weft_strerror((int)n));
    put(b, frame, (size_t)n);
    free(frame);
}

static void frame_seeds(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello hello = WEFT__HELLO__INIT;
    Weft__HelloAck hack = WEFT__HELLO_ACK__INIT;
    Weft__LocationSeq ls = WEFT__LOCATION_SEQ__INIT, *lsp = &ls;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    Weft__EventBatch batch = WEFT__EVENT_BATCH__INIT;
    Weft__Ack ack = WEFT__ACK__INIT;
    Weft__Goodbye bye = WEFT__GOODBYE__INIT;
    Weft__LocationEnd le = WEFT__LOCATION_END__INIT, *lep = &le;
    buf recs = { .len = 0 }, evs = { .len = 0 };
    buf all = { .len = 0 }, b;
    Weft__Auth auth = WEFT__AUTH__INIT;
    Weft__AuthAck auth_ack = WEFT__AUTH_ACK__INIT;
    Weft__Challenge challenge = WEFT__CHALLENGE__INIT;
    weft_bind bind;
    uint8_t payload[WEFT_BIND_PAYLOAD], *err;
    ssize_t n;

    put_byte(&all, 3);          /* default max_frame */
    put_byte(&all, 0x5a);       /* chunking seed */

    /* What weftd sends first over TCP. */
    challenge.protocol_version = WEFT_PROTOCOL_VERSION;
    challenge.nonce.data = (uint8_t *)"0123456789abcdef";
    challenge.nonce.len = WEFT_AUTH_NONCE;
    challenge.server_uid = 995;
    env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &challenge;
    put_frame(&all, &env);
    /* What a TCP client sends then (the credential's text is made up:
     * only its framing matters here). */
    auth.protocol_version = WEFT_PROTOCOL_VERSION;
    auth.credential.data = (uint8_t *)"MUNGE:AwQFAAB0ZXN0Y3JlZGVudGlhbA==:";
    auth.credential.len = strlen((const char *)auth.credential.data);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &auth;
    put_frame(&all, &env);
    auth_ack.proof.data = (uint8_t *)"0123456789abcdef";
    auth_ack.proof.len = 16;
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
    env.auth_ack = &auth_ack;
    put_frame(&all, &env);

    hello.protocol_version = WEFT_PROTOCOL_VERSION;
    hello.trace = "job-42";
    hello.rank = 0;
    hello.size = 2;
    hello.hostname = "node1";
    hello.pid = 4242;
    hello.uid = 1000;
    hello.command = "./app -n 4";
    hello.job_id = "42";
    hello.timer_resolution = 1000000000;
    hello.realtime_ns = 1700000000000000000ull;
    hello.clock_at_realtime = 1000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &hello;
    put_frame(&all, &env);

    ls.location = 0;
    ls.seq = 7;
    hack.protocol_version = WEFT_PROTOCOL_VERSION;
    hack.n_locations = 1;
    hack.locations = &lsp;
    hack.definitions_seq = 1;
    hack.server = "weftd 0.1.0";
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO_ACK;
    env.hello_ack = &hack;
    put_frame(&all, &env);

    definitions(&recs);
    defs.seq = 1;
    defs.records.data = recs.b;
    defs.records.len = recs.len;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    put_frame(&all, &env);

    batch.location = 0;
    batch.seq = 1;
    batch.base_time = 5000;
    batch.events = events(&evs, 5000);
    batch.records.data = evs.b;
    batch.records.len = evs.len;
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &batch;
    put_frame(&all, &env);

    ack.definitions = 0;
    ack.location = 0;
    ack.seq = 1;
    env.msg_case = WEFT__ENVELOPE__MSG_ACK;
    env.ack = &ack;
    put_frame(&all, &env);

    le.location = 0;
    le.events = batch.events;
    le.dropped = 0;
    bye.n_locations = 1;
    bye.locations = &lep;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &bye;
    put_frame(&all, &env);

    n = weft_frame_pack_error(&err, WEFT_EREF, "Enter.region: REGION 9 "
                              "is not defined");
    if (n < 0)
        die("pack error");
    put(&all, err, (size_t)n);
    free(err);
    write_seed("fuzz_frame", "session", &all);

    /* The Definitions frame alone, fed in small chunks. */
    b.len = 0;
    put_byte(&b, 2);
    put_byte(&b, 0x11);
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    put_frame(&b, &env);
    write_seed("fuzz_frame", "definitions", &b);

    /* A credential's payload (proto/bind.h) as the whole input: a
     * client at 127.0.0.1:40000 of weftd at [::1]:5555. */
    memset(&bind, 0, sizeof bind);
    memcpy(bind.nonce, "0123456789abcdef", WEFT_AUTH_NONCE);
    bind.client.family = 4;
    memcpy(bind.client.addr, "\x7f\0\0\1", 4);
    bind.client.port = 40000;
    bind.server.family = 6;
    bind.server.addr[15] = 1;
    bind.server.port = 5555;
    memset(bind.key, 0x5c, sizeof bind.key);
    b.len = 0;
    put_byte(&b, 0);
    put_byte(&b, 0);
    weft_bind_encode(&bind, payload);
    put(&b, payload, sizeof payload);
    write_seed("fuzz_frame", "bind", &b);
}

/* ---- a member's ingest --------------------------------------------------- */

static void put_message(buf *b, uint8_t kind, uint8_t count, const buf *p)
{
    put_byte(b, kind);
    put_byte(b, count);
    put_byte(b, (uint8_t)p->len);
    put_byte(b, (uint8_t)(p->len >> 8));
    put(b, p->b, p->len);
}

/* Two ClockOffsets, the later one first. */
static void clock_offsets(buf *b)
{
    weft_record r;

    for (unsigned i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_ClockOffset;
        r.u.ClockOffset.time = i ? 1000 : 5000000;
        r.u.ClockOffset.offset = i ? 300 : -700;
        r.u.ClockOffset.standardDeviation = 0.5 * i;
        put_record(b, &r, NULL);
    }
}

static void session_seeds(void)
{
    buf b = { .len = 0 }, defs = { .len = 0 }, evs = { .len = 0 };
    unsigned n;

    put_byte(&b, 2);            /* max_definitions 4096, max_string 64 KiB */
    definitions(&defs);
    put_message(&b, 0, 0, &defs);
    n = events(&evs, 0);
    put_message(&b, 1, (uint8_t)n, &evs);         /* thread 0, base 0 */
    evs.len = 0;
    n = events(&evs, 0);
    put_message(&b, 3, (uint8_t)n, &evs);         /* thread 1, base 0 */
    write_seed("fuzz_session", "ingest", &b);
    write_seed("fuzz_convert", "ingest", &b); /* the same input, converted */

    /* A member counting 2.5 GHz ticks with ClockOffsets: conversion
     * rescales its times to ns. */
    b.b[0] = 2 | 8;
    defs.len = 0;
    clock_offsets(&defs);
    put_message(&b, 0, 0, &defs);
    evs.len = 0;
    n = events(&evs, 2000);
    put_message(&b, 1, (uint8_t)n, &evs);         /* thread 0 again */
    write_seed("fuzz_convert", "ingest-tsc", &b);
}

/* ---- sessions of several peers against weftd (fuzz_daemon) -------------- */

/* Steps as fuzz_daemon.c reads them: an op byte (peer, kind), then the
 * kind's bytes. */
enum { D_HELLO, D_DEFINITIONS, D_BATCH, D_BATCH2, D_GOODBYE, D_OTHER, D_RAW,
       D_HANGUP, D_RECONNECT, D_TICK };

/* Over TCP (config bit 5) a peer's first step on a connection that is
 * not raw bytes starts with its Auth's byte (0: a good credential), and
 * each step of an authenticated peer with its tamper byte (0: sealed as
 * it should be). */
static int d_tcp;
static int d_authed[4];

static void put_op(buf *b, unsigned peer, unsigned kind)
{
    put_byte(b, (uint8_t)(kind << 2 | peer));
    if (!d_tcp || kind == D_TICK)
        return;
    if (kind == D_HANGUP || kind == D_RECONNECT)
        d_authed[peer] = 0; /* a new connection */
    if (kind == D_HANGUP || (kind == D_RAW && !d_authed[peer]))
        return;
    if (!d_authed[peer])
        put_byte(b, 0);
    d_authed[peer] = 1;
    put_byte(b, 0);
}

/* The config byte of a new input. */
static void put_config(buf *b, uint8_t flags)
{
    b->len = 0;
    memset(d_authed, 0, sizeof d_authed);
    put_byte(b, (uint8_t)(flags | (d_tcp ? 0x20 : 0)));
}

/* Hello of peer as member `rank` (who and how of fuzz_daemon.c's
 * send_hello). */
static void put_hello_how(buf *b, unsigned peer, uint8_t who, uint8_t rank,
                          uint8_t how)
{
    put_op(b, peer, D_HELLO);
    put_byte(b, (uint8_t)(who | rank << 3));
    put_byte(b, how);
}

/* Hello of peer as member `rank` of a trace of `size` (a new identity). */
static void put_hello(buf *b, unsigned peer, uint8_t who, uint8_t rank,
                      uint8_t size)
{
    put_hello_how(b, peer, who, rank, (uint8_t)(0x80 | (size - 1)));
}

/* How many definitions clients send (the table's order, those weftd
 * makes left out) or events the table has. */
static unsigned daemon_kinds(int events)
{
    size_t n = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    unsigned k = 0;

    for (size_t i = 0; i < n; i++)
        if (!all[i]->is_pseudo && !all[i]->is_event == !events &&
            (events || !(all[i]->flags & WEFT_DF_DAEMON)))
            k++;
    return k;
}

/* Definitions (events: an EventBatch of thread loc) of the record kinds
 * from..to-1 (indexes as above), their fields all from zero bytes: the
 * first enum values, references to the first ids defined; events one
 * tick apart, every third with an (empty) attribute list. */
static void put_records(buf *b, unsigned peer, int events, uint8_t loc,
                        unsigned from, unsigned to)
{
    put_op(b, peer, events ? D_BATCH : D_DEFINITIONS);
    put_byte(b, loc);           /* the next seq */
    if (events)
        put_byte(b, 1);         /* base: one tick after the last event */
    put_byte(b, (uint8_t)(to - from));
    for (unsigned k = from; k < to; k++) {
        put_byte(b, (uint8_t)k);
        if (!events) {
            put_byte(b, 0);
            continue;
        }
        put_byte(b, 1);
        put_byte(b, k % 3 == 2 ? 0x81 : 1);
    }
}

/* Every definition kind (twice: references to kinds later in the table
 * find them the second time), then every event kind, one a frame: one
 * that weftd refuses costs the connection, and the peer comes back. */
static void put_all_records(buf *b, unsigned peer)
{
    unsigned nd = daemon_kinds(0), ne = daemon_kinds(1);

    for (int twice = 0; twice < 2; twice++)
        for (unsigned k = 0; k < nd; k++)
            put_records(b, peer, 0, 0, k, k + 1);
    for (unsigned k = 0; k < ne; k++)
        put_records(b, peer, 1, (uint8_t)(k % 2), k, k + 1);
}

/* Strings and a region, then Enter and Leave on thread loc. */
static void put_enter_leave(buf *b, unsigned peer, uint8_t loc, int defs)
{
    if (defs)
        put_records(b, peer, 0, 0, 0, 2); /* String, Region */
    put_records(b, peer, 1, loc, 0, 2);
}

static void put_goodbye(buf *b, unsigned peer, uint8_t nlocs)
{
    put_op(b, peer, D_GOODBYE);
    put_byte(b, (uint8_t)(nlocs << 2));
    d_authed[peer] = 0; /* weftd closes the connection */
}

/* A new input (config byte 0) in which peers 0 and 1 (who1, rank1) say
 * Hello to traces of size members and peer 0 records. */
static void start_pair(buf *b, uint8_t who1, uint8_t rank1, uint8_t size)
{
    put_config(b, 0);
    put_hello(b, 0, 0, 0, size);
    put_hello(b, 1, who1, rank1, size);
    put_enter_leave(b, 0, 0, 1);
}

/* The index of definition record `type` among those clients send (as
 * daemon_kinds counts them). */
static uint8_t def_index(uint32_t type)
{
    size_t n = 0;
    const weft_rec_desc *const *all = weft_rec_descs(&n);
    uint8_t k = 0;

    for (size_t i = 0; i < n && all[i]->type != type; i++)
        if (!all[i]->is_pseudo && !all[i]->is_event &&
            !(all[i]->flags & WEFT_DF_DAEMON))
            k++;
    return k;
}

/* A Definitions step of peer holding one record of `type` built from the
 * n bytes f (fuzz_daemon.c's gen_record). */
static void put_def(buf *b, unsigned peer, uint32_t type, const void *f,
                    uint8_t n)
{
    put_op(b, peer, D_DEFINITIONS);
    put_byte(b, 0);             /* the next seq */
    put_byte(b, 1);
    put_byte(b, def_index(type));
    put_byte(b, n);
    put(b, f, n);
}

/* The seed name, with "tcp-" before it over TCP. */
static const char *dname(const char *name)
{
    static char s[64];

    snprintf(s, sizeof s, "%s%s", d_tcp ? "tcp-" : "", name);
    return s;
}

/* Over TCP: credentials spoilt and sealed frames tampered with (the
 * bytes of fuzz_daemon.c's authenticate and send_env), among members
 * that go on. */
static void tcp_spoilt_seeds(void)
{
    buf b = { .len = 0 };

    for (uint8_t spoil = 10; spoil < 16; spoil++) {
        char name[32];
        start_pair(&b, 0, 1, 2);
        put_byte(&b, (uint8_t)(D_HELLO << 2 | 2));
        put_byte(&b, spoil);    /* peer 2's Auth: spoilt, refused */
        if (spoil == 10)        /* the other uid: accepted, but not */
            put_byte(&b, 0);    /* the Hello's: the tamper byte */
        put_byte(&b, 2);        /* a trace of its own (a run) */
        put_byte(&b, 0x80);
        put_enter_leave(&b, 1, 0, 1);
        put_goodbye(&b, 0, 1);
        put_goodbye(&b, 1, 1);
        snprintf(name, sizeof name, "tcp-credential-%u", spoil);
        write_seed("fuzz_daemon", name, &b);
    }
    for (uint8_t tamper = 1; tamper < 5; tamper++) {
        char name[32];
        start_pair(&b, 0, 1, 2);
        put_byte(&b, (uint8_t)(D_BATCH << 2 | 1));
        put_byte(&b, (uint8_t)(0x40 | tamper)); /* its frame tampered */
        put_byte(&b, 0);
        put_byte(&b, 1);
        put_byte(&b, 0);
        d_authed[1] = 0;        /* refused: peer 1 comes back */
        put_enter_leave(&b, 1, 0, 1);
        put_goodbye(&b, 0, 1);
        put_goodbye(&b, 1, 1);
        snprintf(name, sizeof name, "tcp-tampered-%u", tamper);
        write_seed("fuzz_daemon", name, &b);
    }
}

static void daemon_seeds(void)
{
    buf b = { .len = 0 };

    /* One member's whole session: every record kind, then Goodbye. */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 1);
    put_all_records(&b, 0);
    put_goodbye(&b, 0, 2);
    write_seed("fuzz_daemon", dname("member"), &b);
    b.b[0] |= 1;                /* the same with durability = fsync */
    write_seed("fuzz_daemon", dname("member-fsync"), &b);

    /* Two members of one trace send every record kind: conversion
     * unifies each kind's definitions across members. */
    start_pair(&b, 0, 1, 2);
    put_all_records(&b, 0);
    put_all_records(&b, 1);
    put_goodbye(&b, 0, 2);
    put_goodbye(&b, 1, 2);
    write_seed("fuzz_daemon", dname("two-members-all"), &b);

    /* Two members of one trace, interleaved. */
    start_pair(&b, 0, 1, 2);
    put_enter_leave(&b, 1, 0, 1);
    put_enter_leave(&b, 0, 1, 0);
    put_enter_leave(&b, 1, 0, 0);
    put_goodbye(&b, 1, 1);
    put_goodbye(&b, 0, 2);
    write_seed("fuzz_daemon", dname("two-members"), &b);

    /* A member reconnects and resends a batch weftd holds. */
    put_config(&b, 0);
    put_hello(&b, 0, 2, 0, 1);
    put_enter_leave(&b, 0, 0, 1);
    put_enter_leave(&b, 0, 0, 0);
    put_op(&b, 0, D_RECONNECT);
    put_byte(&b, 0);
    put_byte(&b, 0);            /* the same member */
    put_op(&b, 0, D_BATCH);
    put_byte(&b, 2 << 2);       /* thread 0, a seq sent before */
    put_byte(&b, 1);
    put_byte(&b, 0);
    put_enter_leave(&b, 0, 0, 0);
    put_goodbye(&b, 0, 1);
    write_seed("fuzz_daemon", dname("reconnect"), &b);

    /* A refused frame among good ones: the other member goes on. */
    start_pair(&b, 0, 1, 2);
    put_op(&b, 1, D_BATCH);
    put_byte(&b, 3 << 2);       /* a seq after a gap */
    put_byte(&b, 3);
    put_byte(&b, 0);
    put_op(&b, 1, D_RAW);
    put_byte(&b, 0x84);
    put(&b, "\x08\x01\xff\xff", 4);
    put_enter_leave(&b, 0, 1, 0);
    put_enter_leave(&b, 1, 0, 1);
    put_goodbye(&b, 0, 2);
    put_goodbye(&b, 1, 1);
    write_seed("fuzz_daemon", dname("refused"), &b);

    /* Two users record traces of the same name; a query, a clock sync,
     * a member that hangs up and comes back after the grace period. */
    start_pair(&b, 4, 0, 1);
    put_enter_leave(&b, 1, 0, 1);
    put_op(&b, 2, D_OTHER);
    put_byte(&b, 2);            /* Query: the catalog */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0);            /* ClockSync */
    put_op(&b, 1, D_HANGUP);
    put_byte(&b, 1);            /* in the middle of a frame */
    put_op(&b, 0, D_TICK);
    put_goodbye(&b, 1, 1);      /* back after its trace ended */
    put_goodbye(&b, 0, 1);
    write_seed("fuzz_daemon", dname("two-users"), &b);

    /* Rank 0 of two names rank 1's location group; rank 1 never comes. */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 2);
    put_def(&b, 0, WEFT_REC_String, "\0", 1);
    put_def(&b, 0, WEFT_REC_LocationGroupProperty, "\x80\0\0\1", 4);
    put_goodbye(&b, 0, 0);
    write_seed("fuzz_daemon", dname("missing-member"), &b);

    /* Three members of one trace: rank 1 counts 2.5 GHz ticks and has
     * ClockOffsets (out of time order), rank 2 is on another host. */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 3);
    put_hello_how(&b, 1, 0, 1, 0x80 | 0x10 | 2);
    put_hello_how(&b, 2, 0, 2, 0x80 | 0x20 | 2);
    put_def(&b, 1, WEFT_REC_ClockOffset, "\x64\xf0\x01", 3);
    put_def(&b, 1, WEFT_REC_ClockOffset, "\x0a\x05\x00", 3);
    for (unsigned peer = 0; peer < 3; peer++)
        put_enter_leave(&b, peer, 0, 1);
    for (unsigned peer = 0; peer < 3; peer++)
        put_goodbye(&b, peer, 1);
    write_seed("fuzz_daemon", dname("clocks-hosts"), &b);
}

/* ---- what weftd sends a client (fuzz_client) ----------------------------- */

static void put_ack(buf *b, int definitions, uint32_t location, uint64_t seq)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Ack ack = WEFT__ACK__INIT;

    ack.definitions = definitions;
    ack.location = location;
    ack.seq = seq;
    env.msg_case = WEFT__ENVELOPE__MSG_ACK;
    env.ack = &ack;
    put_frame(b, &env);
}

/* A HelloAck holding Definitions `defs` and batch seq[t] of thread t. */
static void put_hello_ack(buf *b, uint64_t defs, const uint64_t *seq,
                          size_t n)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__HelloAck a = WEFT__HELLO_ACK__INIT;
    Weft__LocationSeq ls[4], *lsp[4];

    for (size_t i = 0; i < n; i++) {
        weft__location_seq__init(&ls[i]);
        ls[i].location = (uint32_t)i;
        ls[i].seq = seq[i];
        lsp[i] = &ls[i];
    }
    a.protocol_version = WEFT_PROTOCOL_VERSION;
    a.definitions_seq = defs;
    a.n_locations = n;
    a.locations = lsp;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO_ACK;
    env.hello_ack = &a;
    put_frame(b, &env);
}

static void client_seeds(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Error err = WEFT__ERROR__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;
    static const uint64_t held[] = { 2, 1, 3, 0 }, ahead[] = { 9, 0 };
    buf b = { .len = 0 };

    /* 2 threads: 3 and 2 batches sent, 2 and 1 in flight, one queued
     * each; 3 Definitions, 2 in flight, one chunk pending. */
    put_byte(&b, 0x0d);
    put_byte(&b, 0x0b);
    put_byte(&b, 0x06);
    put_byte(&b, 0x53);
    put_ack(&b, 0, 0, 2);
    put_ack(&b, 1, 0, 2);
    put_ack(&b, 0, 1, 2);
    put_ack(&b, 0, 0, 3);
    put_ack(&b, 0, 1, 7);       /* not in flight: refused */
    cs.id = 1;
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &cs;
    put_frame(&b, &env);
    write_seed("fuzz_client", "acks", &b);

    /* Reconnected: weftd holds some of it, then refuses for a while. */
    b.len = 0;
    put_byte(&b, 0x3f);         /* 4 threads */
    put_byte(&b, 0xff);
    put_byte(&b, 0x5a);
    put_byte(&b, 0x5c);
    put_hello_ack(&b, 2, held, 4);
    put_ack(&b, 0, 0, 3);
    err.code = WEFT_ELIMIT;
    err.message = (char *)"max_buffered";
    env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
    env.error = &err;
    put_frame(&b, &env);
    write_seed("fuzz_client", "resume", &b);

    /* weftd holds what this process never sent. */
    b.len = 0;
    put_byte(&b, 0x01);
    put_byte(&b, 0x03);
    put_byte(&b, 0x01);
    put_byte(&b, 0x09);
    put_hello_ack(&b, 1, ahead, 2);
    write_seed("fuzz_client", "ahead", &b);

    /* Over TCP (byte 3 bit 7; then fuzz_client.c's H and T): the
     * handshake, then the reconnect above sealed; each way the
     * handshake or a sealed frame goes wrong. */
    static const struct {
        const char *name;
        uint8_t how, tamper;
    } tcp[] = { { "tcp-resume", 0, 0 },
                { "tcp-old-challenge", 2, 0 },
                { "tcp-foreign-uid", 3, 0 },
                { "tcp-short-nonce", 4, 0 },
                { "tcp-bad-proof", 2 << 3, 0 },
                { "tcp-refused", 3 << 3, 0 },
                { "tcp-bad-tag", 0, 1 << 3 | 1 },
                { "tcp-bad-body", 0, 2 << 3 | 2 },
                { "tcp-skipped", 0, 3 << 3 | 1 },
                { "tcp-unsealed", 0, 4 << 3 | 0 } };
    for (size_t i = 0; i < sizeof tcp / sizeof tcp[0]; i++) {
        b.len = 0;
        put_byte(&b, 0x3f);
        put_byte(&b, 0xff);
        put_byte(&b, 0x5a);
        put_byte(&b, 0x80 | 0x5c);
        put_byte(&b, tcp[i].how);
        put_byte(&b, tcp[i].tamper);
        put_hello_ack(&b, 2, held, 4);
        put_ack(&b, 0, 0, 3);
        put_ack(&b, 0, 1, 2);
        env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
        env.error = &err;
        put_frame(&b, &env);
        write_seed("fuzz_client", tcp[i].name, &b);
    }
}

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
 * and their names, properties of derived definitions (location groups of
 * both ranks, the host, a location) and, if offsets, ClockOffsets out of
 * time order. */
static void more_definitions(buf *b, uint32_t rank, int conflict,
                             int offsets)
{
    static const char *const xs[] = { "peer", "rank", "late", "world",
                                       "MPI" };
    uint64_t locs[2] = { (uint64_t)rank << 32 | 3,
                         (uint64_t)(rank ^ 1) << 32 | 2 };
    uint64_t ranks[2] = { 0, 1 };
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
    for (uint32_t i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.type = WEFT_REC_Group;
        r.u.Group.self = i;
        r.u.Group.name = XS(rank, 3);
        r.u.Group.groupType = i ? OTF2_GROUP_TYPE_COMM_GROUP
                                : OTF2_GROUP_TYPE_LOCATIONS;
        r.u.Group.paradigm = OTF2_PARADIGM_MPI;
        r.u.Group.groupFlags = OTF2_GROUP_FLAG_NONE;
        r.u.Group.numberOfMembers = 2;
        r.u.Group.members = i ? ranks : locs;
        put_record(b, &r, NULL);
    }
    memset(&r, 0, sizeof r);
    r.type = WEFT_REC_Comm;
    r.u.Comm.self = 0;
    r.u.Comm.name = XS(rank, 3);
    r.u.Comm.group = 1;
    r.u.Comm.parent = OTF2_UNDEFINED_COMM;
    put_record(b, &r, NULL);
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

static void journal_seeds(void)
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

/* ---- text inputs: weftd.conf, libweft's environment ------------------- */

static void write_text(const char *target, const char *name, const char *text)
{
    buf b = { .len = 0 };

    put(&b, text, strlen(text));
    write_seed(target, name, &b);
}

static void text_seeds(void)
{
    write_text("fuzz_config", "site",
               "# a site's weftd.conf\n"
               "[weftd]\n"
               "listen = 0.0.0.0:7411\n"
               "socket = /run/weft/weftd.sock\n"
               "spool = /scratch/weft\n"
               "durability = fsync\n"
               "log_level = debug\n"
               "auth = munge\n"
               "retention_days = 30\n"
               "max_spool_bytes = 2T\n"
               "\n"
               "[limits]\n"
               "max_frame = 8M\n"
               "max_connections_per_user = 100\n"
               "session_timeout = 600\n"
               "max_user_spool_bytes = 100G\n"
               "max_members = 100000\n");
    write_text("fuzz_config", "bad", "[weftd]\nlisten = nowhere\n[nope]\n"
               "key\n");
    write_text("fuzz_env", "mpi",
               "WEFT_SERVER=node0:7411\n"
               "OMPI_COMM_WORLD_RANK=3\n"
               "OMPI_COMM_WORLD_SIZE=8\n"
               "PMIX_NAMESPACE=prterun-node0-1234@1\n"
               "WEFT_TAGS=app=lulesh,size=large,note=a\\,b\n"
               "WEFT_BUFFER_SIZE=256k\n"
               "WEFT_AUTH=munge\n"
               "WEFT_DAEMON_USER=weft\n"
               "WEFT_HEARTBEAT_MS=60000\n"
               "WEFT_FILTER=+main,+solve*,-*\n"
               "?main\n"
               "?solve_x\n"
               "?helper\n");
    write_text("fuzz_env", "slurm",
               "WEFT_SERVER=unix:/run/weft/weftd.sock\n"
               "SLURM_PROCID=0\n"
               "SLURM_NTASKS=2\n"
               "SLURM_JOB_ID=4242\n"
               "SLURM_STEP_ID=0\n"
               "WEFT_TRACE=job 42\n"
               "WEFT_CLOCK=tsc\n"
               "WEFT_OVERFLOW=discard\n");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: mkseeds CORPUS-DIR\n");
        return 2;
    }
    outdir = argv[1];
    if (mkdir(outdir, 0777) < 0 && errno != EEXIST)
        die(outdir);
    record_seeds();
    frame_seeds();
    session_seeds();
    daemon_seeds();
    d_tcp = 1;                  /* the same over TCP */
    daemon_seeds();
    tcp_spoilt_seeds();
    client_seeds();
    journal_seeds();
    text_seeds();
    return 0;
}
