/* weft-rawpeer.c - a misbehaving client for tests: speaks the wire
 * protocol by hand to send malformed or malicious input to weftd.
 *
 *   weft-rawpeer HOST:PORT MODE [TRACE]       (or unix:PATH for HOST:PORT)
 *   weft-rawpeer HOST:PORT member TRACE [--rank R] [--size N] [--host H]
 *       [--pid P] [--job ID] [--run RUN] [--command CMD] [--tag K=V]... [--tags N]
 *       [--scenario profile|compute|many|none]
 *
 * Prints the Error message weftd answered with on stdout. Exit 0 when an
 * Error arrived (or, for MODE "valid", when the trace was accepted and the
 * connection closed after Goodbye), 1 otherwise, 2 on usage errors.
 *
 * MODE "short" sends two events and a Goodbye that reports three sent;
 * "counted" the same with a Goodbye that reports two; "aborted" is rank 0
 * of 2 sending two events and a Goodbye that says it ended with
 * "MPI_Abort (error code 3)" (rank 1 never comes).
 *
 * Over TCP it first reads weftd's Challenge, then proves its uid with a
 * MUNGE credential (Auth) from the munged at WEFT_MUNGE_SOCKET, bound to
 * the challenge and the connection as libweft's is (proto/bind.h), unless
 * WEFT_AUTH=none; after the AuthAck every frame carries the session MAC
 * (proto/mac.h). The MODEs "no-auth" (Hello without Auth), "claim" (a
 * Hello claiming another uid than the credential's: $RAWPEER_CLAIM_UID,
 * else its own + 1), "replay" (a credential weftd already took, sent
 * again on a second connection), "rebind" (a credential made for one
 * connection, never sent there, presented on a second one), "expired"
 * (a credential of 1 s sent 3 s later), "bad-cred" (not a credential),
 * "bad-mac" (a Hello after the AuthAck whose MAC has one bit changed) and
 * "unsealed" (a Hello after the AuthAck without a MAC, as a program that
 * injects into the connection would send) print weftd's Error.
 *
 * MODE "tree-join" (rawpeer_hostile.c) is a process claiming to be a
 * member of another user's process tree ($RAWPEER_RUN) whose Goodbye
 * names children and an exec that would keep a trace waiting.
 *
 * MODE "big-ids" (issue 30, finding 3) is rank $RAWPEER_RANK (0) of a
 * trace of $RAWPEER_SIZE (1) processes that defines the largest id
 * $RAWPEER_ID (2^20 - 1) in six id spaces (String, Region, Attribute,
 * Parameter, SourceCodeLocation, CallingContext), ~100 bytes, records
 * one Enter/Leave of that region and says Goodbye; exit 0 once weftd took
 * it (or printed its Error: exit 1). "big-strings" sends
 * $RAWPEER_BYTES (64M) of distinct strings of $RAWPEER_STRLEN bytes
 * (4096; 10 to 4096) in Definitions of ~256 KiB, then a Goodbye: exit 0 when weftd refused them with an
 * Error (printed), 3 when it took them all.
 *
 * MODE "member" is one well-behaved process of a trace with the Hello
 * fields given (--tags N adds tags t0=v .. tN-1=v) and events at exactly
 * known times (1000 ticks per second) for the region profile tests; it
 * exits 0 when weftd took it all, 1 after printing weftd's Error.
 * Scenarios (thread: events as region@time):
 *   profile  thread 0: main 0..100 { f 10..40, g 50..60 { f 52..55 } }
 *            thread 1: rec 0..50 { rec 10..30 { rec 15..20 } },
 *                      ODD 60..70 (a name with quotes, a newline, SQL)
 *            thread 2: a 0, b 10, Leave a 20 (closes b and a),
 *                      Leave c 25 (never entered), a 30, b 40..45, end
 *   compute  thread 0: main 0..100 { compute 20..80 }
 *   many     thread 0: r000..r104, region i from 200i to 200i + i + 1
 *   none     no events
 */
#include <errno.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "frame.h"
#include "rawpeer.h"
#include "weft_errors.h"

/* ---- MODE member -------------------------------------------------------- */

#define ODD_NAME "it's \"odd\"\n'); DROP TABLE regions;--"
#define MANY 105

