/* rawpeer_wire.c - weft-rawpeer's side of the wire protocol: the
 * connection (TCP with its Challenge, MUNGE credential and MAC, or the
 * Unix socket), frames and records sent by hand, and the replies read.
 * The modes that use them are in weft-rawpeer.c; rawpeer.h says what
 * each does. */
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


#include "rawpeer.h"

int sock = -1;
int authenticated;          /* AuthAck received on this socket */
int stop_at_hello_ack;      /* await_reply_n returns 4 at HelloAck */
int quiet_errors;           /* await_reply_n keeps Errors in */
char last_error[512];       /* the last Error, when quiet */
uint32_t claim_uid_delta;   /* "claim": the Hello's uid is off by */
uint8_t nonce[WEFT_AUTH_NONCE]; /* this socket's Challenge */
uint32_t server_uid;        /* what the Challenge says */
weft_bind bound;            /* the last credential's payload */
weft_mac *mac;              /* after the AuthAck */
int corrupt_next;           /* "bad-mac": flip a bit of the next */
Weft__HelloAck *hello_ack;  /* the last HelloAck received */
uint64_t acks;              /* Ack frames received */
uint32_t relay_member;      /* "node-relay": frames go as this member's */
uint32_t relay_uid, relay_gid; /* whom the node vouches for */
int relay_events_here;
uint32_t hello_rank;        /* the rank a Hello says */


void send_bytes(const void *buf, size_t len)
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
ssize_t pack_env(const Weft__Envelope *env, uint8_t **frame)
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

/* env as a NodeRelay of member relay_member (the Hello's with whom the
 * node vouches for), into *out (free it). */
static void relay_wrap(const Weft__Envelope *env, Weft__Envelope *out,
                       Weft__NodeRelay *r)
{
    uint8_t *inner;
    ssize_t n = weft_frame_pack(env, &inner);

    if (n <= WEFT_FRAME_HEADER)
        exit(1);
    memmove(inner, inner + WEFT_FRAME_HEADER, (size_t)n - WEFT_FRAME_HEADER);
    weft__node_relay__init(r);
    r->member = relay_member;
    r->frame.data = inner;
    r->frame.len = (size_t)n - WEFT_FRAME_HEADER;
    if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO) {
        r->uid = relay_uid;
        r->gid = relay_gid;
        r->pid = hello_pid();
        r->events_here = relay_events_here;
    }
    out->msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    out->node_relay = r;
}

void send_env(const Weft__Envelope *env)
{
    Weft__Envelope wrapped = WEFT__ENVELOPE__INIT;
    Weft__NodeRelay r;
    uint8_t *frame;
    ssize_t n;

    if (relay_member) {
        relay_wrap(env, &wrapped, &r);
        env = &wrapped;
    }
    n = pack_env(env, &frame);
    if (relay_member)
        free(r.frame.data);

    if (n > 0) {
        send_bytes(frame, (size_t)n);
        free(frame);
    }
}

/* A credential of ttl seconds (0: munged's default) for this socket, as
 * libweft makes it (kept in `bound`). Exits 1 if munged cannot. */
char *make_cred(unsigned ttl)
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


/* Sends Auth with credential cred (NULL: a new one of ttl seconds, 0 for
 * munged's default; kept in *made if made is not NULL) and waits for
 * AuthAck. 1 when it came, 0 after printing weftd's Error; exits 1 when
 * no credential can be made or nothing came. */
int send_auth(const char *cred, unsigned ttl, char **made)
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
void ensure_auth(void)
{
    const char *auth = getenv("WEFT_AUTH");

    if (!authenticated && !(auth && strcmp(auth, "none") == 0) &&
        !send_auth(NULL, 0, NULL))
        exit(1);
}

/* See rawpeer.h. */
uint32_t hello_pid(void)
{
    const char *v = getenv("RAWPEER_PID");

    return v ? (uint32_t)strtoul(v, NULL, 10) : (uint32_t)getpid();
}

void send_hello_size(const char *trace, uint32_t version, uint32_t size)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;

    ensure_auth();
    h.protocol_version = version;
    h.trace = (char *)trace;
    h.rank = hello_rank;
    h.size = size;
    h.hostname = "rawpeer";
    h.pid = hello_pid();
    h.uid = getenv("RAWPEER_CLAIM_UID")
                ? (uint32_t)strtoul(getenv("RAWPEER_CLAIM_UID"), NULL, 10)
                : (uint32_t)getuid() + claim_uid_delta;
    h.timer_resolution = 1000000000;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    send_env(&env);
}

void send_hello(const char *trace, uint32_t version)
{
    send_hello_size(trace, version, 1);
}

