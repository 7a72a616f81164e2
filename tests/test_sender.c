/* test_sender.c - the states of libweft's sender (client/sender.c)
 * against a stand-in weftd: a loopback listener on a thread of the test
 * that speaks the frame protocol (HelloAck, ClockSync answers, Acks) and
 * misbehaves on cue. The sender reports each state change through
 * weft__sender_hook; each scenario checks the sequence and what weft_close
 * returns.
 *
 * A process has one session, opened once: each scenario runs in a child
 * of fork() and reports failure by its exit status (CHECK), so cmocka
 * only ever runs in the parent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client_session.h"
#include "frame.h"
#include "recorder.h"
#include "tsc.h"
#include "weft.h"
#include "weft_errors.h"

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,           \
                    __LINE__, #cond);                                        \
            _exit(1);                                                        \
        }                                                                    \
    } while (0)

/* ---- the stand-in weftd ---- */

enum {
    BREAK_FIRST = 1,   /* connection 1: hang up at the first Definitions */
    REFUSE_SECOND = 2, /* connection 2: Error (not transient) to the Hello */
    GONE_SECOND = 4,   /* after connection 1: accept nothing more */
    CLOCK_AHEAD = 8,   /* ClockSync answers 5 s ahead of the client */
    REFUSE_FIRST = 16, /* connection 1: Error (not transient) to the Hello */
    SLOW_HELLO = 32,   /* HelloAck 300 ms after the Hello */
    HANGUP_HELLO = 64, /* connection 1: hang up at the Hello, no answer */
    HANGUP_FIRST = 128, /* connection 1: hang up at once, no Challenge */
    SLOW_SYNC = 256,   /* ClockSync answers 1.2 s late (past its limit) */
};

typedef struct standin {
    int lfd;
    int port;
    int cue;                 /* BREAK_FIRST | ... */
    int conns;               /* connections accepted */
    int goodbyes;
    int syncs;               /* ClockSync requests answered */
    int sent_behind_hello;   /* SLOW_HELLO: more had come before the
                                HelloAck went out (a ClockSync) */
    size_t read_ahead;       /* bytes read after the frame served */
    char ended[WEFT_MAX_ENDED + 2]; /* the last Goodbye's */
    uint64_t defs_held;      /* last Definitions acknowledged */
    uint64_t held[16];       /* per location: last batch acknowledged */
    uint64_t batch_events;   /* events in the batches acknowledged */
} standin;

static int send_env(int fd, Weft__Envelope *env)
{
    uint8_t *frame = NULL;
    ssize_t len = weft_frame_pack(env, &frame);
    int rc = len > 0 && send(fd, frame, (size_t)len, MSG_NOSIGNAL) == len;

    free(frame);
    return rc ? 0 : -1;
}

static int send_hello_ack(int fd, const standin *s)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__HelloAck a = WEFT__HELLO_ACK__INIT;
    Weft__LocationSeq ls[16], *lp[16];
    size_t n = 0;

    for (uint32_t i = 0; i < 16; i++) {
        if (!s->held[i])
            continue;
        weft__location_seq__init(&ls[n]);
        ls[n].location = i;
        ls[n].seq = s->held[i];
        lp[n] = &ls[n];
        n++;
    }
    a.protocol_version = WEFT_PROTOCOL_VERSION;
    a.definitions_seq = s->defs_held;
    a.n_locations = n;
    a.locations = lp;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO_ACK;
    env.hello_ack = &a;
    return send_env(fd, &env);
}

static int send_ack(int fd, int definitions, uint32_t location, uint64_t seq)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Ack a = WEFT__ACK__INIT;

    a.definitions = definitions;
    a.location = location;
    a.seq = seq;
    env.msg_case = WEFT__ENVELOPE__MSG_ACK;
    env.ack = &a;
    return send_env(fd, &env);
}

