/* test_frame.c - framing of the wire protocol (proto/frame.c): the frame
 * reader fed byte by byte and in chunks, the max_frame limit checked on
 * the header, garbage and empty envelopes refused by weft_frame_unpack,
 * pack/unpack round trips of every Envelope message kind (the test fails
 * when weft.proto gains a kind it does not build), and Error frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "weft_errors.h"

/* ---- one envelope of each kind -------------------------------------------- */

#define BIG_RECORDS 100000

typedef struct kinds {
    Weft__Hello hello;
    Weft__LocationSeq seqs[3];
    Weft__LocationSeq *seqp[3];
    Weft__HelloAck hello_ack;
    Weft__Definitions defs;
    Weft__EventBatch batch;
    Weft__Ack ack;
    Weft__LocationEnd ends[2];
    Weft__LocationEnd *endp[2];
    Weft__Goodbye goodbye;
    Weft__Error error;
    Weft__ClockSync clock_sync;
    Weft__Auth auth;
    Weft__AuthAck auth_ack;
    Weft__Challenge challenge;
    Weft__NodeHello node_hello;
    Weft__NodeHelloAck node_hello_ack;
    Weft__NodeStatus node_status;
    Weft__NodeRelay node_relay;
    Weft__Heartbeat heartbeat;
    Weft__Query query;
    Weft__Answer answer;
    Weft__ImportTrace import;
    Weft__ImportMember imember;
    Weft__ImportMember *imemberp[1];
    Weft__Tag tags[2];
    Weft__Tag *tagp[2];
    uint8_t defbytes[5];
    uint8_t *big;
} kinds;

/* The session's handshake: Hello (with tags) and HelloAck. */
static void kinds_init_hello(kinds *k)
{
    weft__hello__init(&k->hello);
    k->hello.protocol_version = WEFT_PROTOCOL_VERSION;
    k->hello.trace = (char *)"name with \"quotes\"\nand \xc3\xa9";
    k->hello.rank = 3;
    k->hello.size = UINT32_MAX;
    k->hello.hostname = (char *)"node17";
    k->hello.pid = 4242;
    k->hello.uid = 1000;
    k->hello.command = (char *)"./app -x";
    k->hello.job_id = (char *)"";
    k->hello.timer_resolution = 1000000000;
    k->hello.realtime_ns = UINT64_MAX;
    k->hello.clock_at_realtime = 12345;
    for (size_t i = 0; i < 2; i++) {
        weft__tag__init(&k->tags[i]);
        k->tagp[i] = &k->tags[i];
    }
    k->tags[0].key = (char *)"app";
    k->tags[0].value = (char *)"lulesh";
    k->tags[1].key = (char *)"size";
    k->tags[1].value = (char *)"it's \"large\"";
    k->hello.n_tags = 2;
    k->hello.tags = k->tagp;

    weft__hello_ack__init(&k->hello_ack);
    for (size_t i = 0; i < 3; i++) {
        weft__location_seq__init(&k->seqs[i]);
        k->seqs[i].location = (uint32_t)i;
        k->seqs[i].seq = 100 * i;
        k->seqp[i] = &k->seqs[i];
    }
    k->hello_ack.protocol_version = WEFT_PROTOCOL_VERSION;
    k->hello_ack.n_locations = 3;
    k->hello_ack.locations = k->seqp;
    k->hello_ack.definitions_seq = 7;
    k->hello_ack.server = (char *)"weftd test";
}

/* What a session sends and gets: Definitions, a batch of BIG_RECORDS
 * bytes, Ack, Goodbye, Error. */
static void kinds_init_session(kinds *k)
{
    weft__definitions__init(&k->defs);
    memcpy(k->defbytes, "\x41\x00\x00\x00\x01", 5);
    k->defs.seq = 1;
    k->defs.records.data = k->defbytes;
    k->defs.records.len = sizeof k->defbytes;

    weft__event_batch__init(&k->batch);
    k->big = malloc(BIG_RECORDS);
    assert_non_null(k->big);
    for (size_t i = 0; i < BIG_RECORDS; i++)
        k->big[i] = (uint8_t)(i * 7);
    k->batch.location = 2;
    k->batch.seq = UINT64_MAX;
    k->batch.base_time = 99;
    k->batch.events = 12345;
    k->batch.records.data = k->big;
    k->batch.records.len = BIG_RECORDS;

    weft__ack__init(&k->ack);
    k->ack.definitions = 1;
    k->ack.location = 9;
    k->ack.seq = 77;

    weft__goodbye__init(&k->goodbye);
    for (size_t i = 0; i < 2; i++) {
        weft__location_end__init(&k->ends[i]);
        k->ends[i].location = (uint32_t)i;
        k->ends[i].events = 1000 + i;
        k->ends[i].dropped = i;
        k->endp[i] = &k->ends[i];
    }
    k->goodbye.n_locations = 2;
    k->goodbye.locations = k->endp;

    weft__error__init(&k->error);
    k->error.code = WEFT_EREF;
    k->error.message = (char *)"Enter.region: 9 is not defined";
}

