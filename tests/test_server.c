/* test_server.c - listeners, connections and the read path of weftd
 * (daemon/server.c, with session.c and trace.c behind it), over real TCP
 * sockets.
 *
 * Each test runs a weft_daemon on a private loop in a thread of its own,
 * listening on 127.0.0.1:0; the test itself is the client, with blocking
 * sockets and receive timeouts. A uv_async_t tells the loop to stop
 * (weft_server_stop), the loop runs until the conversions are done, and
 * uv_loop_close() must succeed.
 *
 * Covered: a whole session (HelloAck, Acks, resent batches and
 * definitions acked again, an empty batch, EOF after Goodbye, catalog row
 * complete), frames split byte by byte and pipelined, resume after a
 * disconnect (HelloAck says what weftd holds), and each refusal with its
 * Error code and message followed by EOF: frame over max_frame, garbage,
 * empty frame, message before Hello, second Hello, bad version, bad
 * Hello, server messages from a client, bad records, missing batches,
 * sequence number 0, max_locations (batches and Goodbye), a rank
 * connected twice or finished, and max_connections. A journal write that
 * fails (file size limit) gives EIO and the resend after reconnecting is
 * accepted. A stalled disk (the journal writer held) stalls no one's
 * ClockSync or Hello, and a process coming back while its batch waits for
 * the journal is asked to retry until HelloAck can say it is held. A
 * Hello's disk work (a new trace's directory, the journal's open) runs on
 * the writer's open thread: with it stalled too, other traces' ClockSync
 * and acks and a process coming back are answered within 100 ms, and the
 * waiting Hello and the frames sent behind it complete in order once the
 * disk moves; it fails with the same Errors as before, and stopping while
 * it waits leaves nothing open. A peer that vanishes with acks unread does not take the
 * daemon down (SIGPIPE), and stopping does not wait for a peer that
 * never reads. Global limits: max_buffered pauses connections at a frame
 * boundary and resumes them (stashed bytes kept) while a frame in
 * progress finishes; idle_timeout (no Hello, a frame begun and not
 * finished; not a quiet member); SIGTERM's drain (frames in progress
 * finish and are acked, shutdown_timeout bounds a stuck peer); the file
 * descriptor limit; the counters of limits reached.
 *
 * The disk stalled for fsync and for the status file (the syncer and the
 * status writer held, durability = fsync): ClockSync and a new Hello
 * are still answered within 100 ms, the batch is acked and the status
 * file written once the disk moves, and removed at the end.
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

#include "catalog.h"
#include "daemon_fixture.h"
#include "frame.h"
#include "jwriter.h"
#include "server.h"
#include "session.h"
#include "status.h"
#include "testutil.h"
#include "trace.h"
#include "weft_errors.h"
#include "worker.h"

#define TIMEOUT_S 10
#define MAX_FRAME 4096

/* ---- the daemon ---------------------------------------------------------- */

static int setup(void **state)
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
    weft_worker_stop(d->syncer);
}

/* Wired as main.c does. */
static const weft_server_cbs ingest = { weft_session_frame,
                                        weft_session_closed,
                                        stop_ingest };

/* Starts listening (with the limits the test set) and the loop thread. */
static void start(fixture *f)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    char want[64], got[64] = "";
    FILE *fp;

    assert_int_equal(weft_jwriter_start(&f->d, weft_session_written), 0);
    assert_int_equal(weft_worker_start(&f->loop, 1, 0, &f->d.syncer), 0);
    assert_int_equal(weft_server_start(&f->d, &ingest), 0);
    assert_int_equal(uv_tcp_getsockname(&f->d.tcp, (struct sockaddr *)&ss,
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
static void stop(fixture *f)
{
    assert_int_equal(uv_async_send(&f->stop), 0);
    assert_int_equal(pthread_join(f->thread, NULL), 0);
    f->running = 0;
    assert_int_equal(f->d.jobs, 0);
    assert_null(f->d.conns);
    assert_int_equal(f->d.nconns, 0);
    weft_trace_free_all(&f->d);
    weft_retain_free(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* ---- the client ---------------------------------------------------------- */

static int cl_connect(const fixture *f)
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
    return fd;
}

/* Sends all bytes; 0, or -1 when the peer is gone. */
static int cl_send_try(int fd, const void *buf, size_t len)
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

static void cl_send(int fd, const void *buf, size_t len)
{
    assert_int_equal(cl_send_try(fd, buf, len), 0);
}

/* A packed frame of env (the caller frees). */
static bytes pack(const Weft__Envelope *env)
{
    bytes b = { 0 };
    ssize_t n = weft_frame_pack(env, &b.p);

    assert_true(n > 0);
    b.n = b.cap = (size_t)n;
    return b;
}

static void append_bytes(bytes *to, bytes from)
{
    to->p = realloc(to->p, to->n + from.n);
    assert_non_null(to->p);
    memcpy(to->p + to->n, from.p, from.n);
    to->n += from.n;
    to->cap = to->n;
    free(from.p);
}

static void send_bytes_free(int fd, bytes b)
{
    cl_send(fd, b.p, b.n);
    free(b.p);
}

/* The uid hello_frame claims (auth = none: weftd believes it). */
static uint32_t hello_uid;

static bytes hello_frame(const char *trace, uint32_t rank, uint32_t size,
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
static bytes defs_frame(uint64_t seq)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    weft_record d[] = { str(0, "work"), region(0, 0, 1) };
    bytes rec = encode(d, 2, 0, 0), out;

    defs.seq = seq;
    defs.records.data = rec.p;
    defs.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    out = pack(&env);
    free(rec.p);
    return out;
}

static bytes batch_frame(uint32_t loc, uint64_t seq, uint64_t base,
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
static bytes work_batch(uint32_t loc, uint64_t seq, uint64_t t)
{
    weft_record ev[] = { enter(t, 0, 0), enter(t + 5, 0, 1) };

    return batch_frame(loc, seq, t, 2, ev, 2);
}

static bytes goodbye_ended_frame(const char *ended)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    g.ended = (char *)ended;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    return pack(&env);
}

static bytes goodbye_frame(void)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;

    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    return pack(&env);
}

/* Reads exactly n bytes: 1, or 0 at EOF before the first byte. */
static int read_full(int fd, uint8_t *p, size_t n)
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
static Weft__Envelope *cl_recv(int fd)
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

static void expect_eof(int fd)
{
    Weft__Envelope *env = cl_recv(fd);

    if (env)
        fail_msg("expected EOF, got %s",
                 weft_frame_kind_name(env->msg_case));
}

static void show_unexpected(const Weft__Envelope *env, const char *want)
{
    if (env->msg_case == WEFT__ENVELOPE__MSG_ERROR)
        fail_msg("expected %s, got Error %s: %s", want,
                 weft_err_name(env->error->code), env->error->message);
    fail_msg("expected %s, got %s", want,
             weft_frame_kind_name(env->msg_case));
}

/* The HelloAck; the caller frees it. */
static Weft__Envelope *expect_hello_ack(int fd)
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

static void expect_ack(int fd, int defs, uint32_t loc, uint64_t seq)
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
 * socket is closed. */
static void expect_error(int fd, int code, const char *text)
{
    Weft__Envelope *env = cl_recv(fd);

    if (!env)
        fail_msg("expected Error %s, got EOF", weft_err_name(code));
    if (env->msg_case != WEFT__ENVELOPE__MSG_ERROR)
        show_unexpected(env, "Error");
    if (env->error->code != code || !strstr(env->error->message, text))
        fail_msg("expected Error %s \"...%s...\", got %s: %s",
                 weft_err_name(code), text, weft_err_name(env->error->code),
                 env->error->message);
    weft_frame_free_envelope(env);
    expect_eof(fd);
    close(fd);
}

static void hello_ok(int fd, const char *trace, uint32_t rank, uint32_t size)
{
    send_bytes_free(fd, hello_frame(trace, rank, size,
                                    WEFT_PROTOCOL_VERSION));
    weft_frame_free_envelope(expect_hello_ack(fd));
}

/* Closes the connection and waits until weftd has let go of it. */
static void hang_up(int fd)
{
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    expect_eof(fd);
    close(fd);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

/* ---- sessions ------------------------------------------------------------ */

static void test_valid_session(void **state)
{
    fixture *f = *state;
    int fd;
    Weft__Envelope *ack;
    weft_catalog *cat = NULL;
    weft_trace_row row;
    char *msg = NULL;

    start(f);
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("srv", 0, 1, WEFT_PROTOCOL_VERSION));
    ack = expect_hello_ack(fd);
    assert_int_equal(ack->hello_ack->definitions_seq, 0);
    assert_int_equal(ack->hello_ack->n_locations, 0);
    weft_frame_free_envelope(ack);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(0, 1, 100));
    expect_ack(fd, 0, 0, 1);
    /* Resends (an ack was lost): acked again, not journaled twice. */
    send_bytes_free(fd, work_batch(0, 1, 100));
    expect_ack(fd, 0, 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(2, 1, 50));
    expect_ack(fd, 0, 2, 1);
    send_bytes_free(fd, work_batch(0, 2, 105));
    expect_ack(fd, 0, 0, 2);
    /* An empty batch (no records at all) is a batch. */
    send_bytes_free(fd, batch_frame(0, 3, 110, 0, NULL, 0));
    expect_ack(fd, 0, 0, 3);
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);

    /* The conversion ran before the loop ended. */
    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 1, &cat, &msg), 0);
    assert_int_equal(weft_catalog_find(cat, "srv", &row), 0);
    assert_string_equal(row.state, WEFT_STATE_COMPLETE);
    assert_int_equal(row.events, 6);
    assert_int_equal(row.locations, 2); /* threads 0 and 2 */
    assert_int_equal(row.time_first, 50);
    assert_int_equal(row.time_last, 110);
    weft_catalog_trace_free(&row);
    weft_catalog_close(cat);
}

