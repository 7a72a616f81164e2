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

#include "bind.h"
#include "codec.h"
#include "frame.h"
#include "seeds.h"
#include "weft_errors.h"

/* ---- record streams ---------------------------------------------------- */

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

/* The frames of the handshake over TCP, into all. */
static void handshake_frames(buf *all)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Auth auth = WEFT__AUTH__INIT;
    Weft__AuthAck auth_ack = WEFT__AUTH_ACK__INIT;
    Weft__Challenge challenge = WEFT__CHALLENGE__INIT;

    /* What weftd sends first over TCP. */
    challenge.protocol_version = WEFT_PROTOCOL_VERSION;
    challenge.nonce.data = (uint8_t *)"0123456789abcdef";
    challenge.nonce.len = WEFT_AUTH_NONCE;
    challenge.server_uid = 995;
    env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &challenge;
    put_frame(all, &env);
    /* What a TCP client sends then (the credential's text is made up:
     * only its framing matters here). */
    auth.protocol_version = WEFT_PROTOCOL_VERSION;
    auth.credential.data = (uint8_t *)"MUNGE:AwQFAAB0ZXN0Y3JlZGVudGlhbA==:";
    auth.credential.len = strlen((const char *)auth.credential.data);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &auth;
    put_frame(all, &env);
    auth_ack.proof.data = (uint8_t *)"0123456789abcdef";
    auth_ack.proof.len = 16;
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
    env.auth_ack = &auth_ack;
    put_frame(all, &env);
}

/* A credential's payload (proto/bind.h) as the whole input: a client at
 * 127.0.0.1:40000 of weftd at [::1]:5555. */
static void bind_seed(void)
{
    weft_bind bind;
    uint8_t payload[WEFT_BIND_PAYLOAD];
    buf b;

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
    buf recs = { .len = 0 }, evs = { .len = 0 }, all = { .len = 0 }, b;
    uint8_t *err;
    ssize_t n;

    put_byte(&all, 3);          /* default max_frame */
    put_byte(&all, 0x5a);       /* chunking seed */

    handshake_frames(&all);

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

    bind_seed();
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

/* fuzz_uplink: a head that links the node and beats (then hangs up), one
 * that relays frames of a process the node does not forward, one that
 * proves another nonce, one that refuses, one of another uid. */
static void uplink_seeds(void)
{
    static const struct {
        const char *name;
        uint8_t bytes[12];
        size_t n;
    } seeds[] = {
        { "linked", { 0x00, 0, 5, 1, 1, 5, 0, 7 }, 8 },
        { "relay", { 0x00, 0, 5, 6, 3, 2, 0xaa, 0x55, 6, 4, 0, 7 }, 12 },
        { "bad-proof", { 0x04, 0, 5, 1 }, 4 },
        { "refused", { 0x08 }, 1 },
        { "other-uid", { 0x01, 0, 5 }, 3 },
        { "tampered", { 0x00, 0, 5, 5, 1 }, 5 },
    };

    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        buf b = { .len = 0 };
        put(&b, seeds[i].bytes, seeds[i].n);
        write_seed("fuzz_uplink", seeds[i].name, &b);
    }
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
    daemon_client_seeds();
    journal_seeds();
    text_seeds();
    uplink_seeds();
    return 0;
}
