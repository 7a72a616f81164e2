/* uplink.c - this weftd's link to its head (see uplink.h). */
#include "uplink.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "clock.h"
#include "clocksync.h"
#include "cred.h"
#include "forward.h"
#include "frame.h"
#include "mac.h"
#include "nodes.h"
#include "parts.h"
#include "shared.h"
#include "weft_errors.h"
#include "worker.h"

struct weft_uplink;

/* This weftd's MUNGE credential for the head, made on a worker thread. */
typedef struct cred_job {
    weft_work work;            /* first: the job is its work */
    struct weft_uplink *u;     /* NULL once the link it was for ended */
    char *socket;              /* munged's (a copy) */
    uint32_t server_uid;
    uint8_t payload[WEFT_BIND_PAYLOAD];
    int rc;                    /* worker's results */
    char *cred;
    char err[256];
} cred_job;

/* A check of the head's archive_root (shared.h), on a thread of its own. */
typedef struct check_job {
    weft_work work;            /* first: the job is its work */
    struct weft_uplink *u;     /* NULL once weftd stops */
    char path[WEFT_ARCHIVE_ROOT_MAX + 1];
    char token[WEFT_ARCHIVE_TOKEN_LEN + 1];
    char node[WEFT_NODE_NAME_MAX + 1];
    weft_shared_check out;     /* the worker's result */
} check_job;

typedef struct write_req {
    uv_write_t req;
    uint8_t *frame;
    size_t bytes;
    uint32_t uid;              /* whose frame it is (owned) */
    int owned;                 /* counted in forward.c's share of uid */
} write_req;

typedef struct weft_uplink {
    weft_daemon *d;
    enum weft_uplink_state state; /* set_state only */
    char host[256], port[8];
    char name[WEFT_NODE_NAME_MAX + 1]; /* this node's */
    uv_getaddrinfo_t gai;
    int gai_out;               /* gai in flight */
    uv_tcp_t tcp;
    int tcp_open;              /* tcp initialized, not yet closed */
    uv_connect_t creq;
    uv_timer_t timer;          /* retry, handshake timeout, heartbeats */
    weft_frame_reader reader;
    weft_mac *mac;             /* after the AuthAck; owned */
    weft_bind bind;            /* this link's nonce, ends and key */
    uint32_t server_uid;       /* the Challenge's */
    cred_job *job;             /* while the credential is made */
    weft_worker *worker;       /* transient: the credential's thread */
    check_job *check;          /* while the archive_root is checked */
    weft_worker *check_worker; /* transient: its thread (a file system
                                  that hangs holds no credential) */
    weft_shared_check archive; /* what the last check found */
    char head_root[WEFT_ARCHIVE_ROOT_MAX + 1]; /* the head's, and its */
    char head_token[WEFT_ARCHIVE_TOKEN_LEN + 1]; /* token (NodeHelloAck) */
    uint64_t checked_at;       /* uv_now() of the last check's start */
    uint64_t retry_ms;         /* the last wait between attempts */
    uint64_t last_heard;       /* uv_now() of the head's last frame */
    unsigned heartbeat;        /* seconds: the head's */
    uint32_t head_max;         /* the head's max_frame */
    int64_t since;             /* unix time of the state */
    uint64_t links;            /* links made */
    char head_name[256];       /* the NodeHelloAck's */
    /* The head's clock (a ClockSync at each link and heartbeat): the
     * last samples of this link, and the offset of the best of them
     * (head ns - this weftd's CLOCK_MONOTONIC ns), kept between links. */
    weft_clock_sample clock[WEFT_UPLINK_CLOCK_SAMPLES];
    size_t nclock;             /* samples of this link, up to the ring's */
    uint32_t clock_id;         /* of the last ClockSync sent */
    int have_offset;
    int64_t head_offset;
    char error[512];           /* why the last link ended; "" */
    uint8_t rbuf[64u << 10];
} weft_uplink;

/* The steps a link may take (bit `to` of legal[from]); STOPPED and
 * CLOSING from anywhere but STOPPED. */
#define B(s) (1u << WEFT_UPLINK_##s)
static const unsigned legal[WEFT_UPLINK_NSTATES] = {
    [WEFT_UPLINK_WAITING] = B(RESOLVING),
    [WEFT_UPLINK_RESOLVING] = B(CONNECTING),
    [WEFT_UPLINK_CONNECTING] = B(CHALLENGED),
    [WEFT_UPLINK_CHALLENGED] = B(AUTHENTICATING),
    [WEFT_UPLINK_AUTHENTICATING] = B(JOINING),
    [WEFT_UPLINK_JOINING] = B(LINKED),
    [WEFT_UPLINK_LINKED] = 0,
    [WEFT_UPLINK_CLOSING] = B(WAITING),
    [WEFT_UPLINK_STOPPED] = 0,
};