/* Answers one frame. Returns 0 to go on, 1 to hang up. */
static int serve_frame(standin *s, int fd, const Weft__Envelope *in)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;
    uint8_t *err = NULL;
    ssize_t len;

    switch (in->msg_case) {
    case WEFT__ENVELOPE__MSG_HELLO:
        if ((s->conns == 2 && (s->cue & REFUSE_SECOND)) ||
            (s->conns == 1 && (s->cue & REFUSE_FIRST))) {
            len = weft_frame_pack_error(&err, WEFT_EPROTO, "go away");
            CHECK(len > 0 && send(fd, err, (size_t)len, MSG_NOSIGNAL) == len);
            free(err);
            return 1;
        }
        if (s->conns == 1 && (s->cue & HANGUP_HELLO))
            return 1;
        if (s->cue & SLOW_HELLO) {
            char b;
            usleep(300000);
            s->sent_behind_hello =
                s->read_ahead > 0 ||
                recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
        }
        return send_hello_ack(fd, s) < 0;
    case WEFT__ENVELOPE__MSG_CLOCK_SYNC:
        cs.id = in->clock_sync->id;
        cs.client_time = in->clock_sync->client_time;
        cs.server_time = in->clock_sync->client_time; /* the same clock */
        if (s->cue & CLOCK_AHEAD)
            cs.server_time += 5000000000u;
        if (s->cue & SLOW_SYNC)
            usleep(1200000);
        s->syncs++;
        env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
        env.clock_sync = &cs;
        return send_env(fd, &env) < 0;
    case WEFT__ENVELOPE__MSG_DEFINITIONS:
        if (s->conns == 1 && (s->cue & BREAK_FIRST))
            return 1;
        s->defs_held = in->definitions->seq;
        return send_ack(fd, 1, 0, in->definitions->seq) < 0;
    case WEFT__ENVELOPE__MSG_EVENT_BATCH:
        CHECK(in->event_batch->location < 16);
        CHECK(in->event_batch->seq ==
              s->held[in->event_batch->location] + 1);
        s->held[in->event_batch->location] = in->event_batch->seq;
        s->batch_events += in->event_batch->events;
        return send_ack(fd, 0, in->event_batch->location,
                        in->event_batch->seq) < 0;
    case WEFT__ENVELOPE__MSG_GOODBYE:
        s->goodbyes++;
        snprintf(s->ended, sizeof s->ended, "%s", in->goodbye->ended);
        return 1;
    default:
        CHECK(!"unexpected frame");
        return 1;
    }
}

/* One connection, until a hang-up (ours or the client's). */
static void serve_conn(standin *s, int fd)
{
    weft_frame_reader rd;
    uint8_t buf[65536];
    int done = 0;

    weft_frame_reader_init(&rd, WEFT_DEFAULT_MAX_FRAME);
    if (s->conns == 1 && (s->cue & HANGUP_FIRST)) {
        weft_frame_reader_free(&rd);
        close(fd);
        return;
    }
    {
        /* weftd speaks first over TCP (WEFT_AUTH=none reads it too). */
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Challenge ch = WEFT__CHALLENGE__INIT;
        ch.protocol_version = WEFT_PROTOCOL_VERSION;
        ch.nonce.data = (uint8_t *)"0123456789abcdef";
        ch.nonce.len = 16;
        ch.server_uid = (uint32_t)geteuid();
        env.msg_case = WEFT__ENVELOPE__MSG_CHALLENGE;
        env.challenge = &ch;
        CHECK(send_env(fd, &env) == 0);
    }
    while (!done) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        const uint8_t *p = buf;
        size_t left = n > 0 ? (size_t)n : 0;
        if (n <= 0)
            break;
        while (!done && left > 0) {
            uint8_t *frame = NULL;
            uint32_t flen = 0;
            int rc = weft_frame_reader_feed(&rd, &p, &left, &frame, &flen);
            CHECK(rc >= 0);
            if (rc == 1) {
                Weft__Envelope *env = weft_frame_unpack(frame, flen);
                CHECK(env);
                s->read_ahead = left;
                done = serve_frame(s, fd, env);
                weft_frame_free_envelope(env);
                free(frame);
            }
        }
    }
    weft_frame_reader_free(&rd);
    close(fd);
}

