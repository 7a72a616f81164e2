/* fuzz_client.c - libFuzzer target for libweft's side of what weftd
 * sends: the frame reader on the client's socket (weft__input_next), the
 * frames it handles while streaming (weft__handle_frame: Acks, late
 * ClockSync answers, Errors, anything else) and the resume after a
 * HelloAck (weft__resume_locked), in client/conn.c, against a session
 * holding batches and definitions in flight and queued.
 *
 * Input: a header, then the bytes weftd "sends" (written to a socketpair
 * the client reads). Header: byte 0 bits 0-1 + 1 are the threads (1-4);
 * byte 1, per thread two bits of batches sent (0-3, of up to 6 made),
 * byte 2, per thread two bits of those in flight (the rest queued; more
 * batches made than sent are queued unnumbered... as the sender does:
 * numbered when handed over); byte 3 bits 0-2 the Definitions sent, bits
 * 3-5 of them in flight, bit 6 a pending chunk not sent yet.
 *
 * Checked beyond memory safety, after every frame: the lists are well
 * formed (each tail is the last element), no batch or chunk is lost or
 * made (those in the queues, in flight and back in the pool add up to
 * what was made), an Ack that is accepted frees exactly what it names and
 * one that is refused frees nothing, a refusal says why; after a resume
 * that is accepted nothing is in flight, no batch or chunk weftd holds is
 * kept, and a thread's queued batches are in sequence order.
 *
 * Header byte 3 bit 7: over TCP, protocol 6. Two more header bytes, H
 * and T, then the stream. libweft connects (weft__connect_and_hello) to
 * a loopback listener whose thread plays weftd: it sends a Challenge
 * (H bits 0-1: 2 of an older protocol, 3 of a uid weftd never runs as;
 * bit 2: a nonce one byte short), reads the Auth (fuzz/sealed.c stands
 * in for munged: its credential must be bound to the Challenge and to
 * both ends of the connection as the listener sees them, with a key),
 * answers (H bits 3-4: 2 an AuthAck proving another nonce, 3 an Error),
 * then sends the stream's frames sealed with the session MAC, the one
 * numbered T & 7 tampered with as fz_tamper (T >> 3 & 15) says, and
 * reads the Hello, which must open with the MAC. Checked: libweft goes
 * on only after a good Challenge and an AuthAck proving the key; it
 * refuses the tampered frame and every frame after it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "client_session.h"
#include "fifo.h"
#include "frame.h"
#include "sealed.h"
#include "weft_errors.h"

#define MAX_THREADS 4
#define MAX_BATCHES 6

static weft__thread threads[MAX_THREADS];
static size_t made;       /* batches made for this input */
static size_t chunks;     /* definition chunks made */

static size_t list_len(const weft__buf *b, const weft__buf *tail)
{
    const weft__buf *last = NULL;
    size_t n = 0;

    for (; b; b = b->next, n++) {
        last = b;
        CHECK(n <= made);
    }
    CHECK(last == tail);
    return n;
}

static size_t chunk_len(const weft__chunk *c, const weft__chunk *tail)
{
    const weft__chunk *last = NULL;
    size_t n = 0;

    for (; c; c = c->next, n++) {
        last = c;
        CHECK(n <= chunks);
    }
    CHECK(last == tail);
    return n;
}

static size_t pool_len(void)
{
    size_t n = 0;

    for (const weft__buf *b = weft__S.free_list; b; b = b->next, n++)
        CHECK(n <= made);
    return n;
}

/* Every batch made is queued, in flight or back in the pool. Returns
 * those in the pool. */
static size_t check_lists(void)
{
    size_t q = list_len(weft__S.q_head, weft__S.q_tail);
    size_t f = list_len(weft__S.f_head, weft__S.f_tail);
    size_t p = pool_len();

    CHECK(q + f + p == made);
    chunk_len(weft__S.d_head, weft__S.d_tail);
    chunk_len(weft__S.df_head, weft__S.df_tail);
    return p;
}

static size_t chunks_left(void)
{
    return chunk_len(weft__S.d_head, weft__S.d_tail) +
           chunk_len(weft__S.df_head, weft__S.df_tail);
}