int weft_uplink_step_ok(enum weft_uplink_state from,
                        enum weft_uplink_state to)
{
    if ((unsigned)from >= WEFT_UPLINK_NSTATES ||
        (unsigned)to >= WEFT_UPLINK_NSTATES ||
        from == WEFT_UPLINK_STOPPED)
        return 0;
    if (to == WEFT_UPLINK_STOPPED ||
        (to == WEFT_UPLINK_CLOSING && from != WEFT_UPLINK_CLOSING))
        return 1;
    return (legal[from] & (1u << to)) != 0;
}

const char *weft_uplink_state_name(enum weft_uplink_state s)
{
    static const char *const names[] = {
#define XX(name, str) str,
        WEFT_UPLINK_STATES(XX)
#undef XX
    };

    return (unsigned)s < WEFT_UPLINK_NSTATES ? names[s] : "?";
}

int weft_uplink_parse_head(const char *spec, char *host, size_t hostlen,
                           char *port, size_t portlen, char *why,
                           size_t whylen)
{
    const char *colon = strrchr(spec, ':'), *h = spec;
    size_t hl;
    char *end;
    unsigned long p;

    if (!colon) {
        snprintf(why, whylen, "head = '%s': expected HOST:PORT", spec);
        return WEFT_EINVAL;
    }
    hl = (size_t)(colon - spec);
    if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= hostlen) {
        snprintf(why, whylen, "head: a host name of %zu bytes (at most %zu)",
                 hl, hostlen - 1);
        return WEFT_EINVAL;
    }
    errno = 0;
    p = strtoul(colon + 1, &end, 10);
    if (hl == 0 || !colon[1] || *end || errno || p == 0 || p > 65535 ||
        portlen < 6) {
        snprintf(why, whylen, "head = '%s': expected HOST:PORT with a port "
                 "of 1 to 65535", spec);
        return WEFT_EINVAL;
    }
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, portlen, "%lu", p);
    return 0;
}

static void set_state(weft_uplink *u, enum weft_uplink_state s)
{
    assert(weft_uplink_step_ok(u->state, s));
    u->state = s;
    u->since = (int64_t)time(NULL);
}

static void attempt(weft_uplink *u);
static void on_timer(uv_timer_t *t);

/* Milliseconds before the next attempt: 1 s after a link that was
 * made, then doubling with each failure up to WEFT_UPLINK_MAX_RETRY. */
static uint64_t next_retry(const weft_uplink *u)
{
    uint64_t ms = u->retry_ms ? u->retry_ms * 2 : 1000;

    return ms < WEFT_UPLINK_MAX_RETRY * 1000 ? ms
                                             : WEFT_UPLINK_MAX_RETRY * 1000;
}

/* The link is over (or never was): the next attempt after a wait. */
static void after_close(weft_uplink *u)
{
    u->tcp_open = 0;
    if (u->state == WEFT_UPLINK_STOPPED)
        return;
    u->retry_ms = next_retry(u);
    set_state(u, WEFT_UPLINK_WAITING);
    uv_timer_start(&u->timer, on_timer, u->retry_ms, 0);
}

static void on_tcp_closed(uv_handle_t *h)
{
    after_close(h->data);
}

/* Ends the link: what it holds is freed, its handle closed, the
 * processes forwarded on it disconnected (forward.h). */
static void close_link(weft_uplink *u)
{
    int was_linked = u->state == WEFT_UPLINK_LINKED;

    if (u->job) {
        u->job->u = NULL;
        u->job = NULL;
    }
    weft_mac_free(u->mac);
    u->mac = NULL;
    weft_frame_reader_free(&u->reader);
    memset(&u->bind, 0, sizeof u->bind); /* the session key */
    uv_timer_stop(&u->timer);
    set_state(u, WEFT_UPLINK_CLOSING);
    if (was_linked)
        weft__forward_unlinked(u->d);
    if (u->tcp_open && !uv_is_closing((uv_handle_t *)&u->tcp))
        uv_close((uv_handle_t *)&u->tcp, on_tcp_closed);
    else
        after_close(u);
}

