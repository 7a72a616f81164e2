/* server_util.c - what the server tests share (test_server.c,
 * test_server_limits.c): a weft_daemon on a private loop in a thread of
 * its own, listening on 127.0.0.1:0, and the test as its client over a
 * blocking socket with receive timeouts (frames built, sent, received and
 * expected).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "authn.h"
#include "catalog.h"
#include "server_util.h"
#include "daemon_fixture.h"
#include "frame.h"
#include "jwriter.h"
#include "server.h"
#include "ask.h"
#include "session.h"
#include "status.h"
#include "testutil.h"
#include "trace.h"
#include "weft_errors.h"
#include "worker.h"

/* ---- the daemon ---------------------------------------------------------- */

int setup(void **state)
{
    fixture *f = daemon_setup(state, "wstest");
    char err[256];
    weft_config *c = &f->d.cfg;

    free(c->listen);
    c->listen = strdup("127.0.0.1:0");
    c->address_file = tu_path(f->dir, "address");
    assert_non_null(c->listen);
    /* no Unix socket (SPOOL/weftd.sock by default): tests that want one
     * set it */
    assert_int_equal(weft_config_set(c, "weftd", "socket", "", err,
                                     sizeof err), 0);
    assert_int_equal(weft_config_finish(c, err, sizeof err), 0);
    c->max_frame = MAX_FRAME;
    c->max_connections = 8;
    c->max_locations = 4;
    c->max_string = 64;
    c->max_definitions = 64;
    c->max_members = 16;
    c->idle_timeout = 0; /* tests that want them set them */
    c->session_timeout = 0;
    return 0;
}

static void *loop_main(void *arg)
{
    fixture *f = arg;

    uv_run(&f->loop, UV_RUN_DEFAULT);
    return NULL;
}

static void close_test_handles(fixture *f)
{
    uv_close((uv_handle_t *)&f->stop, NULL);
    uv_close((uv_handle_t *)&f->drain, NULL);
    if (f->ticking)
        uv_close((uv_handle_t *)&f->tick, NULL);
    f->ticking = 0;
}

static void on_stop(uv_async_t *a)
{
    fixture *f = a->data;

    weft_server_stop(&f->d);
    close_test_handles(f);
}

/* What main's SIGTERM handler does. */
static void on_drain(uv_async_t *a)
{
    fixture *f = a->data;

    f->d.stopping = 1;
    weft_server_drain(&f->d);
    close_test_handles(f);
}

static void on_tick(uv_timer_t *t)
{
    fixture *f = t->data;

    weft_server_tick(&f->d);
}

static void stop_ingest(weft_daemon *d)
{
    weft_jwriter_stop(d);
    weft_worker_stop(d->srv->syncer);
}

/* Wired as main.c does. */
static const weft_server_cbs ingest = { weft_session_frame,
                                        weft_session_closed,
                                        stop_ingest,
                                        weft_authn_challenge,
                                        weft_session_pending,
                                        weft_session_describe };

/* Starts listening (with the limits the test set) and the loop thread. */
void start(fixture *f)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char want[64], got[64] = "";
    FILE *fp;

    assert_int_equal(weft_jwriter_start(&f->d, weft_session_written), 0);
    assert_int_equal(weft_worker_start(&f->loop, 1, 0, &f->d.srv->syncer), 0);
    f->d.ask_cbs = &weft_ask_cbs;
    assert_int_equal(weft_server_start(&f->d, &ingest), 0);
    assert_int_equal(uv_tcp_getsockname(&f->d.srv->tcp, (struct sockaddr *)&ss,
                                        &len), 0);
    assert_int_equal(ss.ss_family, AF_INET);
    f->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    assert_true(f->port > 0);
    /* The bound address is published for clients. */
    fp = fopen(f->d.cfg.address_file, "r");
    assert_non_null(fp);
    assert_non_null(fgets(got, sizeof got, fp));
    fclose(fp);
    snprintf(want, sizeof want, "127.0.0.1:%d\n", f->port);
    assert_string_equal(got, want);
    assert_int_equal(uv_async_init(&f->loop, &f->stop, on_stop), 0);
    f->stop.data = f;
    assert_int_equal(uv_async_init(&f->loop, &f->drain, on_drain), 0);
    f->drain.data = f;
    if (f->d.cfg.idle_timeout || f->d.cfg.session_timeout) {
        assert_int_equal(uv_timer_init(&f->loop, &f->tick), 0);
        f->tick.data = f;
        assert_int_equal(uv_timer_start(&f->tick, on_tick, 100, 100), 0);
        f->ticking = 1;
    }
    assert_int_equal(pthread_create(&f->thread, NULL, loop_main, f), 0);
    f->running = 1;
}

/* Stops the daemon: listeners and connections close, conversions in
 * flight finish, the traces still recording are freed, and the loop
 * closes with nothing left open. */
