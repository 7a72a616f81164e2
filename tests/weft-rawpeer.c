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
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/time.h>
#include <unistd.h>

#include "bind.h"
#include "codec.h"
#include "cred.h"
#include "frame.h"
#include "mac.h"
#include "weft_errors.h"

static int sock = -1;
static int authenticated;          /* AuthAck received on this socket */
static int stop_at_hello_ack;      /* await_reply_n returns 4 at HelloAck */
static int quiet_errors;           /* await_reply_n keeps Errors in */
static char last_error[512];       /* the last Error, when quiet */
static uint32_t claim_uid_delta;   /* "claim": the Hello's uid is off by */
static uint8_t nonce[WEFT_AUTH_NONCE]; /* this socket's Challenge */
static uint32_t server_uid;        /* what the Challenge says */
static weft_bind bound;            /* the last credential's payload */
static weft_mac *mac;              /* after the AuthAck */
static int corrupt_next;           /* "bad-mac": flip a bit of the next */

static void send_bytes(const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(sock, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the peer may already have closed: reading tells */
        p += n;
        len -= (size_t)n;
    }
}

/* env packed, sealed with the MAC once there is one. */
static ssize_t pack_env(const Weft__Envelope *env, uint8_t **frame)
{
    ssize_t n = weft_frame_pack_room(env, WEFT_MAC_TAG, frame);

    if (n > 0 && mac) {
        n = (ssize_t)weft_mac_seal_in_place(mac, *frame, (size_t)n);
        if (corrupt_next) {
            (*frame)[n - 1] ^= 1;
            corrupt_next = 0;
        }
    }
    return n;
}

static void send_env(const Weft__Envelope *env)
{
    uint8_t *frame;
    ssize_t n = pack_env(env, &frame);

    if (n > 0) {
        send_bytes(frame, (size_t)n);
        free(frame);
    }
}

/* A credential of ttl seconds (0: munged's default) for this socket, as
 * libweft makes it (kept in `bound`). Exits 1 if munged cannot. */
static char *make_cred(unsigned ttl)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    uint8_t payload[WEFT_BIND_PAYLOAD];
    char err[256], *cred = NULL;

    memset(&bound, 0, sizeof bound);
    memcpy(bound.nonce, nonce, sizeof nonce);
    getsockname(sock, (struct sockaddr *)&ss, &sl);
    weft_bind_addr_from(&bound.client, (struct sockaddr *)&ss);
    sl = sizeof ss;
    getpeername(sock, (struct sockaddr *)&ss, &sl);
    weft_bind_addr_from(&bound.server, (struct sockaddr *)&ss);
    if (getrandom(bound.key, sizeof bound.key, 0) != sizeof bound.key)
        exit(1);
    weft_bind_encode(&bound, payload);
    if (weft_auth_encode(getenv("WEFT_MUNGE_SOCKET"), server_uid, ttl,
                         payload, sizeof payload, &cred, err,
                         sizeof err) < 0) {
        fprintf(stderr, "rawpeer: %s\n", err);
        exit(1);
    }
    return cred;
}

static int await_reply_n(int timeout_ms, uint64_t stop_after_acks);

/* Sends Auth with credential cred (NULL: a new one of ttl seconds, 0 for
 * munged's default; kept in *made if made is not NULL) and waits for
 * AuthAck. 1 when it came, 0 after printing weftd's Error; exits 1 when
 * no credential can be made or nothing came. */
static int send_auth(const char *cred, unsigned ttl, char **made)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Auth a = WEFT__AUTH__INIT;
    char *mine = NULL;
    int got;

    if (!cred)
        cred = mine = make_cred(ttl);
    a.protocol_version = WEFT_PROTOCOL_VERSION;
    a.credential.data = (uint8_t *)cred;
    a.credential.len = strlen(cred);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &a;
    send_env(&env);
    if (made)
        *made = mine;
    else
        free(mine);
    got = await_reply_n(10000, 0);
    if (got == 1)
        return 0;
    if (got != 3) {
        fprintf(stderr, "rawpeer: no AuthAck\n");
        exit(1);
    }
    authenticated = 1;
    mac = weft_mac_new(bound.key, WEFT_MAC_CLIENT);
    return 1;
}

/* Before a Hello: Auth, unless done or WEFT_AUTH=none. Exits 1 after
 * printing weftd's Error if it refused. */