__attribute__((format(printf, 2, 3)))
static void link_failed(weft_uplink *u, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(u->error, sizeof u->error, fmt, ap);
    va_end(ap);
    weft_dlog(u->d, WEFT_LOG_WARNING, "link to head %s:%s: %s; trying "
              "again in %llu s", u->host, u->port, u->error,
              (unsigned long long)(next_retry(u) / 1000));
    close_link(u);
}

static void on_write(uv_write_t *req, int status)
{
    write_req *w = (write_req *)req;
    weft_uplink *u = req->handle->data;

    if (w->owned) /* before the drain: shares first */
        weft__forward_written(u->d, w->uid, w->bytes);
    free(w->frame);
    free(w);
    if (status < 0 && status != UV_ECANCELED &&
        u->state != WEFT_UPLINK_CLOSING && u->state != WEFT_UPLINK_STOPPED)
        link_failed(u, "cannot write to the head: %s", uv_strerror(status));
    else if (u->state == WEFT_UPLINK_LINKED)
        weft__forward_drained(u->d, weft__uplink_queued(u->d));
}

/* Sends env, sealed with the link's MAC once it has one; owned: a frame
 * of uid's, counted in uid's share of the queue until it is written. 0,
 * or the link failed. */
static int send_env_of(weft_uplink *u, const Weft__Envelope *env,
                       int owned, uint32_t uid)
{
    write_req *w = malloc(sizeof *w);
    uint8_t *frame = NULL;
    ssize_t n = weft_frame_pack_room(env, u->mac ? WEFT_MAC_TAG : 0, &frame);
    uv_buf_t buf;

    if (!w || n < 0) {
        free(w);
        free(frame);
        link_failed(u, "cannot pack a %s", weft_frame_kind_name(env->msg_case));
        return -1;
    }
    if (u->mac)
        n = (ssize_t)weft_mac_seal_in_place(u->mac, frame, (size_t)n);
    w->frame = frame;
    w->bytes = (size_t)n;
    w->uid = uid;
    w->owned = 0;
    buf = uv_buf_init((char *)frame, (unsigned)n);
    if (uv_write(&w->req, (uv_stream_t *)&u->tcp, &buf, 1, on_write) != 0) {
        free(frame);
        free(w);
        link_failed(u, "cannot write to the head");
        return -1;
    }
    if (owned) { /* (uv_write calls on_write later, never inside) */
        w->owned = 1;
        weft__forward_queued(u->d, uid, w->bytes);
    }
    return 0;
}

static int send_env(weft_uplink *u, const Weft__Envelope *env)
{
    return send_env_of(u, env, 0, 0);
}

/* ---- the handshake ---- */

static void cred_work(weft_work *w)
{
    cred_job *j = (cred_job *)w;

    j->rc = weft_auth_encode(j->socket, j->server_uid, 0, j->payload,
                             sizeof j->payload, &j->cred, j->err,
                             sizeof j->err);
}

static void cred_job_free(cred_job *j)
{
    free(j->socket);
    free(j->cred);
    memset(j, 0, sizeof *j); /* the session key in the payload */
    free(j);
}

static void cred_done(weft_work *w)
{
    cred_job *j = (cred_job *)w;
    weft_uplink *u = j->u;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Auth auth = WEFT__AUTH__INIT;

    if (!u)
        goto out;
    u->job = NULL;
    if (j->rc < 0) {
        link_failed(u, "cannot prove to the head that this is weftd (%s): "
                    "is munged running here, with the cluster's key?",
                    j->err);
        goto out;
    }
    auth.protocol_version = WEFT_PROTOCOL_VERSION;
    auth.credential.data = (uint8_t *)j->cred;
    auth.credential.len = strlen(j->cred);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &auth;
    if (send_env(u, &env) == 0)
        set_state(u, WEFT_UPLINK_AUTHENTICATING);
out:
    cred_job_free(j);
}

/* The ends of the link as this weftd sees them, into u->bind. */
static int link_ends(weft_uplink *u)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;

    if (uv_tcp_getsockname(&u->tcp, (struct sockaddr *)&ss, &len) != 0 ||
        weft_bind_addr_from(&u->bind.client, (struct sockaddr *)&ss) < 0)
        return -1;
    len = sizeof ss;
    if (uv_tcp_getpeername(&u->tcp, (struct sockaddr *)&ss, &len) != 0 ||
        weft_bind_addr_from(&u->bind.server, (struct sockaddr *)&ss) < 0)
        return -1;
    return 0;
}