enum { R_MAIN, R_F, R_G, R_REC, R_ODD, R_A, R_B, R_C, R_COMPUTE, R_MANY };

static void send_member_defs(void)
{
    static const char *const names[R_MANY] = {
        "main", "f", "g", "rec", ODD_NAME, "a", "b", "c", "compute",
    };
    static char many[MANY][8];
    weft_record d[2 * (R_MANY + MANY)];
    size_t n = 0;

    for (uint32_t i = 0; i < R_MANY + MANY; i++) {
        const char *name = names[i < R_MANY ? i : 0];
        if (i >= R_MANY) {
            snprintf(many[i - R_MANY], sizeof many[0], "r%03u", i - R_MANY);
            name = many[i - R_MANY];
        }
        d[n++] = rec_string(i, name);
        d[n++] = rec_region(i, i);
    }
    send_records(0, 0, 1, 0, d, n);
}

#define EN(t, r) rec_event(WEFT_REC_Enter, t, r)
#define LV(t, r) rec_event(WEFT_REC_Leave, t, r)

static int send_scenario(const char *name)
{
    if (strcmp(name, "profile") == 0) {
        weft_record t0[] = { EN(0, R_MAIN), EN(10, R_F), LV(40, R_F),
                             EN(50, R_G), EN(52, R_F), LV(55, R_F),
                             LV(60, R_G), LV(100, R_MAIN) };
        weft_record t1[] = { EN(0, R_REC), EN(10, R_REC), EN(15, R_REC),
                             LV(20, R_REC), LV(30, R_REC), LV(50, R_REC),
                             EN(60, R_ODD), LV(70, R_ODD) };
        weft_record t2[] = { EN(0, R_A), EN(10, R_B), LV(20, R_A),
                             LV(25, R_C), EN(30, R_A), EN(40, R_B),
                             LV(45, R_B) };
        send_records(1, 0, 1, 0, t0, sizeof t0 / sizeof t0[0]);
        send_records(1, 1, 1, 0, t1, sizeof t1 / sizeof t1[0]);
        send_records(1, 2, 1, 0, t2, sizeof t2 / sizeof t2[0]);
    } else if (strcmp(name, "compute") == 0) {
        weft_record t0[] = { EN(0, R_MAIN), EN(20, R_COMPUTE),
                             LV(80, R_COMPUTE), LV(100, R_MAIN) };
        send_records(1, 0, 1, 0, t0, sizeof t0 / sizeof t0[0]);
    } else if (strcmp(name, "many") == 0) {
        weft_record t0[2 * MANY];
        for (uint32_t i = 0; i < MANY; i++) {
            t0[2 * i] = EN(200 * i, R_MANY + i);
            t0[2 * i + 1] = LV(200 * i + i + 1, R_MANY + i);
        }
        send_records(1, 0, 1, 0, t0, 2 * MANY);
    } else if (strcmp(name, "none") != 0) {
        fprintf(stderr, "rawpeer: unknown scenario '%s'\n", name);
        return -1;
    }
    return 0;
}