/* Authentication, questions, imports and clock synchronisation. */
static void kinds_init_other(kinds *k)
{
    weft__auth__init(&k->auth);
    k->auth.protocol_version = WEFT_PROTOCOL_VERSION;
    k->auth.credential.data = (uint8_t *)"MUNGE:AwQDAACm9Ot0xqA=:";
    k->auth.credential.len = strlen("MUNGE:AwQDAACm9Ot0xqA=:");
    weft__auth_ack__init(&k->auth_ack);
    weft__heartbeat__init(&k->heartbeat);
    weft__query__init(&k->query);
    k->query.protocol_version = WEFT_PROTOCOL_VERSION;
    k->query.kind = WEFT__QUERY__KIND__REMOVE;
    k->query.trace = (char *)"ring-20261124T101010-1";
    k->query.force = 1;
    weft__answer__init(&k->answer);
    k->answer.data.data = (uint8_t *)"removed trace 'ring'\n";
    k->answer.data.len = strlen("removed trace 'ring'\n");
    k->answer.last = 1;
    k->auth_ack.proof.data = (uint8_t *)"0123456789abcdef";
    k->auth_ack.proof.len = 16;
    weft__challenge__init(&k->challenge);
    k->challenge.protocol_version = WEFT_PROTOCOL_VERSION;
    k->challenge.nonce.data = (uint8_t *)"fedcba9876543210";
    k->challenge.nonce.len = 16;
    k->challenge.server_uid = 998;
    weft__node_hello__init(&k->node_hello);
    k->node_hello.protocol_version = WEFT_PROTOCOL_VERSION;
    k->node_hello.node = (char *)"node-017.cluster";
    k->node_hello.server = (char *)"0.1";
    weft__node_hello_ack__init(&k->node_hello_ack);
    k->node_hello_ack.protocol_version = WEFT_PROTOCOL_VERSION;
    k->node_hello_ack.head = (char *)"head";
    k->node_hello_ack.server = (char *)"0.1";
    k->node_hello_ack.heartbeat = UINT32_MAX;
    weft__node_status__init(&k->node_status);
    k->node_status.connections = 2600;
    k->node_status.recording = UINT32_MAX;
    k->node_status.events = UINT64_MAX;
    k->node_status.written = 1;
    weft__node_relay__init(&k->node_relay);
    k->node_relay.member = UINT32_MAX;
    k->node_relay.frame.data = (uint8_t *)"\x0a\x00";
    k->node_relay.frame.len = 2;
    k->node_relay.closed = 1;
    k->node_relay.uid = 1000;
    k->node_relay.gid = UINT32_MAX;
    k->node_relay.pid = 4194304;

    weft__import_trace__init(&k->import);
    k->import.name = (char *)"scorep-run";
    k->import.path = (char *)"/home/u/scorep-20261127/archive";
    k->import.state = (char *)"complete";
    k->import.members = 1;
    k->import.events = 42;
    k->import.timer_resolution = 1000000000;
    weft__import_member__init(&k->imember);
    k->imemberp[0] = &k->imember;
    k->import.n_member_rows = 1;
    k->import.member_rows = k->imemberp;

    weft__clock_sync__init(&k->clock_sync);
    k->clock_sync.id = 5;
    k->clock_sync.client_time = UINT64_MAX - 1;
    k->clock_sync.server_time = 1234567890123ull;
}

/* One message of every kind, each field at an edge where it has one. */
static void kinds_init(kinds *k)
{
    memset(k, 0, sizeof *k);
    kinds_init_hello(k);
    kinds_init_session(k);
    kinds_init_other(k);
}