static void on_challenge(weft_uplink *u, const Weft__Challenge *ch)
{
    weft_daemon *d = u->d;
    cred_job *j;

    if (ch->protocol_version != WEFT_PROTOCOL_VERSION) {
        link_failed(u, "the head speaks protocol %u, this weftd %u: run the "
                    "same weft on the head and its nodes",
                    (unsigned)ch->protocol_version, WEFT_PROTOCOL_VERSION);
        return;
    }
    if (ch->server_uid != 0 && ch->server_uid != (uint32_t)geteuid()) {
        link_failed(u, "the head runs as uid %u, neither root nor this "
                    "weftd's uid %u: another user's program may hold the "
                    "head's address", (unsigned)ch->server_uid,
                    (unsigned)geteuid());
        return;
    }
    if (ch->nonce.len != WEFT_AUTH_NONCE) {
        link_failed(u, "the head's Challenge has a nonce of %zu bytes",
                    ch->nonce.len);
        return;
    }
    memcpy(u->bind.nonce, ch->nonce.data, WEFT_AUTH_NONCE);
    if (link_ends(u) < 0 ||
        getrandom(u->bind.key, WEFT_MAC_KEY, 0) != WEFT_MAC_KEY) {
        link_failed(u, "cannot tell the link's ends or draw its key");
        return;
    }
    u->server_uid = ch->server_uid;
    j = calloc(1, sizeof *j);
    if (!j || !(j->socket = strdup(d->cfg.munge_socket))) {
        free(j);
        link_failed(u, "out of memory");
        return;
    }
    j->u = u;
    j->server_uid = ch->server_uid;
    weft_bind_encode(&u->bind, j->payload);
    if ((!u->worker &&
         weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                           &u->worker) < 0) ||
        weft_worker_submit(u->worker, &j->work, cred_work, cred_done) < 0) {
        cred_job_free(j);
        link_failed(u, "no thread to make a MUNGE credential");
        return;
    }
    u->job = j;
    set_state(u, WEFT_UPLINK_CHALLENGED);
}

static void on_auth_ack(weft_uplink *u, const Weft__AuthAck *a)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeHello h = WEFT__NODE_HELLO__INIT;
    char server[64];

    if (!weft_mac_proof_ok(u->bind.key, u->bind.nonce, WEFT_AUTH_NONCE,
                           a->proof.data, a->proof.len)) {
        weft_bind_addr_name(&u->bind.server, server, sizeof server);
        link_failed(u, "the server at %s is not a weftd: it says it runs as "
                    "uid %u but could not read the credential only that uid "
                    "can read", server, (unsigned)u->server_uid);
        return;
    }
    if (!(u->mac = weft_mac_new(u->bind.key, WEFT_MAC_CLIENT))) {
        link_failed(u, "out of memory");
        return;
    }
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.node = u->name;
    h.server = (char *)PACKAGE_VERSION;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO;
    env.node_hello = &h;
    if (send_env(u, &env) == 0)
        set_state(u, WEFT_UPLINK_JOINING);
}

static void check_work(weft_work *w)
{
    check_job *j = (check_job *)w;

    weft_shared_check_run(j->path, j->token, j->node, &j->out);
}

static void check_done(weft_work *w)
{
    check_job *j = (check_job *)w;
    weft_uplink *u = j->u;

    if (u) {
        int same = u->archive.state == j->out.state &&
                   strcmp(u->archive.error, j->out.error) == 0;
        u->check = NULL;
        u->archive = j->out;
        if (same)
            ; /* said already */
        else if (u->archive.state == WEFT_SHARED_OK)
            weft_dlog(u->d, WEFT_LOG_INFO, "the head's archive_root is "
                      "shared here: %s", u->archive.path);
        else
            weft_dlog(u->d, WEFT_LOG_WARNING, "the head's archive_root "
                      "cannot be used here: %s", u->archive.error);
    }
    free(j);
}

/* The head has an archive_root (u->head_root; its mark holding
 * u->head_token): does this node see it where it looks (its own
 * archive_root, else the head's)? At each link and every
 * WEFT_SHARED_RECHECK_S while linked (a file system unmounted since). */