static void *standin_main(void *arg)
{
    standin *s = arg;

    for (;;) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0)
            break;
        s->conns++;
        serve_conn(s, fd);
        if ((s->conns == 1 && (s->cue & (GONE_SECOND | REFUSE_FIRST))) ||
            (s->conns == 2 && (s->cue & REFUSE_SECOND)))
            break;
        if (s->goodbyes)
            break;
    }
    close(s->lfd);
    return NULL;
}

static void standin_start(standin *s, int cue, pthread_t *th)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof a;

    memset(s, 0, sizeof *s);
    s->cue = cue;
    s->lfd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(s->lfd >= 0);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(s->lfd, (struct sockaddr *)&a, sizeof a) == 0);
    CHECK(listen(s->lfd, 8) == 0);
    CHECK(getsockname(s->lfd, (struct sockaddr *)&a, &alen) == 0);
    s->port = ntohs(a.sin_port);
    CHECK(pthread_create(th, NULL, standin_main, s) == 0);
}

/* ---- the sender's states, as the hook saw them ---- */

static _Atomic int nsteps;
static weft__sender_state steps[256][2];

/* Only the sender thread calls it: the step is written first, then
 * published by the count (a reader that saw n steps sees all n). */
static void on_state(weft__sender_state from, weft__sender_state to)
{
    int i = atomic_load(&nsteps);

    if (i < 256) {
        steps[i][0] = from;
        steps[i][1] = to;
    }
    atomic_store(&nsteps, i + 1);
}

static const char *state_name(weft__sender_state s)
{
    static const char *const names[] = { "opening", "disconnected",
                                          "connecting", "streaming",
                                          "closing", "done" };

    return s <= WEFT__SND_DONE ? names[s] : "?";
}

static void print_steps(void)
{
    for (int i = 0; i < atomic_load(&nsteps) && i < 256; i++)
        fprintf(stderr, "  %s -> %s\n", state_name(steps[i][0]),
                state_name(steps[i][1]));
}

/* Waits up to 10 s for the hook to have seen n changes. */
static void wait_steps(int n)
{
    for (int i = 0; i < 10000 && atomic_load(&nsteps) < n; i++)
        usleep(1000);
    CHECK(atomic_load(&nsteps) >= n);
}

/* The sequence seen starts with `want` (from, to pairs). */
static int steps_are(const weft__sender_state (*want)[2], int n, int exact)
{
    int have = atomic_load(&nsteps);

    if (have < n || (exact && have != n))
        return 0;
    for (int i = 0; i < n; i++)
        if (steps[i][0] != want[i][0] || steps[i][1] != want[i][1])
            return 0;
    return 1;
}

/* Opens a session with the stand-in at port; connected, unless its
 * first connection broke at once (connects later). */
static void open_session_as(int port, const char *close_timeout_ms,
                            int connected)
{
    char server[64];

    snprintf(server, sizeof server, "127.0.0.1:%d", port);
    setenv("WEFT_SERVER", server, 1);
    setenv("WEFT_AUTH", "none", 1); /* the stand-in speaks no MUNGE */
    setenv("WEFT_TRACE", "test_sender", 1);
    setenv("WEFT_FLUSH_MS", "20", 1);
    setenv("WEFT_SIGNALS", "0", 1);
    setenv("WEFT_CLOSE_TIMEOUT_MS", close_timeout_ms, 1);
    weft__sender_hook = on_state;
    CHECK(weft_open() == 0);
    CHECK(connected < 0 || weft_connected() == connected);
}

static void open_session(int port, const char *close_timeout_ms)
{
    open_session_as(port, close_timeout_ms, 1);
}

static void record_some(int n)
{
    OTF2_RegionRef r = weft_region("work");

    for (int i = 0; i < n; i++) {
        CHECK(weft_enter(r) == 0);
        CHECK(weft_leave(r) == 0);
    }
}

#define O WEFT__SND_OPENING
#define D WEFT__SND_DISCONNECTED
#define C WEFT__SND_CONNECTING
#define S WEFT__SND_STREAMING
#define CL WEFT__SND_CLOSING
#define X WEFT__SND_DONE

/* The first connection is made (opening, streaming), then breaks:
 * disconnected, connecting, streaming again (the unacknowledged
 * Definitions resent), then closing after the Goodbye and done when
 * weftd hangs up. */