/* MODE member: argv[0] is the trace name, then the options. */
static int run_member(int argc, char **argv)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Tag *tagv = calloc((size_t)argc + 1024, sizeof *tagv);
    Weft__Tag **tagp = calloc((size_t)argc + 1024, sizeof *tagp);
    static char gen[1024][2][16];
    const char *scenario = "profile";
    int got = 2;

    if (!tagv || !tagp || argc < 1) {
        free(tagv);
        free(tagp);
        fprintf(stderr, "rawpeer: member needs a TRACE\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN); /* weftd may close on a bad Hello: read why */
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = argv[0];
    h.size = 1;
    h.hostname = "rawpeer";
    h.pid = 4242;
    h.uid = (uint32_t)getuid();
    h.timer_resolution = 1000;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "rawpeer: %s needs a value\n", o);
            goto out;
        }
        i++;
        if (strcmp(o, "--rank") == 0) {
            h.rank = (uint32_t)atoi(v);
        } else if (strcmp(o, "--size") == 0) {
            h.size = (uint32_t)atoi(v);
        } else if (strcmp(o, "--host") == 0) {
            h.hostname = (char *)v;
        } else if (strcmp(o, "--pid") == 0) {
            h.pid = (uint32_t)atoi(v);
        } else if (strcmp(o, "--job") == 0) {
            h.job_id = (char *)v;
        } else if (strcmp(o, "--run") == 0) {
            h.run = (char *)v;
        } else if (strcmp(o, "--command") == 0) {
            h.command = (char *)v;
        } else if (strcmp(o, "--scenario") == 0) {
            scenario = v;
        } else if (strcmp(o, "--tag") == 0) {
            char *eq = strchr(argv[i], '=');
            Weft__Tag *t = &tagv[h.n_tags];
            weft__tag__init(t);
            if (eq)
                *eq = 0; /* argv is ours to split */
            t->key = argv[i];
            t->value = eq ? eq + 1 : (char *)"";
            tagp[h.n_tags++] = t;
        } else if (strcmp(o, "--tags") == 0) {
            for (int k = 0; k < atoi(v) && k < 1024; k++) {
                Weft__Tag *t = &tagv[h.n_tags];
                weft__tag__init(t);
                snprintf(gen[k][0], sizeof gen[k][0], "t%d", k);
                snprintf(gen[k][1], sizeof gen[k][1], "v");
                t->key = gen[k][0];
                t->value = gen[k][1];
                tagp[h.n_tags++] = t;
            }
        } else {
            fprintf(stderr, "rawpeer: unknown member option '%s'\n", o);
            goto out;
        }
    }
    h.tags = tagp;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    ensure_auth();
    send_env(&env);
    send_member_defs();
    if (send_scenario(scenario) < 0)
        goto out;
    send_goodbye();
    got = await_reply(10000) == 0 ? 0 : 1;
out:
    close(sock);
    free(tagv);
    free(tagp);
    return got;
}

/* ---- the modes that send one thing wrong, then wait for weftd's Error ---- */

/* What a mode returns when it sent its input and weftd's Error must
 * follow (main waits for it); anything else is the exit status. */
#define AWAIT_ERROR (-1)

/* A mode: the address (for modes that connect again), the trace's name,
 * and the arguments after it (for "member"). */
typedef int mode_fn(const char *addr, const char *trace, int argc,
                    char **argv);

static int mode_garbage(const char *addr, const char *trace, int argc,
                        char **argv)
{
    static const uint8_t junk[] = { 0, 0, 0, 12, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff };
    (void)addr, (void)trace, (void)argc, (void)argv;
    send_bytes(junk, sizeof junk);
    return AWAIT_ERROR;
}

static int mode_too_long(const char *addr, const char *trace, int argc,
                         char **argv)
{
    static const uint8_t hdr[] = { 0x7f, 0xff, 0xff, 0xff };
    (void)addr, (void)trace, (void)argc, (void)argv;
    send_bytes(hdr, sizeof hdr);
    return AWAIT_ERROR;
}

static int mode_empty_frame(const char *addr, const char *trace, int argc,
                            char **argv)
{
    static const uint8_t hdr[] = { 0, 0, 0, 0 };
    (void)addr, (void)trace, (void)argc, (void)argv;
    send_bytes(hdr, sizeof hdr);
    return AWAIT_ERROR;
}

static int mode_bad_version(const char *addr, const char *trace, int argc,
                            char **argv)
{
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, 99);
    return AWAIT_ERROR;
}

static int mode_no_auth(const char *addr, const char *trace, int argc,
                        char **argv)
{
    (void)addr, (void)argc, (void)argv;
    authenticated = 1; /* as a client of auth = none would */
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    return AWAIT_ERROR;
}

static int mode_claim(const char *addr, const char *trace, int argc,
                      char **argv)
{
    (void)addr, (void)argc, (void)argv;
    claim_uid_delta = 1;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    return AWAIT_ERROR;
}

static int mode_replay(const char *addr, const char *trace, int argc,
                       char **argv)
{
    char *cred = NULL;
    int got;

    (void)trace, (void)argc, (void)argv;
    if (!send_auth(NULL, 0, &cred))
        return 1; /* the first use must pass */
    close(sock);
    authenticated = 0;
    if (connect_to(addr) < 0)
        return 2;
    got = send_auth(cred, 0, NULL);
    free(cred);
    return got == 0 ? 0 : 1;
}

/* Made for the first connection, presented on a second: the nonce (and
 * the client's port) are the first's. */