static void ensure_auth(void)
{
    const char *auth = getenv("WEFT_AUTH");

    if (!authenticated && !(auth && strcmp(auth, "none") == 0) &&
        !send_auth(NULL, 0, NULL))
        exit(1);
}

static void send_hello_size(const char *trace, uint32_t version, uint32_t size)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;

    ensure_auth();
    h.protocol_version = version;
    h.trace = (char *)trace;
    h.rank = 0;
    h.size = size;
    h.hostname = "rawpeer";
    h.pid = (uint32_t)getpid();
    h.uid = getenv("RAWPEER_CLAIM_UID")
                ? (uint32_t)strtoul(getenv("RAWPEER_CLAIM_UID"), NULL, 10)
                : (uint32_t)getuid() + claim_uid_delta;
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    send_env(&env);
}

static void send_hello(const char *trace, uint32_t version)
{
    send_hello_size(trace, version, 1);
}

static void send_records(int events, uint32_t loc, uint64_t seq,
                         uint64_t base, const weft_record *recs, size_t n)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    Weft__EventBatch batch = WEFT__EVENT_BATCH__INIT;
    uint8_t buf[16384];
    size_t len = 0;
    uint64_t prev = base;

    for (size_t i = 0; i < n; i++) {
        ssize_t k = weft_encode(&recs[i], &prev, buf + len, sizeof buf - len);
        if (k < 0) {
            fprintf(stderr, "rawpeer: cannot encode record %zu: %s\n", i,
                    weft_strerror((int)k));
            exit(2);
        }
        len += (size_t)k;
    }
    if (events) {
        batch.location = loc;
        batch.seq = seq;
        batch.base_time = base;
        batch.events = (uint32_t)n;
        batch.records.data = buf;
        batch.records.len = len;
        env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
        env.event_batch = &batch;
    } else {
        defs.seq = seq;
        defs.records.data = buf;
        defs.records.len = len;
        env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
        env.definitions = &defs;
    }
    send_env(&env);
}

static void send_raw_defs(uint64_t seq, const uint8_t *bytes, size_t len)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;

    defs.seq = seq;
    defs.records.data = (uint8_t *)bytes;
    defs.records.len = len;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    send_env(&env);
}

/* A Goodbye; ended: how the process ended abnormally, NULL if not. */
static void send_goodbye_ended(const char *ended)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    if (ended)
        g.ended = (char *)ended;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
}

static void send_goodbye(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
}

/* A Goodbye that reports `events` sent and `dropped` on thread 0. */
static void send_goodbye_counts(uint64_t events, uint64_t dropped)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd end = WEFT__LOCATION_END__INIT, *ends[1] = { &end };

    end.location = 0;
    end.events = events;
    end.dropped = dropped;
    g.n_locations = 1;
    g.locations = ends;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
}

static weft_record rec_string(uint32_t id, const char *s)
{
    weft_record r = { .type = WEFT_REC_String };

    r.u.String.self = id;
    r.u.String.string = s;
    return r;
}

static weft_record rec_region(uint32_t id, uint32_t name)
{
    weft_record r = { .type = WEFT_REC_Region };

    r.u.Region.self = id;
    r.u.Region.name = name;
    r.u.Region.canonicalName = name;
    r.u.Region.description = name;
    r.u.Region.regionRole = OTF2_REGION_ROLE_FUNCTION;
    r.u.Region.paradigm = OTF2_PARADIGM_USER;
    r.u.Region.sourceFile = OTF2_UNDEFINED_STRING;
    return r;
}

static weft_record rec_event(uint32_t type, uint64_t time, uint32_t region)
{
    weft_record r = { .type = type, .time = time };

    r.u.Enter.region = region; /* Enter and Leave share the layout */
    return r;
}

static void send_defs_region(void)
{
    weft_record d[2] = { rec_string(0, "work"), rec_region(0, 0) };

    send_records(0, 0, 1, 0, d, 2);
}

static int await_reply(int timeout_ms);

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);

    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

/* ---- MODEs big-ids and big-strings (issue 30, finding 3) ---------------- */

