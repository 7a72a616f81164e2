/* fuzz_daemon.c - libFuzzer target for weftd's session state machine: a
 * sequence of frames from up to NPEERS peers, interleaved, against a real
 * weft_daemon (its libuv loop, journal writer threads, traces and
 * members, session.c's handlers, the conversion of finished traces and
 * their catalog rows), with no listener: each connection is one end of a
 * socketpair served with weft_server_open_fd (server.h) as if accepted
 * on the Unix socket, so frames go through server.c's read path and the
 * replies (HelloAck, Ack, Error...) are read back from the other end.
 * The loop runs between steps until the daemon is idle (every journal
 * entry back, every byte read, every job done). Each input gets its own
 * daemon, loop and spool (in a directory of the process's own).
 *
 * Input: a config byte (bit 0: durability = fsync; bit 1: small limits;
 * bit 2: max_conn_pending tiny; bit 3: max_buffered small; bit 4:
 * max_frame small; bit 5: over TCP, below), then steps. A step is an op
 * byte (bits 0-1: the peer; the rest, modulo NKINDS, what it does: see
 * step()) and the bytes that kind reads. Frames are built well formed from those bytes, mostly:
 * Hellos of two trace names, two runs and two users (the peer's uid, as
 * SO_PEERCRED gives it), Definitions and EventBatches whose records are
 * built from the record table's descriptors (gen_record: ids, references
 * to what the peer defined, enum values in range, typed values, arrays),
 * in sequence or resent or skipping, Goodbyes with the counts sent;
 * raw bytes, hang-ups, reconnects of a member and the grace period's
 * end come too, and NodeHellos (cluster/nodes.c) of users and of
 * weftd's own uid, then Heartbeats on the links. At the end every peer hangs up, every trace converts
 * (grace_period 0) and the daemon stops.
 *
 * Checked beyond memory safety and leaks:
 *  - a step touches its own peer only: no other connection gets an Error
 *    or is closed (but a node's link, which a NodeHello of its name
 *    replaces); a connection that got an Error is closed, and one
 *    weftd closed got an Error or said Goodbye;
 *  - every Ack names an entry of its member's journal (read back with
 *    journal.h's reader; journals are hard-linked as they appear, since
 *    a converted trace's go), each acknowledged (location, seq) or
 *    Definitions seq there exactly once;
 *  - every trace converts: its catalog row ends complete or partial,
 *    never failed (what weftd acknowledged must convert), with the
 *    events of its journals: converted again from the linked journals,
 *    the archive holds the journaled events plus the Enters and Leaves
 *    conversion adds so that locations nest, minus the Leaves it drops;
 *  - the loop closes with nothing open (uv_loop_close returns 0).
 *
 * Over TCP (config bit 5; auth = munge) the peers connect to a loopback
 * listener weftd adopted and accepts, so preauth.c and authn.c see them:
 * weftd's Challenge comes first; before a peer's first step that is not
 * raw bytes it answers with an Auth whose credential (sealed.h's
 * stand-in for munged, decoded on authn.c's worker thread) is bound to
 * the Challenge and to the connection's ends, as libweft binds it, or
 * spoilt by the step's first byte (low 4 bits: 10 the other user's uid,
 * 11-15 fz_spoil 1-5: another nonce, client end, server end, refused by
 * "munged", a payload binding nothing); the AuthAck's proof must be of
 * the session key, and from then on every frame both ways is sealed
 * with the session MAC: weftd's must open, and each step of a sealed
 * peer starts with a byte whose low 5 bits (1-4: fz_tamper) now and then
 * spoil its first frame's tag, Envelope or number, or leave it unsealed,
 * which weftd must refuse (an Error, then the end). Checked as well:
 * a spoilt credential authenticates nothing, one of the other uid joins
 * no trace, and weftd never opens the frame tampered with.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include "fuzz.h"
#include "gen.h"
#include "members.h"
#include "sealed.h"
#include "authn.h"
#include "catalog.h"
#include "codec.h"
#include "convert.h"
#include "daemon.h"
#include "frame.h"
#include "fsutil.h"
#include "journal.h"
#include "nodes.h"
#include "jwriter.h"
#include "retain.h"
#include "server.h"
#include "ask.h"
#include "session.h"
#include "trace.h"
#include "weft_errors.h"
#include "worker.h"

#define NPEERS 4
#define UID_A 1000
#define UID_B 1001

/* ---- peers ----------------------------------------------------------------- */