static void test_pipelined_and_split(void **state)
{
    fixture *f = *state;
    bytes all = { 0 }, hello;
    int fd;

    start(f);
    /* A whole session in one write. */
    fd = cl_connect(f);
    append_bytes(&all, hello_frame("pipe", 0, 2, WEFT_PROTOCOL_VERSION));
    append_bytes(&all, defs_frame(1));
    append_bytes(&all, work_batch(0, 1, 10));
    append_bytes(&all, work_batch(0, 2, 20));
    append_bytes(&all, goodbye_frame());
    send_bytes_free(fd, all);
    weft_frame_free_envelope(expect_hello_ack(fd));
    expect_ack(fd, 1, 0, 1);
    expect_ack(fd, 0, 0, 1);
    expect_ack(fd, 0, 0, 2);
    expect_eof(fd);
    close(fd);

    /* One byte at a time. */
    fd = cl_connect(f);
    hello = hello_frame("pipe", 1, 2, WEFT_PROTOCOL_VERSION);
    for (size_t i = 0; i < hello.n; i++) {
        cl_send(fd, hello.p + i, 1);
        if (i % 8 == 0)
            sleep_ms(1);
    }
    free(hello.p);
    weft_frame_free_envelope(expect_hello_ack(fd));
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);
}

static void test_resume(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env;
    Weft__HelloAck *ha;
    int a, b;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "res", 0, 2);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    send_bytes_free(a, work_batch(0, 1, 10));
    expect_ack(a, 0, 0, 1);
    send_bytes_free(a, work_batch(2, 1, 10));
    expect_ack(a, 0, 2, 1);
    hang_up(a); /* no Goodbye */

    b = cl_connect(f);
    send_bytes_free(b, hello_frame("res", 0, 2, WEFT_PROTOCOL_VERSION));
    env = expect_hello_ack(b);
    ha = env->hello_ack;
    /* What weftd holds, so the client resends only the rest. */
    assert_int_equal(ha->definitions_seq, 1);
    assert_int_equal(ha->n_locations, 3);
    assert_int_equal(ha->locations[0]->location, 0);
    assert_int_equal(ha->locations[0]->seq, 1);
    assert_int_equal(ha->locations[1]->location, 1);
    assert_int_equal(ha->locations[1]->seq, 0);
    assert_int_equal(ha->locations[2]->location, 2);
    assert_int_equal(ha->locations[2]->seq, 1);
    weft_frame_free_envelope(env);
    send_bytes_free(b, work_batch(0, 1, 10));
    expect_ack(b, 0, 0, 1);
    send_bytes_free(b, work_batch(0, 2, 15));
    expect_ack(b, 0, 0, 2);
    /* Its clock carried over: a batch before the last time is refused. */
    send_bytes_free(b, work_batch(0, 3, 19));
    expect_error(b, WEFT_ETIME, "thread 0, batch 3: batch base time 19 is "
                 "smaller than the last time 20 of thread 0");
    stop(f);
}

/* ---- refusals ------------------------------------------------------------ */

static void test_frame_too_big(void **state)
{
    fixture *f = *state;
    uint8_t hdr[4] = { 0, 0, (MAX_FRAME + 1) >> 8, (MAX_FRAME + 1) & 0xff };
    uint8_t *big = calloc(1, 4 + MAX_FRAME);
    int fd;

    start(f);
    fd = cl_connect(f);
    cl_send(fd, hdr, sizeof hdr);
    expect_error(fd, WEFT_ETOOBIG, "frame of 4097 bytes exceeds max_frame "
                 "(4096 bytes)");
    /* After a valid Hello too. */
    fd = cl_connect(f);
    hello_ok(fd, "big", 0, 1);
    cl_send(fd, "\xff\xff\xff\xff", 4);
    expect_error(fd, WEFT_ETOOBIG, "frame of 4294967295 bytes");
    /* max_frame itself is allowed: this one is refused for its content. */
    assert_non_null(big);
    big[2] = MAX_FRAME >> 8;
    big[3] = MAX_FRAME & 0xff;
    memset(big + 4, 0xff, MAX_FRAME);
    fd = cl_connect(f);
    cl_send(fd, big, 4 + MAX_FRAME);
    expect_error(fd, WEFT_EPROTO, "frame of 4096 bytes is not a weft "
                 "protocol message");
    free(big);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_FRAME], 2);
}

/* Before Hello a frame may be WEFT_MAX_HELLO_FRAME bytes at most,
 * whatever max_frame allows after it. */
static void test_frame_before_hello(void **state)
{
    fixture *f = *state;
    uint32_t n = WEFT_MAX_HELLO_FRAME + 1;
    uint8_t hdr[4] = { n >> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff };
    int fd;

    f->d.cfg.max_frame = 1u << 20;
    start(f);
    fd = cl_connect(f);
    cl_send(fd, hdr, sizeof hdr);
    expect_error(fd, WEFT_ETOOBIG, "frame of 65537 bytes before Hello (at "
                 "most 65536 bytes until then)");
    stop(f);
}