static int run_big_ids(const char *trace)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    uint32_t id = (uint32_t)env_u64("RAWPEER_ID", (1u << 20) - 1);
    weft_record d[6] = { rec_string(id, "x"), rec_region(id, id) };
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, id),
                          rec_event(WEFT_REC_Leave, 200, id) };

    d[2].type = WEFT_REC_Attribute;
    d[2].u.Attribute.self = id;
    d[2].u.Attribute.name = id;
    d[2].u.Attribute.description = id;
    d[2].u.Attribute.type = OTF2_TYPE_UINT64;
    d[3].type = WEFT_REC_Parameter;
    d[3].u.Parameter.self = id;
    d[3].u.Parameter.name = id;
    d[3].u.Parameter.parameterType = OTF2_PARAMETER_TYPE_INT64;
    d[4].type = WEFT_REC_SourceCodeLocation;
    d[4].u.SourceCodeLocation.self = id;
    d[4].u.SourceCodeLocation.file = id;
    d[4].u.SourceCodeLocation.lineNumber = 1;
    d[5].type = WEFT_REC_CallingContext;
    d[5].u.CallingContext.self = id;
    d[5].u.CallingContext.region = id;
    d[5].u.CallingContext.sourceCodeLocation = id;
    d[5].u.CallingContext.parent = OTF2_UNDEFINED_CALLING_CONTEXT;
    ensure_auth();
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)trace;
    h.rank = (uint32_t)env_u64("RAWPEER_RANK", 0);
    h.size = (uint32_t)env_u64("RAWPEER_SIZE", 1);
    h.hostname = "rawpeer";
    h.pid = (uint32_t)getpid();
    h.uid = (uint32_t)getuid();
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    send_env(&env);
    send_records(0, 0, 1, 0, d, 6);
    send_records(1, 0, 1, 0, ev, 2);
    send_goodbye_counts(2, 0);
    return await_reply(30000) == 0 ? 0 : 1;
}

static int run_big_strings(const char *trace)
{
    enum { STR = 4096, PER = 64 * 1024 };
    uint64_t total = env_u64("RAWPEER_BYTES", UINT64_C(64) << 20), sent = 0;
    size_t slen = (size_t)env_u64("RAWPEER_STRLEN", STR);
    size_t per;

    slen = slen < 10 ? 10 : slen > STR ? STR : slen;
    per = (256u << 10) / (slen + 8);
    static char strs[PER][STR + 1];
    static weft_record d[PER];
    uint32_t id = 0;
    int got;

    send_hello(trace, WEFT_PROTOCOL_VERSION);
    for (uint64_t seq = 1; sent < total; seq++) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
        static uint8_t buf[512u << 10];
        size_t len = 0;
        uint64_t prev = 0;
        for (size_t i = 0; i < per; i++, id++) {
            ssize_t k;
            memset(strs[i], 'a' + id % 26, slen);
            strs[i][slen] = 0;
            snprintf(strs[i], 11, "%010u", id); /* distinct */
            if (slen > 10)
                strs[i][10] = '-';
            d[i] = rec_string(id, strs[i]);
            k = weft_encode(&d[i], &prev, buf + len, sizeof buf - len);
            if (k < 0)
                return 2;
            len += (size_t)k;
        }
        defs.seq = seq;
        defs.records.data = buf;
        defs.records.len = len;
        env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
        env.definitions = &defs;
        send_env(&env);
        sent += len;
        /* Its Ack before the next (an Error ends it). */
        if ((got = await_reply_n(30000, seq)) == 1)
            return 0;
        if (got != 2) {
            fprintf(stderr, "rawpeer: no Ack of Definitions %llu\n",
                    (unsigned long long)seq);
            return 1;
        }
    }
    send_goodbye();
    got = await_reply(60000);
    return got == 1 ? 0 : 3;
}

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

static Weft__HelloAck *hello_ack; /* the last HelloAck received */
static uint64_t acks;             /* Ack frames received */

/* Reads frames until an Error (printed, returns 1), EOF (0), timeout (-1),
 * an AuthAck (3), or, with stop_after_acks, that many Acks in all (2). */