typedef struct peer {
    int fd;                 /* our end, -1 when none */
    weft_conn *c;           /* weftd's end, while listed in d.srv->conns */
    char tag[32];           /* c->peer, to find it there */
    weft_frame_reader reader;
    int member;             /* index in members[], -1 */
    int hello;              /* a Hello was sent on this connection */
    int goodbye;            /* a Goodbye was sent on it */
    int asked;              /* a Query was: weftd answers and closes */
    int errors;             /* Error frames received */
    int eof;                /* weftd closed it */
    /* Who it is (kept over reconnects) and what it sent. */
    uint8_t who;            /* the Hello's choice byte */
    uint8_t size;
    model m;
    uint64_t defs_seq;      /* last Definitions seq sent */
    uint64_t seq[NLOCS];    /* last EventBatch seq sent per thread */
    uint64_t time[NLOCS];   /* time of the last event sent */
    uint64_t events[NLOCS]; /* events sent */
    /* Over TCP: the handshake, and the MAC once AuthAck came. */
    int challenged;         /* weftd's Challenge came */
    int auth_sent;          /* an Auth was sent (or is not to be) */
    uint8_t nonce[WEFT_AUTH_NONCE];
    uint8_t key[WEFT_MAC_KEY];
    weft_mac *mac;          /* seals what it sends, opens what it gets */
    uint8_t tamper;         /* for the step's first frame (fz_tamper) */
    int spoilt;             /* its credential: 1 spoilt, 2 another uid */
    uint64_t bad_frame;     /* the number of a frame tampered with, or 0 */
    /* A node's link (NodeHello, cluster/nodes.c): the name it sent, and
     * whether another peer's NodeHello of that name may have closed it
     * (a node linking again replaces its old link). */
    int node;               /* 0, or 1 + the name's index */
    int replaced;
} peer;

static char dir[128], spool[160], keep[160], catalog[200], template_db[200];
static uint8_t *template_bytes;
static size_t template_len;
static uv_loop_t loop;
static weft_daemon d;
static peer peers[NPEERS];
static member members[MAX_MEMBERS];
static size_t nmembers;
static unsigned conn_serial;
static int tcp;               /* this input's peers come over TCP */
static uint16_t tcp_port;     /* of weftd's listener */

/* ---- the daemon's side ------------------------------------------------------ */

static void stop_ingest(weft_daemon *dd)
{
    weft_jwriter_stop(dd);
    weft_worker_stop(dd->srv->syncer);
}

static const weft_server_cbs ingest = { weft_session_frame,
                                        weft_session_closed, stop_ingest,
                                        NULL /* Unix peers: no Challenge */,
                                        weft_session_pending,
                                        weft_session_describe };
static const weft_server_cbs ingest_tcp = { weft_session_frame,
                                            weft_session_closed, stop_ingest,
                                            weft_authn_challenge,
                                            weft_session_pending,
                                            weft_session_describe };

/* p's connection if weftd still lists it. */
static weft_conn *conn_of(const peer *p)
{
    for (weft_conn *c = d.srv->conns; c; c = c->next)
        if (c == p->c && strcmp(c->peer, p->tag) == 0)
            return c;
    return NULL;
}

static int member_of(const char *key, uint32_t rank)
{
    for (size_t i = 0; i < nmembers; i++)
        if (members[i].rank == rank && strcmp(members[i].key, key) == 0)
            return (int)i;
    CHECK(nmembers < MAX_MEMBERS);
    snprintf(members[nmembers].key, sizeof members[nmembers].key, "%s", key);
    members[nmembers].rank = rank;
    members[nmembers].nacks = 0;
    members[nmembers].linked = 0;
    return (int)nmembers++;
}

/* Hard-links the journals weftd has open to keep/KEY/, where conversion
 * does not remove them. */
static void link_journals(void)
{
    for (weft_trace *t = weft_trace_first(&d, WEFT_TRACE_RECORDING); t;
         t = weft_trace_next(t)) {
        char kdir[512];
        snprintf(kdir, sizeof kdir, "%s/%s", keep, t->key);
        for (size_t i = 0; i < t->members.ncells; i++) {
            weft_member *wm = weft_trace_member_at(t, i);
            char name[WEFT_JOURNAL_NAME_MAX], from[1024], to[1024];
            int k;
            if (!wm || !wm->in.journal || wm->in.pending)
                continue; /* pending: its open job may still be out */
            k = member_of(t->key, wm->in.rank);
            if (members[k].linked)
                continue;
            weft_journal_name(name, sizeof name, wm->in.rank);
            snprintf(from, sizeof from, "%s/%s", t->dir, name);
            snprintf(to, sizeof to, "%s/%s", kdir, name);
            mkdir(kdir, 0700);
            CHECK(link(from, to) == 0);
            members[k].linked = 1;
        }
    }
}

/* ---- replies ------------------------------------------------------------------ */

static void send_env(peer *p, const Weft__Envelope *env);

/* A node's link got a piece of an asker's answer (not its last): as a
 * node does once its asker read it, it asks for the next. */
static void node_answer(peer *p, const Weft__NodeRelay *r)
{
    Weft__Envelope *in = r->frame.len
                             ? weft_frame_unpack(r->frame.data, r->frame.len)
                             : NULL;

    if (in && in->msg_case == WEFT__ENVELOPE__MSG_ANSWER &&
        !in->answer->last && !r->closed) {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__NodeRelay more = WEFT__NODE_RELAY__INIT;
        more.member = r->member;
        more.more = 1;
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
        env.node_relay = &more;
        send_env(p, &env);
    }
    weft_frame_free_envelope(in);
}

