/* test_clocksync.c - a node's session for its parts' members (issue #34):
 * where a node sends a Hello (session.c: back to its part's member here;
 * a process that resumes and has none goes to the head, as does a new
 * one when the node cannot start a part), and the ClockSync of a part's
 * member before the node knows its head's clock (clocksync.c: it waits,
 * and is answered on the head's clock once the node knows it, never on
 * the node's own). The cluster's side is played here by callbacks
 * (partlink.h, the forward of session.h); the real one is
 * tests/e2e_cluster_parts.sh's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clocksync.h"
#include "frame.h"
#include "partlink.h"
#include "server_util.h"
#include "session.h"
#include "weft_errors.h"

#define HEAD_OFFSET_NS 7000000000ll /* the head's clock, 7 s ahead */

static atomic_int takes_now;   /* the node could start a part */
static atomic_int clock_known; /* the node knows its head's clock */

static int fake_takes(weft_daemon *d, const Weft__Hello *h)
{
    (void)d;
    (void)h;
    return atomic_load(&takes_now);
}

static int fake_head_clock(weft_daemon *d, int64_t *offset)
{
    (void)d;
    if (!atomic_load(&clock_known))
        return WEFT_ESTATE;
    *offset = HEAD_OFFSET_NS;
    return 0;
}

static int fake_joined(weft_memberin *in, const uint8_t *hello, size_t len)
{
    (void)in;
    (void)hello;
    (void)len;
    return 0;
}

static void fake_journaled(weft_memberin *in, const weft_journal_entry *e)
{
    (void)in;
    (void)e;
}

static void fake_finished(weft_memberin *in, uint8_t *sums, size_t len,
                          const char *why)
{
    (void)in;
    (void)len;
    (void)why;
    free(sums);
}

static void fake_ended(weft_memberin *in, int gone)
{
    (void)in;
    (void)gone;
}

static void fake_freed(weft_memberin *in)
{
    (void)in;
}

static void fake_released(void *link, int ended)
{
    (void)link;
    (void)ended;
}

static const weft_part_cbs parts = { fake_takes, fake_head_clock,
                                     fake_joined, fake_journaled,
                                     fake_finished, fake_ended, fake_freed,
                                     fake_released };

/* The head: here, an Error that says the process went there. */
static int fake_forward_hello(weft_conn *c, const Weft__Hello *h,
                              uint32_t uid)
{
    (void)uid;
    weft_conn_fail(c, WEFT_EINVAL, "test: rank %u forwarded", h->rank);
    return WEFT_EINVAL;
}

static int fake_forward_query(weft_conn *c, const Weft__Query *q)
{
    (void)q;
    weft_conn_fail(c, WEFT_EINVAL, "test: no query");
    return WEFT_EINVAL;
}

static int fake_forward_frame(weft_conn *c, const Weft__Envelope *env,
                              enum weft_conn_event ev)
{
    (void)env;
    (void)ev;
    weft_conn_fail(c, WEFT_EINVAL, "test: no frame");
    return WEFT_EINVAL;
}

static void fake_forward_closed(weft_conn *c)
{
    (void)c;
}

static const weft_session_forward forward = { fake_forward_hello,
                                              fake_forward_query,
                                              fake_forward_frame,
                                              fake_forward_closed };

/* What the link does when it measured the head's clock (uplink.c), on
 * the loop thread. */
static uv_async_t learnt;

static void on_learnt(uv_async_t *a)
{
    fixture *f = a->data;

    weft_clocksync_head_known(&f->d);
    uv_close((uv_handle_t *)a, NULL);
}

static int node_setup(void **state)
{
    fixture *f;

    setup(state);
    f = *state;
    f->d.forward_cbs = &forward;
    f->d.part_cbs = &parts;
    atomic_store(&takes_now, 1);
    atomic_store(&clock_known, 0);
    assert_int_equal(uv_async_init(&f->loop, &learnt, on_learnt), 0);
    uv_unref((uv_handle_t *)&learnt); /* a test failing half-way: no hang */
    learnt.data = f;
    start(f);
    return 0;
}