void stop(fixture *f)
{
    assert_int_equal(uv_async_send(&f->stop), 0);
    assert_int_equal(pthread_join(f->thread, NULL), 0);
    f->running = 0;
    assert_int_equal(f->d.jobs, 0);
    assert_null(f->d.srv->conns);
    assert_int_equal(f->d.srv->nconns, 0);
    weft_trace_free_all(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* ---- the client ---------------------------------------------------------- */

int cl_connect(const fixture *f)
{
    struct sockaddr_in sin;
    struct timeval tv = { TIMEOUT_S, 0 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)f->port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv),
                     0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv),
                     0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    cl_challenge(fd);
    return fd;
}

/* weftd speaks first over TCP: takes its Challenge (a client of auth =
 * none, as these tests are, goes on without answering it). A connection
 * refused at once (a limit) gets an Error instead: it is left to read. */
void cl_challenge(int fd)
{
    uint8_t buf[WEFT_FRAME_HEADER + 128];
    uint32_t len;
    Weft__Envelope *env;
    int challenge;

    if (recv(fd, buf, WEFT_FRAME_HEADER, MSG_PEEK | MSG_WAITALL) !=
        WEFT_FRAME_HEADER)
        return;
    len = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 |
          (uint32_t)buf[2] << 8 | buf[3];
    if (len > sizeof buf - WEFT_FRAME_HEADER ||
        recv(fd, buf, WEFT_FRAME_HEADER + len, MSG_PEEK | MSG_WAITALL) !=
            (ssize_t)(WEFT_FRAME_HEADER + len))
        return;
    env = weft_frame_unpack(buf + WEFT_FRAME_HEADER, len);
    challenge = env && env->msg_case == WEFT__ENVELOPE__MSG_CHALLENGE;
    if (challenge) {
        assert_int_equal(env->challenge->nonce.len, WEFT_AUTH_NONCE);
        assert_int_equal(recv(fd, buf, WEFT_FRAME_HEADER + len, 0),
                         (ssize_t)(WEFT_FRAME_HEADER + len));
    }
    weft_frame_free_envelope(env);
}

/* Sends all bytes; 0, or -1 when the peer is gone. */
int cl_send_try(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void cl_send(int fd, const void *buf, size_t len)
{
    assert_int_equal(cl_send_try(fd, buf, len), 0);
}

/* A packed frame of env (the caller frees). */
bytes pack(const Weft__Envelope *env)
{
    bytes b = { 0 };
    ssize_t n = weft_frame_pack(env, &b.p);

    assert_true(n > 0);
    b.n = b.cap = (size_t)n;
    return b;
}

void append_bytes(bytes *to, bytes from)
{
    to->p = realloc(to->p, to->n + from.n);
    assert_non_null(to->p);
    memcpy(to->p + to->n, from.p, from.n);
    to->n += from.n;
    to->cap = to->n;
    free(from.p);
}

void send_bytes_free(int fd, bytes b)
{
    cl_send(fd, b.p, b.n);
    free(b.p);
}

/* The uid hello_frame claims (auth = none: weftd believes it). */
uint32_t hello_uid;

bytes hello_frame(const char *trace, uint32_t rank, uint32_t size,
                  uint32_t version)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;

    h.protocol_version = version;
    h.trace = (char *)trace;
    h.rank = rank;
    h.size = size;
    h.hostname = (char *)"test-host";
    h.pid = 77;
    h.uid = hello_uid;
    h.timer_resolution = 1000000000;
    h.realtime_ns = 1700000000000000000ull;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    return pack(&env);
}

/* Definitions: string 0 "work", region 0. */
bytes defs_frame(uint64_t seq)
{
    weft_record d[] = { str(0, "work"), region(0, 0, 1) };

    return defs_records_frame(seq, d, 2);
}

bytes defs_records_frame(uint64_t seq, const weft_record *d, size_t n)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    bytes rec = encode(d, n, 0, 0), out;

    defs.seq = seq;
    defs.records.data = rec.p;
    defs.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    out = pack(&env);
    free(rec.p);
    return out;
}

bytes batch_frame(uint32_t loc, uint64_t seq, uint64_t base,
                  uint32_t announce, const weft_record *evs, size_t n)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__EventBatch b = WEFT__EVENT_BATCH__INIT;
    bytes rec = encode(evs, n, 1, base), out;

    b.location = loc;
    b.seq = seq;
    b.base_time = base;
    b.events = announce;
    b.records.data = rec.p;
    b.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_EVENT_BATCH;
    env.event_batch = &b;
    out = pack(&env);
    free(rec.p);
    return out;
}

/* Enter and Leave of region 0 at t and t + 5. */
bytes work_batch(uint32_t loc, uint64_t seq, uint64_t t)
{
    weft_record ev[] = { enter(t, 0, 0), enter(t + 5, 0, 1) };

    return batch_frame(loc, seq, t, 2, ev, 2);
}