static void on_reply(peer *p, const Weft__Envelope *env)
{
    member *m = p->member >= 0 ? &members[p->member] : NULL;

    switch (env->msg_case) {
    case WEFT__ENVELOPE__MSG_ERROR:
        p->errors++;
        break;
    case WEFT__ENVELOPE__MSG_CHALLENGE:
        CHECK(tcp && !p->challenged && !p->auth_sent);
        CHECK(env->challenge->nonce.len == WEFT_AUTH_NONCE);
        CHECK(env->challenge->protocol_version == WEFT_PROTOCOL_VERSION);
        memcpy(p->nonce, env->challenge->nonce.data, WEFT_AUTH_NONCE);
        p->challenged = 1;
        break;
    case WEFT__ENVELOPE__MSG_AUTH_ACK:
        /* weftd proves it read the key: it decoded the credential */
        CHECK(tcp && p->auth_sent && !p->mac);
        CHECK(p->spoilt != 1); /* a spoilt credential is refused */
        CHECK(weft_mac_proof_ok(p->key, p->nonce, WEFT_AUTH_NONCE,
                                env->auth_ack->proof.data,
                                env->auth_ack->proof.len));
        CHECK((p->mac = weft_mac_new(p->key, WEFT_MAC_CLIENT)) != NULL);
        break;
    case WEFT__ENVELOPE__MSG_HELLO_ACK:
        CHECK(p->hello);
        /* A client resends from what weftd holds. */
        p->defs_seq = env->hello_ack->definitions_seq;
        for (size_t i = 0; i < env->hello_ack->n_locations; i++) {
            const Weft__LocationSeq *ls = env->hello_ack->locations[i];
            if (ls->location < NLOCS)
                p->seq[ls->location] = ls->seq;
        }
        break;
    case WEFT__ENVELOPE__MSG_ACK:
        CHECK(m != NULL);
        CHECK(m->nacks < MAX_ACKS);
        m->acks[m->nacks++] = (ack){ (uint8_t)env->ack->definitions,
                                     env->ack->location, env->ack->seq };
        break;
    case WEFT__ENVELOPE__MSG_NODE_RELAY:
        if (p->fd >= 0)
            node_answer(p, env->node_relay);
        break;
    default:
        break;
    }
}

/* Reads what weftd sent p. */
static void drain(peer *p)
{
    uint8_t buf[4096];
    weft_conn *c;
    ssize_t n;

    if (p->fd < 0)
        return;
    /* Acks are of the member its connection joined. */
    c = conn_of(p);
    if (c && c->member && p->member < 0)
        p->member = member_of(c->member->member->trace->key, c->member->rank);
    while ((n = read(p->fd, buf, sizeof buf)) > 0) {
        const uint8_t *q = buf;
        size_t left = (size_t)n;
        while (left > 0) {
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&p->reader, &q, &left, &frame,
                                            &flen);
            Weft__Envelope *env;
            CHECK(rc >= 0);
            if (rc == 0)
                break;
            if (p->mac) { /* weftd's frames after its AuthAck */
                char why[128];
                ssize_t k = weft_mac_open(p->mac, frame, flen, why,
                                          sizeof why);
                if (k < 0)
                    fprintf(stderr, "weftd's frame: %s\n", why);
                CHECK(k >= 0);
                flen = (uint32_t)k;
            }
            env = weft_frame_unpack(frame, flen);
            CHECK(env != NULL);
            on_reply(p, env);
            weft_frame_free_envelope(env);
            free(frame);
        }
    }
    if (n == 0 || (n < 0 && tcp && errno == ECONNRESET))
        p->eof = 1;
    else
        CHECK(errno == EAGAIN || errno == EWOULDBLOCK);
}

/* Whether weftd has something left to do. */
static int busy(void)
{
    if (weft_jwriter_pending(&d) || d.jobs || d.ask->n ||
        (d.srv->have_resume && uv_is_active((uv_handle_t *)&d.srv->resume)))
        return 1;
    for (weft_conn *c = d.srv->conns; c; c = c->next) {
        uv_os_fd_t fd;
        int n = 0;
        if (weft_conn_closing(c) || c->auth_job ||
            uv_stream_get_write_queue_size((uv_stream_t *)&c->h.stream))
            return 1;
        if (c->paused)
            continue;
        if (c->stash_len)
            return 1;
        if (uv_fileno(&c->h.handle, &fd) == 0 &&
            ioctl(fd, FIONREAD, &n) == 0 && n > 0)
            return 1;
    }
    for (int i = 0; i < NPEERS; i++) {
        weft_conn *c = peers[i].fd < 0 ? conn_of(&peers[i]) : NULL;
        if (c && !c->paused)
            return 1; /* hung up: it has the end of file to read */
    }
    return 0;
}

/* Runs the loop until weftd is idle, reading the replies meanwhile. */
static void settle(void)
{
    for (;;) {
        for (int i = 0; i < NPEERS; i++)
            drain(&peers[i]);
        link_journals();
        if (!busy())
            break;
        uv_run(&loop, UV_RUN_ONCE);
    }
}

