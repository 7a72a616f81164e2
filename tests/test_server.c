/* test_server.c - listeners, connections and the read path of weftd
 * (daemon/ingest/server.c, with session.c and trace.c behind it), over real TCP
 * sockets.
 *
 * Each test runs a weft_daemon on a private loop in a thread of its own
 * (server_util.c), listening on 127.0.0.1:0; the test itself is the
 * client, with blocking sockets and receive timeouts. A uv_async_t tells the loop to stop
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
 * accepted. A peer that vanishes with acks unread does not take the
 * daemon down (SIGPIPE), and stopping does not wait for a peer that
 * never reads. test_server_limits.c has the stalled disk and the global
 * limits; server_util.c runs the daemon and speaks for the client.
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
#include "server_util.h"
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
    expect_error(&b, WEFT_ETIME, "thread 0, batch 3: batch base time 19 is "
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
    expect_error(&fd, WEFT_ETOOBIG, "frame of 4097 bytes exceeds max_frame "
                 "(4096 bytes)");
    /* After a valid Hello too. */
    fd = cl_connect(f);
    hello_ok(fd, "big", 0, 1);
    cl_send(fd, "\xff\xff\xff\xff", 4);
    expect_error(&fd, WEFT_ETOOBIG, "frame of 4294967295 bytes");
    /* max_frame itself is allowed: this one is refused for its content. */
    assert_non_null(big);
    big[2] = MAX_FRAME >> 8;
    big[3] = MAX_FRAME & 0xff;
    memset(big + 4, 0xff, MAX_FRAME);
    fd = cl_connect(f);
    cl_send(fd, big, 4 + MAX_FRAME);
    expect_error(&fd, WEFT_EPROTO, "frame of 4096 bytes is not a weft "
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
    expect_error(&fd, WEFT_ETOOBIG, "frame of 65537 bytes before Hello (at "
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
    expect_error(&fd, WEFT_EPROTO, "frame of 12 bytes is not a weft protocol "
                 "message");
    fd = cl_connect(f);
    cl_send(fd, empty, sizeof empty);
    expect_error(&fd, WEFT_EPROTO, "frame of 0 bytes is not a weft");
    /* Someone speaking HTTP: "GET " is a length of 1.2 GB. */
    fd = cl_connect(f);
    cl_send(fd, http, sizeof http - 1);
    expect_error(&fd, WEFT_ETOOBIG, "exceeds max_frame");
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
    expect_error(&fd, WEFT_EPROTO, "Definitions before Hello");
    fd = cl_connect(f);
    send_bytes_free(fd, batch_frame(0, 1, 0, 1, &ev, 1));
    expect_error(&fd, WEFT_EPROTO, "EventBatch before Hello");
    fd = cl_connect(f);
    send_bytes_free(fd, goodbye_frame());
    expect_error(&fd, WEFT_EPROTO, "Goodbye before Hello");
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
    expect_error(&fd, WEFT_EPROTO, "second Hello on one connection");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 0, 1, 99));
    expect_error(&fd, WEFT_EVERSION, "protocol version 99 is not supported");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 2, 2, WEFT_PROTOCOL_VERSION));
    expect_error(&fd, WEFT_EINVAL, "rank 2 is not below the trace size 2");
    fd = cl_connect(f);
    send_bytes_free(fd, hello_frame("v", 0, 17, WEFT_PROTOCOL_VERSION));
    expect_error(&fd, WEFT_ELIMIT, "max_members (16)");
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
    expect_error(&fd, WEFT_EAUTH, "Hello without a MUNGE credential");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("", WEFT_PROTOCOL_VERSION));
    expect_error(&fd, WEFT_EAUTH, "MUNGE credential of 0 bytes");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("MUNGE:x:", 99));
    expect_error(&fd, WEFT_EVERSION, "protocol version 99 is not supported");
    fd = cl_connect(f);
    send_bytes_free(fd, auth_frame("MUNGE:x:", WEFT_PROTOCOL_VERSION));
    expect_error(&fd, WEFT_EAUTH, "MUNGE credential refused");
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
    expect_error(&fd, WEFT_EPROTO, "Auth after Hello");
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
    expect_error(&fd, WEFT_EPROTO, "unexpected Ack from a client");
    fd = cl_connect(f);
    hello_ok(fd, "odd2", 0, 1);
    env.msg_case = WEFT__ENVELOPE__MSG_ERROR;
    env.error = &e;
    e.message = (char *)"boo";
    send_bytes_free(fd, pack(&env));
    expect_error(&fd, WEFT_EPROTO, "unexpected Error from a client");
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
    expect_error(&fd, WEFT_EREF, "thread 0, batch 1: Enter.region: REGION 5 "
                 "is not defined");

    fd = cl_connect(f);
    hello_ok(fd, "bad2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, batch_frame(0, 1, 0, 3, ev, 2));
    expect_error(&fd, WEFT_EPROTO, "announces 3 events but holds 2");

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
    expect_error(&fd, WEFT_ETYPE, "bad definition: ClockProperties "
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
    expect_error(&fd, WEFT_ETIME, "is 31708800 s after the process's start "
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
    expect_error(&fd, WEFT_EPROTO, "Definitions seq 2 after 0: a batch is "
                 "missing");
    fd = cl_connect(f);
    hello_ok(fd, "gap2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(1, 1, 0));
    expect_ack(fd, 0, 1, 1);
    send_bytes_free(fd, work_batch(1, 3, 10));
    expect_error(&fd, WEFT_EPROTO, "thread 1: EventBatch seq 3 after 1: a "
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
    expect_error(&fd, WEFT_EPROTO, "Definitions seq 0: sequence numbers "
                 "start at 1");
    fd = cl_connect(f);
    hello_ok(fd, "zero2", 0, 1);
    send_bytes_free(fd, defs_frame(1));
    expect_ack(fd, 1, 0, 1);
    send_bytes_free(fd, work_batch(1, 0, 0));
    expect_error(&fd, WEFT_EPROTO, "thread 1: EventBatch seq 0");
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
    expect_error(&fd, WEFT_EINVAL, "Goodbye: thread 2 is named twice");
    goodbye_dropped = UINT64_MAX;
    fd = cl_connect(f);
    hello_ok(fd, "bye1", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(ok, 2));
    expect_error(&fd, WEFT_EINVAL, "Goodbye: thread 0 reports 0 events and "
                 "18446744073709551615 dropped: more than 281474976710656 "
                 "cannot be");
    goodbye_dropped = 1;
    /* A process tree's member names at most WEFT_MAX_CHILDREN children. */
    fd = cl_connect(f);
    hello_ok(fd, "bye3", 0, 1);
    {
        Weft__Envelope env = WEFT__ENVELOPE__INIT;
        Weft__Goodbye g = WEFT__GOODBYE__INIT;
        static uint32_t kids[WEFT_MAX_CHILDREN + 1];
        g.children = kids;
        g.n_children = WEFT_MAX_CHILDREN + 1;
        env.msg_case = WEFT__ENVELOPE__MSG_GOODBYE;
        env.goodbye = &g;
        send_bytes_free(fd, pack(&env));
    }
    expect_error(&fd, WEFT_EINVAL, "Goodbye: 1025 child processes named, at "
                 "most 1024 are allowed");
    /* Every thread a Goodbye names becomes a location of the archive, so
     * max_locations holds there too. */
    fd = cl_connect(f);
    hello_ok(fd, "bye", 0, 1);
    send_bytes_free(fd, goodbye_threads_frame(over, 2));
    expect_error(&fd, WEFT_ELIMIT, "Goodbye: thread 4 exceeds max_locations "
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
    expect_error(&fd, WEFT_EINVAL, "Goodbye: 'ended' is 257 bytes long, at "
                 "most 256 are allowed");
    fd = cl_connect(f);
    hello_ok(fd, "ended-ctl", 0, 1);
    send_bytes_free(fd, goodbye_ended_frame("signal 11\n(SIGSEGV)"));
    expect_error(&fd, WEFT_EINVAL, "Goodbye: 'ended' has a control character "
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
    expect_error(&fd, WEFT_ELIMIT, "thread 4 exceeds max_locations (4)");
    fd = cl_connect(f);
    hello_ok(fd, "locs2", 0, 1);
    send_bytes_free(fd, work_batch(UINT32_MAX, 1, 0));
    expect_error(&fd, WEFT_ELIMIT, "thread 4294967295 exceeds max_locations");
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
    expect_error(&b, WEFT_EEXIST, "rank 0 of trace 'dup' is already "
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
    expect_error(&b, WEFT_EEXIST, "has already finished");
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
    expect_error(&c, WEFT_ELIMIT, "too many connections: max_connections is "
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
    expect_error(&c, WEFT_ELIMIT, "uid 1000 has 2 connections already: "
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
    assert_int_equal(f->d.srv->users.n, 0);
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
    assert_null(f->d.srv->conns);
    weft_trace_free_all(&f->d);
    f->closed = 1;
    assert_int_equal(uv_loop_close(&f->loop), 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_valid_session),
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