/* The envelope of message kind `kind` (a msg_case). */
static Weft__Envelope envelope_of(kinds *k, int kind)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;

    env.msg_case = (Weft__Envelope__MsgCase)kind;
    switch (kind) {
    case WEFT__ENVELOPE__MSG_HELLO: env.hello = &k->hello; break;
    case WEFT__ENVELOPE__MSG_HELLO_ACK: env.hello_ack = &k->hello_ack; break;
    case WEFT__ENVELOPE__MSG_DEFINITIONS: env.definitions = &k->defs; break;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH: env.event_batch = &k->batch; break;
    case WEFT__ENVELOPE__MSG_ACK: env.ack = &k->ack; break;
    case WEFT__ENVELOPE__MSG_GOODBYE: env.goodbye = &k->goodbye; break;
    case WEFT__ENVELOPE__MSG_ERROR: env.error = &k->error; break;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC: env.clock_sync = &k->clock_sync; break;
    case WEFT__ENVELOPE__MSG_AUTH: env.auth = &k->auth; break;
    case WEFT__ENVELOPE__MSG_AUTH_ACK: env.auth_ack = &k->auth_ack; break;
    case WEFT__ENVELOPE__MSG_HEARTBEAT: env.heartbeat = &k->heartbeat; break;
    case WEFT__ENVELOPE__MSG_QUERY: env.query = &k->query; break;
    case WEFT__ENVELOPE__MSG_ANSWER: env.answer = &k->answer; break;
    case WEFT__ENVELOPE__MSG_IMPORT_TRACE: env.import_trace = &k->import; break;
    case WEFT__ENVELOPE__MSG_CHALLENGE: env.challenge = &k->challenge; break;
    case WEFT__ENVELOPE__MSG_NODE_HELLO: env.node_hello = &k->node_hello; break;
    case WEFT__ENVELOPE__MSG_NODE_HELLO_ACK:
        env.node_hello_ack = &k->node_hello_ack;
        break;
    case WEFT__ENVELOPE__MSG_NODE_STATUS:
        env.node_status = &k->node_status;
        break;
    case WEFT__ENVELOPE__MSG_NODE_RELAY:
        env.node_relay = &k->node_relay;
        break;
    default:
        fail_msg("Envelope kind %d has no test message: add it here", kind);
    }
    return env;
}

static size_t nkinds(void)
{
    return weft__envelope__descriptor.n_fields;
}

/* The msg_case of the i-th oneof member of Envelope. */
static int kind_at(size_t i)
{
    return (int)weft__envelope__descriptor.fields[i].id;
}