static void test_garbage(void **state)
{
    fixture *f = *state;
    static const uint8_t junk[] = { 0, 0, 0, 12, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff };
    static const uint8_t empty[] = { 0, 0, 0, 0 };
    static const char http[] = "GET / HTTP/1.0\r\n\r\n";
    int fd;

    start(f);
    fd = cl_connect(f);
    cl_send(fd, junk, sizeof junk);
    expect_error(fd, WEFT_EPROTO, "frame of 12 bytes is not a weft protocol "
                 "message");
    fd = cl_connect(f);
    cl_send(fd, empty, sizeof empty);
    expect_error(fd, WEFT_EPROTO, "frame of 0 bytes is not a weft");
    /* Someone speaking HTTP: "GET " is a length of 1.2 GB. */
    fd = cl_connect(f);
    cl_send(fd, http, sizeof http - 1);
    expect_error(fd, WEFT_ETOOBIG, "exceeds max_frame");
    stop(f);
}

static void test_before_hello(void **state)
{
    fixture *f = *state;
    weft_record ev = enter(1, 0, 0);
    int fd;

    start(f);
    fd = cl_connect(f);
    send_bytes_free(fd, defs_frame(1));
    expect_error(fd, WEFT_EPROTO, "Definitions before Hello");
    fd = cl_connect(f);
    send_bytes_free(fd, batch_frame(0, 1, 0, 1, &ev, 1));
    expect_error(fd, WEFT_EPROTO, "EventBatch before Hello");
    fd = cl_connect(f);
    send_bytes_free(fd, goodbye_frame());
    expect_error(fd, WEFT_EPROTO, "Goodbye before Hello");
    stop(f);
}

static void test_hello_refused(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "twice", 0, 1);
    send_bytes_free(fd, hello_frame("twice", 0, 1, WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EPROTO, "second Hello on one connection");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 0, 1, 99));
    expect_error(fd, WEFT_EVERSION, "protocol version 99 is not supported");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 2, 2, WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EINVAL, "rank 2 is not below the trace size 2");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 0, 17, WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_ELIMIT, "max_members (16)");
    stop(f);
}

/* An Auth frame carrying cred (version v). */
static bytes auth_frame(const char *cred, uint32_t v)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Auth a = WEFT__AUTH__INIT;

    a.protocol_version = v;
    a.credential.data = (uint8_t *)cred;
    a.credential.len = strlen(cred);
    env.msg_case = WEFT__ENVELOPE__MSG_AUTH;
    env.auth = &a;
    return pack(&env);
}

/* auth = munge: what is refused before munged is even asked, and a
 * credential munged cannot check (here: no munged at the socket
 * configured), on the worker thread. The credentials munged accepts,
 * and those it refuses (expired, replayed), are tests/e2e_auth.sh's. */
static void test_auth_refused(void **state)
{
    fixture *f = *state;
    int fd;

    f->d.cfg.auth = WEFT_AUTH_MUNGE;
    free(f->d.cfg.munge_socket);
    f->d.cfg.munge_socket = tu_path(f->dir, "no-munged");
    start(f);
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("a", 0, 1, WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EAUTH, "Hello without a MUNGE credential");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("", WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EAUTH, "MUNGE credential of 0 bytes");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("MUNGE:x:", 99));
    expect_error(fd, WEFT_EVERSION, "protocol version 99 is not supported");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("MUNGE:x:", WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EAUTH, "MUNGE credential refused");
    /* The connection closes while its credential is being checked: the
     * job comes back to nobody. */
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("MUNGE:y:", WEFT_PROTOCOL_VERSION));
    close(fd);
    stop(f);
}

/* With auth = none an Auth is still only taken first. */
static void test_auth_after_hello(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "late", 0, 1);
    send_bytes_free(fd, auth_frame("MUNGE:x:", WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_EPROTO, "Auth after Hello");
    stop(f);
}

static void test_server_messages_from_client(void **state)
{
    fixture *f = *state;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Ack ack = WEFT__ACK__INIT;
    Weft__Error e = WEFT__ERROR__INIT;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "odd", 0, 1);
    env.msg_case = WEFT__ENVELOPE__MSG_ACK;
    env.ack = &ack;
    send_bytes_free(fd, pack(&env));
    expect_error(fd, WEFT_EPROTO, "unexpected Ack from a client");
    fd = cl_connect(f);
    hello_ok(fd, "odd2", 0, 1);
    env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
    env.error = &e;
    e.message = (char *)"boo";
    send_bytes_free(fd, pack(&env));
    expect_error(fd, WEFT_EPROTO, "unexpected Error from a client");
    stop(f);
}

static void test_bad_records(void **state)
{
    fixture *f = *state;
    weft_record undefined = enter(10, 5, 0);
    weft_record ev[] = { enter(10, 0, 0), enter(11, 0, 1) };
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    weft_record clock = { .type = WEFT_REC_ClockProperties };
    bytes rec;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "bad", 0, 1);
    send_bytes_free(fd, batch_frame(0, 1, 0, 1, &undefined, 1));
    expect_error(fd, WEFT_EREF, "thread 0, batch 1: Enter.region: REGION 5 "
                 "is not defined");

    fd = cl_connect(f);
    hello_ok(fd, "bad2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, batch_frame(0, 1, 0, 3, ev, 2));
    expect_error(fd, WEFT_EPROTO, "announces 3 events but holds 2");

    fd = cl_connect(f);
    hello_ok(fd, "bad3", 0, 1);
    rec = encode(&clock, 1, 0, 0);
    defs.seq = 1;
    defs.records.data = rec.p;
    defs.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    send_bytes_free(fd, pack(&env));
    free(rec.p);
    expect_error(fd, WEFT_ETYPE, "bad definition: ClockProperties "
                 "definitions are derived by weftd");
    stop(f);
}

/* Events far from the process's start (its Hello's clock) are refused:
 * a clock gone wild would stretch the whole trace. */
static void test_events_far_away(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "far", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(0, 1, 367ull * 86400 * 1000000000ull));
    expect_error(fd, WEFT_ETIME, "is 31708800 s after the process's start "
                 "(0): at most 31622400 s are allowed");
    stop(f);
}

static void test_missing_batches(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "gap", 0, 1);
    send_bytes_free(fd, defs_frame(2));
    expect_error(fd, WEFT_EPROTO, "Definitions seq 2 after 0: a batch is "
                 "missing");
    fd = cl_connect(f);
    hello_ok(fd, "gap2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(1, 1, 0));
    expect_ack(fd, 0, 1, 1);
    send_bytes_free(fd, work_batch(1, 3, 10));
    expect_error(fd, WEFT_EPROTO, "thread 1: EventBatch seq 3 after 1: a "
                 "batch is missing");
    stop(f);
}

static void test_seq_zero(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    /* Sequence numbers start at 1: a 0 would look like a resend, be acked
     * and be dropped. */
    fd = cl_connect(f);
    hello_ok(fd, "zero", 0, 1);
    send_bytes_free(fd, defs_frame(0));
    expect_error(fd, WEFT_EPROTO, "Definitions seq 0: sequence numbers "
                 "start at 1");
    fd = cl_connect(f);
    hello_ok(fd, "zero2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(1, 0, 0));
    expect_error(fd, WEFT_EPROTO, "thread 1: EventBatch seq 0");
    stop(f);
}

/* The dropped count goodbye_threads_frame reports per thread. */
static uint64_t goodbye_dropped = 1;

static bytes goodbye_threads_frame(const uint32_t *threads, size_t n)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Goodbye g = WEFT__GOODBYE__INIT;
    Weft__LocationEnd ends[8], *pends[8];

    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++) {
        Weft__LocationEnd init = WEFT__LOCATION_END__INIT;
        ends[i] = init;
        ends[i].location = threads[i];
        ends[i].dropped = goodbye_dropped;
        pends[i] = &ends[i];
    }
    g.n_locations = n;
    g.locations = pends;
    env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
    env.goodbye = &g;
    return pack(&env);
}