static void add_chunk(weft__chunk **head, weft__chunk **tail, uint64_t seq)
{
    weft__chunk *c = calloc(1, sizeof *c);

    CHECK(c != NULL);
    c->seq = seq;
    c->cap = c->len = 8;
    c->data = calloc(1, 8);
    CHECK(c->data != NULL);
    if (*tail)
        (*tail)->next = c;
    else
        *head = c;
    *tail = c;
    chunks++;
}

static void add_buf(weft__buf **head, weft__buf **tail, uint32_t loc,
                    uint64_t seq)
{
    weft__buf *b = weft__buf_new(64);

    CHECK(b != NULL);
    b->location = loc;
    b->seq = seq;
    b->events = 1;
    b->len = 1;
    WEFT_FIFO_PUSH(*head, *tail, b);
    made++;
}

/* The session of one input: threads, their batches and definitions. */
static void build(const uint8_t *h)
{
    unsigned nthreads = (h[0] & 3) + 1;
    unsigned ndefs = h[3] & 7, dflight = (h[3] >> 3) & 7;

    memset(threads, 0, sizeof threads);
    made = chunks = 0;
    weft__S.cfg.rank = 1;
    snprintf(weft__S.cfg.trace, sizeof weft__S.cfg.trace, "fuzz");
    for (unsigned t = 0; t < nthreads; t++) {
        unsigned sent = (h[1] >> (2 * t)) & 3, flight = (h[2] >> (2 * t)) & 3;
        weft__thread *th = &threads[t];
        th->location = t;
        th->seq = sent;
        th->next = weft__S.threads;
        weft__S.threads = th;
        if (flight > sent)
            flight = sent;
        /* The oldest sent batches may be acknowledged already (gone);
         * in flight are the newest sent, then the unsent queued. */
        for (unsigned s = sent - flight + 1; s <= sent; s++)
            add_buf(&weft__S.f_head, &weft__S.f_tail, t, s);
        for (unsigned s = sent + 1; s <= sent + (h[0] >> (2 + t) & 1); s++)
            add_buf(&weft__S.q_head, &weft__S.q_tail, t, s);
    }
    weft__S.nthreads = nthreads;
    weft__S.defs_seq = ndefs;
    if (dflight > ndefs)
        dflight = ndefs;
    for (unsigned s = ndefs - dflight + 1; s <= ndefs; s++)
        add_chunk(&weft__S.df_head, &weft__S.df_tail, s);
    if (h[3] & 0x40)
        add_chunk(&weft__S.d_head, &weft__S.d_tail, 0);
}

static void teardown(void)
{
    weft__buf *b;

    pthread_mutex_lock(&weft__S.mu);
    while ((b = weft__S.q_head)) {
        weft__S.q_head = b->next;
        weft__buf_delete(b);
    }
    while ((b = weft__S.f_head)) {
        weft__S.f_head = b->next;
        weft__buf_delete(b);
    }
    while ((b = weft__S.free_list)) {
        weft__S.free_list = b->next;
        weft__buf_delete(b);
    }
    weft__S.q_tail = weft__S.f_tail = NULL;
    weft__chunks_free(&weft__S.d_head);
    weft__chunks_free(&weft__S.df_head);
    weft__S.d_tail = weft__S.df_tail = NULL;
    weft__S.threads = NULL;
    pthread_mutex_unlock(&weft__S.mu);
}

static uint64_t held_of(const Weft__HelloAck *a, uint32_t loc)
{
    for (size_t i = 0; i < a->n_locations; i++)
        if (a->locations[i]->location == loc)
            return a->locations[i]->seq;
    return 0;
}

static void resume(const Weft__HelloAck *a)
{
    char why[512] = "";
    size_t resend = 99;
    int rc;

    pthread_mutex_lock(&weft__S.mu);
    rc = weft__resume_locked(a, &resend, why, sizeof why);
    check_lists();
    if (rc < 0) {
        CHECK(rc == WEFT_EPROTO && why[0]);
    } else {
        uint64_t last[MAX_THREADS] = { 0 };
        CHECK(weft__S.f_head == NULL && weft__S.df_head == NULL);
        CHECK(resend == list_len(weft__S.q_head, weft__S.q_tail));
        for (const weft__buf *b = weft__S.q_head; b; b = b->next) {
            CHECK(b->location < MAX_THREADS);
            CHECK(b->seq > held_of(a, b->location));
            CHECK(b->seq > last[b->location]);
            last[b->location] = b->seq;
        }
        for (const weft__chunk *c = weft__S.d_head; c; c = c->next)
            CHECK(c->seq == 0 || c->seq > a->definitions_seq);
    }
    pthread_mutex_unlock(&weft__S.mu);
}