static int mode_rebind(const char *addr, const char *trace, int argc,
                       char **argv)
{
    char *cred = make_cred(0);
    int first = sock, got;

    (void)trace, (void)argc, (void)argv;
    if (connect_to(addr) < 0)
        return 2;
    got = send_auth(cred, 0, NULL);
    free(cred);
    close(first);
    return got == 0 ? 0 : 1;
}

static int mode_bad_mac(const char *addr, const char *trace, int argc,
                        char **argv)
{
    (void)addr, (void)argc, (void)argv;
    corrupt_next = 1;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    return AWAIT_ERROR;
}

static int mode_unsealed(const char *addr, const char *trace, int argc,
                         char **argv)
{
    (void)addr, (void)argc, (void)argv;
    ensure_auth();
    weft_mac_free(mac);
    mac = NULL; /* what a program without the key can send */
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    /* weftd's Error is sealed: read it with the MAC again (weftd sent
     * nothing sealed before it). */
    mac = weft_mac_new(bound.key, WEFT_MAC_CLIENT);
    return AWAIT_ERROR;
}

static int mode_expired(const char *addr, const char *trace, int argc,
                        char **argv)
{
    char *cred = make_cred(1);
    int got;

    (void)addr, (void)trace, (void)argc, (void)argv;
    sleep(3);
    got = send_auth(cred, 0, NULL);
    free(cred);
    return got == 0 ? 0 : 1;
}

static int mode_bad_cred(const char *addr, const char *trace, int argc,
                         char **argv)
{
    (void)addr, (void)trace, (void)argc, (void)argv;
    return send_auth("MUNGE:bm90IGEgY3JlZGVudGlhbA==:", 0, NULL) == 0 ? 0
                                                                      : 1;
}

static int mode_before_hello(const char *addr, const char *trace, int argc,
                             char **argv)
{
    (void)addr, (void)trace, (void)argc, (void)argv;
    send_defs_region();
    return AWAIT_ERROR;
}

static int mode_unknown_record(const char *addr, const char *trace,
                               int argc, char **argv)
{
    static const uint8_t bad[] = { 0x7e, 1, 2, 3 };
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_raw_defs(1, bad, sizeof bad);
    return AWAIT_ERROR;
}

static int mode_undefined_ref(const char *addr, const char *trace,
                              int argc, char **argv)
{
    weft_record ev = rec_event(WEFT_REC_Enter, 10, 5);
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_records(1, 0, 1, 0, &ev, 1);
    return AWAIT_ERROR;
}

static int mode_time_backwards(const char *addr, const char *trace,
                               int argc, char **argv)
{
    weft_record a = rec_event(WEFT_REC_Enter, 1000, 0);
    weft_record b = rec_event(WEFT_REC_Leave, 500, 0);
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_defs_region();
    send_records(1, 0, 1, 1000, &a, 1);
    send_records(1, 0, 2, 500, &b, 1);
    return AWAIT_ERROR;
}

static int mode_daemon_def(const char *addr, const char *trace, int argc,
                           char **argv)
{
    weft_record d = { .type = WEFT_REC_ClockProperties };
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_records(0, 0, 1, 0, &d, 1);
    return AWAIT_ERROR;
}

static int mode_seq_gap(const char *addr, const char *trace, int argc,
                        char **argv)
{
    weft_record a = rec_event(WEFT_REC_Enter, 1000, 0);
    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_defs_region();
    send_records(1, 0, 3, 0, &a, 1);
    return AWAIT_ERROR;
}

/* The weft command's Query, asked wrongly: "query" (over TCP: refused),
 * "query-kind" (a kind weftd does not know), "query-no-key" (REMOVE
 * without a trace), "query-after-hello", "query-remove" (REMOVE of the
 * key given as TRACE). */
static int send_query(const char *mode, const char *trace)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Query q = WEFT__QUERY__INIT;

    q.protocol_version = WEFT_PROTOCOL_VERSION;
    if (strcmp(mode, "query-kind") == 0) {
        q.kind = (Weft__Query__Kind)7;
    } else if (strcmp(mode, "query-no-key") == 0) {
        q.kind = WEFT__QUERY__KIND__REMOVE;
    } else if (strcmp(mode, "query-remove") == 0) {
        q.kind = WEFT__QUERY__KIND__REMOVE;
        q.trace = (char *)trace;
    } else if (strcmp(mode, "query-after-hello") == 0) {
        send_hello(trace, WEFT_PROTOCOL_VERSION);
    }
    env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
    env.query = &q;
    send_env(&env);
    return AWAIT_ERROR;
}