/* ---- peers' actions ---------------------------------------------------------- */

static void hang_up(peer *p)
{
    if (p->fd >= 0)
        close(p->fd);
    p->fd = -1; /* p->c stays: weftd has it until it reads the end */
    weft_frame_reader_free(&p->reader);
    weft_mac_free(p->mac);
    p->mac = NULL;
}

/* Over TCP: p's connection as weftd accepted it (NULL: not yet, when
 * it holds accepting back). */
static weft_conn *accepted(const peer *p)
{
    for (int k = 0; k < 1000; k++) {
        uv_run(&loop, UV_RUN_NOWAIT);
        for (weft_conn *c = d.srv->conns; c; c = c->next)
            if (strcmp(c->peer, p->tag) == 0)
                return c;
    }
    return NULL;
}

/* A new connection of p (its member and what it sent stay). */
static void connect_peer(peer *p, int i)
{
    int sv[2];

    hang_up(p);
    weft_frame_reader_init(&p->reader, 1u << 30);
    p->member = -1;
    p->hello = p->goodbye = p->asked = p->errors = p->eof = 0;
    p->challenged = p->auth_sent = p->spoilt = 0;
    p->bad_frame = 0;
    p->node = p->replaced = 0;
    if (tcp) {
        p->fd = fz_connect(tcp_port, p->tag, sizeof p->tag);
        ++conn_serial;
        p->c = accepted(p);
        return;
    }
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    CHECK(fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0);
    p->fd = sv[0];
    CHECK(weft_server_open_fd(&d, sv[1], &p->c) == 0);
    CHECK(p->c != NULL);
    snprintf(p->tag, sizeof p->tag, "fuzz:peer %d #%u", i, ++conn_serial);
    snprintf(p->c->peer, sizeof p->c->peer, "%s", p->tag);
    /* SO_PEERCRED said who runs this process; the peer is a user */
    p->c->peer_uid = UID_A;
}

static void send_bytes(peer *p, const void *b, size_t n)
{
    const uint8_t *q = b;

    while (n > 0) {
        ssize_t w = write(p->fd, q, n);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* weftd has not read yet, or stopped reading */
            if (!busy())
                return; /* it does not read more: drop the rest */
            settle();
            continue;
        }
        if (w < 0)
            return; /* EPIPE: weftd closed it */
        q += w;
        n -= (size_t)w;
    }
}

static void send_env(peer *p, const Weft__Envelope *env)
{
    uint8_t *frame = NULL;
    ssize_t n = weft_frame_pack(env, &frame);

    CHECK(n > 0);
    if (p->mac) {
        unsigned t = p->tamper & 0x1f;
        if (t > FZ_SEALED && t < FZ_TAMPERS && !p->bad_frame)
            p->bad_frame = weft_mac_sent(p->mac) + 1; /* weftd's next */
        n = (ssize_t)fz_seal(p->mac, &frame, (size_t)n,
                             t < FZ_TAMPERS ? t : FZ_SEALED, p->tamper);
        p->tamper = 0; /* the step's first frame only */
    }
    send_bytes(p, frame, (size_t)n);
    free(frame);
}

/* Over TCP: p answers weftd's Challenge with an Auth (see the top), as
 * the Hello that may follow in `in` will need it. */
static void authenticate(peer *p, cursor *in, int hello)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Auth a = WEFT__AUTH__INIT;
    uint8_t how = byte(in), who = p->who;
    char cred[FZ_CREDENTIAL];
    unsigned spoil = how & 15;
    uint32_t uid;
    weft_bind b;

    settle(); /* the Challenge */
    p->auth_sent = 1;
    if (p->fd < 0 || p->eof || !p->challenged)
        return;
    /* after the tamper byte, the Hello's who and how: a new identity? */
    if (hello && in->end - in->p >= 3 && (in->p[2] & 0x80))
        who = in->p[1];
    uid = who & 4 ? UID_B : UID_A;
    if (spoil == 10)
        uid = uid == UID_A ? UID_B : UID_A;
    p->spoilt = spoil == 10 ? 2 : spoil > 10;
    for (int k = 0; k < WEFT_MAC_KEY; k++)
        p->key[k] = (uint8_t)(how ^ conn_serial ^ (k * 37));
    fz_bind(p->fd, p->nonce, p->key, &b);
    a.protocol_version = WEFT_PROTOCOL_VERSION;
    a.credential.data = (uint8_t *)cred;
    a.credential.len = fz_credential(cred, uid, &b, spoil > 10
                                     ? (enum fz_spoil)(spoil - 10)
                                     : FZ_GOOD);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &a;
    send_env(p, &env);
    settle(); /* the AuthAck, or an Error */
}

/* A sequence number from mode: the next (0, 1), one sent before (2) or a
 * gap or 0 (3); b picks which. */