static void test_goodbye_locations(void **state)
{
    fixture *f = *state;
    static const uint32_t ok[] = { 0, 3 }, over[] = { 1, 4 };
    static const uint32_t twice[] = { 2, 0, 2 };
    int fd;

    start(f);
    /* Client figures are bounded: a thread named twice, a count no
     * process could reach. */
    fd = cl_connect(f);
    hello_ok(fd, "bye0", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(twice, 3));
    expect_error(fd, WEFT_EINVAL, "Goodbye: thread 2 is named twice");
    goodbye_dropped = UINT64_MAX;
    fd = cl_connect(f);
    hello_ok(fd, "bye1", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(ok, 2));
    expect_error(fd, WEFT_EINVAL, "Goodbye: thread 0 reports 0 events and "
                 "18446744073709551615 dropped: more than 281474976710656 "
                 "cannot be");
    goodbye_dropped = 1;
    /* Every thread a Goodbye names becomes a location of the archive, so
     * max_locations holds there too. */
    fd = cl_connect(f);
    hello_ok(fd, "bye", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(over, 2));
    expect_error(fd, WEFT_ELIMIT, "Goodbye: thread 4 exceeds max_locations "
                 "(4)");
    /* Threads that sent nothing (but dropped records) are fine. */
    fd = cl_connect(f);
    hello_ok(fd, "bye2", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(ok, 2));
    expect_eof(fd);
    close(fd);
    stop(f);
}

/* weft_catalog_members callback: appends the member's state to arg's
 * string, one letter each (c complete, a aborted, m missing). */
static int member_states(const weft_member_row *m, void *arg)
{
    char *s = arg;
    size_t n = strlen(s);

    s[n] = m->state[0];
    s[n + 1] = 0;
    return 0;
}

/* A Goodbye saying how the process ended abnormally: the trace is partial
 * and says why, the member is aborted; one over WEFT_MAX_ENDED bytes, or
 * with a control character, is refused by name. */
static void test_goodbye_ended(void **state)
{
    fixture *f = *state;
    char longest[WEFT_MAX_ENDED + 2];
    weft_catalog *cat = NULL;
    weft_trace_row row;
    char *msg = NULL, states[8] = "";
    int fd;

    start(f);
    memset(longest, 'x', sizeof longest);
    longest[WEFT_MAX_ENDED + 1] = 0;
    fd = cl_connect(f);
    hello_ok(fd, "ended-long", 0, 1);
    send_bytes_free(fd, goodbye_ended_frame(longest));
    expect_error(fd, WEFT_EINVAL, "Goodbye: 'ended' is 257 bytes long, at "
                 "most 256 are allowed");
    fd = cl_connect(f);
    hello_ok(fd, "ended-ctl", 0, 1);
    send_bytes_free(fd, goodbye_ended_frame("signal 11\n(SIGSEGV)"));
    expect_error(fd, WEFT_EINVAL, "Goodbye: 'ended' has a control character "
                 "(0x0a) at byte 9");
    longest[WEFT_MAX_ENDED] = 0; /* the longest allowed */
    fd = cl_connect(f);
    hello_ok(fd, "ended", 0, 2);
    send_bytes_free(fd, goodbye_ended_frame("MPI_Abort (error code 3)"));
    expect_eof(fd);
    close(fd);
    fd = cl_connect(f);
    hello_ok(fd, "ended", 1, 2);
    send_bytes_free(fd, goodbye_ended_frame(longest));
    expect_eof(fd);
    close(fd);
    stop(f);

    assert_int_equal(weft_catalog_open(f->d.cfg.catalog, 1, &cat, &msg), 0);
    assert_int_equal(weft_catalog_find(cat, "ended", &row), 0);
    assert_string_equal(row.state, WEFT_STATE_PARTIAL);
    assert_non_null(strstr(row.error, "ended abnormally: rank 0: MPI_Abort "
                                      "(error code 3); rank 1: xxx"));
    assert_int_equal(weft_catalog_members(cat, row.id, member_states,
                                          states), 0);
    assert_string_equal(states, "aa"); /* both aborted */
    weft_catalog_trace_free(&row);
    weft_catalog_close(cat);
}

/* The disk is full (here: RLIMIT_FSIZE) when Definitions arrive: the
 * client gets EIO; after a reconnect its resend must be accepted. */
static void test_journal_write_fails(void **state)
{
    fixture *f = *state;
    char pattern[256];
    struct rlimit old, low;
    struct stat st;
    glob_t g;
    Weft__Envelope *env;
    int fd;

    signal(SIGXFSZ, SIG_IGN);
    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "full", 0, 1);
    sleep_ms(200); /* the catalog job is done before the limit is set */
    snprintf(pattern, sizeof pattern, "%s/spool/traces/full-*/rank-0.wj",
             f->dir);
    assert_int_equal(glob(pattern, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    assert_int_equal(stat(g.gl_pathv[0], &st), 0);
    globfree(&g);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)st.st_size;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &low), 0);
    send_bytes_free(fd, defs_frame(1));
    env = cl_recv(fd);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_ERROR);
    assert_int_equal(env->error->code, WEFT_EIO);
    assert_non_null(strstr(env->error->message, "cannot write the journal"));
    weft_frame_free_envelope(env);
    expect_eof(fd);
    close(fd);

    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("full", 0, 1, WEFT_PROTOCOL_VERSION));
    env = expect_hello_ack(fd);
    assert_int_equal(env->hello_ack->definitions_seq, 0);
    weft_frame_free_envelope(env);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(0, 1, 10));
    expect_ack(fd, 0, 0, 1);
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);
    signal(SIGXFSZ, SIG_DFL);
}

static void test_max_locations(void **state)
{
    fixture *f = *state;
    int fd;

    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "locs", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(3, 1, 0));
    expect_ack(fd, 0, 3, 1);
    send_bytes_free(fd, work_batch(4, 1, 0));
    expect_error(fd, WEFT_ELIMIT, "thread 4 exceeds max_locations (4)");
    fd = cl_connect(f);
    hello_ok(fd, "locs2", 0, 1);
    send_bytes_free(fd, work_batch(UINT32_MAX, 1, 0));
    expect_error(fd, WEFT_ELIMIT, "thread 4294967295 exceeds max_locations");
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_LOCATIONS], 2);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_FRAME], 0);
}

static void test_rank_connected_twice(void **state)
{
    fixture *f = *state;
    int a, b;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "dup", 0, 2);
    b = cl_connect(f);
    send_bytes_free(b, hello_frame("dup", 0, 2, WEFT_PROTOCOL_VERSION));
    expect_error(b, WEFT_EEXIST, "rank 0 of trace 'dup' is already "
                 "connected (host test-host, pid 77)");
    /* The first connection goes on. */
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    /* Finished: it cannot come back. */
    b = cl_connect(f);
    send_bytes_free(b, hello_frame("dup", 0, 2, WEFT_PROTOCOL_VERSION));
    expect_error(b, WEFT_EEXIST, "has already finished");
    stop(f);
}

static void test_max_connections(void **state)
{
    fixture *f = *state;
    int a, b, c, d = -1;

    f->d.cfg.max_connections = 2;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "mc", 0, 2);
    b = cl_connect(f);
    hello_ok(b, "mc", 1, 2);
    c = cl_connect(f);
    expect_error(c, WEFT_ELIMIT, "too many connections: max_connections is "
                 "2");
    /* A slot frees when a connection is closed (asynchronously: retry). */
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    for (int i = 0; i < 200; i++) {
        Weft__Envelope *env;
        d = cl_connect(f);
        send_bytes_free(d, hello_frame("mc2", 0, 1, WEFT_PROTOCOL_VERSION));
        env = cl_recv(d);
        assert_non_null(env);
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK) {
            weft_frame_free_envelope(env);
            break;
        }
        assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_ERROR);
        assert_int_equal(env->error->code, WEFT_ELIMIT);
        weft_frame_free_envelope(env);
        close(d);
        d = -1;
        sleep_ms(10);
    }
    assert_true(d >= 0);
    send_bytes_free(d, goodbye_frame());
    expect_eof(d);
    close(d);
    close(b);
    stop(f);
}