static void check_archive(weft_uplink *u)
{
    weft_daemon *d = u->d;
    const char *root = u->head_root, *token = u->head_token;
    const char *path = *d->cfg.archive_root ? d->cfg.archive_root : root;
    check_job *j;

    u->checked_at = uv_now(d->loop);
    if (!*root) {
        memset(&u->archive, 0, sizeof u->archive); /* WEFT_SHARED_NONE */
        return;
    }
    if (u->archive.state == WEFT_SHARED_NONE)
        u->archive.state = WEFT_SHARED_CHECKING; /* (else: the last, until
                                                    this one says) */
    snprintf(u->archive.path, sizeof u->archive.path, "%s", path);
    if (u->check) { /* the last check hangs: it says when it is done */
        u->archive.state = WEFT_SHARED_CHECKING;
        return;
    }
    if (!(j = calloc(1, sizeof *j)) || strlen(path) >= sizeof j->path ||
        path[0] != '/') {
        free(j);
        u->archive.state = WEFT_SHARED_UNUSABLE;
        snprintf(u->archive.error, sizeof u->archive.error, "the head's "
                 "archive_root '%.200s' is no absolute path of at most %d "
                 "bytes", root, WEFT_ARCHIVE_ROOT_MAX);
        return;
    }
    j->u = u;
    snprintf(j->path, sizeof j->path, "%s", path);
    snprintf(j->token, sizeof j->token, "%s", token);
    snprintf(j->node, sizeof j->node, "%s", u->name);
    if ((!u->check_worker &&
         weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                           &u->check_worker) < 0) ||
        weft_worker_submit(u->check_worker, &j->work, check_work,
                           check_done) < 0) {
        free(j);
        u->archive.state = WEFT_SHARED_UNUSABLE;
        snprintf(u->archive.error, sizeof u->archive.error, "no thread to "
                 "check it");
        return;
    }
    u->check = j;
}

/* Asks the head its clock (answered by its session, node_frame). */
static void send_clock_sync(weft_uplink *u)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;

    cs.id = ++u->clock_id;
    cs.client_time = weft_clocksync_now();
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &cs;
    send_env(u, &env);
}

/* The head's answer: a sample; the offset is the best (shortest round
 * trip) of this link's last WEFT_UPLINK_CLOCK_SAMPLES. */
static void on_clock_sync(weft_uplink *u, const Weft__ClockSync *cs)
{
    weft_clock_estimate e;
    weft_clock_sample *s;

    if (cs->id != u->clock_id)
        return; /* an older one's: the last is as good */
    s = &u->clock[u->nclock++ % WEFT_UPLINK_CLOCK_SAMPLES];
    s->t_send = cs->client_time;
    s->t_recv = weft_clocksync_now();
    s->server_ns = cs->server_time;
    if (weft_clock_best(u->clock,
                        u->nclock < WEFT_UPLINK_CLOCK_SAMPLES
                            ? u->nclock : WEFT_UPLINK_CLOCK_SAMPLES,
                        1000000000u, &e) < 0)
        return;
    u->head_offset = e.offset;
    if (!u->have_offset) {
        u->have_offset = 1;
        weft_clocksync_head_known(u->d);
    }
    /* A new link asks WEFT_UPLINK_CLOCK_SAMPLES times in a row (the
     * first answers wait behind the link's setup), then once a beat. */
    if (u->nclock < WEFT_UPLINK_CLOCK_SAMPLES) {
        send_clock_sync(u);
        return;
    }
    if (u->nclock == WEFT_UPLINK_CLOCK_SAMPLES)
        weft_dlog(u->d, WEFT_LOG_DEBUG, "the head's clock is %+" PRId64
                  " ns from this node's (within %" PRIu64 " ns)", e.offset,
                  e.error_ns);
}

static void on_joined(weft_uplink *u, const Weft__NodeHelloAck *a)
{
    weft_daemon *d = u->d;

    u->heartbeat = a->heartbeat >= 1 && a->heartbeat <= 3600 ? a->heartbeat
                                                               : 5;
    snprintf(u->head_name, sizeof u->head_name, "%s", a->head);
    /* A head that does not say (an older weftd): this node's */
    u->head_max = a->max_frame ? a->max_frame : (uint32_t)d->cfg.max_frame;
    set_state(u, WEFT_UPLINK_LINKED);
    u->links++;
    u->retry_ms = 0;
    u->error[0] = 0;
    u->reader.max_frame = d->cfg.max_frame + WEFT_MAC_TAG;
    weft_dlog(d, WEFT_LOG_INFO, "linked to head %s at %s:%s (weftd %s) as "
              "node %s; heartbeat %u s", u->head_name, u->host, u->port,
              a->server, u->name, u->heartbeat);
    uv_timer_start(&u->timer, on_timer, (uint64_t)u->heartbeat * 1000,
                   (uint64_t)u->heartbeat * 1000);
    snprintf(u->head_root, sizeof u->head_root, "%s", a->archive_root);
    snprintf(u->head_token, sizeof u->head_token, "%s", a->archive_token);
    memset(&u->archive, 0, sizeof u->archive);
    check_archive(u);
    u->nclock = 0; /* the head may have moved */
    send_clock_sync(u);
    weft__forward_linked(d);
}