static uint64_t pick_seq(uint64_t last, unsigned mode, uint8_t b)
{
    if (mode < 2)
        return last + 1;
    if (mode == 2)
        return last ? 1 + b % last : 1;
    return b & 1 ? last + 2 + (b >> 1) : 0;
}

/* p's Hello: who says which member of which trace it is (kept until a
 * Hello whose how has bit 7 set: bit 0 the second trace name when how
 * has bit 3 too, bit 1 a run, bit 2 the second user, bits 3-4 the rank,
 * bit 7 a tag twice), how the rest (bits 0-1 the size - 1, bit 2 a tag,
 * bits 4-6 all set: an old protocol version, bits 4-5: resolution 0, bit
 * 4 alone: a clock of 2.5 GHz ticks, as WEFT_CLOCK=tsc calibrates one,
 * bit 5 alone: another host). */
static void send_hello(peer *p, uint8_t who, uint8_t how)
{
    static const char *const names[2] = { "app", "app/../x" };
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Tag tag = WEFT__TAG__INIT, *tags[2] = { &tag, &tag };
    weft_conn *c = conn_of(p);

    if (how & 0x80) { /* a new identity */
        p->who = who;
        p->size = (uint8_t)(1 + (how & 3));
        memset(&p->m, 0, sizeof p->m);
        p->defs_seq = 0;
        memset(p->seq, 0, sizeof p->seq);
        memset(p->time, 0, sizeof p->time);
        memset(p->events, 0, sizeof p->events);
    }
    if (!p->size)
        p->size = 1;
    if (c && !p->hello && !tcp) /* SO_PEERCRED's uid */
        c->peer_uid = p->who & 4 ? UID_B : UID_A;
    h.protocol_version = (how & 0x70) == 0x70 ? 1 : WEFT_PROTOCOL_VERSION;
    h.trace = (char *)names[(p->who & 1) && (how & 8)];
    if (p->who & 2)
        h.run = (char *)"run-1";
    h.rank = (p->who >> 3) & 3;
    h.size = p->size;
    h.hostname = (char *)((how & 0x30) == 0x20 ? "node-b" : "node-a");
    h.pid = 100 + h.rank;
    h.uid = p->who & 4 ? UID_B : UID_A;
    h.command = (char *)"./app --fuzz";
    h.job_id = (char *)"42";
    h.timer_resolution = (how & 0x30) == 0x30   ? 0
                         : (how & 0x30) == 0x10 ? 2500000000u
                                                : 1000000000;
    h.realtime_ns = 1700000000000000000ull;
    h.clock_at_realtime = 0;
    if (how & 4) {
        tag.key = (char *)"step";
        tag.value = (char *)"1";
        h.n_tags = p->who & 0x80 ? 2 : 1; /* twice the same key: refused */
        h.tags = tags;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    p->hello = 1;
    send_env(p, &env);
}

static void do_hello(peer *p, cursor *in)
{
    uint8_t who = byte(in);

    send_hello(p, who, byte(in));
}

static void do_definitions(peer *p, cursor *in)
{
    static uint8_t buf[PAYLOAD_MAX];
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    uint8_t mode = byte(in);
    uint32_t n;

    defs.seq = pick_seq(p->defs_seq, mode & 3, mode >> 2);
    defs.records.data = buf;
    defs.records.len = gen_records(&p->m, 0, in, (p->who >> 3) & 3, buf,
                                   NULL, &n);
    if (defs.seq == p->defs_seq + 1)
        p->defs_seq = defs.seq;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    send_env(p, &env);
}

static void do_batch(peer *p, cursor *in)
{
    static uint8_t buf[PAYLOAD_MAX];
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;
    uint8_t mode = byte(in), base = byte(in);
    uint32_t loc = mode & (NLOCS - 1), n;
    uint64_t time;

    b.location = mode & 0x40 ? 7 : loc; /* 7: beyond small max_locations */
    b.seq = pick_seq(p->seq[loc], (mode >> 2) & 3, base);
    b.base_time = base & 0x80 && p->time[loc] >= (base & 0x7f)
                      ? p->time[loc] - (base & 0x7f)
                      : p->time[loc] + (base & 0x7f);
    time = b.base_time;
    b.records.data = buf;
    b.records.len = gen_records(&p->m, 1, in, (p->who >> 3) & 3, buf, &time,
                                &n);
    b.events = mode & 0x80 ? n + 1 : n;
    if (b.seq == p->seq[loc] + 1 && b.location == loc) {
        p->seq[loc] = b.seq;
        p->time[loc] = time;
        p->events[loc] += n;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &b;
    send_env(p, &env);
}

static void do_goodbye(peer *p, cursor *in)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[NLOCS], *pe[NLOCS];
    uint8_t how = byte(in);

    for (uint32_t i = 0; i < NLOCS; i++) {
        weft__location_end__init(&ends[i]);
        ends[i].location = i;
        ends[i].events = p->events[i] + (how & 1 && i == 0);
        ends[i].dropped = how & 2 ? i : 0;
        pe[i] = &ends[i];
    }
    g.n_locations = (how >> 2) % (NLOCS + 1);
    g.locations = pe;
    if (how & 0x40)
        g.ended = (char *)"signal 11";
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    p->goodbye = 1;
    send_env(p, &env);
}

/* A NodeRelay (a node's link relays a member, relay.h; refused on any
 * other connection): member 1 + bit 4 of how; bits 5-6: its Hello (rank
 * member - 1 of 2 in trace fz-relay, uid UID_A; bit 7: its node
 * writes its events, events_here), a Heartbeat (member 2: a weft
 * command's Query of the catalog, as uid UID_A), its end (closed; bit 7:
 * its sums instead, bit 0 saying more pieces follow; member 2: `more`,
 * its asker read), or bytes that are no Envelope. */
static void do_node_relay(peer *p, uint8_t how)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT, inner = WEFT__ENVELOPE__INIT;
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    Weft__Query q = WEFT__QUERY__INIT;
    uint8_t *frame = NULL;
    ssize_t n = 0;

    r.member = 1 + ((how >> 4) & 1);
    switch ((how >> 5) & 3) {
    case 0:
        h.protocol_version = WEFT_PROTOCOL_VERSION;
        h.trace = (char *)"fz-relay";
        h.rank = r.member - 1;
        h.size = 2;
        h.hostname = (char *)"node-r";
        h.pid = 200 + r.member;
        h.uid = UID_A;
        h.timer_resolution = 1000000000;
        inner.msg_case = WEFT__ENVELOPE__MSG_HELLO;
        inner.hello = &h;
        r.uid = UID_A;
        r.gid = UID_A;
        r.events_here = (how >> 7) & 1;
        break;
    case 1:
        if (r.member == 2) {
            q.protocol_version = WEFT_PROTOCOL_VERSION;
            q.kind = WEFT__QUERY__KIND__CATALOG;
            inner.msg_case = WEFT__ENVELOPE__MSG_QUERY;
            inner.query = &q;
            r.uid = UID_A;
            r.gid = UID_A;
            break;
        }
        inner.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
        inner.heartbeat = &hb;
        break;
    case 2:
        if (r.member == 2) {
            r.more = 1;
        } else if (how & 128) { /* sums (of a member whose node may not
                                   write its events) */
            r.sums.data = (uint8_t *)"\x08\x01";
            r.sums.len = 2;
            r.sums_more = how & 1;
        } else {
            r.closed = 1;
        }
        break;
    default:
        r.frame.data = (uint8_t *)"\xff\xff\x01";
        r.frame.len = 3;
        break;
    }
    if (inner.msg_case != WEFT__ENVELOPE__MSG__NOT_SET) {
        n = weft_frame_pack(&inner, &frame);
        CHECK(n > WEFT_FRAME_HEADER);
        r.frame.data = frame + WEFT_FRAME_HEADER;
        r.frame.len = (size_t)n - WEFT_FRAME_HEADER;
    }
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
    env.node_relay = &r;
    send_env(p, &env);
    free(frame);
}