static int await_reply_n(int timeout_ms, uint64_t stop_after_acks)
{
    weft_frame_reader r;
    uint8_t buf[65536];
    int result = -1;

    weft_frame_reader_init(&r, WEFT_DEFAULT_MAX_FRAME);
    for (;;) {
        struct pollfd pfd = { sock, POLLIN, 0 };
        const uint8_t *p = buf;
        size_t left;
        ssize_t n;
        if (poll(&pfd, 1, timeout_ms) <= 0)
            break;
        n = read(sock, buf, sizeof buf);
        if (n <= 0) {
            result = 0;
            break;
        }
        left = (size_t)n;
        while (left > 0) {
            uint8_t *frame;
            uint32_t flen;
            Weft__Envelope *env;
            int rc = weft_frame_reader_feed(&r, &p, &left, &frame, &flen);
            if (rc <= 0)
                break;
            if (mac) {
                char why[128];
                ssize_t k = weft_mac_open(mac, frame, flen, why, sizeof why);
                if (k < 0) {
                    printf("rawpeer: weftd's %s\n", why);
                    free(frame);
                    weft_frame_reader_free(&r);
                    return 0;
                }
                flen = (uint32_t)k;
            }
            env = weft_frame_unpack(frame, flen);
            free(frame);
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK &&
                stop_at_hello_ack) {
                weft_frame_free_envelope(env);
                weft_frame_reader_free(&r);
                return 4;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK &&
                !hello_ack) {
                hello_ack = env->hello_ack;
                env->hello_ack = NULL;
                env->msg_case = WEFT__ENVELOPE__MSG__NOT_SET;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_AUTH_ACK) {
                weft_frame_free_envelope(env);
                weft_frame_reader_free(&r);
                return 3;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_ACK &&
                ++acks == stop_after_acks) {
                weft_frame_free_envelope(env);
                weft_frame_reader_free(&r);
                return 2;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR &&
                quiet_errors)
                snprintf(last_error, sizeof last_error, "%s: %s",
                         weft_err_name(env->error->code),
                         env->error->message);
            else if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR)
                printf("%s: %s\n", weft_err_name(env->error->code),
                       env->error->message);
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
                weft_frame_free_envelope(env);
                weft_frame_reader_free(&r);
                return 1;
            }
            weft_frame_free_envelope(env);
        }
    }
    weft_frame_reader_free(&r);
    return result;
}

static int await_reply(int timeout_ms)
{
    return await_reply_n(timeout_ms, 0);
}

/* Reads n bytes (blocking, 10 s at most). 0 or -1. */
static int read_exactly(uint8_t *buf, size_t n)
{
    struct timeval tv = { 10, 0 };

    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (n > 0) {
        ssize_t k = read(sock, buf, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        buf += k;
        n -= (size_t)k;
    }
    tv.tv_sec = 0;
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return 0;
}

/* Over TCP weftd speaks first: its Challenge (nonce, uid). 0, -1, or -2
 * when weftd refused the connection at once (its Error in last_error). */
static int read_challenge(void)
{
    uint8_t hdr[WEFT_FRAME_HEADER], body[256];
    uint32_t len;
    Weft__Envelope *env;

    if (read_exactly(hdr, sizeof hdr) < 0)
        return -1;
    len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
          (uint32_t)hdr[2] << 8 | hdr[3];
    if (len > sizeof body || read_exactly(body, len) < 0)
        return -1;
    env = weft_frame_unpack(body, len);
    if (env && env->msg_case == WEFT__ENVELOPE__MSG_ERROR) {
        /* refused at once (a limit on connections): its Error instead */
        snprintf(last_error, sizeof last_error, "%s: %s",
                 weft_err_name(env->error->code), env->error->message);
        weft_frame_free_envelope(env);
        errno = ECONNREFUSED;
        return -2;
    }
    if (!env || env->msg_case != WEFT__ENVELOPE__MSG_CHALLENGE ||
        env->challenge->nonce.len != WEFT_AUTH_NONCE) {
        fprintf(stderr, "rawpeer: weftd's first frame is no Challenge\n");
        weft_frame_free_envelope(env);
        errno = EPROTO;
        return -1;
    }
    memcpy(nonce, env->challenge->nonce.data, WEFT_AUTH_NONCE);
    server_uid = env->challenge->server_uid;
    weft_frame_free_envelope(env);
    return 0;
}

static int connect_to(const char *addr)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    const char *colon = strrchr(addr, ':');
    char host[64];

    if (strncmp(addr, "unix:", 5) == 0) {
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        if (strlen(addr + 5) >= sizeof sun.sun_path)
            return -1;
        strcpy(sun.sun_path, addr + 5);
        authenticated = 1; /* the kernel says who we are */
        sock = socket(AF_UNIX, SOCK_STREAM, 0);
        return sock < 0 || connect(sock, (struct sockaddr *)&sun,
                                   sizeof sun) != 0 ? -1 : 0;
    }
    if (!colon || (size_t)(colon - addr) >= sizeof host)
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    sin.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
        return -1;
    sock = socket(AF_INET, SOCK_STREAM, 0);
    if (sock < 0 || connect(sock, (struct sockaddr *)&sin, sizeof sin) != 0)
        return -1;
    weft_mac_free(mac);
    mac = NULL;
    return read_challenge();
}