/* One frame from the head: what the state waits for, a Heartbeat once
 * linked, or an Error (the head refused). 0, or -1 once the link
 * failed. */
static int handle_frame(weft_uplink *u, const uint8_t *frame, uint32_t len)
{
    Weft__Envelope *env;
    char why[128];
    enum weft_uplink_state before = u->state;

    if (u->mac) {
        ssize_t n = weft_mac_open(u->mac, frame, len, why, sizeof why);
        if (n < 0) {
            link_failed(u, "from the head, %s", why);
            return -1;
        }
        len = (uint32_t)n;
    }
    if (!(env = weft_frame_unpack(frame, len))) {
        link_failed(u, "the head sent %u bytes that are no weft frame", len);
        return -1;
    }
    u->last_heard = uv_now(u->d->loop);
    if (env->msg_case == WEFT__ENVELOPE__MSG_ERROR)
        link_failed(u, "the head refused this node: %s: %s",
                    weft_err_name(env->error->code), env->error->message);
    else if (u->state == WEFT_UPLINK_CONNECTING &&
             env->msg_case == WEFT__ENVELOPE__MSG_CHALLENGE)
        on_challenge(u, env->challenge);
    else if (u->state == WEFT_UPLINK_AUTHENTICATING &&
             env->msg_case == WEFT__ENVELOPE__MSG_AUTH_ACK)
        on_auth_ack(u, env->auth_ack);
    else if (u->state == WEFT_UPLINK_JOINING &&
             env->msg_case == WEFT__ENVELOPE__MSG_NODE_HELLO_ACK)
        on_joined(u, env->node_hello_ack);
    else if (u->state == WEFT_UPLINK_LINKED &&
             env->msg_case == WEFT__ENVELOPE__MSG_HEARTBEAT)
        ;
    else if (u->state == WEFT_UPLINK_LINKED &&
             env->msg_case == WEFT__ENVELOPE__MSG_CLOCK_SYNC)
        on_clock_sync(u, env->clock_sync);
    else if (u->state == WEFT_UPLINK_LINKED &&
             env->msg_case == WEFT__ENVELOPE__MSG_NODE_RELAY)
        weft__forward_from_head(u->d, env->node_relay);
    else
        link_failed(u, "unexpected %s from the head while %s",
                    weft_frame_kind_name(env->msg_case),
                    weft_uplink_state_name(before));
    weft_frame_free_envelope(env);
    return u->state == WEFT_UPLINK_CLOSING ? -1 : 0;
}

static void on_alloc(uv_handle_t *h, size_t size, uv_buf_t *buf)
{
    weft_uplink *u = h->data;

    (void)size;
    *buf = uv_buf_init((char *)u->rbuf, sizeof u->rbuf);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    weft_uplink *u = s->data;
    const uint8_t *p = (const uint8_t *)buf->base;
    size_t left = nread > 0 ? (size_t)nread : 0;

    if (nread < 0) {
        if (nread == UV_EOF)
            link_failed(u, "the head closed the link");
        else
            link_failed(u, "cannot read from the head: %s",
                        uv_strerror((int)nread));
        return;
    }
    while (left > 0) {
        uint8_t *frame = NULL;
        uint32_t flen = 0;
        int rc = weft_frame_reader_feed(&u->reader, &p, &left, &frame, &flen);

        if (rc < 0) {
            link_failed(u, "the head sent a frame of %u bytes (at most %zu)",
                        u->reader.payload_len, u->reader.max_frame);
            return;
        }
        if (rc == 0)
            return;
        rc = handle_frame(u, frame, flen);
        free(frame);
        if (rc < 0)
            return;
    }
}

static void on_connected(uv_connect_t *req, int status)
{
    weft_uplink *u = req->data;

    if (u->state != WEFT_UPLINK_CONNECTING)
        return; /* closing or stopped meanwhile */
    if (status < 0) {
        link_failed(u, "cannot connect: %s", uv_strerror(status));
        return;
    }
    if (uv_read_start((uv_stream_t *)&u->tcp, on_alloc, on_read) != 0)
        link_failed(u, "cannot read from the head");
}

static void on_resolved(uv_getaddrinfo_t *req, int status,
                        struct addrinfo *res)
{
    weft_uplink *u = req->data;
    int rc;