static void check_fields(int kind, const Weft__Envelope *got, kinds *k)
{
    assert_int_equal(got->msg_case, kind);
    switch (kind) {
    case WEFT__ENVELOPE__MSG_HELLO:
        assert_string_equal(got->hello->trace, k->hello.trace);
        assert_int_equal(got->hello->size, UINT32_MAX);
        assert_true(got->hello->realtime_ns == UINT64_MAX);
        assert_string_equal(got->hello->job_id, "");
        assert_int_equal(got->hello->n_tags, 2);
        assert_string_equal(got->hello->tags[1]->key, "size");
        assert_string_equal(got->hello->tags[1]->value, k->tags[1].value);
        break;
    case WEFT__ENVELOPE__MSG_HELLO_ACK:
        assert_int_equal(got->hello_ack->n_locations, 3);
        assert_int_equal(got->hello_ack->locations[2]->seq, 200);
        assert_string_equal(got->hello_ack->server, "weftd test");
        break;
    case WEFT__ENVELOPE__MSG_DEFINITIONS:
        assert_int_equal(got->definitions->records.len, 5);
        assert_memory_equal(got->definitions->records.data, k->defbytes, 5);
        break;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH:
        assert_true(got->event_batch->seq == UINT64_MAX);
        assert_int_equal(got->event_batch->events, 12345);
        assert_int_equal(got->event_batch->records.len, BIG_RECORDS);
        assert_memory_equal(got->event_batch->records.data, k->big,
                            BIG_RECORDS);
        break;
    case WEFT__ENVELOPE__MSG_ACK:
        assert_true(got->ack->definitions);
        assert_int_equal(got->ack->seq, 77);
        break;
    case WEFT__ENVELOPE__MSG_GOODBYE:
        assert_int_equal(got->goodbye->n_locations, 2);
        assert_int_equal(got->goodbye->locations[1]->events, 1001);
        break;
    case WEFT__ENVELOPE__MSG_ERROR:
        assert_int_equal(got->error->code, WEFT_EREF);
        assert_string_equal(got->error->message, k->error.message);
        break;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC:
        assert_int_equal(got->clock_sync->id, 5);
        assert_true(got->clock_sync->client_time == UINT64_MAX - 1);
        assert_true(got->clock_sync->server_time == 1234567890123ull);
        break;
    case WEFT__ENVELOPE__MSG_AUTH:
        assert_int_equal(got->auth->protocol_version, WEFT_PROTOCOL_VERSION);
        assert_int_equal(got->auth->credential.len, k->auth.credential.len);
        assert_memory_equal(got->auth->credential.data,
                            k->auth.credential.data, k->auth.credential.len);
        break;
    case WEFT__ENVELOPE__MSG_AUTH_ACK:
        assert_int_equal(got->auth_ack->proof.len, 16);
        assert_memory_equal(got->auth_ack->proof.data, "0123456789abcdef", 16);
        break;
    case WEFT__ENVELOPE__MSG_CHALLENGE:
        assert_int_equal(got->challenge->server_uid, 998);
        assert_int_equal(got->challenge->nonce.len, 16);
        break;
    case WEFT__ENVELOPE__MSG_NODE_HELLO:
        assert_string_equal(got->node_hello->node, "node-017.cluster");
        assert_string_equal(got->node_hello->server, "0.1");
        break;
    case WEFT__ENVELOPE__MSG_NODE_STATUS:
        assert_int_equal(got->node_status->connections, 2600);
        assert_int_equal(got->node_status->recording, UINT32_MAX);
        assert_true(got->node_status->events == UINT64_MAX);
        assert_int_equal(got->node_status->written, 1);
        break;
    case WEFT__ENVELOPE__MSG_NODE_RELAY:
        assert_int_equal(got->node_relay->member, UINT32_MAX);
        assert_int_equal(got->node_relay->frame.len, 2);
        assert_memory_equal(got->node_relay->frame.data, "\x0a\x00", 2);
        assert_true(got->node_relay->closed);
        assert_int_equal(got->node_relay->uid, 1000);
        assert_int_equal(got->node_relay->gid, UINT32_MAX);
        assert_int_equal(got->node_relay->pid, 4194304);
        break;
    case WEFT__ENVELOPE__MSG_NODE_HELLO_ACK:
        assert_string_equal(got->node_hello_ack->head, "head");
        assert_int_equal(got->node_hello_ack->heartbeat, UINT32_MAX);
        break;
    case WEFT__ENVELOPE__MSG_HEARTBEAT:
        assert_non_null(got->heartbeat);
        break;
    case WEFT__ENVELOPE__MSG_QUERY:
        assert_int_equal(got->query->kind, WEFT__QUERY__KIND__REMOVE);
        assert_string_equal(got->query->trace, k->query.trace);
        assert_true(got->query->force);
        break;
    case WEFT__ENVELOPE__MSG_ANSWER:
        assert_true(got->answer->last);
        assert_int_equal(got->answer->data.len, k->answer.data.len);
        assert_memory_equal(got->answer->data.data, k->answer.data.data,
                            k->answer.data.len);
        break;
    case WEFT__ENVELOPE__MSG_IMPORT_TRACE:
        assert_string_equal(got->import_trace->path, k->import.path);
        assert_int_equal(got->import_trace->events, 42);
        assert_int_equal(got->import_trace->n_member_rows, 1);
        break;
    default:
        fail_msg("unexpected kind %d", kind);
    }
}

/* ---- round trip ------------------------------------------------------------ */

static void test_pack_unpack_every_kind(void **state)
{
    kinds k;

    (void)state;
    kinds_init(&k);
    assert_true(nkinds() >= 7);
    for (size_t i = 0; i < nkinds(); i++) {
        int kind = kind_at(i);
        Weft__Envelope env = envelope_of(&k, kind);
        Weft__Envelope *got;
        uint8_t *buf = NULL, *again = NULL;
        ssize_t n, n2;
        uint32_t len;

        assert_string_not_equal(weft_frame_kind_name(kind), "none");
        n = weft_frame_pack(&env, &buf);
        assert_true(n > WEFT_FRAME_HEADER);
        len = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
              (uint32_t)buf[2] << 8 | buf[3];
        assert_int_equal(len, (size_t)n - WEFT_FRAME_HEADER);
        got = weft_frame_unpack(buf + WEFT_FRAME_HEADER, len);
        assert_non_null(got);
        check_fields(kind, got, &k);
        /* Packing what we unpacked gives the same bytes. */
        n2 = weft_frame_pack(got, &again);
        assert_int_equal(n2, n);
        assert_memory_equal(again, buf, (size_t)n);
        weft_frame_free_envelope(got);
        free(again);
        free(buf);
    }
    assert_string_equal(weft_frame_kind_name(WEFT__ENVELOPE__MSG__NOT_SET),
                        "none");
    weft_frame_free_envelope(NULL);
    free(k.big);
}