/* ---- hostile modes (#30): many connections ----
 *
 * RAWPEER_COUNT (default 1000) says how many; RAWPEER_SECONDS (default
 * 20) how long the holding modes hold.
 *  hello-hangup  that many processes of one trace (size: the count) each
 *                connect, say Hello, wait for the answer and hang up;
 *                prints how many were accepted and refused (the first
 *                and last refusals)
 *  hold-open     that many connections that never send a byte, each
 *                opened again when weftd closes it
 *  stall-header  the same, each sending a frame header announcing
 *                RAWPEER_FRAME bytes (default 65536) and one byte of it
 *                (RAWPEER_ONCE=1: each connection is opened once only)
 * The holding modes print how many connections weftd closed and how
 * many connects failed; they exit 0. */
static unsigned env_count(const char *name, unsigned dflt)
{
    const char *v = getenv(name);

    return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

static int hello_hangup(const char *addr, const char *trace)
{
    unsigned n = env_count("RAWPEER_COUNT", 1000), ok = 0, refused = 0;
    unsigned lost = 0;
    char first[512] = "";

    stop_at_hello_ack = 1;
    quiet_errors = 1;
    for (unsigned i = 0; i < n; i++) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Hello h = WEFT__HELLO__INIT;
        int got;
        if (i > 0 && (close(sock), connect_to(addr)) < 0) {
            lost++;
            usleep(10000);
            continue;
        }
        if (strncmp(addr, "unix:", 5) != 0) {
            authenticated = 0;
            if (!send_auth(NULL, 0, NULL)) {
                refused++;
                continue;
            }
        }
        h.protocol_version = WEFT_PROTOCOL_VERSION;
        h.trace = (char *)trace;
        h.rank = i;
        h.size = n;
        h.hostname = "rawpeer";
        h.pid = (uint32_t)getpid();
        h.uid = (uint32_t)getuid();
        h.timer_resolution = 1000000000;
        h.run = "hello-hangup";
        env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
        env.hello = &h;
        send_env(&env);
        got = await_reply_n(5000, 0);
        if (got == 4) {
            ok++;
        } else {
            refused++;
            if (!first[0])
                snprintf(first, sizeof first, "%s", last_error);
        }
    }
    close(sock);
    printf("hello-hangup: %u accepted, %u refused, %u connects failed\n",
           ok, refused, lost);
    if (first[0])
        printf("first refusal: %s\nlast refusal: %s\n", first, last_error);
    return 0;
}

static int hold_connections(const char *addr, int stall)
{
    unsigned n = env_count("RAWPEER_COUNT", 1000);
    unsigned seconds = env_count("RAWPEER_SECONDS", 20);
    unsigned once = env_count("RAWPEER_ONCE", 0);
    unsigned opened = 1;
    uint32_t announce = env_count("RAWPEER_FRAME", 65536);
    uint8_t head[5] = { (uint8_t)(announce >> 24), (uint8_t)(announce >> 16),
                        (uint8_t)(announce >> 8), (uint8_t)announce, 0x0a };
    struct pollfd *pfd = calloc(n, sizeof *pfd);
    unsigned long closed = 0, failed = 0;
    struct timeval t0, now;

    if (!pfd)
        return 2;
    for (unsigned i = 0; i < n; i++)
        pfd[i].fd = -1;
    pfd[0].fd = sock;
    pfd[0].events = POLLIN;
    if (stall && write(sock, head, sizeof head) < 0)
        (void)0; /* its closing shows in poll */
    gettimeofday(&t0, NULL);
    for (;;) {
        for (unsigned i = 0; i < n; i++) {
            if (pfd[i].fd >= 0 || (once && opened >= n))
                continue;
            opened++;
            if (connect_to(addr) < 0) {
                if (sock >= 0)
                    close(sock);
                failed++;
                break; /* weftd's queue is full: try again later */
            }
            pfd[i].fd = sock;
            pfd[i].events = POLLIN;
            if (stall && write(sock, head, sizeof head) < 0)
                (void)0; /* its closing shows in poll */
        }
        gettimeofday(&now, NULL);
        if (now.tv_sec - t0.tv_sec >= (long)seconds)
            break;
        if (poll(pfd, n, 100) < 0 && errno != EINTR)
            break;
        for (unsigned i = 0; i < n; i++) {
            char b[4096];
            if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP |
                                                     POLLERR)))
                continue;
            if (read(pfd[i].fd, b, sizeof b) > 0)
                continue; /* an Error frame: its EOF follows */
            close(pfd[i].fd);
            pfd[i].fd = -1;
            closed++;
        }
    }
    printf("%s: %u connections held %u s: weftd closed %lu, %lu connects "
           "failed\n", stall ? "stall-header" : "hold-open", n, seconds,
           closed, failed);
    for (unsigned i = 0; i < n; i++)
        if (pfd[i].fd >= 0)
            close(pfd[i].fd);
    free(pfd);
    return 0;
}