/* One user cannot hold more than max_connections_per_user; others can
 * still come, and the user's slot frees when a connection closes. */
static void test_max_connections_per_user(void **state)
{
    fixture *f = *state;
    int a, b, c;

    f->d.cfg.max_connections_per_user = 2;
    start(f);
    hello_uid = 1000;
    a = cl_connect(f);
    hello_ok(a, "u1", 0, 1);
    b = cl_connect(f);
    hello_ok(b, "u2", 0, 1);
    c = cl_connect(f);
    send_bytes_free(c, hello_frame("u3", 0, 1, WEFT_PROTOCOL_VERSION));
    expect_error(c, WEFT_ELIMIT, "uid 1000 has 2 connections already: "
                 "max_connections_per_user is 2");
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_CONNECTIONS_PER_USER], 1);
    hello_uid = 1001;
    c = cl_connect(f);
    hello_ok(c, "v1", 0, 1);
    send_bytes_free(c, goodbye_frame());
    expect_eof(c);
    close(c);
    hello_uid = 1000;
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    c = cl_connect(f);
    hello_ok(c, "u4", 0, 1);
    send_bytes_free(c, goodbye_frame());
    expect_eof(c);
    close(c);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    hello_uid = 0;
    stop(f);
    assert_int_equal(f->d.nusers, 0);
}

/* ---- peers that vanish ---------------------------------------------------- */

static void test_peer_vanishes(void **state)
{
    fixture *f = *state;
    struct linger lg = { 1, 0 };
    bytes frames = { 0 };
    int fd;

    start(f);
    /* In the middle of a frame. */
    fd = cl_connect(f);
    cl_send(fd, "\0\0", 2);
    close(fd);
    /* With a reset, after a Hello. */
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("gone", 0, 1, WEFT_PROTOCOL_VERSION));
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg),
                     0);
    close(fd);
    /* Leaving acks unread: the close resets the connection while weftd
     * still has acks to write to it. */
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("gone2", 0, 1, WEFT_PROTOCOL_VERSION));
    sleep_ms(50); /* the HelloAck arrives and stays unread */
    append_bytes(&frames, defs_frame(1));
    append_bytes(&frames, work_batch(0, 1, 0));
    append_bytes(&frames, work_batch(0, 2, 10));
    append_bytes(&frames, work_batch(0, 3, 20));
    send_bytes_free(fd, frames);
    close(fd);
    sleep_ms(100);
    /* weftd is still there. */
    fd = cl_connect(f);
    hello_ok(fd, "alive", 0, 1);
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);
}

static void test_stop_with_clients(void **state)
{
    fixture *f = *state;
    int a, b;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "busy", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "busy2", 0, 1);
    cl_send(b, "\0\0\0", 3); /* half a header */
    sleep_ms(50);            /* read by weftd: no reset on close */
    stop(f);
    expect_eof(a);
    expect_eof(b);
    close(a);
    close(b);
}

/* A peer that sends but never reads: weftd's acks pile up in its write
 * queue. Stopping must still close that connection (not wait forever for
 * the queue to drain). */
static void test_stop_with_unread_acks(void **state)
{
    fixture *f = *state;
    bytes resend = work_batch(0, 1, 0);
    struct timespec until;
    int small = 4096, fd, rc;
    size_t sent = 0;

    start(f);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small,
                                sizeof small), 0);
    {
        struct sockaddr_in sin;
        struct timeval tv = { 2, 0 }; /* weftd may stop reading us */
        memset(&sin, 0, sizeof sin);
        sin.sin_family = AF_INET;
        sin.sin_port = htons((uint16_t)f->port);
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
                                    sizeof tv), 0);
        assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin),
                         0);
    }
    send_bytes_free(fd, hello_frame("deaf", 0, 1, WEFT_PROTOCOL_VERSION));
    send_bytes_free(fd, defs_frame(1));
    cl_send(fd, resend.p, resend.n);
    /* Resends are acked again: 8 bytes of ack for each 18 sent, more
     * than the kernel buffers (tcp_wmem max 4 MiB) hold. */
    for (int i = 0; i < 1000000 && sent < (12u << 20); i++) {
        if (cl_send_try(fd, resend.p, resend.n) < 0)
            break;
        sent += resend.n;
    }
    free(resend.p);
    sleep_ms(200);
    assert_int_equal(uv_async_send(&f->stop), 0);
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    rc = pthread_timedjoin_np(f->thread, NULL, &until);
    close(fd); /* unblocks a loop that waits for this peer */
    if (rc == ETIMEDOUT) {
        assert_int_equal(pthread_join(f->thread, NULL), 0);
        f->running = 0;
        fail_msg("the loop did not end within 5 s of weft_server_stop: a "
                 "connection whose peer does not read was not closed");
    }
    assert_int_equal(rc, 0);
    f->running = 0;
    assert_null(f->d.conns);
    weft_trace_free_all(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* ---- global limits, idle connections, SIGTERM ------------------------------ */

/* A batch of n events (Enter/Leave pairs of region 0) of roughly 2.5 * n
 * bytes. */
static bytes big_batch(uint32_t loc, uint64_t seq, uint64_t t, uint32_t n)
{
    weft_record *ev = calloc(n, sizeof *ev);
    bytes b;

    assert_non_null(ev);
    for (uint32_t i = 0; i < n; i++)
        ev[i] = enter(t + i, 0, i & 1);
    b = batch_frame(loc, seq, t, n, ev, n);
    free(ev);
    return b;
}

/* 1 if nothing arrives on fd within ms (the socket stays usable). */
static int quiet_for(int fd, long ms)
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
static bytes clock_sync_frame(uint64_t id)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__ClockSync cs = WEFT__CLOCK_SYNC__INIT;

    cs.id = id;
    cs.client_time = 12345;
    env.msg_case = WEFT__ENVELOPE__MSG_CLOCK_SYNC;
    env.clock_sync = &cs;
    return pack(&env);
}

/* A disk that stalls (the journal writer held): batches are not
 * acknowledged, but the loop goes on: ClockSync is answered and another
 * process joins. The process that hangs up and comes back while its
 * batch waits is asked to retry (HelloAck must say what is journaled);
 * once the disk moves, the batch is journaled and HelloAck says so. */
static void test_stalled_disk(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env = NULL;
    int a, b;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "stall", 0, 2);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    weft_jwriter_hold(&f->d, 1);
    send_bytes_free(a, work_batch(0, 1, 10));
    assert_true(quiet_for(a, 200)); /* no ack while the disk stalls */
    send_bytes_free(a, clock_sync_frame(7));
    env = cl_recv(a);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, 7);
    weft_frame_free_envelope(env);
    b = cl_connect(f);
    hello_ok(b, "stall", 1, 2);
    hang_up(a);
    a = cl_connect(f);
    send_bytes_free(a, hello_frame("stall", 0, 2, WEFT_PROTOCOL_VERSION));
    expect_error(a, WEFT_EEXIST, "rank 0 of trace 'stall': what its "
                 "previous connection sent is still being written to the "
                 "journal; try again");
    weft_jwriter_hold(&f->d, 0);
    for (int i = 0; i < 100; i++) { /* as libweft retries */
        a = cl_connect(f);
        send_bytes_free(a, hello_frame("stall", 0, 2,
                                       WEFT_PROTOCOL_VERSION));
        env = cl_recv(a);
        assert_non_null(env);
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK)
            break;
        weft_frame_free_envelope(env);
        env = NULL;
        close(a);
        sleep_ms(20);
    }
    assert_non_null(env);
    assert_int_equal(env->hello_ack->definitions_seq, 1);
    assert_int_equal(env->hello_ack->n_locations, 1);
    assert_int_equal(env->hello_ack->locations[0]->seq, 1);
    weft_frame_free_envelope(env);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    stop(f);
}