/* ---- the reader ------------------------------------------------------------ */

typedef struct stream {
    uint8_t *buf;
    size_t len;
    size_t nframes;
    size_t starts[64];  /* offset of each frame's header */
    size_t lens[64];    /* payload length of each frame */
} stream;

/* All kinds, an empty envelope between them, then all kinds again. */
static void stream_build(stream *s, kinds *k)
{
    Weft__Envelope empty = WEFT__ENVELOPE__INIT;

    memset(s, 0, sizeof *s);
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i <= nkinds(); i++) {
            Weft__Envelope env = i < nkinds() ? envelope_of(k, kind_at(i))
                                              : empty;
            uint8_t *f = NULL;
            ssize_t n;
            if (round == 1 && i == nkinds())
                break;
            n = weft_frame_pack(&env, &f);
            assert_true(n >= WEFT_FRAME_HEADER);
            s->buf = realloc(s->buf, s->len + (size_t)n);
            assert_non_null(s->buf);
            memcpy(s->buf + s->len, f, (size_t)n);
            assert_true(s->nframes < 64);
            s->starts[s->nframes] = s->len;
            s->lens[s->nframes] = (size_t)n - WEFT_FRAME_HEADER;
            s->nframes++;
            s->len += (size_t)n;
            free(f);
        }
    }
}

/* Feeds s in pieces of `chunk` bytes and checks every frame. */
static void feed_in_chunks(const stream *s, size_t chunk)
{
    weft_frame_reader r;
    size_t off = 0, got = 0;

    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    while (off < s->len) {
        size_t piece = s->len - off < chunk ? s->len - off : chunk;
        const uint8_t *p = s->buf + off;
        size_t left = piece;
        for (;;) {
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&r, &p, &left, &frame, &flen);
            assert_true(rc == 0 || rc == 1);
            if (rc == 0) {
                assert_int_equal(left, 0);
                break;
            }
            assert_true(got < s->nframes);
            assert_int_equal(flen, s->lens[got]);
            assert_memory_equal(frame, s->buf + s->starts[got] +
                                WEFT_FRAME_HEADER, flen);
            free(frame);
            got++;
        }
        off += piece;
        /* What is held is exactly what is not yet a whole frame. */
        assert_int_equal(weft_frame_reader_pending(&r),
                         off - (got < s->nframes ? s->starts[got] : off));
    }
    assert_int_equal(got, s->nframes);
    assert_int_equal(weft_frame_reader_pending(&r), 0);
    weft_frame_reader_free(&r);
}

static void test_reader_chunks(void **state)
{
    static const size_t chunks[] = { 1, 2, 3, 5, 7, 64, 4096, 65536,
                                     SIZE_MAX };
    kinds k;
    stream s;

    (void)state;
    kinds_init(&k);
    stream_build(&s, &k);
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++)
        feed_in_chunks(&s, chunks[i]);
    free(s.buf);
    free(k.big);
}

/* The reader's memory follows what arrived, not what a header
 * announced: 64 KiB first, then doubling, never past the frame. */
static void test_reader_memory_follows_bytes(void **state)
{
    const uint32_t n = 1u << 20;
    uint8_t hdr[4] = { n >> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff };
    uint8_t *body = calloc(1, n), *frame = NULL;
    weft_frame_reader r;
    const uint8_t *p = hdr;
    size_t left = sizeof hdr;
    uint32_t flen = 0;

    (void)state;
    assert_non_null(body);
    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 0);
    assert_int_equal(weft_frame_reader_allocated(&r), WEFT_FRAME_FIRST_CHUNK);
    p = body;
    left = 10;
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 0);
    assert_int_equal(weft_frame_reader_allocated(&r), WEFT_FRAME_FIRST_CHUNK);
    left = WEFT_FRAME_FIRST_CHUNK; /* 10 + 64 KiB: one doubling */
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 0);
    assert_int_equal(weft_frame_reader_allocated(&r),
                     2 * WEFT_FRAME_FIRST_CHUNK);
    left = n - 10 - WEFT_FRAME_FIRST_CHUNK;
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 1);
    assert_int_equal(flen, n);
    assert_int_equal(weft_frame_reader_allocated(&r), 0);
    free(frame);
    /* A small frame takes its own length. */
    hdr[0] = hdr[1] = 0;
    hdr[2] = 0;
    hdr[3] = 100;
    p = hdr;
    left = sizeof hdr;
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 0);
    assert_int_equal(weft_frame_reader_allocated(&r), 100);
    weft_frame_reader_free(&r);
    free(body);
}