    u->gai_out = 0;
    if (u->state != WEFT_UPLINK_RESOLVING)
        goto out; /* stopped meanwhile */
    if (status < 0) {
        link_failed(u, "cannot resolve %s: %s", u->host,
                    uv_strerror(status));
        goto out;
    }
    weft_frame_reader_init(&u->reader, WEFT_MAX_HELLO_FRAME + WEFT_MAC_TAG);
    if (uv_tcp_init(u->d->loop, &u->tcp) != 0) {
        link_failed(u, "cannot make a socket");
        goto out;
    }
    u->tcp.data = u;
    u->tcp_open = 1;
    uv_tcp_nodelay(&u->tcp, 1);
    uv_tcp_keepalive(&u->tcp, 1, 60);
    u->creq.data = u;
    set_state(u, WEFT_UPLINK_CONNECTING);
    rc = uv_tcp_connect(&u->creq, &u->tcp, res->ai_addr, on_connected);
    if (rc != 0) {
        link_failed(u, "cannot connect: %s", uv_strerror(rc));
        goto out;
    }
    uv_timer_start(&u->timer, on_timer, WEFT_UPLINK_HANDSHAKE_S * 1000, 0);
out:
    uv_freeaddrinfo(res);
}

static void attempt(weft_uplink *u)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC,
                              .ai_socktype = SOCK_STREAM };
    int rc;

    set_state(u, WEFT_UPLINK_RESOLVING);
    u->gai.data = u;
    rc = uv_getaddrinfo(u->d->loop, &u->gai, on_resolved, u->host, u->port,
                        &hints);
    if (rc == 0) {
        u->gai_out = 1;
        return;
    }
    link_failed(u, "cannot resolve %s: %s", u->host, uv_strerror(rc));
}

static void add_trace(const weft_status_trace *t, void *arg)
{
    Weft__NodeStatus *st = arg;

    st->recording++;
    st->events += t->events;
    st->written += t->written;
}

/* This node's figures, in place of a Heartbeat (the head answers it). */
static void send_status(weft_uplink *u)
{
    const weft_daemon *d = u->d;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeStatus st = WEFT__NODE_STATUS__INIT;
    Weft__ArchiveCheck ac = WEFT__ARCHIVE_CHECK__INIT;
    weft_status_ingest in = { .bound = "" };

    if (d->status_src) {
        d->status_src->ingest(d, &in);
        d->status_src->recording(d, add_trace, &st);
    }
    st.connections = in.conns;
    ac.state = (Weft__ArchiveCheck__State)u->archive.state;
    ac.path = (char *)u->archive.path;
    ac.error = (char *)u->archive.error;
    st.archive = &ac;
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_STATUS;
    env.node_status = &st;
    send_env(u, &env);
}

static void on_timer(uv_timer_t *t)
{
    weft_uplink *u = t->data;
    uint64_t quiet = (uint64_t)WEFT_NODE_SILENT_BEATS * u->heartbeat * 1000;

    switch (u->state) {
    case WEFT_UPLINK_WAITING:
        attempt(u);
        break;
    case WEFT_UPLINK_LINKED:
        if (uv_now(u->d->loop) - u->last_heard >= quiet)
            link_failed(u, "nothing from the head for %llu s (%d "
                        "heartbeats)", (unsigned long long)(quiet / 1000),
                        WEFT_NODE_SILENT_BEATS);
        else
            send_status(u);
        if (u->state == WEFT_UPLINK_LINKED) {
            send_clock_sync(u);
            weft__parts_tick(u->d);
        }
        if (!u->check &&
            uv_now(u->d->loop) - u->checked_at >= WEFT_SHARED_RECHECK_S * 1000)
            check_archive(u);
        break;
    case WEFT_UPLINK_CONNECTING:
    case WEFT_UPLINK_CHALLENGED:
    case WEFT_UPLINK_AUTHENTICATING:
    case WEFT_UPLINK_JOINING:
        link_failed(u, "no answer within %d s while %s",
                    WEFT_UPLINK_HANDSHAKE_S,
                    weft_uplink_state_name(u->state));
        break;
    default:
        break;
    }
}

int weft__uplink_send(weft_daemon *d, const Weft__Envelope *env)
{
    weft_uplink *u = d->uplink;

    if (!u || u->state != WEFT_UPLINK_LINKED)
        return -1;
    return send_env(u, env);
}

int weft__uplink_send_of(weft_daemon *d, const Weft__Envelope *env,
                         uint32_t uid)
{
    weft_uplink *u = d->uplink;

    if (!u || u->state != WEFT_UPLINK_LINKED)
        return -1;
    return send_env_of(u, env, 1, uid);
}