/* ClockSync, Heartbeat, Query or Auth. */
/* A NodeHello naming one of two nodes, or a name weftd refuses (bit 4
 * of how); bit 5: from weftd's own uid, as a node's link (Unix socket:
 * its SO_PEERCRED), else from the peer's user, which weftd refuses. A
 * peer linked under that name may be closed by it (replaced, once that
 * link was silent for two heartbeats; else it is refused). Bit 3: a
 * NodeStatus instead, or with bit 2 a NodeRelay (do_node_relay). */
static void do_node_hello(peer *p, uint8_t how)
{
    static const char *const names[] = { "fz-a", "fz-b", "fz/x" };
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeHello h = WEFT__NODE_HELLO__INIT;
    int name = how & 16 ? 2 : (how >> 6) & 1;

    if ((how & 8) && (how & 4)) {
        do_node_relay(p, how);
        return;
    }
    if (how & 8) { /* a node's figures (refused but on a node's link) */
        Weft__NodeStatus st = WEFT__NODE_STATUS__INIT;
        st.connections = how;
        st.recording = how >> 4;
        st.events = UINT64_MAX - how;
        st.written = how;
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_STATUS;
        env.node_status = &st;
        send_env(p, &env);
        return;
    }
    if (!tcp && (how & 32) && p->c)
        p->c->peer_uid = (uint32_t)geteuid();
    for (int j = 0; j < NPEERS; j++)
        if (&peers[j] != p && peers[j].node == 1 + name)
            peers[j].replaced = 1;
    p->node = 1 + name;
    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.node = (char *)names[name];
    h.server = (char *)"fuzz";
    env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO;
    env.node_hello = &h;
    send_env(p, &env);
}