/* Milliseconds since t0 (CLOCK_MONOTONIC). */
static long ms_since(const struct timespec *t0)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (t.tv_sec - t0->tv_sec) * 1000 +
           (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Sends b (freed) and returns the first reply, which must come within
 * 100 ms; the caller frees it. */
static Weft__Envelope *answer_within_100ms(int fd, bytes b)
{
    struct timespec t0;
    Weft__Envelope *env;
    long ms;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    send_bytes_free(fd, b);
    env = cl_recv(fd);
    ms = ms_since(&t0);
    assert_non_null(env);
    if (ms >= 100)
        fail_msg("answered after %ld ms", ms);
    return env;
}

/* A ClockSync answered within 100 ms. */
static void clock_sync_within_100ms(int fd, uint64_t id)
{
    Weft__Envelope *env = answer_within_100ms(fd, clock_sync_frame(id));

    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, id);
    weft_frame_free_envelope(env);
}

/* A resend of batch 1 of thread 0, already written: acked within 100 ms. */
static void resend_acked_within_100ms(int fd)
{
    Weft__Envelope *env = answer_within_100ms(fd, work_batch(0, 1, 10));

    if (env->msg_case != WEFT__ENVELOPE__MSG_ACK)
        show_unexpected(env, "Ack");
    assert_int_equal(env->ack->seq, 1);
    weft_frame_free_envelope(env);
}

/* Trace directories in the spool whose key starts with name. */
static size_t trace_dirs(const fixture *f, const char *name)
{
    char pattern[300];
    glob_t g;
    size_t n;

    snprintf(pattern, sizeof pattern, "%s/traces/%s-*", f->d.cfg.spool,
             name);
    if (glob(pattern, 0, NULL, &g) != 0)
        return 0;
    n = g.gl_pathc;
    globfree(&g);
    return n;
}

/* The disk work of a Hello (a new trace's directory, the journal's open
 * and header) runs on the journal writer's open thread, never on the
 * loop. With the appends stalled, a new trace's Hello is answered within
 * 100 ms; with the opens stalled too, a new trace's Hello waits (its
 * directory is not made) and so do the frames sent behind it, while
 * another trace's ClockSync and the ack of its resent batch, and a
 * process coming back (no disk work), are answered within 100 ms. Once
 * the disk moves, the Hello completes and the frames behind it are
 * handled in order. A process that hangs up while its Hello waits can
 * come back. */