#define QUERY_MODE(fn, name)                                              \
    static int fn(const char *addr, const char *trace, int argc,         \
                  char **argv)                                           \
    {                                                                    \
        (void)addr, (void)argc, (void)argv;                              \
        return send_query(name, trace);                                  \
    }
QUERY_MODE(mode_query, "query")
QUERY_MODE(mode_query_kind, "query-kind")
QUERY_MODE(mode_query_no_key, "query-no-key")
QUERY_MODE(mode_query_remove, "query-remove")
QUERY_MODE(mode_query_after_hello, "query-after-hello")

/* ---- the modes that behave, or vanish, and say how it went ---- */

/* Rank 0 of 2 records and disappears without Goodbye; rank 1 never
 * comes. Exit 0 once the batch was acked (no Error). */
static int mode_vanish(const char *addr, const char *trace, int argc,
                       char **argv)
{
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                          rec_event(WEFT_REC_Leave, 200, 0) };
    int got;

    (void)addr, (void)argc, (void)argv;
    send_hello_size(trace, WEFT_PROTOCOL_VERSION, 2);
    send_defs_region();
    send_records(1, 0, 1, 0, ev, 2);
    got = await_reply(1000);
    close(sock);
    return got == -1 ? 0 : 1;
}

static int mode_aborted(const char *addr, const char *trace, int argc,
                        char **argv)
{
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                          rec_event(WEFT_REC_Leave, 200, 0) };
    int got;

    (void)addr, (void)argc, (void)argv;
    send_hello_size(trace, WEFT_PROTOCOL_VERSION, 2);
    send_defs_region();
    send_records(1, 0, 1, 0, ev, 2);
    send_goodbye_ended("MPI_Abort (error code 3)");
    got = await_reply(10000);
    close(sock);
    return got == 0 ? 0 : 1;
}

/* Hello, definitions and one batch (Enter), acked; then vanish. */
static int mode_first_half(const char *addr, const char *trace, int argc,
                           char **argv)
{
    weft_record ev = rec_event(WEFT_REC_Enter, 100, 0);
    int got;

    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_defs_region();
    send_records(1, 0, 1, 0, &ev, 1);
    got = await_reply_n(10000, 2);
    close(sock);
    return got == 2 ? 0 : 1;
}

/* Back after a weftd restart: HelloAck must say definitions 1 and thread
 * 0 batch 1 are held; send batch 2 (Leave) and Goodbye. */
static int mode_second_half(const char *addr, const char *trace, int argc,
                            char **argv)
{
    weft_record ev = rec_event(WEFT_REC_Leave, 200, 0);
    int got;

    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    await_reply_n(300, 1);
    if (!hello_ack) {
        fprintf(stderr, "rawpeer: no HelloAck\n");
        return 1;
    }
    printf("definitions_seq=%llu",
           (unsigned long long)hello_ack->definitions_seq);
    for (size_t i = 0; i < hello_ack->n_locations; i++)
        printf(" thread%u_seq=%llu", hello_ack->locations[i]->location,
               (unsigned long long)hello_ack->locations[i]->seq);
    printf("\n");
    send_records(1, 0, 2, 100, &ev, 1);
    send_goodbye();
    got = await_reply(10000);
    close(sock);
    weft__hello_ack__free_unpacked(hello_ack, NULL);
    return got == 0 ? 0 : 1;
}

/* One batch of an Enter and a Leave, packed (seq), into *frame. */
static ssize_t flood_batch(uint64_t seq, uint8_t **frame)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 1, 0),
                          rec_event(WEFT_REC_Leave, 1, 0) };
    uint8_t recs[64];
    uint64_t prev = 1;
    size_t len = 0;

    for (int i = 0; i < 2; i++)
        len += (size_t)weft_encode(&ev[i], &prev, recs + len,
                                   sizeof recs - len);
    b.location = 0;
    b.seq = seq;
    b.base_time = 1;
    b.events = 2;
    b.records.data = recs;
    b.records.len = len;
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &b;
    return pack_env(&env, frame);
}

