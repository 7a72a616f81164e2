/* fuzz_uplink.c - libFuzzer target for a node's link to its head
 * (daemon/cluster/uplink.c): its states, its frame reader and what it
 * makes of every frame a head, or whoever holds the head's address,
 * sends it. A real weft_daemon on a libuv loop of its own is a node whose
 * [cluster] head is a loopback listener of this process; the listener's
 * end plays the head from the input, while the loop runs between steps.
 *
 * Input: a header byte H, then steps. H bits 0-1: the Challenge (0 as
 * the head's: root's or this process's uid; 1 of another uid; 2 of
 * another protocol; 3 a nonce one byte short). Then the node's Auth is
 * read (fuzz/sealed.c stands in for munged: the credential carries the
 * session key) and H bits 2-3 answer it: 0 an AuthAck proving the key,
 * 1 one proving another nonce, 2 an Error, 3 nothing. A step is an op
 * byte: 0 a NodeHelloAck (heartbeat: the next byte), 1 a Heartbeat, 2 an
 * Error, 3 a frame of raw bytes (length: the next byte), 4 a NodeHello
 * (a frame no head sends), 5 a sealed frame tampered with (fz_tamper, the
 * next byte), 6 the head hangs up; each sealed once the key was proven.
 *
 * Checked beyond memory safety and leaks: a node answers a Challenge of
 * another uid, protocol or nonce size with nothing; else its first frame
 * is its Auth, whose credential is bound to the Challenge's nonce and to
 * both ends of this connection; it sends NodeHello only after an AuthAck
 * proving its key, and nothing after the Auth otherwise; it is linked
 * only after a NodeHelloAck under the MAC while joining, stays linked
 * through Heartbeats and NodeRelays for processes it does not forward,
 * and is not linked after an Error, a tampered
 * frame, a hang-up or anything out of turn (until raw bytes were sent:
 * what follows them may read as anything); it stops with nothing open
 * (uv_loop_close returns 0).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "fuzz.h"
#include "sealed.h"
#include "cred.h"
#include "daemon.h"
#include "frame.h"
#include "status.h"
#include "uplink.h"
#include "weft_errors.h"

typedef struct cursor {
    const uint8_t *p, *end;
} cursor;

static uint8_t byte(cursor *in)
{
    return in->p < in->end ? *in->p++ : 0;
}

static uv_loop_t loop;
static weft_daemon d;
static int head = -1;          /* the listener's end of the link */
static weft_frame_reader reader; /* what the node sends */
static weft_mac *mac;          /* the head's, once the key was proven */
static uint8_t key[WEFT_MAC_KEY];
static int sent_frames;        /* frames the node sent */
static int node_hello;         /* a NodeHello among them */
static int proven;             /* the node's key was proven to it */
static uint8_t nonce[WEFT_AUTH_NONCE]; /* the Challenge's */

/* The node's link state as weft status shows it. */
static const char *state(void)
{
    weft_status_head h;

    return weft_uplink_status(&d, &h) ? h.state : "none";
}

static void drain(void);

/* Runs the loop, reading what the node sends, until it waits for the
 * head: not while it has a Challenge to read (connecting) or its
 * credential's worker thread is out (authenticating, no Auth yet). */
static void settle(void)
{
    for (int i = 0; i < 5000; i++) {
        const char *st;
        uv_run(&loop, UV_RUN_NOWAIT);
        drain();
        st = state();
        /* (a few rounds whatever the state: what was just sent to the
         * node is read in one of them) */
        if (i >= 8 && !(strcmp(st, "connecting") == 0 ||
                        (strcmp(st, "authenticating") == 0 &&
                         sent_frames == 0)))
            break;
        usleep(100);
    }
}

/* One frame the node sent, checked. */
static void node_frame(const uint8_t *frame, uint32_t len)
{
    Weft__Envelope *env;

    if (mac && sent_frames > 0) {
        char why[128];
        ssize_t n = weft_mac_open(mac, frame, len, why, sizeof why);
        CHECK(n >= 0); /* the node seals what follows its Auth */
        len = (uint32_t)n;
    }
    env = weft_frame_unpack(frame, len);
    CHECK(env != NULL);
    if (sent_frames == 0) {
        weft_auth_id id;
        weft_bind b;
        char err[256], why[256];
        CHECK(env->msg_case == WEFT__ENVELOPE__MSG_AUTH);
        CHECK(weft_auth_decode(NULL, env->auth->credential.data,
                               env->auth->credential.len, &id, err,
                               sizeof err) == 0);
        CHECK(weft_bind_decode(id.payload, id.payload_len, &b, why,
                               sizeof why) == 0);
        /* bound to this connection: the nonce, both ends */
        {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            weft_bind_addr local, peer;
            CHECK(getsockname(head, (struct sockaddr *)&ss, &sl) == 0);
            CHECK(weft_bind_addr_from(&local, (struct sockaddr *)&ss) == 0);
            sl = sizeof ss;
            CHECK(getpeername(head, (struct sockaddr *)&ss, &sl) == 0);
            CHECK(weft_bind_addr_from(&peer, (struct sockaddr *)&ss) == 0);
            CHECK(weft_bind_check(&b, nonce, &local, &peer, why,
                                  sizeof why) == 0);
        }
        memcpy(key, b.key, sizeof key);
    } else {
        CHECK(proven); /* nothing but the Auth before the proof */
        if (env->msg_case == WEFT__ENVELOPE__MSG_NODE_HELLO) {
            CHECK(!node_hello);
            CHECK(strcmp(env->node_hello->node, "fz-node") == 0);
            node_hello = 1;
        } else {
            /* its figures, and its questions of the head's clock */
            CHECK(node_hello);
            CHECK(env->msg_case == WEFT__ENVELOPE__MSG_NODE_STATUS ||
                  env->msg_case == WEFT__ENVELOPE__MSG_CLOCK_SYNC);
        }
    }
    sent_frames++;
    weft_frame_free_envelope(env);
}