static void handle(const Weft__Envelope *env)
{
    size_t pooled, defs = chunks_left();
    char why[512] = "";
    int transient = -1, rc;

    pthread_mutex_lock(&weft__S.mu);
    pooled = check_lists();
    pthread_mutex_unlock(&weft__S.mu);
    rc = weft__handle_frame(env, &transient, why, sizeof why);
    CHECK(transient == 0 || transient == 1);
    pthread_mutex_lock(&weft__S.mu);
    if (env->msg_case == WEFT__ENVELOPE__MSG_ACK && rc == 0) {
        /* Exactly what it names is freed. */
        if (env->ack->definitions)
            CHECK(chunks_left() + 1 == defs && check_lists() == pooled);
        else
            CHECK(check_lists() == pooled + 1 && chunks_left() == defs);
    } else {
        CHECK(check_lists() == pooled && chunks_left() == defs);
    }
    pthread_mutex_unlock(&weft__S.mu);
    if (rc < 0)
        CHECK(rc == WEFT_EPROTO && why[0] &&
                   memchr(why, 0, sizeof why) != NULL);
    if (env->msg_case == WEFT__ENVELOPE__MSG_ERROR)
        CHECK(transient == weft__transient_code(env->error->code));
    else
        CHECK(transient == 0);
}

/* ---- over TCP: a thread playing weftd ---------------------------------- */

typedef struct server {
    int listen_fd, fd;
    uint8_t how, tamper;        /* H and T */
    const uint8_t *stream;
    size_t len;
    int good;                   /* the Challenge and the AuthAck are */
    size_t tampered;            /* the frame tampered with (+1), or 0 */
} server;

static void write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return; /* libweft closed it */
        p += w;
        n -= (size_t)w;
    }
}

static void send_env(int fd, weft_mac *m, const Weft__Envelope *env)
{
    uint8_t *frame = NULL;
    ssize_t n = weft_frame_pack(env, &frame);

    CHECK(n > 0);
    if (m)
        n = (ssize_t)fz_seal(m, &frame, (size_t)n, FZ_SEALED, 0);
    write_all(fd, frame, (size_t)n);
    free(frame);
}

/* The next frame from fd (NULL at its end), opened with m if set. */
static Weft__Envelope *next_env(int fd, weft_frame_reader *rd, weft_mac *m)
{
    uint8_t byte;

    for (;;) {
        const uint8_t *p = &byte;
        size_t left;
        uint8_t *frame = NULL;
        uint32_t flen = 0;
        ssize_t n = read(fd, &byte, 1);
        int rc;
        if (n <= 0)
            return NULL;
        left = 1;
        rc = weft_frame_reader_feed(rd, &p, &left, &frame, &flen);
        CHECK(rc >= 0);
        if (rc == 1) {
            Weft__Envelope *env;
            char why[128];
            if (m) {
                ssize_t k = weft_mac_open(m, frame, flen, why, sizeof why);
                CHECK(k >= 0); /* libweft's frames open */
                flen = (uint32_t)k;
            }
            env = weft_frame_unpack(frame, flen);
            CHECK(env != NULL);
            free(frame);
            return env;
        }
    }
}

/* weftd's side of the handshake: 1 with the session key, 0 with it but
 * an AuthAck that does not prove it (the stream follows all the same, as
 * from a relay that goes on), -1 when it ends there. */