bytes goodbye_ended_frame(const char *ended)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    g.ended = (char *)ended;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    return pack(&env);
}

bytes goodbye_frame(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    return pack(&env);
}

/* Reads exactly n bytes: 1, or 0 at EOF before the first byte. */
int read_full(int fd, uint8_t *p, size_t n)
{
    size_t have = 0;

    while (have < n) {
        ssize_t k = recv(fd, p + have, n - have, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            fail_msg("recv: %s (after %zu of %zu bytes)",
                     errno == EAGAIN ? "timeout" : strerror(errno), have, n);
        if (k == 0) {
            if (have == 0)
                return 0;
            fail_msg("EOF inside a frame (%zu of %zu bytes)", have, n);
        }
        have += (size_t)k;
    }
    return 1;
}

/* The next frame from weftd, NULL at EOF. */
Weft__Envelope *cl_recv(int fd)
{
    uint8_t hdr[4], *payload;
    uint32_t len;
    Weft__Envelope *env;

    if (!read_full(fd, hdr, 4))
        return NULL;
    len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 |
          (uint32_t)hdr[2] << 8 | hdr[3];
    assert_true(len <= WEFT_DEFAULT_MAX_FRAME);
    payload = malloc(len ? len : 1);
    assert_non_null(payload);
    if (len && !read_full(fd, payload, len))
        fail_msg("EOF after a frame header");
    env = weft_frame_unpack(payload, len);
    free(payload);
    assert_non_null(env);
    return env;
}

void expect_eof(int fd)
{
    Weft__Envelope *env = cl_recv(fd);

    if (env)
        fail_msg("expected EOF, got %s",
                 weft_frame_kind_name(env->msg_case));
}

void show_unexpected(const Weft__Envelope *env, const char *want)
{
    if (env->msg_case == WEFT__ENVELOPE__MSG_ERROR)
        fail_msg("expected %s, got Error %s: %s", want,
                 weft_err_name(env->error->code), env->error->message);
    fail_msg("expected %s, got %s", want,
             weft_frame_kind_name(env->msg_case));
}

/* The HelloAck; the caller frees it. */
Weft__Envelope *expect_hello_ack(int fd)
{
    Weft__Envelope *env = cl_recv(fd);

    assert_non_null(env);
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    assert_int_equal(env->hello_ack->protocol_version,
                     WEFT_PROTOCOL_VERSION);
    assert_true(strncmp(env->hello_ack->server, "weftd ", 6) == 0);
    return env;
}

void expect_ack(int fd, int defs, uint32_t loc, uint64_t seq)
{
    Weft__Envelope *env = cl_recv(fd);

    assert_non_null(env);
    if (env->msg_case != WEFT__ENVELOPE__MSG_ACK)
        show_unexpected(env, "Ack");
    assert_int_equal(env->ack->definitions, defs);
    assert_int_equal(env->ack->location, loc);
    assert_int_equal(env->ack->seq, seq);
    weft_frame_free_envelope(env);
}

/* An Error with this code whose message contains `text`, then EOF; the
 * socket is closed and *fdp set to -1, so that a close(*fdp) after it
 * cannot close a descriptor the in-process weftd has opened since under
 * the same number. */
void expect_error(int *fdp, int code, const char *text)
{
    Weft__Envelope *env = cl_recv(*fdp);

    if (!env)
        fail_msg("expected Error %s, got EOF", weft_err_name(code));
    if (env->msg_case != WEFT__ENVELOPE__MSG_ERROR)
        show_unexpected(env, "Error");
    if (env->error->code != code || !strstr(env->error->message, text))
        fail_msg("expected Error %s \"...%s...\", got %s: %s",
                 weft_err_name(code), text, weft_err_name(env->error->code),
                 env->error->message);
    weft_frame_free_envelope(env);
    expect_eof(*fdp);
    close(*fdp);
    *fdp = -1;
}

void hello_ok(int fd, const char *trace, uint32_t rank, uint32_t size)
{
    send_bytes_free(fd, hello_frame(trace, rank, size,
                                    WEFT_PROTOCOL_VERSION));
    weft_frame_free_envelope(expect_hello_ack(fd));
}

/* 1 if nothing arrives on fd within ms (the socket stays usable). */
int quiet_for(int fd, long ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 }, back = { TIMEOUT_S, 0 };
    uint8_t byte;
    ssize_t n;

    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv),
                     0);
    n = recv(fd, &byte, 1, MSG_PEEK);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &back,
                                sizeof back), 0);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A ClockSync request frame. */
bytes clock_sync_frame(uint64_t id)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;

    cs.id = id;
    cs.client_time = 12345;
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &cs;
    return pack(&env);
}

/* Closes the connection and waits until weftd has let go of it. */
void hang_up(int fd)
{
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    expect_eof(fd);
    close(fd);
}

void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