/* Reads what the node sent so far. */
static void drain(void)
{
    uint8_t buf[4096];
    ssize_t n;

    while (head >= 0 && (n = recv(head, buf, sizeof buf, MSG_DONTWAIT)) > 0) {
        const uint8_t *p = buf;
        size_t left = (size_t)n;
        while (left > 0) {
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&reader, &p, &left, &frame,
                                            &flen);
            CHECK(rc >= 0);
            if (rc == 0)
                break;
            node_frame(frame, flen);
            free(frame);
        }
    }
}

static void send_raw(const uint8_t *p, size_t n)
{
    if (head >= 0 && n > 0)
        CHECK(send(head, p, n, MSG_NOSIGNAL) >= 0 || 1);
}

/* env to the node, sealed once the key was proven, tampered with as
 * said. */
static void send_env(const Weft__Envelope *env, enum fz_tamper tamper,
                     uint8_t bits)
{
    uint8_t *frame = NULL;
    ssize_t n = weft_frame_pack(env, &frame);

    CHECK(n > 0);
    if (mac)
        n = (ssize_t)fz_seal(mac, &frame, (size_t)n, tamper, bits);
    send_raw(frame, (size_t)n);
    free(frame);
}

static void send_error(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Error e = WEFT__ERROR__INIT;

    e.code = WEFT_EAUTH;
    e.message = (char *)"refused by the fuzzer's head";
    env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
    env.error = &e;
    send_env(&env, FZ_SEALED, 0);
}

static void challenge(uint8_t how)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Challenge ch = WEFT__CHALLENGE__INIT;

    for (int i = 0; i < WEFT_AUTH_NONCE; i++)
        nonce[i] = (uint8_t)(how * 31 + i);
    ch.protocol_version = (how & 3) == 2 ? WEFT_PROTOCOL_VERSION - 1
                                         : WEFT_PROTOCOL_VERSION;
    ch.nonce.data = nonce;
    ch.nonce.len = (how & 3) == 3 ? WEFT_AUTH_NONCE - 1 : WEFT_AUTH_NONCE;
    ch.server_uid = (how & 3) == 1 ? (uint32_t)geteuid() + 1
                                   : (uint32_t)geteuid();
    env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    send_env(&env, FZ_SEALED, 0);
}

static void answer_auth(uint8_t how)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__AuthAck ack = WEFT__AUTH_ACK__INIT;
    uint8_t proof[WEFT_MAC_TAG], other[WEFT_AUTH_NONCE];

    if (sent_frames == 0)
        return; /* no Auth came: the node gave up at the Challenge */
    switch ((how >> 2) & 3) {
    case 0:
    case 1:
        memcpy(other, nonce, sizeof other);
        other[0] ^= (how >> 2) & 1; /* 1: another nonce's proof */
        weft_mac_proof(key, other, WEFT_AUTH_NONCE, proof);
        ack.proof.data = proof;
        ack.proof.len = sizeof proof;
        env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
        env.auth_ack = &ack;
        send_env(&env, FZ_SEALED, 0);
        if (((how >> 2) & 3) == 0) {
            proven = 1;
            mac = weft_mac_new(key, WEFT_MAC_SERVER);
            CHECK(mac != NULL);
        }
        break;
    case 2:
        send_error();
        break;
    default:
        break;
    }
}

/* What the node's state must be after a step: linked (1), not linked
 * (0), or either (-1: raw bytes). */