static void test_stalled_disk_hello(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env;
    bytes pipelined;
    int a, b, n, n1, q;

    start(f);
    a = cl_connect(f);
    hello_ok(a, "other", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    send_bytes_free(a, work_batch(0, 1, 10));
    expect_ack(a, 0, 0, 1);
    b = cl_connect(f);
    hello_ok(b, "back", 0, 1);
    hang_up(b);

    /* Appends stalled: a new trace still joins at once. */
    weft_jwriter_hold(&f->d, WEFT_JWRITER_APPENDS);
    n1 = cl_connect(f);
    env = answer_within_100ms(n1, hello_frame("fresh1", 0, 1,
                                              WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_int_equal(trace_dirs(f, "fresh1"), 1);
    clock_sync_within_100ms(a, 1);
    resend_acked_within_100ms(a);

    /* Opens stalled too: the new trace's Hello and what follows wait. */
    weft_jwriter_hold(&f->d, WEFT_JWRITER_APPENDS | WEFT_JWRITER_OPENS);
    q = cl_connect(f);
    send_bytes_free(q, hello_frame("gone", 0, 1, WEFT_PROTOCOL_VERSION));
    pipelined = hello_frame("fresh2", 0, 1, WEFT_PROTOCOL_VERSION);
    append_bytes(&pipelined, defs_frame(1));
    append_bytes(&pipelined, work_batch(0, 1, 10));
    append_bytes(&pipelined, clock_sync_frame(9));
    n = cl_connect(f);
    send_bytes_free(n, pipelined);
    clock_sync_within_100ms(a, 2);
    resend_acked_within_100ms(a);
    b = cl_connect(f);
    env = answer_within_100ms(b, hello_frame("back", 0, 1,
                                             WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_true(quiet_for(n, 200));
    assert_int_equal(trace_dirs(f, "fresh2"), 0);
    clock_sync_within_100ms(a, 3);
    close(q); /* while its Hello waits (weftd reads the EOF after it) */

    /* The disk moves: HelloAck, then the frames in the order sent. */
    weft_jwriter_hold(&f->d, 0);
    env = expect_hello_ack(n);
    assert_int_equal(env->hello_ack->definitions_seq, 0);
    assert_int_equal(env->hello_ack->n_locations, 0);
    weft_frame_free_envelope(env);
    env = cl_recv(n);
    assert_non_null(env);
    assert_int_equal(env->msg_case, WEFT__ENVELOPE__MSG_CLOCK_SYNC);
    assert_int_equal(env->clock_sync->id, 9);
    weft_frame_free_envelope(env);
    expect_ack(n, 1, 0, 1);
    expect_ack(n, 0, 0, 1);
    assert_int_equal(trace_dirs(f, "fresh2"), 1);

    /* The process that hung up comes back (asked to retry until weftd
     * has let go of its old connection). */
    env = NULL;
    for (int i = 0; i < 100; i++) {
        q = cl_connect(f);
        send_bytes_free(q, hello_frame("gone", 0, 1, WEFT_PROTOCOL_VERSION));
        env = cl_recv(q);
        assert_non_null(env);
        if (env->msg_case == WEFT__ENVELOPE__MSG_HELLO_ACK)
            break;
        weft_frame_free_envelope(env);
        env = NULL;
        close(q);
        sleep_ms(20);
    }
    assert_non_null(env);
    weft_frame_free_envelope(env);
    assert_int_equal(trace_dirs(f, "gone"), 1);
    for (int i = 0; i < 5; i++) {
        int fd = (int[]){ a, b, n, n1, q }[i];
        send_bytes_free(fd, goodbye_frame());
        expect_eof(fd);
        close(fd);
    }
    stop(f);
}

/* Stopping while a Hello waits for the disk, with frames behind it: the
 * journal is opened and written on the way out, the frames are left for
 * the client to resend, and nothing is left open. */
static void test_stop_while_hello_waits(void **state)
{
    fixture *f = *state;
    bytes pipelined;
    int fd;

    start(f);
    weft_jwriter_hold(&f->d, WEFT_JWRITER_OPENS);
    fd = cl_connect(f);
    pipelined = hello_frame("waits", 0, 1, WEFT_PROTOCOL_VERSION);
    append_bytes(&pipelined, defs_frame(1));
    append_bytes(&pipelined, work_batch(0, 1, 10));
    send_bytes_free(fd, pipelined);
    assert_true(quiet_for(fd, 100));
    stop(f);
    close(fd);
    assert_int_equal(trace_dirs(f, "waits"), 1);
}

/* The disk work of a Hello fails as it always did: a spool where the
 * trace directory cannot be made, a journal that cannot be opened (the
 * rank is not taken: it may join once the cause is gone). */
static void test_hello_disk_fails(void **state)
{
    fixture *f = *state;
    char path[600];
    glob_t g;
    FILE *fp;
    int a, b;

    start(f);
    fp = fopen(f->d.cfg.spool, "w"); /* the spool is a file */
    assert_non_null(fp);
    fclose(fp);
    a = cl_connect(f);
    send_bytes_free(a, hello_frame("nodir", 0, 1, WEFT_PROTOCOL_VERSION));
    expect_error(a, WEFT_EIO, "cannot create trace directory under");
    assert_int_equal(unlink(f->d.cfg.spool), 0);
    a = cl_connect(f);
    hello_ok(a, "nojournal", 0, 2);
    snprintf(path, sizeof path, "%s/traces/nojournal-*", f->d.cfg.spool);
    assert_int_equal(glob(path, 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 1);
    snprintf(path, sizeof path, "%s/rank-1.wj", g.gl_pathv[0]);
    globfree(&g);
    assert_int_equal(mkdir(path, 0700), 0);
    b = cl_connect(f);
    send_bytes_free(b, hello_frame("nojournal", 1, 2,
                                   WEFT_PROTOCOL_VERSION));
    expect_error(b, WEFT_EIO, "cannot open journal");
    assert_int_equal(rmdir(path), 0);
    b = cl_connect(f);
    hello_ok(b, "nojournal", 1, 2);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    stop(f);
}

/* The status file's writer, driven from the test thread through the
 * loop thread (weft_status_update and _stop are loop-thread calls). On
 * the heap and unreferenced: a test failing half-way leaves it to the
 * teardown without holding the loop. */
typedef struct status_ctl {
    uv_async_t async;
    weft_daemon *d;
    int quit;             /* __atomic: stop the writer, close the handle */
} status_ctl;

static void on_status_ctl(uv_async_t *a)
{
    status_ctl *ctl = a->data;

    if (__atomic_load_n(&ctl->quit, __ATOMIC_SEQ_CST)) {
        weft_status_stop(ctl->d);
        uv_close((uv_handle_t *)a, (uv_close_cb)free);
        return;
    }
    weft_status_update(ctl->d);
}

/* Starts d's status writer and the handle that drives it (before the
 * loop thread runs). */
static status_ctl *status_ctl_new(fixture *f)
{
    status_ctl *ctl = calloc(1, sizeof *ctl);

    assert_non_null(ctl);
    ctl->d = &f->d;
    assert_int_equal(uv_async_init(&f->loop, &ctl->async, on_status_ctl), 0);
    ctl->async.data = ctl;
    uv_unref((uv_handle_t *)&ctl->async);
    assert_int_equal(weft_status_start(&f->d), 0);
    return ctl;
}

/* Waits up to ms for path to exist (want 1) or not (want 0). */
static int wait_file(const char *path, int want, long ms)
{
    for (long waited = 0;; waited += 10) {
        if ((access(path, F_OK) == 0) == want)
            return 1;
        if (waited >= ms)
            return 0;
        sleep_ms(10);
    }
}

/* With the disk stalled for fsync and the status file (the syncer and
 * the status writer held), the loop still answers at once: a ClockSync
 * and a new process's Hello within 100 ms, while the batch waits for its
 * fdatasync and the status waits for its write. Released, the batch is
 * acked and the status file written; stopping removes it. */
static void test_stalled_disk_status(void **state)
{
    fixture *f = *state;
    Weft__Envelope *env;
    status_ctl *ctl;
    char path[300];
    int a, b;

    f->d.cfg.durability = WEFT_DURABLE_FSYNC;
    assert_int_equal(mkdir(f->d.cfg.spool, 0755), 0);
    snprintf(path, sizeof path, "%s/weftd.status", f->d.cfg.spool);
    ctl = status_ctl_new(f);
    start(f);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 1, 5000));
    a = cl_connect(f);
    hello_ok(a, "fsync-stall", 0, 2);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);  /* after its fdatasync */

    weft_worker_hold(f->d.syncer, 1);
    weft_status_hold(&f->d, 1);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    send_bytes_free(a, work_batch(0, 1, 10));
    assert_true(quiet_for(a, 200)); /* journaled, not synced: no ack */
    clock_sync_within_100ms(a, 9);
    b = cl_connect(f);
    env = answer_within_100ms(b, hello_frame("fsync-stall", 1, 2,
                                             WEFT_PROTOCOL_VERSION));
    if (env->msg_case != WEFT__ENVELOPE__MSG_HELLO_ACK)
        show_unexpected(env, "HelloAck");
    weft_frame_free_envelope(env);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 0, 200)); /* not written while held */

    weft_status_hold(&f->d, 0);
    assert_true(wait_file(path, 1, 5000));
    weft_worker_hold(f->d.syncer, 0);
    expect_ack(a, 0, 0, 1);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    __atomic_store_n(&ctl->quit, 1, __ATOMIC_SEQ_CST);
    assert_int_equal(uv_async_send(&ctl->async), 0);
    assert_true(wait_file(path, 0, 5000)); /* removed at the end */
    stop(f);
}

/* max_buffered: while one connection holds a partly received frame of
 * more than max_buffered bytes, another is not read (its Hello goes
 * unanswered); the first can still finish its frame (no deadlock), which
 * is journaled and acked, and then the second is served. */
static void test_max_buffered(void **state)
{
    fixture *f = *state;
    bytes big;
    size_t half;
    int a, b;

    f->d.cfg.max_frame = 1u << 20;
    f->d.cfg.max_buffered = 64u << 10;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "mb", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    big = big_batch(0, 1, 100, 40000);
    assert_true(big.n > (80u << 10));
    half = big.n / 2;
    cl_send(a, big.p, half); /* the whole frame is allocated: > 64k */
    sleep_ms(100);
    b = cl_connect(f);
    send_bytes_free(b, hello_frame("mb2", 0, 1, WEFT_PROTOCOL_VERSION));
    assert_true(quiet_for(b, 300)); /* paused: no HelloAck */
    cl_send(a, big.p + half, big.n - half);
    expect_ack(a, 0, 0, 1);
    weft_frame_free_envelope(expect_hello_ack(b)); /* resumed */
    send_bytes_free(b, goodbye_frame());
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    free(big.p);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_BUFFERED], 1);
    assert_int_equal(f->d.buffered, 0);
    assert_int_equal(f->d.npaused_buffered, 0);
}

/* Frames already read but not fed when a connection is paused (several
 * frames in one read) are kept and handled after it resumes: every
 * batch is acked, in order. */
static void test_max_buffered_pipelined(void **state)
{
    fixture *f = *state;
    bytes frames = { 0 }, big;
    size_t half;
    int a, b;

    f->d.cfg.max_frame = 1u << 20;
    f->d.cfg.max_buffered = 64u << 10;
    start(f);
    a = cl_connect(f);
    hello_ok(a, "mbp", 0, 1);
    send_bytes_free(a, defs_frame(1));
    expect_ack(a, 1, 0, 1);
    big = big_batch(0, 1, 0, 40000);
    half = big.n / 2;
    cl_send(a, big.p, half);
    sleep_ms(100);
    b = cl_connect(f);
    append_bytes(&frames, hello_frame("mbp2", 0, 1, WEFT_PROTOCOL_VERSION));
    append_bytes(&frames, defs_frame(1));
    for (uint64_t i = 1; i <= 20; i++)
        append_bytes(&frames, work_batch(0, i, i * 10));
    append_bytes(&frames, goodbye_frame());
    send_bytes_free(b, frames);
    assert_true(quiet_for(b, 300));
    cl_send(a, big.p + half, big.n - half);
    expect_ack(a, 0, 0, 1);
    weft_frame_free_envelope(expect_hello_ack(b));
    expect_ack(b, 1, 0, 1);
    for (uint64_t i = 1; i <= 20; i++)
        expect_ack(b, 0, 0, i);
    expect_eof(b);
    close(b);
    send_bytes_free(a, goodbye_frame());
    expect_eof(a);
    close(a);
    free(big.p);
    stop(f);
    assert_true(f->d.limit_hits[WEFT_LIMIT_MAX_BUFFERED] >= 1);
    assert_int_equal(f->d.buffered, 0);
}