static void test_reader_frames_unpack(void **state)
{
    kinds k;
    stream s;
    weft_frame_reader r;
    const uint8_t *p;
    size_t left;
    size_t i = 0;

    (void)state;
    kinds_init(&k);
    stream_build(&s, &k);
    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    p = s.buf;
    left = s.len;
    for (;;) {
        uint8_t *frame = NULL;
        uint32_t flen = 0;
        Weft__Envelope *env;
        int rc = weft_frame_reader_feed(&r, &p, &left, &frame, &flen);
        if (rc == 0)
            break;
        assert_int_equal(rc, 1);
        env = weft_frame_unpack(frame, flen);
        if (i % (nkinds() + 1) == nkinds()) {
            assert_int_equal(flen, 0); /* the empty envelope */
            assert_null(env);
        } else {
            assert_non_null(env);
            check_fields(kind_at(i % (nkinds() + 1)), env, &k);
        }
        weft_frame_free_envelope(env);
        free(frame);
        i++;
    }
    assert_int_equal(i, s.nframes);
    weft_frame_reader_free(&r);
    free(s.buf);
    free(k.big);
}

static int feed_header(weft_frame_reader *r, uint32_t announced,
                       size_t nbytes)
{
    uint8_t hdr[4] = { (uint8_t)(announced >> 24), (uint8_t)(announced >> 16),
                       (uint8_t)(announced >> 8), (uint8_t)announced };
    const uint8_t *p = hdr;
    uint8_t *frame = NULL;
    uint32_t flen = 0;
    int rc = 0;

    /* One byte at a time: the verdict must come with the fourth. */
    for (size_t i = 0; i < nbytes; i++) {
        size_t one = 1;
        rc = weft_frame_reader_feed(r, &p, &one, &frame, &flen);
        if (i + 1 < WEFT_FRAME_HEADER)
            assert_int_equal(rc, 0);
    }
    assert_null(frame);
    return rc;
}

static void test_reader_limit(void **state)
{
    weft_frame_reader r;
    uint8_t payload[64] = { 0 };
    const uint8_t *p;
    uint8_t *frame = NULL;
    uint32_t flen = 0;
    size_t left;

    (void)state;
    /* Exactly max_frame is accepted. */
    weft_frame_reader_init(&r, 64);
    assert_int_equal(feed_header(&r, 64, 4), 0);
    p = payload;
    left = sizeof payload;
    assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen), 1);
    assert_int_equal(flen, 64);
    free(frame);
    weft_frame_reader_free(&r);

    /* One more is refused when the header is complete, with no payload
     * buffer allocated. */
    weft_frame_reader_init(&r, 64);
    assert_int_equal(feed_header(&r, 65, 4), WEFT_ETOOBIG);
    assert_null(r.payload);
    weft_frame_reader_free(&r);

    /* 4 GiB - 1 announced against the default limit: refused at once,
     * never allocated (ASan would report an allocation this large). */
    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    assert_int_equal(feed_header(&r, UINT32_MAX, 4), WEFT_ETOOBIG);
    assert_null(r.payload);
    weft_frame_reader_free(&r);
    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    assert_int_equal(feed_header(&r, WEFT_DEFAULT_MAX_FRAME + 1, 4),
                     WEFT_ETOOBIG);
    assert_null(r.payload);
    weft_frame_reader_free(&r);

    /* Header split over calls with a payload following in the same call. */
    weft_frame_reader_init(&r, 64);
    assert_int_equal(feed_header(&r, 3, 2), 0);
    assert_int_equal(weft_frame_reader_pending(&r), 2);
    {
        uint8_t rest[] = { 0, 3, 'a', 'b', 'c', 0xee };
        p = rest;
        left = sizeof rest;
        assert_int_equal(weft_frame_reader_feed(&r, &p, &left, &frame, &flen),
                         1);
        assert_int_equal(flen, 3);
        assert_memory_equal(frame, "abc", 3);
        assert_int_equal(left, 1); /* the next frame's byte stays */
        free(frame);
    }
    weft_frame_reader_free(&r);
}