static int scenario_reconnect(void)
{
    static const weft__sender_state want[][2] = {
        { O, S }, { S, D }, { D, C }, { C, S }, { S, CL }, { CL, X } };
    standin s;
    pthread_t th;
    uint64_t n = 1;

    char why[WEFT_MAX_ENDED + 8], want_ended[WEFT_MAX_ENDED + 1];

    standin_start(&s, BREAK_FIRST, &th);
    open_session(s.port, "10000");
    (void)weft_region("first"); /* a Definitions frame: the break */
    wait_steps(4);
    CHECK(weft_connected());
    record_some(100);
    /* How the process ended: control characters become '?', cut at
     * WEFT_MAX_ENDED bytes; the first one said wins. */
    memset(why, 'x', sizeof why - 1);
    why[sizeof why - 1] = 0;
    memcpy(why, "bye\n\x7f", 5);
    memcpy(want_ended, why, WEFT_MAX_ENDED);
    memcpy(want_ended, "bye??", 5);
    want_ended[WEFT_MAX_ENDED] = 0;
    weft__recorder_ended(why);
    weft__recorder_ended("not this one");
    CHECK(weft_close() == 0);
    pthread_join(th, NULL);
    print_steps();
    CHECK(steps_are(want, 6, 1));
    CHECK(s.conns == 2);
    CHECK(s.goodbyes == 1);
    CHECK(strcmp(s.ended, want_ended) == 0);
    CHECK(s.defs_held >= 1);
    CHECK(s.batch_events == 200);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 0);
    return 0;
}

/* weftd refuses the process when it reconnects: done, tracing off. */
static int scenario_refused(void)
{
    static const weft__sender_state want[][2] = {
        { O, S }, { S, D }, { D, C }, { C, X } };
    standin s;
    pthread_t th;

    standin_start(&s, BREAK_FIRST | REFUSE_SECOND, &th);
    open_session(s.port, "10000");
    (void)weft_region("first");
    wait_steps(4);
    pthread_join(th, NULL);
    print_steps();
    CHECK(steps_are(want, 4, 1));
    CHECK(!weft_connected());
    CHECK(weft_close() == WEFT_EIO);
    return 0;
}

/* weftd is gone at close: the sender keeps trying until
 * WEFT_CLOSE_TIMEOUT_MS, then gives up (done) and the unacknowledged
 * events count as dropped. */
static int scenario_gone(void)
{
    static const weft__sender_state want[][2] = {
        { O, S }, { S, D }, { D, C } };
    standin s;
    pthread_t th;
    uint64_t n = 0;
    int last;

    standin_start(&s, BREAK_FIRST | GONE_SECOND, &th);
    open_session(s.port, "300");
    (void)weft_region("first");
    pthread_join(th, NULL); /* the listener is closed */
    record_some(10);
    CHECK(weft_close() == WEFT_EIO);
    print_steps();
    last = atomic_load(&nsteps) - 1;
    CHECK(steps_are(want, 3, 0));
    CHECK(steps[last][1] == X);
    CHECK(steps[last][0] == D || steps[last][0] == C);
    for (int i = 0; i < last; i++)
        CHECK(steps[i][1] != S || i == 0);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 20);
    return 0;
}

/* weft_open does not wait for weftd: it returns while the HelloAck is
 * 300 ms away, the program records meanwhile, and everything reaches
 * weftd once it answers. */
static int scenario_open_early(void)
{
    static const weft__sender_state want[][2] = {
        { O, S }, { S, CL }, { CL, X } };
    standin s;
    pthread_t th;
    uint64_t t0, n = 1;

    standin_start(&s, SLOW_HELLO, &th);
    t0 = weft__now_ms();
    open_session(s.port, "10000");
    record_some(10);
    fprintf(stderr, "weft_open and 10 regions took %" PRIu64 " ms with a "
            "HelloAck 300 ms away\n", weft__now_ms() - t0);
    CHECK(weft__now_ms() - t0 < 200);
    CHECK(weft_close() == 0);
    pthread_join(th, NULL);
    print_steps();
    CHECK(steps_are(want, 3, 1));
    CHECK(s.goodbyes == 1);
    CHECK(s.batch_events == 20);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 0);
    return 0;
}