static int step(cursor *in, int was_linked, int joining)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__NodeHelloAck ack = WEFT__NODE_HELLO_ACK__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    Weft__NodeHello h = WEFT__NODE_HELLO__INIT;
    Weft__NodeRelay r = WEFT__NODE_RELAY__INIT;
    uint8_t op = byte(in), raw[256];
    size_t n;

    switch (op % 8) {
    case 0: /* takes a node that is joining, and only such a one */
        ack.protocol_version = WEFT_PROTOCOL_VERSION;
        ack.head = (char *)"fz-head";
        ack.server = (char *)"fuzz";
        ack.heartbeat = byte(in);
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO_ACK;
        env.node_hello_ack = &ack;
        send_env(&env, FZ_SEALED, 0);
        return joining;
    case 1: /* keeps a link, ends a handshake */
        env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        send_env(&env, FZ_SEALED, 0);
        return was_linked;
    case 2:
        send_error();
        return 0;
    case 3:
        n = byte(in);
        for (size_t i = 0; i < n; i++)
            raw[i] = byte(in);
        send_raw(raw, n);
        return -1;
    case 4:
        h.protocol_version = WEFT_PROTOCOL_VERSION;
        h.node = (char *)"fz-head";
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_HELLO;
        env.node_hello = &h;
        send_env(&env, FZ_SEALED, 0);
        return 0;
    case 5:
        env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
        env.heartbeat = &hb;
        op = byte(in);
        send_env(&env, (enum fz_tamper)(op % FZ_TAMPERS), op);
        return op % FZ_TAMPERS == FZ_SEALED ? was_linked : 0;
    case 6: /* a frame for a process the node does not forward (or for
               a member of a part it does not have, parts.h, with a key
               of an archive): linked, it is dropped (forward.h); else
               the handshake ends. Or, linked, the answer to a question
               of the head's clock (uplink.c), whatever its times. */
        r.member = byte(in);
        if ((r.member & 4) && was_linked == 1) {
            Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;
            cs.id = byte(in);
            cs.client_time = (uint64_t)byte(in) << (byte(in) % 64);
            cs.server_time = (uint64_t)byte(in) << (byte(in) % 64);
            env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
            env.clock_sync = &cs;
            send_env(&env, FZ_SEALED, 0);
            return was_linked;
        }
        if (r.member & 2) {
            r.member |= 0x80000000u;
            r.archive_key = (char *)(r.member & 8 ? "../x" : "k");
        }
        r.closed = r.member & 1;
        n = byte(in) & 15;
        for (size_t i = 0; i < n; i++)
            raw[i] = byte(in);
        r.frame.data = raw;
        r.frame.len = n;
        env.msg_case = WEFT__ENVELOPE__MSG_NODE_RELAY;
        env.node_relay = &r;
        send_env(&env, FZ_SEALED, 0);
        return was_linked;
    default:
        if (head >= 0)
            close(head);
        head = -1;
        return 0;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cursor in = { data, data + size };
    uint8_t how;
    uint16_t port;
    int lfd;
    char addr[64];
    int linked_ok, raw = 0;

    if (size < 1)
        return 0;
    how = byte(&in);
    CHECK(uv_loop_init(&loop) == 0);
    CHECK(weft_daemon_init(&d) == 0);
    d.loop = &loop;
    weft_config_init(&d.cfg);
    d.cfg.log_level = getenv("WEFT_FUZZ_LOG") ? 3 : -1;
    lfd = fz_listen(&port);
    snprintf(addr, sizeof addr, "127.0.0.1:%u", port);
    free(d.cfg.cluster_head);
    d.cfg.cluster_head = strdup(addr);
    free(d.cfg.node_name);
    d.cfg.node_name = strdup("fz-node");
    CHECK(d.cfg.cluster_head && d.cfg.node_name);
    weft_frame_reader_init(&reader, 1u << 20);
    sent_frames = node_hello = proven = 0;
    mac = NULL;
    CHECK(weft_uplink_start(&d) == 0);
    for (int i = 0; i < 2000 && head < 0; i++) {
        struct pollfd pfd = { lfd, POLLIN, 0 };
        uv_run(&loop, UV_RUN_NOWAIT);
        if (poll(&pfd, 1, 1) == 1)
            head = accept(lfd, NULL, NULL);
    }
    CHECK(head >= 0);
    close(lfd);
    /* each frame goes at once (Nagle would hold one back for the
     * node's delayed ack, past the rounds settle() waits) */
    CHECK(setsockopt(head, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 },
                     sizeof(int)) == 0);
    challenge(how);
    settle();
    drain();
    if ((how & 3) != 0)
        CHECK(sent_frames == 0); /* a bad Challenge: not even an Auth */
    answer_auth(how);
    settle();
    drain();
    while (in.p < in.end && head >= 0) {
        int was = strcmp(state(), "linked") == 0, want;
        linked_ok = node_hello;
        want = step(&in, was, strcmp(state(), "joining") == 0);
        if (want < 0)
            raw = 1;  /* frames after raw bytes may read as anything */
        if (raw)
            want = -1;
        settle();
        drain();
        /* linked only after the NodeHello it sent under a proven key */
        if (strcmp(state(), "linked") == 0)
            CHECK(proven && linked_ok);
        if (want >= 0)
            CHECK((strcmp(state(), "linked") == 0) == want);
        if (want == 0 || strcmp(state(), "linked") != 0)
            break; /* the link ended: the next comes after a wait */
    }
    if (!proven)
        CHECK(!node_hello);
    weft_uplink_stop(&d);
    if (head >= 0)
        close(head);
    head = -1;
    uv_run(&loop, UV_RUN_DEFAULT); /* handles close, the worker ends */
    CHECK(uv_loop_close(&loop) == 0);
    weft_daemon_free(&d);
    weft_config_free(&d.cfg);
    weft_frame_reader_free(&reader);
    weft_mac_free(mac);
    mac = NULL;
    return 0;
}