/* ---- unpack refuses garbage ------------------------------------------------ */

static void test_unpack_garbage(void **state)
{
    static const struct { const char *bytes; size_t len; } bad[] = {
        { "\xff", 1 },                 /* wire type 7 */
        { "\x0a\x10\x01", 3 },         /* hello longer than the input */
        { "\x08\x80", 2 },             /* truncated varint */
        { "\x0a\x02\xff\xff", 4 },     /* hello with garbage inside */
        { "\x3a\x03\x08\x80\x80", 5 }, /* error whose varint is cut */
        { "\x78\x01", 2 },             /* only an unknown field: no message */
        { "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12 },
    };
    kinds k;
    Weft__Envelope env;
    uint8_t *buf = NULL;
    ssize_t n;
    uint64_t x = 88172645463325252ull;

    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (weft_frame_unpack((const uint8_t *)bad[i].bytes, bad[i].len))
            fail_msg("garbage %zu unpacked", i);

    /* The empty envelope: valid protobuf, no message. */
    env = (Weft__Envelope)WEFT__ENVELOPE__INIT;
    n = weft_frame_pack(&env, &buf);
    assert_int_equal(n, WEFT_FRAME_HEADER);
    assert_null(weft_frame_unpack(buf + WEFT_FRAME_HEADER, 0));
    free(buf);

    /* Every prefix and random bytes: no crash; whatever unpacks has a
     * message. */
    kinds_init(&k);
    env = envelope_of(&k, WEFT__ENVELOPE__MSG_HELLO);
    n = weft_frame_pack(&env, &buf);
    assert_true(n > 0);
    for (size_t cut = 0; cut < (size_t)n - WEFT_FRAME_HEADER; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        Weft__Envelope *e;
        assert_non_null(copy);
        memcpy(copy, buf + WEFT_FRAME_HEADER, cut);
        e = weft_frame_unpack(copy, cut);
        if (e)
            assert_int_not_equal(e->msg_case, WEFT__ENVELOPE__MSG__NOT_SET);
        weft_frame_free_envelope(e);
        free(copy);
    }
    free(buf);
    free(k.big);
    for (int round = 0; round < 2000; round++) {
        uint8_t junk[48];
        size_t len = (size_t)(round % (int)sizeof junk) + 1;
        Weft__Envelope *e;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            junk[i] = (uint8_t)x;
        }
        e = weft_frame_unpack(junk, len);
        if (e)
            assert_int_not_equal(e->msg_case, WEFT__ENVELOPE__MSG__NOT_SET);
        weft_frame_free_envelope(e);
    }
}

/* ---- Error frames ------------------------------------------------------------ */

static void test_pack_error(void **state)
{
    uint8_t *buf = NULL;
    Weft__Envelope *env;
    char longmsg[2000];
    ssize_t n;

    (void)state;
    n = weft_frame_pack_error(&buf, WEFT_EPROTO, "bad %s at byte %d",
                              "frame", 12);
    assert_true(n > WEFT_FRAME_HEADER);
    env = weft_frame_unpack(buf + WEFT_FRAME_HEADER,
                            (size_t)n - WEFT_FRAME_HEADER);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_ERROR);
    assert_int_equal(env->error->code, WEFT_EPROTO);
    assert_string_equal(env->error->message, "bad frame at byte 12");
    weft_frame_free_envelope(env);
    free(buf);

    /* A long message is cut, not overflowed; the frame stays valid. */
    memset(longmsg, 'm', sizeof longmsg - 1);
    longmsg[sizeof longmsg - 1] = 0;
    n = weft_frame_pack_error(&buf, WEFT_ETOOBIG, "%s", longmsg);
    assert_true(n > 0);
    env = weft_frame_unpack(buf + WEFT_FRAME_HEADER,
                            (size_t)n - WEFT_FRAME_HEADER);
    assert_non_null(env);
    assert_int_equal(env->error->code, WEFT_ETOOBIG);
    assert_true(strlen(env->error->message) > 0);
    assert_true(strlen(env->error->message) < sizeof longmsg - 1);
    assert_memory_equal(env->error->message, longmsg,
                        strlen(env->error->message));
    weft_frame_free_envelope(env);
    free(buf);
}