/* weftd refuses the first Hello: opening ends the sender (done),
 * tracing is off, what was recorded meanwhile counts as dropped, and
 * weft_close returns 0 as weft_open did. */
static int scenario_open_refused(void)
{
    static const weft__sender_state want[][2] = { { O, X } };
    standin s;
    pthread_t th;
    uint64_t n = 0;

    standin_start(&s, REFUSE_FIRST, &th);
    /* The sender may have read the refusal as weft_open returns. */
    open_session_as(s.port, "10000", -1);
    record_some(5);
    wait_steps(1);
    pthread_join(th, NULL);
    print_steps();
    CHECK(steps_are(want, 1, 1));
    CHECK(!weft_connected());
    record_some(5);
    CHECK(weft_close() == 0);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 20);
    CHECK(s.goodbyes == 0);
    return 0;
}

/* A first connection that breaks (stand-in mode hangup) before the
 * session is up, and the sender's steps after it (want, nwant; the
 * first `before` of them waited for before recording more): a second
 * connection takes the Hello and the starting clock offset, and nothing
 * recorded meanwhile is lost. connected: weft_open's own connection
 * holds (0: it broke before the Hello went out; -1: it may have broken
 * already as weft_open returns). */
static int reconnects(int hangup, int connected,
                      const weft__sender_state (*want)[2], int nwant,
                      int before)
{
    standin s;
    pthread_t th;
    uint64_t n = 1;

    setenv("WEFT_CLOCK", "monotonic", 1);
    standin_start(&s, hangup, &th);
    open_session_as(s.port, "10000", connected);
    record_some(10);
    wait_steps(before);
    CHECK(weft_connected());
    record_some(10);
    CHECK(weft_close() == 0);
    pthread_join(th, NULL);
    print_steps();
    CHECK(steps_are(want, nwant, 1));
    CHECK(s.conns == 2);
    CHECK(s.goodbyes == 1);
    CHECK(s.syncs == 1);
    CHECK(s.batch_events == 40);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 0);
    return 0;
}

/* The first connection breaks before its HelloAck (weftd restarted as
 * the process started): opening goes to disconnected and the Hello goes
 * again on a second connection. */
static int scenario_open_broken(void)
{
    static const weft__sender_state want[][2] = {
        { O, D }, { D, C }, { C, S }, { S, CL }, { CL, X } };

    /* The sender may see the hang-up before weft_open's caller asks
     * (the steps say that weft_open's connection was up). */
    return reconnects(HANGUP_HELLO, -1, want, 5, 3);
}

/* The first connection is made and breaks before the Hello went out
 * (weftd killed as the process started): weft_open returns, the sender
 * starts disconnected and connects again. */
static int scenario_open_reset(void)
{
    static const weft__sender_state want[][2] = {
        { D, C }, { C, S }, { S, CL }, { CL, X } };

    return reconnects(HANGUP_FIRST, 0, want, 4, 2);
}

/* Nobody listens: weft_open itself finds it out and turns tracing off;
 * there is no sender. */
static int scenario_open_unreachable(void)
{
    char server[64];
    standin s;
    pthread_t th;
    uint64_t n = 0;

    standin_start(&s, 0, &th);
    shutdown(s.lfd, SHUT_RDWR); /* the stand-in's accept fails */
    pthread_join(th, NULL);
    snprintf(server, sizeof server, "127.0.0.1:%d", s.port);
    setenv("WEFT_SERVER", server, 1);
    setenv("WEFT_AUTH", "none", 1);
    setenv("WEFT_TRACE", "test_sender", 1);
    setenv("WEFT_SIGNALS", "0", 1);
    weft__sender_hook = on_state;
    CHECK(weft_open() == 0);
    CHECK(!weft_connected());
    record_some(5);
    CHECK(weft_close() == 0);
    CHECK(atomic_load(&nsteps) == 0);
    CHECK(weft_dropped(0, WEFT_TYPE_ANY, &n) == 0 && n == 10);
    return 0;
}