static int handshake(server *s, weft_frame_reader *rd,
                     uint8_t key[WEFT_MAC_KEY])
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT, *auth;
    Weft__Challenge ch = WEFT__CHALLENGE__INIT;
    Weft__AuthAck ack = WEFT__AUTH_ACK__INIT;
    uint8_t nonce[WEFT_AUTH_NONCE], proof[WEFT_MAC_TAG];
    weft_bind b, here;
    weft_auth_id id;
    char err[256];
    unsigned answer = (s->how >> 3) & 3;

    for (int i = 0; i < WEFT_AUTH_NONCE; i++)
        nonce[i] = (uint8_t)(s->how * 31 + i);
    ch.protocol_version = (s->how & 3) == 2 ? WEFT_PROTOCOL_VERSION - 1
                                             : WEFT_PROTOCOL_VERSION;
    ch.server_uid = (s->how & 3) == 3 ? 4242424u : (uint32_t)geteuid();
    ch.nonce.data = nonce;
    ch.nonce.len = s->how & 4 ? WEFT_AUTH_NONCE - 1 : WEFT_AUTH_NONCE;
    env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
    env.challenge = &ch;
    send_env(s->fd, NULL, &env);
    if (!(auth = next_env(s->fd, rd, NULL)))
        return -1; /* libweft refused the Challenge */
    CHECK((s->how & 3) < 2 && !(s->how & 4)); /* a good Challenge */
    CHECK(auth->msg_case == WEFT__ENVELOPE__MSG_AUTH);
    CHECK(weft_auth_decode(NULL, auth->auth->credential.data,
                           auth->auth->credential.len, &id, err,
                           sizeof err) == 0);
    weft_frame_free_envelope(auth);
    CHECK(id.uid == (uint32_t)geteuid());
    CHECK(weft_bind_decode(id.payload, id.payload_len, &b, err,
                           sizeof err) == 0);
    /* bound to this Challenge and connection: ends swapped here */
    fz_bind(s->fd, nonce, b.key, &here);
    CHECK(weft_bind_check(&b, nonce, &here.client, &here.server, err,
                          sizeof err) == 0);
    memcpy(key, b.key, WEFT_MAC_KEY);
    if (answer == 3) {
        uint8_t *e = NULL;
        ssize_t n = weft_frame_pack_error(&e, WEFT_EAUTH, "MUNGE "
                                          "credential refused: expired");
        CHECK(n > 0);
        write_all(s->fd, e, (size_t)n);
        free(e);
        return -1;
    }
    nonce[0] ^= answer == 2;
    weft_mac_proof(key, nonce, WEFT_AUTH_NONCE, proof);
    ack.proof.data = proof;
    ack.proof.len = sizeof proof;
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH_ACK;
    env.auth_ack = &ack;
    send_env(s->fd, NULL, &env);
    return answer < 2;
}

static void *serve(void *arg)
{
    server *s = arg;
    weft_frame_reader rd, in;
    uint8_t key[WEFT_MAC_KEY], *frame;
    const uint8_t *p = s->stream;
    size_t left = s->len, k = 0;
    weft_mac *m = NULL;
    Weft__Envelope *hello;
    uint32_t flen;
    int rc;

    CHECK((s->fd = accept(s->listen_fd, NULL, NULL)) >= 0);
    weft_frame_reader_init(&rd, 1u << 20);
    weft_frame_reader_init(&in, 1u << 20);
    rc = handshake(s, &rd, key);
    s->good = rc == 1;
    if (rc >= 0)
        CHECK((m = weft_mac_new(key, WEFT_MAC_SERVER)) != NULL);
    /* the stream's frames, sealed; what does not frame as it is */
    while (m && left > 0 &&
           weft_frame_reader_feed(&in, &p, &left, &frame, &flen) == 1) {
        uint8_t *f = malloc(WEFT_FRAME_HEADER + (size_t)flen);
        unsigned t = (s->tamper >> 3) & 15;
        size_t n;
        CHECK(f != NULL);
        memcpy(f, p - flen - WEFT_FRAME_HEADER, WEFT_FRAME_HEADER);
        memcpy(f + WEFT_FRAME_HEADER, frame, flen);
        free(frame);
        if (k == (s->tamper & 7u) && t > FZ_SEALED && t < FZ_TAMPERS)
            s->tampered = k + 1;
        n = fz_seal(m, &f, WEFT_FRAME_HEADER + (size_t)flen,
                    s->tampered == k + 1 ? (enum fz_tamper)t : FZ_SEALED,
                    s->tamper);
        write_all(s->fd, f, n);
        free(f);
        k++;
    }
    write_all(s->fd, p, left);
    shutdown(s->fd, SHUT_WR);
    /* libweft's Hello, sealed; then whatever until it closes */
    if (m && (hello = next_env(s->fd, &rd, m))) {
        CHECK(hello->msg_case == WEFT__ENVELOPE__MSG_HELLO);
        weft_frame_free_envelope(hello);
    }
    while (read(s->fd, key, sizeof key) > 0)
        ;
    weft_mac_free(m);
    weft_frame_reader_free(&rd);
    weft_frame_reader_free(&in);
    close(s->fd);
    return NULL;
}

