/* seeds_daemon.c - mkseeds' seeds of fuzz_daemon (sessions of several
 * peers against weftd, over the Unix socket and TCP) and of fuzz_client
 * (weftd's side of a client's connection).
 */
#include <stdio.h>
#include <string.h>

#include "bind.h"
#include "codec.h"
#include "frame.h"
#include "seeds.h"
#include "weft_errors.h"

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

    /* Nodes (cluster/nodes.c) beside a member: peer 1 links as node
     * fz-a from weftd's uid and beats, peer 2 says NodeHello under the
     * same name (refused while the first link is alive), peer 3 as a
     * user (refused). */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 1);
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x20 | 1);  /* NodeHello fz-a, weftd's uid */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 1);                /* Heartbeat */
    put_enter_leave(&b, 0, 0, 1);
    put_op(&b, 2, D_OTHER);
    put_byte(&b, 0x80 | 0x20 | 1);  /* fz-a again: refused */
    put_op(&b, 3, D_OTHER);
    put_byte(&b, 0x80 | 0x40 | 1);  /* fz-b from a user: refused */
    put_op(&b, 2, D_OTHER);
    put_byte(&b, 1);
    put_op(&b, 2, D_OTHER);
    put_byte(&b, 0x80 | 0x08 | 1);  /* its NodeStatus */
    put_op(&b, 0, D_OTHER);
    put_byte(&b, 0x80 | 0x08 | 1);  /* a member's: refused */
    put_goodbye(&b, 0, 1);
    write_seed("fuzz_daemon", dname("nodes"), &b);

    /* A node relays two members (relay.h): peer 1 links as fz-a, relays
     * member 1's Hello, member 2's Hello, a Heartbeat of member 1, bytes
     * that are no Envelope for member 2, member 1's end; peer 0, a
     * member, relays (refused). */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 1);
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x20 | 1);          /* NodeHello fz-a */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x0c | 1);          /* member 1: Hello */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x10 | 0x0c | 1);   /* member 2: Hello */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x20 | 0x0c | 1);   /* member 1: Heartbeat */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x70 | 0x0c | 1);   /* member 2: no Envelope */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x40 | 0x0c | 1);   /* member 1: closed */
    put_op(&b, 0, D_OTHER);
    put_byte(&b, 0x80 | 0x0c | 1);          /* a member's: refused */
    write_seed("fuzz_daemon", dname("relay"), &b);

    /* A node relays a weft command's Query (asker 2): its answer goes
     * back on the link, piece by piece as the node says its asker read
     * (NodeRelay.more). */
    put_config(&b, 0);
    put_hello(&b, 0, 0, 0, 1);
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x20 | 1);          /* NodeHello fz-a */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x30 | 0x0c | 1);   /* asker 2: Query */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x50 | 0x0c | 1);   /* asker 2: more */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x50 | 0x0c | 1);   /* and more */
    put_op(&b, 1, D_OTHER);
    put_byte(&b, 0x80 | 0x08 | 1);          /* the link's NodeStatus */
    write_seed("fuzz_daemon", dname("relay-query"), &b);
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

void daemon_client_seeds(void)
{
    daemon_seeds();
    d_tcp = 1;                  /* the same over TCP */
    daemon_seeds();
    tcp_spoilt_seeds();
    client_seeds();
}