static void do_other(peer *p, cursor *in)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    Weft__Query q = WEFT__QUERY__INIT;
    Weft__Auth a = WEFT__AUTH__INIT;
    uint8_t how = byte(in);

    switch (how & 3) {
    case 0:
        cs.id = how;
        cs.client_time = 12345;
        env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
        env.clock_sync = &cs;
        break;
    case 1:
        if (how & 0x80) { /* a NodeHello (below) */
            do_node_hello(p, how);
            return;
        }
        env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        break;
    case 2:
        q.protocol_version = WEFT_PROTOCOL_VERSION;
        q.kind = (how >> 2) % 3;
        q.trace = (char *)"nothing-here"; /* REMOVE: a key of no trace */
        env.msg_case = WEFT__ENVELOPE__MSG_QUERY;
        env.query = &q;
        p->asked = 1;
        break;
    default:
        a.protocol_version = WEFT_PROTOCOL_VERSION;
        env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
        env.auth = &a;
        break;
    }
    send_env(p, &env);
}

/* Raw bytes: a length byte and that many bytes, after a frame header
 * announcing them when its bit 7 is set. */
static void do_raw(peer *p, cursor *in)
{
    uint8_t n = byte(in), hdr[4] = { 0 };
    cursor raw = sub(in, n & 0x7f);
    size_t len = (size_t)(raw.end - raw.p);

    if (n & 0x80) {
        hdr[0] = (uint8_t)len; /* little endian, as frame.c reads it */
        send_bytes(p, hdr, sizeof hdr);
    }
    send_bytes(p, raw.p, len);
}

enum { HELLO, DEFINITIONS, BATCH, BATCH2, GOODBYE, OTHER, RAW, HANGUP,
       RECONNECT, TICK, NKINDS };

/* One step of peer i. */
static void step(int i, int kind, cursor *in)
{
    peer *p = &peers[i];
    int reconnect;

    if (kind == TICK) {
        /* the grace period (0) ends for traces no one is connected to */
        weft_trace_check_idle(&d);
        weft_server_tick(&d);
        return;
    }
    if (kind == HANGUP) {
        uint8_t how = byte(in);
        if (p->fd >= 0 && (how & 1)) /* in the middle of a frame */
            send_bytes(p, "\x10\0", 2);
        hang_up(p);
        return;
    }
    reconnect = p->fd < 0 || p->eof || kind == RECONNECT;
    if (reconnect) {
        settle(); /* weftd sees the old one go first */
        connect_peer(p, i);
    }
    if (tcp && !p->auth_sent && kind != RAW)
        authenticate(p, in, kind == HELLO || kind == RECONNECT);
    if (p->mac)
        p->tamper = byte(in);
    if (reconnect) {
        if (p->size && (kind == DEFINITIONS || kind == BATCH ||
                        kind == BATCH2 || kind == GOODBYE)) {
            /* a member comes back as libweft does: Hello, then it
             * resends from what HelloAck says weftd holds */
            send_hello(p, p->who, 0);
            settle();
        }
    }
    switch (kind) {
    case RECONNECT:
    case HELLO:
        do_hello(p, in);
        break;
    case DEFINITIONS:
        do_definitions(p, in);
        break;
    case BATCH:
    case BATCH2:
        do_batch(p, in);
        break;
    case GOODBYE:
        do_goodbye(p, in);
        break;
    case OTHER:
        do_other(p, in);
        break;
    default:
        do_raw(p, in);
        break;
    }
}

/* After a step of peer `target` (-1: none): the others saw nothing of it;
 * an Error closed its connection; weftd closed none that neither got an
 * Error nor said Goodbye. */
static void check_step(int target, const int *errors, const int *eof)
{
    for (int i = 0; i < NPEERS; i++) {
        const peer *p = &peers[i];
        const weft_conn *c = conn_of(p);
        /* Over TCP: a spoilt credential authenticates no one, one of
         * another uid than the Hello's joins nothing, and weftd never
         * takes the frame tampered with (nor any after it). */
        if (c && p->spoilt == 1)
            CHECK(!c->has_peer_uid); /* set by an accepted Auth */
        if (c && p->spoilt == 2)
            CHECK(c->member == NULL);
        if (c && c->mac && p->bad_frame)
            CHECK(weft_mac_received(c->mac) < p->bad_frame);
        if (p->fd < 0)
            continue;
        if (i != target && !p->replaced) {
            CHECK(p->errors == errors[i]);
            CHECK(p->eof == eof[i]);
        }
        if (p->errors)
            CHECK(p->eof);
        if (p->eof)
            CHECK(p->errors || p->goodbye || p->asked || p->replaced);
    }
}

/* ---- one input ---------------------------------------------------------------- */

static void put_file(const char *path, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

    CHECK(fd >= 0);
    CHECK(write(fd, p, n) == (ssize_t)n);
    CHECK(close(fd) == 0);
}

static void set_str(char **field, const char *v)
{
    free(*field);
    *field = strdup(v);
    CHECK(*field != NULL);
}