/* Sends batches and never reads the acks. weftd must stop reading
 * (backpressure) so that our sends block: exit 0 when they do. */
static int mode_flood(const char *addr, const char *trace, int argc,
                      char **argv)
{
    struct timeval tv = { 2, 0 };

    (void)addr, (void)argc, (void)argv;
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_defs_region();
    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    for (uint64_t seq = 1; seq <= 2000000; seq++) {
        uint8_t *frame;
        ssize_t n = flood_batch(seq, &frame), k;

        k = write(sock, frame, (size_t)n);
        free(frame);
        /* A send timeout shows as EAGAIN or as a short write. */
        if ((k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ||
            (k >= 0 && k < n)) {
            printf("blocked after %llu batches\n", (unsigned long long)seq);
            close(sock);
            return 0;
        }
        if (k != n) {
            fprintf(stderr, "rawpeer: write: %s\n", strerror(errno));
            return 1;
        }
    }
    fprintf(stderr, "rawpeer: weftd kept reading 2000000 batches\n");
    return 1;
}

/* Two events, then a Goodbye that says thread 0 sent `said` (3 for
 * "short": one never arrived; 2 for "counted"), or a plain Goodbye
 * (0: "valid"). Exit 0 once weftd closed the connection. */
static int two_events(const char *trace, uint64_t said)
{
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                          rec_event(WEFT_REC_Leave, 200, 0) };
    int got;

    send_hello(trace, WEFT_PROTOCOL_VERSION);
    send_defs_region();
    send_records(1, 0, 1, 0, ev, 2);
    if (said)
        send_goodbye_counts(said, 1);
    else
        send_goodbye();
    got = await_reply(10000);
    close(sock);
    return got == 0 ? 0 : 1;
}

static int mode_short(const char *addr, const char *trace, int argc,
                      char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return two_events(trace, 3);
}

static int mode_counted(const char *addr, const char *trace, int argc,
                        char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return two_events(trace, 2);
}

static int mode_valid(const char *addr, const char *trace, int argc,
                      char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return two_events(trace, 0);
}

/* The modes of the sections above, as main calls them. */
static int mode_member(const char *addr, const char *trace, int argc,
                       char **argv)
{
    (void)addr, (void)trace;
    return run_member(argc, argv);
}

static int mode_goodbye_threads(const char *addr, const char *trace,
                                int argc, char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return run_goodbye_threads(trace);
}

static int mode_tree_join(const char *addr, const char *trace, int argc,
                          char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return run_tree_join(trace);
}

static int mode_big_ids(const char *addr, const char *trace, int argc,
                        char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return run_big_ids(trace);
}

static int mode_big_strings(const char *addr, const char *trace, int argc,
                            char **argv)
{
    (void)addr, (void)argc, (void)argv;
    return run_big_strings(trace);
}

static int mode_hello_hangup(const char *addr, const char *trace, int argc,
                             char **argv)
{
    (void)argc, (void)argv;
    return hello_hangup(addr, trace);
}

static int mode_hold_open(const char *addr, const char *trace, int argc,
                          char **argv)
{
    (void)trace, (void)argc, (void)argv;
    return hold_connections(addr, 0);
}

static int mode_stall_header(const char *addr, const char *trace, int argc,
                             char **argv)
{
    (void)trace, (void)argc, (void)argv;
    return hold_connections(addr, 1);
}

/* NodeHello naming node `name` (TCP: after an Auth of this process's
 * uid, unless no_auth). */
static void send_node_hello(const char *name, int no_auth)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeHello h = WEFT__NODE_HELLO__INIT;

    if (!no_auth)
        ensure_auth();
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.node = (char *)name;
    h.server = (char *)"rawpeer";
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO;
    env.node_hello = &h;
    send_env(&env);
}

/* A user's process posing as a node (its credential names its own uid),
 * or one without a credential at all: refused. */
static int mode_node_hello(const char *addr, const char *trace, int argc,
                           char **argv)
{
    (void)addr, (void)argc, (void)argv;
    send_node_hello(trace, 0);
    return AWAIT_ERROR;
}