/* ---- MODE goodbye-threads ------------------------------------------------
 * Rank $RAWPEER_RANK (0) of a trace of $RAWPEER_SIZE (1) members sends one
 * batch on thread 0, then a Goodbye naming $RAWPEER_THREADS (4096)
 * threads, the others reporting $RAWPEER_EVENTS (0) events each though
 * they sent none: conversion used to make a location of each. Exit 0
 * once weftd closed the connection (after the Goodbye) or answered with
 * an Error (printed), 1 on a timeout. */
static uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);

    return v && *v ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}

static int run_goodbye_threads(const char *trace)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                          rec_event(WEFT_REC_Leave, 200, 0) };
    uint32_t n = env_u32("RAWPEER_THREADS", 4096);
    uint64_t events = env_u32("RAWPEER_EVENTS", 0);
    Weft__LocationEnd *ends = calloc(n ? n : 1, sizeof *ends);
    Weft__LocationEnd **endp = calloc(n ? n : 1, sizeof *endp);
    int got;

    if (!ends || !endp)
        return 2;
    ensure_auth();
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)trace;
    h.rank = env_u32("RAWPEER_RANK", 0);
    h.size = env_u32("RAWPEER_SIZE", 1);
    h.hostname = "rawpeer";
    h.pid = (uint32_t)getpid();
    h.uid = (uint32_t)getuid();
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    send_env(&env);
    send_defs_region();
    send_records(1, 0, 1, 0, ev, 2);
    for (uint32_t i = 0; i < n; i++) {
        weft__location_end__init(&ends[i]);
        ends[i].location = i;
        ends[i].events = i == 0 ? 2 : events;
        endp[i] = &ends[i];
    }
    g.n_locations = n;
    g.locations = endp;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
    got = await_reply(30000);
    close(sock);
    free(ends);
    free(endp);
    return got == 0 || got == 1 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *mode, *trace;
    int got, rc;

    if (argc < 3) {
        fprintf(stderr, "usage: weft-rawpeer HOST:PORT MODE [TRACE]\n"
                "modes: garbage too-long empty-frame bad-version "
                "before-hello unknown-record undefined-ref time-backwards "
                "daemon-def seq-gap vanish first-half second-half flood valid "
                "short counted aborted member no-auth claim replay rebind "
                "expired bad-cred bad-mac unsealed query query-kind "
                "query-no-key query-after-hello hello-hangup hold-open "
                "stall-header goodbye-threads big-ids big-strings\n"
                "HOST:PORT may be unix:PATH (weftd's Unix socket)\n");
        return 2;
    }
    mode = argv[2];
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
    if (strcmp(mode, "hello-hangup") == 0)
        return hello_hangup(argv[1], trace);
    if (strcmp(mode, "hold-open") == 0 || strcmp(mode, "stall-header") == 0)
        return hold_connections(argv[1], strcmp(mode, "stall-header") == 0);
    if (strcmp(mode, "garbage") == 0) {
        static const uint8_t junk[] = { 0, 0, 0, 12, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                        0xff, 0xff };
        send_bytes(junk, sizeof junk);
    } else if (strcmp(mode, "too-long") == 0) {
        static const uint8_t hdr[] = { 0x7f, 0xff, 0xff, 0xff };
        send_bytes(hdr, sizeof hdr);
    } else if (strcmp(mode, "empty-frame") == 0) {
        static const uint8_t hdr[] = { 0, 0, 0, 0 };
        send_bytes(hdr, sizeof hdr);
    } else if (strcmp(mode, "bad-version") == 0) {
        send_hello(trace, 99);
    } else if (strcmp(mode, "no-auth") == 0) {
        authenticated = 1; /* as a client of auth = none would */
        send_hello(trace, WEFT_PROTOCOL_VERSION);
    } else if (strcmp(mode, "claim") == 0) {
        claim_uid_delta = 1;
        send_hello(trace, WEFT_PROTOCOL_VERSION);
    } else if (strcmp(mode, "replay") == 0) {
        char *cred = NULL;
        if (!send_auth(NULL, 0, &cred))
            return 1; /* the first use must pass */
        close(sock);
        authenticated = 0;
        if (connect_to(argv[1]) < 0)
            return 2;
        got = send_auth(cred, 0, NULL);
        free(cred);
        return got == 0 ? 0 : 1;
    } else if (strcmp(mode, "rebind") == 0) {
        /* Made for the first connection, presented on a second: the
         * nonce (and the client's port) are the first's. */
        char *cred = make_cred(0);
        int first = sock;
        if (connect_to(argv[1]) < 0)
            return 2;
        got = send_auth(cred, 0, NULL);
        free(cred);
        close(first);
        return got == 0 ? 0 : 1;
    } else if (strcmp(mode, "bad-mac") == 0) {
        corrupt_next = 1;
        send_hello(trace, WEFT_PROTOCOL_VERSION);
    } else if (strcmp(mode, "unsealed") == 0) {
        ensure_auth();
        weft_mac_free(mac);
        mac = NULL; /* what a program without the key can send */
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        /* weftd's Error is sealed: read it with the MAC again (weftd
         * sent nothing sealed before it). */
        mac = weft_mac_new(bound.key, WEFT_MAC_CLIENT);
    } else if (strcmp(mode, "expired") == 0) {
        char *cred = make_cred(1);
        sleep(3);
        got = send_auth(cred, 0, NULL);
        free(cred);
        return got == 0 ? 0 : 1;
    } else if (strcmp(mode, "bad-cred") == 0) {
        return send_auth("MUNGE:bm90IGEgY3JlZGVudGlhbA==:", 0, NULL) == 0 ? 0
                                                                          : 1;
    } else if (strcmp(mode, "before-hello") == 0) {
        send_defs_region();
    } else if (strcmp(mode, "unknown-record") == 0) {
        static const uint8_t bad[] = { 0x7e, 1, 2, 3 };
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_raw_defs(1, bad, sizeof bad);
    } else if (strcmp(mode, "undefined-ref") == 0) {
        weft_record ev = rec_event(WEFT_REC_Enter, 10, 5);
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_records(1, 0, 1, 0, &ev, 1);
    } else if (strcmp(mode, "time-backwards") == 0) {
        weft_record a = rec_event(WEFT_REC_Enter, 1000, 0);
        weft_record b = rec_event(WEFT_REC_Leave, 500, 0);
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        send_records(1, 0, 1, 1000, &a, 1);
        send_records(1, 0, 2, 500, &b, 1);
    } else if (strcmp(mode, "daemon-def") == 0) {
        weft_record d = { .type = WEFT_REC_ClockProperties };
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_records(0, 0, 1, 0, &d, 1);
    } else if (strcmp(mode, "seq-gap") == 0) {
        weft_record a = rec_event(WEFT_REC_Enter, 1000, 0);
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        send_records(1, 0, 3, 0, &a, 1);
    } else if (strcmp(mode, "vanish") == 0) {
        /* Rank 0 of 2 records and disappears without Goodbye; rank 1
         * never comes. Exit 0 once the batch was acked (no Error). */
        weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                              rec_event(WEFT_REC_Leave, 200, 0) };
        send_hello_size(trace, WEFT_PROTOCOL_VERSION, 2);
        send_defs_region();
        send_records(1, 0, 1, 0, ev, 2);
        got = await_reply(1000);
        close(sock);
        return got == -1 ? 0 : 1;
    } else if (strcmp(mode, "aborted") == 0) {
        weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                              rec_event(WEFT_REC_Leave, 200, 0) };
        send_hello_size(trace, WEFT_PROTOCOL_VERSION, 2);
        send_defs_region();
        send_records(1, 0, 1, 0, ev, 2);
        send_goodbye_ended("MPI_Abort (error code 3)");
        got = await_reply(10000);
        close(sock);
        return got == 0 ? 0 : 1;
    } else if (strcmp(mode, "first-half") == 0) {
        /* Hello, definitions and one batch (Enter), acked; then vanish. */
        weft_record ev = rec_event(WEFT_REC_Enter, 100, 0);
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        send_records(1, 0, 1, 0, &ev, 1);
        got = await_reply_n(10000, 2);
        close(sock);
        return got == 2 ? 0 : 1;
    } else if (strcmp(mode, "second-half") == 0) {
        /* Back after a weftd restart: HelloAck must say definitions 1 and
         * thread 0 batch 1 are held; send batch 2 (Leave) and Goodbye. */
        weft_record ev = rec_event(WEFT_REC_Leave, 200, 0);
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        got = await_reply_n(300, 1);
        if (!hello_ack) {
            fprintf(stderr, "rawpeer: no HelloAck\n");
            return 1;
        }
        printf("definitions_seq=%llu", (unsigned long long)hello_ack->definitions_seq);
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
    } else if (strcmp(mode, "flood") == 0) {
        /* Sends batches and never reads the acks. weftd must stop reading
         * (backpressure) so that our sends block: exit 0 when they do. */
        struct timeval tv = { 2, 0 };
        weft_record ev[2] = { rec_event(WEFT_REC_Enter, 1, 0),
                              rec_event(WEFT_REC_Leave, 1, 0) };
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        for (uint64_t seq = 1; seq <= 2000000; seq++) {
            Weft__Envelope env = WEFT__ENVELOPE__INIT;
            Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;
            uint8_t recs[64], *frame;
            uint64_t prev = 1;
            size_t len = 0;
            ssize_t n, k;
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
            n = pack_env(&env, &frame);
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
    } else if (strncmp(mode, "query", 5) == 0) {
        /* The weft command's Query, asked wrongly: "query" (over TCP:
         * refused), "query-kind" (a kind weftd does not know),
         * "query-no-key" (REMOVE without a trace), "query-after-hello",
         * "query-remove" (REMOVE of the key given as TRACE). */
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Query q = WEFT__QUERY__INIT;
        q.protocol_version = WEFT_PROTOCOL_VERSION;
        if (strcmp(mode, "query-kind") == 0)
            q.kind = (Weft__Query__Kind)7;
        else if (strcmp(mode, "query-no-key") == 0)
            q.kind = WEFT__QUERY__KIND__REMOVE;
        else if (strcmp(mode, "query-remove") == 0) {
            q.kind = WEFT__QUERY__KIND__REMOVE;
            q.trace = (char *)trace;
        }
        else if (strcmp(mode, "query-after-hello") == 0)
            send_hello(trace, WEFT_PROTOCOL_VERSION);
        else if (strcmp(mode, "query") != 0) {
            fprintf(stderr, "rawpeer: unknown mode '%s'\n", mode);
            return 2;
        }
        env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
        env.query = &q;
        send_env(&env);
    } else if (strcmp(mode, "member") == 0) {
        return run_member(argc - 3, argv + 3);
    } else if (strcmp(mode, "goodbye-threads") == 0) {
        return run_goodbye_threads(trace);
    } else if (strcmp(mode, "big-ids") == 0) {
        return run_big_ids(trace);
    } else if (strcmp(mode, "big-strings") == 0) {
        return run_big_strings(trace);
    } else if (strcmp(mode, "short") == 0 || strcmp(mode, "counted") == 0) {
        /* Two events, then a Goodbye that says thread 0 sent three
         * ("short": one never arrived) or two ("counted"). */
        weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                              rec_event(WEFT_REC_Leave, 200, 0) };
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        send_records(1, 0, 1, 0, ev, 2);
        send_goodbye_counts(strcmp(mode, "short") == 0 ? 3 : 2, 1);
        got = await_reply(10000);
        close(sock);
        return got == 0 ? 0 : 1;
    } else if (strcmp(mode, "valid") == 0) {
        weft_record ev[2] = { rec_event(WEFT_REC_Enter, 100, 0),
                              rec_event(WEFT_REC_Leave, 200, 0) };
        send_hello(trace, WEFT_PROTOCOL_VERSION);
        send_defs_region();
        send_records(1, 0, 1, 0, ev, 2);
        send_goodbye();
        got = await_reply(10000);
        close(sock);
        return got == 0 ? 0 : 1;
    } else {
        fprintf(stderr, "rawpeer: unknown mode '%s'\n", mode);
        return 2;
    }
    got = await_reply(10000);
    close(sock);
    if (got != 1)
        fprintf(stderr, "rawpeer: no Error from weftd (%s)\n",
                got == 0 ? "connection closed" : "timeout");
    return got == 1 ? 0 : 1;
}