/* idle_timeout: no Hello, or half a frame, for that long gets an Error
 * naming the limit; a member that is quiet between frames keeps its
 * connection, and may then take a while for its next frame. */
static void test_idle_timeout(void **state)
{
    fixture *f = *state;
    bytes batch;
    int silent, quiet, half;

    f->d.cfg.idle_timeout = 1;
    start(f);
    silent = cl_connect(f);
    quiet = cl_connect(f);
    hello_ok(quiet, "idle", 0, 2);
    send_bytes_free(quiet, defs_frame(1));
    expect_ack(quiet, 1, 0, 1);
    half = cl_connect(f);
    hello_ok(half, "idle", 1, 2);
    cl_send(half, "\0\0\0\x20\x0a", 5); /* 32-byte frame, 1 byte of it */
    expect_error(silent, WEFT_ELIMIT, "idle_timeout: no Hello within 1 s");
    expect_error(half, WEFT_ELIMIT, "idle_timeout: a frame was begun (1 of "
                 "32 bytes arrived)");
    sleep_ms(1500);
    /* Quiet longer than the timeout, then a frame in two parts: the
     * timeout counts from the frame's first byte, not the last frame. */
    batch = work_batch(0, 1, 0);
    cl_send(quiet, batch.p, 3);
    sleep_ms(400);
    cl_send(quiet, batch.p + 3, batch.n - 3);
    free(batch.p);
    expect_ack(quiet, 0, 0, 1);
    send_bytes_free(quiet, goodbye_frame());
    expect_eof(quiet);
    close(quiet);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_IDLE_TIMEOUT], 2);
}

/* A session that sends nothing for session_timeout is closed; one that
 * sends Heartbeats (libweft, every WEFT_HEARTBEAT_MS) is kept. */
static void test_session_timeout(void **state)
{
    fixture *f = *state;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Heartbeat hb = WEFT__HEARTBEAT__INIT;
    int silent, alive;

    f->d.cfg.session_timeout = 1;
    start(f);
    silent = cl_connect(f);
    hello_ok(silent, "quiet", 0, 2);
    alive = cl_connect(f);
    hello_ok(alive, "quiet", 1, 2);
    env.msg_case = WEFT__ENVELOPE__MSG_HEARTBEAT;
    env.heartbeat = &hb;
    for (int i = 0; i < 8; i++) {
        send_bytes_free(alive, pack(&env));
        sleep_ms(300);
    }
    expect_error(silent, WEFT_ELIMIT, "session_timeout: nothing received "
                 "for 1 s");
    send_bytes_free(alive, goodbye_frame());
    expect_eof(alive);
    close(alive);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_SESSION_TIMEOUT], 1);
}

/* SIGTERM: a connection between frames is closed at once; one in the
 * middle of a frame may finish it and gets its Ack before EOF; one that
 * never finishes its frame is closed after shutdown_timeout, and the
 * loop then ends by itself. */
static void test_drain(void **state)
{
    fixture *f = *state;
    bytes big;
    size_t half;
    int idle, mid, stuck;

    f->d.cfg.shutdown_timeout = 1;
    start(f);
    idle = cl_connect(f);
    hello_ok(idle, "drain", 0, 3);
    mid = cl_connect(f);
    hello_ok(mid, "drain", 1, 3);
    send_bytes_free(mid, defs_frame(1));
    expect_ack(mid, 1, 0, 1);
    big = big_batch(0, 1, 0, 1000);
    half = big.n / 2;
    cl_send(mid, big.p, half);
    stuck = cl_connect(f);
    hello_ok(stuck, "drain", 2, 3);
    cl_send(stuck, "\0\0\0\x20\x0a", 5);
    sleep_ms(100);
    assert_int_equal(uv_async_send(&f->drain), 0);
    expect_eof(idle);
    close(idle);
    cl_send(mid, big.p + half, big.n - half);
    expect_ack(mid, 0, 0, 1);
    expect_eof(mid);
    close(mid);
    expect_eof(stuck); /* after shutdown_timeout */
    close(stuck);
    free(big.p);
    assert_int_equal(pthread_join(f->thread, NULL), 0);
    f->running = 0;
    assert_null(f->d.conns);
    weft_trace_free_all(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

/* Refusals for limits checked behind the server (decoder, session,
 * trace) are counted under the limit's name, for weft status. */
static void test_limit_counters(void **state)
{
    fixture *f = *state;
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Definitions defs = WEFT__DEFINITIONS__INIT;
    char longer[100];
    weft_record d[1];
    bytes rec;
    int fd;

    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    d[0] = str(0, longer); /* max_string is 64 */
    rec = encode(d, 1, 0, 0);
    defs.seq = 1;
    defs.records.data = rec.p;
    defs.records.len = rec.n;
    env.msg_case = WEFT__ENVELOPE__MSG_DEFINITIONS;
    env.definitions = &defs;
    start(f);
    fd = cl_connect(f);
    hello_ok(fd, "counted", 0, 1);
    send_bytes_free(fd, pack(&env));
    free(rec.p);
    expect_error(fd, WEFT_ETOOBIG, "string of 99 bytes exceeds the limit");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("counted2", 0, 17, WEFT_PROTOCOL_VERSION));
    expect_error(fd, WEFT_ELIMIT, "max_members (16)");
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_STRING], 1);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_MEMBERS], 1);
    assert_string_equal(weft_limit_name(WEFT_LIMIT_MAX_BUFFERED),
                        "max_buffered");
}

/* Near the file descriptor limit a connection is refused with an Error
 * (the client retries) instead of failing later in accept or the
 * journal. */
static void test_fd_limit(void **state)
{
    fixture *f = *state;
    int fd;

    f->d.fd_limit = WEFT_FD_RESERVE + 4; /* below what the process uses */
    start(f);
    fd = cl_connect(f);
    expect_error(fd, WEFT_ELIMIT, "near its file descriptor limit");
    f->d.fd_limit = 0; /* unknown or unlimited: no check */
    fd = cl_connect(f);
    hello_ok(fd, "fds", 0, 1);
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_FD_LIMIT], 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid_session),
        T(test_max_buffered),
        T(test_max_buffered_pipelined),
        T(test_idle_timeout),
        T(test_session_timeout),
        T(test_drain),
        T(test_fd_limit),
        T(test_limit_counters),
        T(test_pipelined_and_split),
        T(test_resume),
        T(test_frame_too_big),
        T(test_frame_before_hello),
        T(test_garbage),
        T(test_before_hello),
        T(test_hello_refused),
        T(test_auth_refused),
        T(test_auth_after_hello),
        T(test_server_messages_from_client),
        T(test_bad_records),
        T(test_events_far_away),
        T(test_missing_batches),
        T(test_seq_zero),
        T(test_goodbye_locations),
        T(test_goodbye_ended),
        T(test_journal_write_fails),
        T(test_stalled_disk),
        T(test_stalled_disk_hello),
        T(test_stalled_disk_status),
        T(test_hello_disk_fails),
        T(test_stop_while_hello_waits),
        T(test_max_locations),
        T(test_rank_connected_twice),
        T(test_max_connections),
        T(test_max_connections_per_user),
        T(test_peer_vanishes),
        T(test_stop_with_clients),
        T(test_stop_with_unread_acks),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