static int mode_node_no_auth(const char *addr, const char *trace, int argc,
                             char **argv)
{
    (void)addr, (void)argc, (void)argv;
    send_node_hello(trace, 1);
    return AWAIT_ERROR;
}

/* A node (weftd's uid) that sends a member's Hello on its link. */
static int mode_node_then_hello(const char *addr, const char *trace,
                                int argc, char **argv)
{
    (void)addr, (void)argc, (void)argv;
    send_node_hello(trace, 0);
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    return AWAIT_ERROR;
}

/* Sends a Hello of TRACE and waits for its HelloAck: 0, or -1 (said)
 * when none came. */
static int hello_acked(const char *trace)
{
    send_hello(trace, WEFT_PROTOCOL_VERSION);
    stop_at_hello_ack = 1;
    if (await_reply(10000) != 4) {
        fprintf(stderr, "rawpeer: no HelloAck\n");
        return -1;
    }
    stop_at_hello_ack = 0;
    return 0;
}

/* A member whose Definitions frame, after the HelloAck, holds BYTES
 * (the argument after TRACE) bytes of records: a weftd of a smaller
 * max_frame refuses it. */
static int mode_big_defs(const char *addr, const char *trace, int argc,
                         char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1;
    uint8_t *big = calloc(1, n);

    (void)addr;
    if (!big)
        return 2;
    if (hello_acked(trace) < 0)
        return 1;
    send_raw_defs(1, big, n);
    free(big);
    return AWAIT_ERROR;
}

/* RAWPEER_RELAY=ID: this rawpeer is a node (weftd's uid; RAWPEER_NODE
 * names it, n1 by default) and the mode's frames go in NodeRelays of
 * member ID, vouching for uid RAWPEER_RELAY_UID (default this process's)
 * and its primary group; RAWPEER_UNLINKED=1: without a NodeHello first
 * (a user's process trying to relay). RAWPEER_THEN_VALID=TRACE: after a
 * mode that awaits an Error got it, member ID+1 relays two events of
 * TRACE on the same link. */
static void relay_start(void)
{
    const char *node = getenv("RAWPEER_NODE");
    struct passwd *pw;

    signal(SIGPIPE, SIG_IGN); /* the head may close the link: read why */
    relay_uid = (uint32_t)env_u64("RAWPEER_RELAY_UID", getuid());
    pw = getpwuid(relay_uid);
    relay_gid = pw ? (uint32_t)pw->pw_gid : relay_uid;
    if (getenv("RAWPEER_UNLINKED"))
        ensure_auth();
    else
        send_node_hello(node && *node ? node : "n1", 0);
    relay_member = (uint32_t)env_u64("RAWPEER_RELAY", 1);
    relay_events_here = getenv("RAWPEER_EVENTS_HERE") != NULL;
}

/* Relayed, a member whose node writes its events (RAWPEER_EVENTS_HERE):
 * after its HelloAck, pieces of sums (NodeRelay.sums_more) of 1 MiB,
 * more than the head joins (a journal entry's most, 64 MiB). */
static int mode_sums_flood(const char *addr, const char *trace, int argc,
                           char **argv)
{
    size_t piece = 1u << 20;
    uint8_t *junk = calloc(1, piece);

    (void)addr, (void)argc, (void)argv;
    if (!junk || !relay_member)
        return 2;
    if (hello_acked(trace) < 0)
        return 1;
    for (int i = 0; i < 65; i++) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;
        uint8_t *frame;
        ssize_t n;
        r.member = relay_member;
        r.sums.data = junk;
        r.sums.len = piece;
        r.sums_more = 1;
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
        env.node_relay = &r;
        if ((n = pack_env(&env, &frame)) <= 0)
            return 1;
        send_bytes(frame, (size_t)n);
        free(frame);
    }
    free(junk);
    return AWAIT_ERROR;
}

/* Relayed: the Hellos of COUNT members (the argument after TRACE) of
 * one trace, member numbers from RAWPEER_RELAY on, each waited for; the
 * head's refusals are printed (max_connections per link). */