int weft__uplink_head_clock(const weft_daemon *d, int64_t *offset)
{
    const weft_uplink *u = d->uplink;

    if (!u || !u->have_offset)
        return WEFT_ESTATE;
    *offset = u->head_offset;
    return 0;
}

int weft__uplink_events_here(const weft_daemon *d)
{
    const weft_uplink *u = d->uplink;

    return u && u->have_offset && u->archive.state == WEFT_SHARED_OK;
}

const char *weft__uplink_archive_root(const weft_daemon *d)
{
    const weft_uplink *u = d->uplink;

    if (*d->cfg.archive_root)
        return d->cfg.archive_root;
    return u && *u->head_root ? u->head_root : NULL;
}

uint32_t weft__uplink_head_max(const weft_daemon *d)
{
    const weft_uplink *u = d->uplink;

    return u && u->state == WEFT_UPLINK_LINKED ? u->head_max : 0;
}

size_t weft__uplink_queued(const weft_daemon *d)
{
    const weft_uplink *u = d->uplink;

    return u && u->tcp_open
               ? uv_stream_get_write_queue_size((const uv_stream_t *)&u->tcp)
               : 0;
}

int weft_uplink_start(weft_daemon *d)
{
    weft_uplink *u;
    char why[256];

    if (!*d->cfg.cluster_head)
        return 0;
    if (!(u = calloc(1, sizeof *u))) {
        weft_dlog(d, WEFT_LOG_ERROR, "out of memory");
        return WEFT_ENOMEM;
    }
    u->d = d;
    if (weft_uplink_parse_head(d->cfg.cluster_head, u->host, sizeof u->host,
                               u->port, sizeof u->port, why,
                               sizeof why) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "[cluster] %s", why);
        free(u);
        return WEFT_ECONFIG;
    }
    if (*d->cfg.node_name)
        snprintf(u->name, sizeof u->name, "%s", d->cfg.node_name);
    else if (gethostname(u->name, sizeof u->name) != 0)
        u->name[0] = 0;
    u->name[sizeof u->name - 1] = 0;
    if (weft_nodes_check_name(u->name, why, sizeof why) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "[cluster] node_name: %s%s", why,
                  *d->cfg.node_name ? "" : " (the host name's; set "
                  "node_name)");
        free(u);
        return WEFT_ECONFIG;
    }
    if (weft_forward_init(d) < 0 || weft_parts_init(d) < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "out of memory");
        free(u);
        return WEFT_ENOMEM;
    }
    uv_timer_init(d->loop, &u->timer);
    u->timer.data = u;
    u->state = WEFT_UPLINK_WAITING;
    u->since = (int64_t)time(NULL);
    d->uplink = u;
    weft_dlog(d, WEFT_LOG_INFO, "node %s of head %s:%s", u->name, u->host,
              u->port);
    attempt(u);
    return 0;
}

void weft_uplink_stop(weft_daemon *d)
{
    weft_uplink *u = d->uplink;

    if (!u || u->state == WEFT_UPLINK_STOPPED)
        return;
    if (u->job) {
        u->job->u = NULL;
        u->job = NULL;
    }
    if (u->check) {
        u->check->u = NULL;
        u->check = NULL;
    }
    set_state(u, WEFT_UPLINK_STOPPED);
    weft_forward_stop(d);
    if (u->gai_out)
        uv_cancel((uv_req_t *)&u->gai);
    uv_close((uv_handle_t *)&u->timer, NULL);
    if (u->tcp_open && !uv_is_closing((uv_handle_t *)&u->tcp))
        uv_close((uv_handle_t *)&u->tcp, on_tcp_closed);
}

int weft_uplink_status(const weft_daemon *d, weft_status_head *out)
{
    const weft_uplink *u = d->uplink;

    if (!u)
        return 0;
    out->address = d->cfg.cluster_head;
    out->state = weft_uplink_state_name(u->state);
    out->name = u->head_name;
    out->error = u->error;
    out->since = u->since;
    out->links = u->links;
    out->forwarded = weft_forward_count(d);
    out->parts = weft_parts_count(d);
    out->archive_state = weft_shared_state_name(u->archive.state);
    out->archive_path = u->archive.path;
    out->archive_error = u->archive.error;
    return 1;
}

void weft_uplink_free(weft_daemon *d)
{
    weft_uplink *u = d->uplink;

    if (!u)
        return;
    weft_mac_free(u->mac);
    weft_frame_reader_free(&u->reader);
    free(u);
    d->uplink = NULL;
    weft_forward_free(d);
    weft_parts_free(d);
}