static bytes node_hello(uint32_t rank, int resumes)
{
    Weft__Envelope env = WEFT__ENVELOPE__INIT;
    Weft__Hello h = WEFT__HELLO__INIT;

    h.protocol_version = WEFT_PROTOCOL_VERSION;
    h.trace = (char *)"pj";
    h.run = (char *)"launch-1";
    h.rank = rank;
    h.size = 4;
    h.hostname = (char *)"node-a";
    h.pid = 100 + rank;
    h.timer_resolution = 1000000000;
    h.realtime_ns = 1700000000000000000ull;
    h.resumes = resumes;
    env.msg_case = WEFT__ENVELOPE__MSG_HELLO;
    env.hello = &h;
    return pack(&env);
}

/* A connection whose Hello of rank (resumes) is answered: a HelloAck. */
static int joins(const fixture *f, uint32_t rank, int resumes)
{
    int fd = cl_connect(f);

    send_bytes_free(fd, node_hello(rank, resumes));
    weft_frame_free_envelope(expect_hello_ack(fd));
    return fd;
}

/* The Hello of rank (resumes) goes to the head. */
static void forwarded(const fixture *f, uint32_t rank, int resumes)
{
    char want[64];
    int fd = cl_connect(f);

    send_bytes_free(fd, node_hello(rank, resumes));
    snprintf(want, sizeof want, "test: rank %u forwarded", rank);
    expect_error(&fd, WEFT_EINVAL, want);
}

/* The answer to ClockSync id on fd: on the head's clock. */
static void answered_on_head_clock(int fd, uint64_t id)
{
    Weft__Envelope *env = cl_recv(fd);
    int64_t ahead;

    assert_non_null(env);
    if (env->msg_case != WEFT__ENVELOPE__MSG_CLOCK_SYNC)
        show_unexpected(env, "ClockSync");
    assert_int_equal(env->clock_sync->id, id);
    assert_int_equal(env->clock_sync->client_time, 12345);
    ahead = (int64_t)(env->clock_sync->server_time - weft_clocksync_now());
    if (ahead < HEAD_OFFSET_NS - 2000000000ll || ahead > HEAD_OFFSET_NS)
        fail_msg("answered %+lld ns from this clock, not the head's %+lld",
                 (long long)ahead, (long long)HEAD_OFFSET_NS);
    weft_frame_free_envelope(env);
}

/* A part's member asks the clock before the node knows its head's: no
 * answer (the node's own clock would be wrong), a second request
 * replacing the first, until the node learns it; then the newest is
 * answered on the head's clock, and later ones at once. */
static void test_waits_for_head_clock(void **state)
{
    fixture *f = *state;
    int fd = joins(f, 0, 0);

    send_bytes_free(fd, clock_sync_frame(1));
    assert_true(quiet_for(fd, 200));
    send_bytes_free(fd, clock_sync_frame(2));
    assert_true(quiet_for(fd, 200));
    atomic_store(&clock_known, 1);
    assert_int_equal(uv_async_send(&learnt), 0);
    answered_on_head_clock(fd, 2);
    assert_true(quiet_for(fd, 100)); /* 1 was replaced: never answered */
    send_bytes_free(fd, clock_sync_frame(3));
    answered_on_head_clock(fd, 3);
    hang_up(fd);
    stop(f);
}

/* Where a Hello goes: rank 0 joined the part here; back (it resumes)
 * it rejoins it, also when the node could not start a part now (its
 * link is not up again after a restart). Rank 1, new, goes to the head
 * then; resuming and not a member here, it goes to the head even when
 * the node could start a part (its frames are at the head); new, once
 * the node can, it joins the part. */
static void test_where_hello_goes(void **state)
{
    fixture *f = *state;
    int fd = joins(f, 0, 0);

    hang_up(fd);
    atomic_store(&takes_now, 0);
    hang_up(joins(f, 0, 1));
    forwarded(f, 1, 0);
    forwarded(f, 1, 1);
    atomic_store(&takes_now, 1);
    forwarded(f, 1, 1);
    hang_up(joins(f, 1, 0));
    hang_up(joins(f, 1, 1));
    uv_async_send(&learnt); /* closes it */
    stop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_waits_for_head_clock,
                                        node_setup, teardown),
        cmocka_unit_test_setup_teardown(test_where_hello_goes, node_setup,
                                        teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