void send_records(int events, uint32_t loc, uint64_t seq,
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

void send_raw_defs(uint64_t seq, const uint8_t *bytes, size_t len)
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
void send_goodbye_ended(const char *ended)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    if (ended)
        g.ended = (char *)ended;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
}

void send_goodbye(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    send_env(&env);
}

/* A Goodbye that reports `events` sent and `dropped` on thread 0. */
void send_goodbye_counts(uint64_t events, uint64_t dropped)
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

weft_record rec_string(uint32_t id, const char *s)
{
    weft_record r = { .type = WEFT_REC_String };

    r.u.String.self = id;
    r.u.String.string = s;
    return r;
}

weft_record rec_region(uint32_t id, uint32_t name)
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

weft_record rec_event(uint32_t type, uint64_t time, uint32_t region)
{
    weft_record r = { .type = type, .time = time };

    r.u.Enter.region = region; /* Enter and Leave share the layout */
    return r;
}

void send_defs_region(void)
{
    weft_record d[2] = { rec_string(0, "work"), rec_region(0, 0) };

    send_records(0, 0, 1, 0, d, 2);
}

uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *v = getenv(name);

    return v && *v ? strtoull(v, NULL, 0) : dflt;
}

unsigned env_count(const char *name, unsigned dflt)
{
    const char *v = getenv(name);

    return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}

uint32_t env_u32(const char *name, uint32_t dflt)
{
    const char *v = getenv(name);

    return v && *v ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}


/* What was read from `sock` and not handed out yet: the bytes after the
 * frame a call of await_reply_n returned at stay for the next call (a
 * node's link goes on after a relayed member's Error). */
static weft_frame_reader rx;
static int rx_ready;
static uint8_t rx_buf[65536];
static size_t rx_off, rx_len;

void reset_replies(void)
{
    if (rx_ready)
        weft_frame_reader_free(&rx);
    weft_frame_reader_init(&rx, WEFT_DEFAULT_MAX_FRAME);
    rx_ready = 1;
    rx_off = rx_len = 0;
}

/* Reads frames until an Error (printed, returns 1), EOF (0), timeout (-1),
 * an AuthAck (3), or, with stop_after_acks, that many Acks in all (2). */
int await_reply_n(int timeout_ms, uint64_t stop_after_acks)
{
    int result = -1;

    if (!rx_ready)
        reset_replies();
    for (;;) {
        struct pollfd pfd = { sock, POLLIN, 0 };
        ssize_t n;
        if (rx_off == rx_len) {
            if (poll(&pfd, 1, timeout_ms) <= 0)
                break;
            n = read(sock, rx_buf, sizeof rx_buf);
            if (n <= 0) {
                result = 0;
                break;
            }
            rx_off = 0;
            rx_len = (size_t)n;
        }
        while (rx_off < rx_len) {
            uint8_t *frame;
            uint32_t flen;
            Weft__Envelope *env;
            const uint8_t *p = rx_buf + rx_off;
            size_t left = rx_len - rx_off;
            int rc = weft_frame_reader_feed(&rx, &p, &left, &frame, &flen);
            rx_off = rx_len - left;
            if (rc <= 0)
                break;
            if (mac) {
                char why[128];
                ssize_t k = weft_mac_open(mac, frame, flen, why, sizeof why);
                if (k < 0) {
                    printf("rawpeer: weftd's %s\n", why);
                    free(frame);
                    return 0;
                }
                flen = (uint32_t)k;
            }
            env = weft_frame_unpack(frame, flen);
            free(frame);
            if (env && relay_member &&
                env->msg_case == WEFT__ENVELOPE__MSG_NODE_RELAY) {
                /* The head's answer to the member: the frame in it; the
                 * member's end (closed, no frame) as an EOF. */
                Weft__Envelope *inner = NULL;
                int mine = env->node_relay->member == relay_member;
                int closed = mine && env->node_relay->closed;
                if (mine && env->node_relay->frame.len)
                    inner = weft_frame_unpack(env->node_relay->frame.data,
                                              env->node_relay->frame.len);
                weft_frame_free_envelope(env);
                env = inner;
                if (!env && closed)
                    return 0;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK &&
                stop_at_hello_ack) {
                weft_frame_free_envelope(env);
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
                return 3;
            }
            if (env && env->msg_case == WEFT__ENVELOPE__MSG_ACK &&
                ++acks == stop_after_acks) {
                weft_frame_free_envelope(env);
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
                return 1;
            }
            weft_frame_free_envelope(env);
        }
    }
    return result;
}

int await_reply(int timeout_ms)
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

int connect_to(const char *addr)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    const char *colon = strrchr(addr, ':');
    char host[64];

    reset_replies();
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
