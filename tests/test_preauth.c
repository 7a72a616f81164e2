/* test_preauth.c - connections whose user is not known yet
 * (daemon/ingest/preauth.c, through server.c), over real TCP sockets
 * (server_util.c runs the daemon; with auth = none a connection's user
 * is known at its Hello).
 *
 * preauth_timeout counts from accept and a peer that drips bytes does
 * not renew it; at max_preauth_per_address and max_preauth_connections
 * the oldest such connection is closed and the newcomer served; past
 * max_preauth_buffered the oldest holder of a partial frame is closed;
 * their frames never stall a session at max_buffered; with auth = munge
 * a frame above max_preauth_frame is refused before any of it is read;
 * members per user are bounded (max_members_per_user); refusal lines
 * are rate-limited (weft_ratelimit_allow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "frame.h"
#include "log.h"
#include "peeruid.h"
#include "preauth.h"
#include "server.h"
#include "server_util.h"
#include "trace.h"
#include "weft_errors.h"

/* The first 4 + n bytes of a frame announcing len payload bytes. */
static void send_partial(int fd, uint32_t len, size_t n)
{
    uint8_t *p = calloc(1, 4 + n);

    assert_non_null(p);
    p[0] = (uint8_t)(len >> 24);
    p[1] = (uint8_t)(len >> 16);
    p[2] = (uint8_t)(len >> 8);
    p[3] = (uint8_t)len;
    memset(p + 4, 0x0a, n);
    cl_send(fd, p, 4 + n);
    free(p);
}

static void goodbye(int fd)
{
    send_bytes_free(fd, goodbye_frame());
    expect_eof(fd);
    close(fd);
}

/* From accept, whatever the peer sends: a silent connection and one
 * that sends a byte of a frame every 200 ms both go after 1 s; one that
 * said Hello stays. */
static void test_preauth_timeout(void **state)
{
    fixture *f = *state;
    int silent, drip, ok;

    f->d.cfg.preauth_timeout = 1;
    f->d.cfg.idle_timeout = 60;
    start(f);
    silent = cl_connect(f);
    drip = cl_connect(f);
    ok = cl_connect(f);
    hello_ok(ok, "pt", 0, 1);
    send_partial(drip, 100, 0);
    for (int i = 0; i < 4; i++) {
        sleep_ms(200);
        cl_send(drip, "\x0a", 1);
    }
    expect_error(&drip, WEFT_ELIMIT, "preauth_timeout: not authenticated "
                 "within 1 s");
    expect_error(&silent, WEFT_ELIMIT, "preauth_timeout");
    assert_true(quiet_for(ok, 300));
    goodbye(ok);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_PREAUTH_TIMEOUT], 2);
}

/* Beyond max_preauth_per_address the oldest of that address is closed,
 * and the newcomer can say Hello; one that said Hello no longer counts. */
static void test_preauth_per_address(void **state)
{
    fixture *f = *state;
    int a, b, c, s;

    f->d.cfg.max_preauth_per_address = 2;
    start(f);
    s = cl_connect(f);
    hello_ok(s, "pa", 0, 1); /* known: not counted */
    a = cl_connect(f);
    sleep_ms(50);
    b = cl_connect(f);
    sleep_ms(50);
    c = cl_connect(f);
    /* from this host: counted for the uid at the other end (peeruid.h) */
    expect_error(&a, WEFT_ELIMIT, "to make room for a newer connection "
                 "(local uid ");
    hello_ok(c, "pa2", 0, 1);
    assert_true(quiet_for(b, 200));
    close(b);
    goodbye(c);
    goodbye(s);
    stop(f);
    assert_int_equal(
        f->d.limit_hits[WEFT_LIMIT_MAX_PREAUTH_PER_ADDRESS], 1);
}

static void test_preauth_connections(void **state)
{
    fixture *f = *state;
    int a, b, c;

    f->d.cfg.max_preauth_connections = 2;
    start(f);
    a = cl_connect(f);
    sleep_ms(50);
    b = cl_connect(f);
    sleep_ms(50);
    c = cl_connect(f);
    expect_error(&a, WEFT_ELIMIT, "max_preauth_connections is 2");
    hello_ok(c, "pc", 0, 1);
    hello_ok(b, "pc2", 0, 1);
    goodbye(b);
    goodbye(c);
    stop(f);
    assert_int_equal(
        f->d.limit_hits[WEFT_LIMIT_MAX_PREAUTH_CONNECTIONS], 1);
}

/* Past max_preauth_buffered the oldest holder of a partial frame goes;
 * the bytes held never count in max_buffered: a session goes on while
 * they are more than max_buffered. */
static void test_preauth_buffered(void **state)
{
    fixture *f = *state;
    enum { N = 24, PART = 4000 };
    int holders[N], s;

    f->d.cfg.max_buffered = 64u << 10;
    f->d.cfg.max_frame = 1u << 20; /* 64k until Hello */
    start(f);
    s = cl_connect(f);
    hello_ok(s, "pb", 0, 1);
    for (int i = 0; i < N; i++) { /* 96 000 bytes held, > max_buffered */
        holders[i] = cl_connect(f);
        send_partial(holders[i], 60000, PART);
    }
    sleep_ms(200);
    send_bytes_free(s, defs_frame(1));
    expect_ack(s, 1, 0, 1); /* not paused */
    for (int i = 0; i < N; i++)
        close(holders[i]);
    goodbye(s);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_BUFFERED], 0);
}