/* The input over TCP: libweft connects and says Hello, then takes what
 * follows the HelloAck. Returns the frames it took after the HelloAck. */
static size_t over_tcp(const uint8_t *data, size_t size)
{
    weft__config *c = &weft__S.cfg;
    server s = { .how = data[4], .tamper = data[5], .stream = data + 6,
                 .len = size - 6 };
    Weft__Envelope *ack = NULL, *env = NULL;
    uint16_t port;
    pthread_t th;
    char why[512];
    int fd = -1, code = 0, rc, connected;
    size_t took = 0;

    s.listen_fd = fz_listen(&port);
    c->is_unix = 0;
    snprintf(c->host, sizeof c->host, "127.0.0.1");
    snprintf(c->port, sizeof c->port, "%u", (unsigned)port);
    snprintf(c->server, sizeof c->server, "127.0.0.1:%u", (unsigned)port);
    c->auth_none = 0;
    c->daemon_user[0] = '\0';
    c->size = 2;
    c->stall_ms = 1000;
    c->clock_name = "monotonic";
    c->resolution = 1000000000;
    CHECK(pthread_create(&th, NULL, serve, &s) == 0);
    rc = weft__connect_and_hello(c, weft__now_ms() + 5000, &fd, &ack, &code,
                                 why, sizeof why);
    connected = rc == 0;
    if (connected) {
        CHECK(weft__S.in.mac != NULL);
        resume(ack->hello_ack);
        weft_frame_free_envelope(ack);
        for (;;) {
            struct pollfd pfd = { .fd = fd, .events = POLLIN };
            rc = weft__input_next(fd, &weft__S.in, &env, why, sizeof why);
            if (rc == 0) { /* the thread has not written it all yet */
                CHECK(poll(&pfd, 1, 10000) == 1);
                continue;
            }
            if (rc != 1)
                break;
            took++;
            handle(env);
            weft_frame_free_envelope(env);
        }
        CHECK(rc == WEFT_ECLOSED || (rc == WEFT_EPROTO && why[0]));
        close(fd);
    } else {
        CHECK(why[0] != '\0');
    }
    CHECK(pthread_join(th, NULL) == 0);
    close(s.listen_fd);
    if (getenv("WEFT_FUZZ_LOG"))
        fprintf(stderr, "fuzz_client: %s (%s); %zu frames after the "
                "HelloAck, frame %zu tampered with\n",
                connected ? "connected" : "not connected",
                connected ? "-" : why, took, s.tampered);
    /* on only after a good handshake; nothing from the tampered on */
    CHECK(!connected || s.good);
    if (s.tampered)
        CHECK(!connected || took + 1 < s.tampered);
    weft_frame_reader_free(&weft__S.in.rd);
    weft_mac_free(weft__S.in.mac);
    memset(&weft__S.in, 0, sizeof weft__S.in);
    return took;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    weft__input *in = &weft__S.in;
    Weft__Envelope *env = NULL;
    char why[512];
    int rc;

    if (size < 4 || size > 8192)
        return 0;
    build(data);
    if (data[3] & 0x80) {
        if (size >= 6)
            over_tcp(data, size);
        teardown();
        return 0;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        abort();
    /* The stream at once (a socketpair holds 8 KiB and more), then end
     * of stream. */
    if (size > 4 && write(sv[1], data + 4, size - 4) != (ssize_t)(size - 4))
        abort();
    shutdown(sv[1], SHUT_WR);
    memset(in, 0, sizeof *in);
    weft_frame_reader_init(&in->rd, 1u << 20);
    for (;;) {
        rc = weft__input_next(sv[0], in, &env, why, sizeof why);
        if (rc != 1)
            break;
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK)
            resume(env->hello_ack);
        else
            handle(env);
        weft_frame_free_envelope(env);
    }
    /* A bad frame ends the stream; so does its end. */
    CHECK(rc == WEFT_ECLOSED || (rc == WEFT_EPROTO && why[0]));
    weft_frame_reader_free(&in->rd);
    close(sv[0]);
    close(sv[1]);
    teardown();
    return 0;
}