/* ClockSync round trips of a session with a stand-in on loopback that
 * answers with the client's own CLOCK_MONOTONIC (the clock is shared:
 * one at the start, none at the end), or 5 s ahead (two at each end, and
 * the offset goes out); WEFT_CLOCK=tsc with the clock shared: the one at
 * the start, then the TSC's offset is read locally at both ends. The
 * stand-in's figures in *s. */
static int clock_syncs_in(int cue, const char *clock, standin *s)
{
    pthread_t th;

    setenv("WEFT_CLOCK", clock, 1);
    standin_start(s, cue, &th);
    open_session(s->port, "10000");
    record_some(10);
    CHECK(weft_close() == 0);
    pthread_join(th, NULL);
    CHECK(s->goodbyes == 1);
    CHECK(s->batch_events == 20);
    return s->syncs;
}

static int clock_syncs(int cue, const char *clock)
{
    standin s;

    return clock_syncs_in(cue, clock, &s);
}

/* The starting offset's first ClockSync goes right behind the Hello
 * (weft__offset_presend): it waits in the socket while weftd opens the
 * member's journal, and its answer, late by that, still says the clock
 * is shared: one request in all, the events all acknowledged. */
static int scenario_clock_behind_hello(void)
{
    standin s;
    int n = clock_syncs_in(SLOW_HELLO, "monotonic", &s);

    fprintf(stderr, "ClockSync requests, sent behind the Hello: %d (%s)\n",
            n, s.sent_behind_hello ? "before the HelloAck" : "after");
    CHECK(s.sent_behind_hello);
    CHECK(n == 1);
    return 0;
}

/* ClockSync answers later than libweft waits for them (1 s): the clock
 * offset is not measured (a warning), the answers that come after are
 * passed over, and the session ends complete. */
static int scenario_clock_late(void)
{
    standin s;
    int n = clock_syncs_in(SLOW_SYNC, "monotonic", &s);

    fprintf(stderr, "ClockSync requests answered late: %d\n", n);
    CHECK(n >= 2);
    return 0;
}

static int scenario_clock_shared(void)
{
    int n = clock_syncs(0, "monotonic");

    fprintf(stderr, "ClockSync requests, clock shared: %d\n", n);
    CHECK(n == 1);
    return 0;
}

static int scenario_clock_ahead(void)
{
    int n = clock_syncs(CLOCK_AHEAD, "monotonic");

    fprintf(stderr, "ClockSync requests, clock 5 s behind: %d\n", n);
    CHECK(n == 4);
    return 0;
}

static int scenario_clock_tsc(void)
{
    int n;

    if (!weft__tsc_invariant())
        return 0; /* WEFT_CLOCK=tsc would be CLOCK_MONOTONIC */
    n = clock_syncs(0, "tsc");
    fprintf(stderr, "ClockSync requests, TSC: %d\n", n);
    CHECK(n == 1);
    return 0;
}

static void run_child(int (*scenario)(void))
{
    pid_t pid;
    int status = 0;

    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(scenario());
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_reconnect(void **state)
{
    (void)state;
    run_child(scenario_reconnect);
}

static void test_refused(void **state)
{
    (void)state;
    run_child(scenario_refused);
}

static void test_gone(void **state)
{
    (void)state;
    run_child(scenario_gone);
}

static void test_open_early(void **state)
{
    (void)state;
    run_child(scenario_open_early);
}

static void test_open_fails(void **state)
{
    (void)state;
    run_child(scenario_open_refused);
    run_child(scenario_open_broken);
    run_child(scenario_open_reset);
    run_child(scenario_open_unreachable);
}

static void test_clock_syncs(void **state)
{
    (void)state;
    run_child(scenario_clock_shared);
    run_child(scenario_clock_behind_hello);
    run_child(scenario_clock_late);
    run_child(scenario_clock_ahead);
    run_child(scenario_clock_tsc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconnect),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_gone),
        cmocka_unit_test(test_open_early),
        cmocka_unit_test(test_open_fails),
        cmocka_unit_test(test_clock_syncs),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