static void test_preauth_buffered_bound(void **state)
{
    fixture *f = *state;
    int a, b;

    f->d.cfg.max_preauth_buffered = 4096;
    start(f);
    a = cl_connect(f);
    send_partial(a, 3000, 2500);
    sleep_ms(100);
    b = cl_connect(f);
    send_partial(b, 3000, 2500);
    expect_error(&a, WEFT_ELIMIT, "max_preauth_buffered is 4096");
    assert_true(quiet_for(b, 200));
    close(b);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_PREAUTH_BUFFERED], 1);
}

/* With auth = munge, a frame before authentication may be at most
 * max_preauth_frame: refused at its header. */
static void test_preauth_frame(void **state)
{
    fixture *f = *state;
    int a;

    f->d.cfg.auth = WEFT_AUTH_MUNGE;
    f->d.cfg.max_preauth_frame = 2048;
    start(f);
    a = cl_connect(f);
    send_partial(a, 65536, 1);
    expect_error(&a, WEFT_ETOOBIG, "frame of 65536 bytes before "
                 "authentication: max_preauth_frame is 2048");
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_PREAUTH_FRAME], 1);
}

/* max_members_per_user counts the members of all the user's recording
 * traces; another user is not concerned. */
static void test_members_per_user(void **state)
{
    fixture *f = *state;
    int a, b, c, o;

    f->d.cfg.max_members_per_user = 2;
    start(f);
    hello_uid = 1000;
    a = cl_connect(f);
    hello_ok(a, "m1", 0, 4);
    b = cl_connect(f);
    hello_ok(b, "m2", 0, 4);
    hang_up(b); /* it still counts: its trace records */
    c = cl_connect(f);
    send_bytes_free(c, hello_frame("m1", 1, 4, WEFT_PROTOCOL_VERSION));
    expect_error(&c, WEFT_ELIMIT, "uid 1000 has 2 processes in traces "
                 "recording already: max_members_per_user is 2");
    hello_uid = 1001;
    o = cl_connect(f);
    hello_ok(o, "m1", 0, 1);
    goodbye(o);
    hello_uid = 0;
    close(a);
    stop(f);
    assert_int_equal(f->d.limit_hits[WEFT_LIMIT_MAX_MEMBERS_PER_USER], 1);
}

/* The uid at the other end of a TCP connection from this host is the
 * socket owner's; a peer not on this host is not found. */
static void test_peeruid(void **state)
{
    struct sockaddr_in sin = { .sin_family = AF_INET }, far;
    struct sockaddr_storage peer, local;
    socklen_t len = sizeof sin, plen = sizeof peer, llen = sizeof local;
    int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);
    int a;
    uint32_t uid = 12345;

    (void)state;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof sin), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &len), 0);
    assert_int_equal(connect(c, (struct sockaddr *)&sin, sizeof sin), 0);
    a = accept(l, NULL, NULL);
    assert_true(a >= 0);
    assert_int_equal(getpeername(a, (struct sockaddr *)&peer, &plen), 0);
    assert_int_equal(getsockname(a, (struct sockaddr *)&local, &llen), 0);
    assert_int_equal(weft_peeruid_lookup((struct sockaddr *)&peer,
                                         (struct sockaddr *)&local, &uid), 0);
    assert_int_equal(uid, getuid());
    far = *(struct sockaddr_in *)&peer;
    far.sin_port = htons(1); /* no such socket here */
    assert_int_equal(weft_peeruid_lookup((struct sockaddr *)&far,
                                         (struct sockaddr *)&local, &uid),
                     WEFT_ENOTFOUND);
    close(a);
    close(c);
    close(l);
}

/* At most per_s lines a second; the next one let through says how many
 * were held back. */
static void test_ratelimit(void **state)
{
    weft_ratelimit rl = { 0 };
    uint64_t held = 99;
    int n = 0;

    (void)state;
    for (int i = 0; i < 50; i++)
        n += weft_ratelimit_allow(&rl, 5000 + (uint64_t)i, 10, &held);
    assert_int_equal(n, 10);
    assert_int_equal(rl.suppressed, 40);
    assert_true(weft_ratelimit_allow(&rl, 6000, 10, &held));
    assert_int_equal(held, 40);
    assert_true(weft_ratelimit_allow(&rl, 6001, 10, &held));
    assert_int_equal(held, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_preauth_timeout),
        T(test_preauth_per_address),
        T(test_preauth_connections),
        T(test_preauth_buffered),
        T(test_preauth_buffered_bound),
        T(test_preauth_frame),
        T(test_members_per_user),
        cmocka_unit_test(test_ratelimit),
        cmocka_unit_test(test_peeruid),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