/* Fields this protocol version does not define are refused, at the top
 * and inside a message (protobuf-c would keep and re-pack them). */
static void test_unknown_fields_refused(void **state)
{
    /* Envelope { error (7) { code (1) = 1 } } */
    static const uint8_t known[] = { 0x3a, 0x02, 0x08, 0x01 };
    /* ... plus field 15 (varint) at the top */
    static const uint8_t top[] = { 0x3a, 0x02, 0x08, 0x01, 0x78, 0x01 };
    /* ... plus field 5 (bytes) inside the Error */
    static const uint8_t inner[] = { 0x3a, 0x05, 0x08, 0x01, 0x2a, 0x01,
                                     0x41 };
    Weft__Envelope *env = weft_frame_unpack(known, sizeof known);

    (void)state;
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_ERROR);
    weft_frame_free_envelope(env);
    assert_null(weft_frame_unpack(top, sizeof top));
    assert_null(weft_frame_unpack(inner, sizeof inner));
}

/* A MemberSums of many locations, packed, cut into pieces of at most
 * max bytes between its fields (as a node sends sums beyond its head's
 * max_frame): each piece is a MemberSums, the pieces joined are the
 * message, and it unpacks to what was packed. A field longer than max
 * cannot be cut (0); bytes that are no message are refused. */
static void test_cut(void **state)
{
    Weft__MemberSums s = WEFT__MEMBER_SUMS__INIT, *back;
    Weft__SumsLocation l[40], *lp[40];
    uint8_t *buf, *joined;
    size_t len, at = 0, pieces = 0;
    ssize_t n;
    static const uint8_t truncated[] = { 0x52, 0x05, 0x08 }; /* field 10 */
    static const uint8_t group[] = { 0x0b, 0x0c };  /* wire type 3 */

    (void)state;
    for (int i = 0; i < 40; i++) {
        weft__sums_location__init(&l[i]);
        l[i].location = (uint64_t)i;
        l[i].events = 1000u * (uint32_t)i;
        lp[i] = &l[i];
    }
    s.rank = 3;
    s.resolution = 1000000000;
    s.n_locations = 40;
    s.locations = lp;
    len = weft__member_sums__get_packed_size(&s);
    buf = malloc(len);
    joined = malloc(len);
    assert_non_null(buf);
    assert_non_null(joined);
    weft__member_sums__pack(&s, buf);
    while (at < len) {
        n = weft_frame_cut(buf + at, len - at, 64);
        assert_true(n > 0 && n <= 64);
        back = weft__member_sums__unpack(NULL, (size_t)n, buf + at);
        assert_non_null(back);  /* a piece is a message of its own */
        weft__member_sums__free_unpacked(back, NULL);
        memcpy(joined + at, buf + at, (size_t)n);
        at += (size_t)n;
        pieces++;
    }
    assert_true(pieces > 1);
    assert_memory_equal(joined, buf, len);
    back = weft__member_sums__unpack(NULL, len, joined);
    assert_non_null(back);
    assert_int_equal(back->rank, 3);
    assert_int_equal(back->n_locations, 40);
    assert_int_equal(back->locations[39]->events, 39000);
    assert_int_equal(back->locations[39]->location, 39);
    weft__member_sums__free_unpacked(back, NULL);
    assert_int_equal(weft_frame_cut(buf, len, len), (ssize_t)len);
    /* the first field (rank, 2 bytes) alone beyond 1 byte */
    assert_int_equal(weft_frame_cut(buf, len, 1), 0);
    assert_int_equal(weft_frame_cut(truncated, sizeof truncated, 64),
                     WEFT_EPROTO);
    assert_int_equal(weft_frame_cut(group, sizeof group, 64), WEFT_EPROTO);
    free(buf);
    free(joined);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_unpack_every_kind),
        cmocka_unit_test(test_reader_chunks),
        cmocka_unit_test(test_reader_frames_unpack),
        cmocka_unit_test(test_reader_memory_follows_bytes),
        cmocka_unit_test(test_reader_limit),
        cmocka_unit_test(test_unpack_garbage),
        cmocka_unit_test(test_pack_error),
        cmocka_unit_test(test_unknown_fields_refused),
        cmocka_unit_test(test_cut),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
