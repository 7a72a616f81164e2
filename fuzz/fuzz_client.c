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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "client_session.h"
#include "frame.h"
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
    weft__bufq_push(head, tail, b);
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