static int mode_relay_many(const char *addr, const char *trace, int argc,
                           char **argv)
{
    uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2;
    uint32_t first = relay_member;
    int refused = 0;

    (void)addr;
    if (!first) {
        fprintf(stderr, "rawpeer: relay-many needs RAWPEER_RELAY\n");
        return 2;
    }
    for (uint32_t i = 0; i < n; i++) {
        relay_member = first + i;
        hello_rank = i;
        stop_at_hello_ack = 1;
        send_hello_size(trace, WEFT_PROTOCOL_VERSION, n);
        refused += await_reply(10000) == 1;
    }
    printf("%d of %u refused\n", refused, (unsigned)n);
    return 0;
}

static const struct mode {
    const char *name;
    mode_fn *fn;
} modes[] = {
    { "garbage", mode_garbage },
    { "too-long", mode_too_long },
    { "empty-frame", mode_empty_frame },
    { "bad-version", mode_bad_version },
    { "before-hello", mode_before_hello },
    { "unknown-record", mode_unknown_record },
    { "undefined-ref", mode_undefined_ref },
    { "time-backwards", mode_time_backwards },
    { "daemon-def", mode_daemon_def },
    { "seq-gap", mode_seq_gap },
    { "vanish", mode_vanish },
    { "first-half", mode_first_half },
    { "second-half", mode_second_half },
    { "flood", mode_flood },
    { "valid", mode_valid },
    { "short", mode_short },
    { "counted", mode_counted },
    { "aborted", mode_aborted },
    { "member", mode_member },
    { "no-auth", mode_no_auth },
    { "claim", mode_claim },
    { "replay", mode_replay },
    { "rebind", mode_rebind },
    { "expired", mode_expired },
    { "bad-cred", mode_bad_cred },
    { "bad-mac", mode_bad_mac },
    { "unsealed", mode_unsealed },
    { "query", mode_query },
    { "query-kind", mode_query_kind },
    { "query-no-key", mode_query_no_key },
    { "query-remove", mode_query_remove },
    { "query-after-hello", mode_query_after_hello },
    { "hello-hangup", mode_hello_hangup },
    { "hold-open", mode_hold_open },
    { "stall-header", mode_stall_header },
    { "goodbye-threads", mode_goodbye_threads },
    { "tree-join", mode_tree_join },
    { "big-ids", mode_big_ids },
    { "big-strings", mode_big_strings },
    { "node-hello", mode_node_hello },
    { "relay-many", mode_relay_many },
    { "big-defs", mode_big_defs },
    { "node-no-auth", mode_node_no_auth },
    { "node-then-hello", mode_node_then_hello },
    { "sums-flood", mode_sums_flood },
};

static void usage(void)
{
    fprintf(stderr, "usage: weft-rawpeer HOST:PORT MODE [TRACE [ARG...]]\n"
            "modes:");
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        fprintf(stderr, " %s", modes[i].name);
    fprintf(stderr, "\nHOST:PORT may be unix:PATH (weftd's Unix socket)\n");
}

int main(int argc, char **argv)
{
    const struct mode *m = NULL;
    const char *trace;
    int got, rc;

    if (argc < 3) {
        usage();
        return 2;
    }
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(argv[2], modes[i].name) == 0)
            m = &modes[i];
    if (!m) {
        fprintf(stderr, "rawpeer: unknown mode '%s'\n", argv[2]);
        return 2;
    }
    trace = argc > 3 ? argv[3] : "rawpeer";
    if ((rc = connect_to(argv[1])) < 0) {
        if (rc == -2) { /* weftd answered with an Error at once */
            printf("%s\n", last_error);
            return 0;
        }
        fprintf(stderr, "rawpeer: cannot connect to %s: %s\n", argv[1],
                strerror(errno));
        return 2;
    }
    if (getenv("RAWPEER_RELAY"))
        relay_start();
    rc = m->fn(argv[1], trace, argc - 3, argv + 3);
    if (rc != AWAIT_ERROR)
        return rc;
    got = await_reply(10000);
    /* Relaying, the link goes on after a member's refusal: another
     * member of it, a whole one, then. */
    if (got == 1 && relay_member && getenv("RAWPEER_THEN_VALID")) {
        relay_member++;
        return two_events(getenv("RAWPEER_THEN_VALID"), 0);
    }
    close(sock);
    if (got != 1)
        fprintf(stderr, "rawpeer: no Error from weftd (%s)\n",
                got == 0 ? "connection closed" : "timeout");
    return got == 1 ? 0 : 1;
}