static void daemon_start(uint8_t flags)
{
    char traces[200], root[200];
    weft_config *cfg = &d.cfg;

    snprintf(root, sizeof root, "%s/root", dir);
    weft_rm_tree(spool);
    weft_rm_tree(keep);
    weft_rm_tree(root);
    snprintf(traces, sizeof traces, "%s/traces", spool);
    CHECK(weft_mkdir_p(traces, 0700, 0700) == 0);
    CHECK(weft_mkdir_p(keep, 0700, 0700) == 0);
    put_file(catalog, template_bytes, template_len);
    CHECK(uv_loop_init(&loop) == 0);
    CHECK(weft_daemon_init(&d) == 0);
    d.loop = &loop;
    weft_config_init(cfg);
    cfg->log_level = getenv("WEFT_FUZZ_LOG") ? 3 : -1;
    cfg->auth = WEFT_AUTH_NONE;
    set_str(&cfg->spool, spool);
    set_str(&cfg->catalog, catalog);
    set_str(&cfg->listen, "");
    set_str(&cfg->socket, "");
    cfg->grace_period = 0;
    cfg->convert_threads = 1;
    cfg->durability = flags & 1 ? WEFT_DURABLE_FSYNC : WEFT_DURABLE_WRITE;
    if (flags & 2) {
        cfg->max_definitions = 16;
        cfg->max_locations = 4;
        cfg->max_members = 2;
        cfg->max_connections_per_user = 2;
        cfg->max_traces_per_user = 1;
        cfg->max_string = 4;
    }
    if (flags & 4)
        cfg->max_conn_pending = 64;
    if (flags & 8)
        cfg->max_buffered = 256;
    if (flags & 16)
        cfg->max_frame = 128;
    if (flags & 64) { /* archives in an archive_root: nodes may write
                         their members' events (NodeRelay.events_here) */
        CHECK(weft_mkdir_p(root, 0700, 0700) == 0);
        set_str(&cfg->archive_root, root);
    }
    tcp = (flags & 32) != 0;
    if (tcp) {
        cfg->auth = WEFT_AUTH_MUNGE;
        CHECK(weft_server_adopt(&d, fz_listen(&tcp_port), 0) == 0);
    }
    CHECK(weft_jwriter_start(&d, weft_session_written) == 0);
    CHECK(weft_worker_start(d.loop, 1, 0, &d.srv->syncer) == 0);
    d.ask_cbs = &weft_ask_cbs;
    d.node_cbs = &weft_nodes_cbs;
    CHECK(weft_server_start(&d, tcp ? &ingest_tcp : &ingest) == 0);
}

static void daemon_stop(void)
{
    for (int i = 0; i < NPEERS; i++)
        hang_up(&peers[i]);
    settle();
    weft_trace_check_idle(&d); /* every trace converts */
    settle();
    check_members(keep, catalog, members, nmembers);
    weft_server_stop(&d);
    uv_run(&loop, UV_RUN_DEFAULT);
    weft_trace_free_all(&d);
    weft_daemon_free(&d);
    CHECK(d.jobs == 0);
    CHECK(uv_loop_close(&loop) == 0);
    weft_config_free(&d.cfg);
}

static void cleanup(void)
{
    weft_rm_tree(dir);
    free(template_bytes);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    weft_catalog *cat = NULL;
    char *msg = NULL;
    struct stat st;
    FILE *f;

    (void)argc;
    (void)argv;
    if (!tmp || !*tmp || strlen(tmp) >= 64)
        tmp = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof dir, "%s/weft-fuzz-daemon.XXXXXX", tmp);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(spool, sizeof spool, "%s/spool", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    snprintf(catalog, sizeof catalog, "%s/catalog.db", spool);
    snprintf(template_db, sizeof template_db, "%s/template.db", dir);
    /* An empty catalog made once: each input starts from a copy. */
    if (weft_catalog_open(template_db, 0, &cat, &msg) < 0) {
        fprintf(stderr, "fuzz_daemon: %s\n", msg ? msg : template_db);
        abort();
    }
    weft_catalog_close(cat);
    CHECK(stat(template_db, &st) == 0 && st.st_size > 0);
    template_len = (size_t)st.st_size;
    CHECK((template_bytes = malloc(template_len)) != NULL);
    CHECK((f = fopen(template_db, "rb")) != NULL);
    CHECK(fread(template_bytes, 1, template_len, f) == template_len);
    fclose(f);
    for (int i = 0; i < NPEERS; i++)
        peers[i].fd = -1;
    atexit(cleanup);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cursor in = { data, data + size };
    int errors[NPEERS], eof[NPEERS];

    if (size < 1)
        return 0;
    daemon_start(byte(&in));
    memset(peers, 0, sizeof peers);
    for (int i = 0; i < NPEERS; i++)
        peers[i].fd = -1;
    nmembers = 0;
    while (in.p < in.end) {
        uint8_t op = byte(&in);
        int i = op & (NPEERS - 1), kind = (op >> 2) % NKINDS;
        for (int k = 0; k < NPEERS; k++) {
            errors[k] = peers[k].errors;
            eof[k] = peers[k].eof;
        }
        step(i, kind, &in);
        settle();
        check_step(kind == TICK ? -1 : i, errors, eof);
    }
    daemon_stop();
    return 0;
}
