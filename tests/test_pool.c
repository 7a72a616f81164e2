/* test_pool.c - libweft's threads, buffer pool and gaps (client/pool.c)
 * without a weftd: the test plays the sender, taking batches off the send
 * queue and "acknowledging" them by returning their buffers. Covers the
 * pool's size (never below the live threads + 1), a gap when the pool is
 * exhausted with WEFT_OVERFLOW=discard, a stall (no progress for
 * WEFT_STALL_MS) under the default wait, tracing off (DISCARD), and the
 * accounting of each: records dropped per location and type, batches'
 * event counts, and the MeasurementOnOff marks that open the first buffer
 * after a gap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "client_session.h"
#include "codec.h"
#include "weft.h"
#include "weft_errors.h"

static const char *no_env(const char *name, void *arg)
{
    (void)name;
    (void)arg;
    return NULL;
}

/* An ACTIVE session with smallest buffers and no sender, no socket. */
static void session_setup(uint32_t pool, int discard, uint32_t stall_ms)
{
    static const weft__proc proc = { "test_pool", "node", 1, 1 };
    weft__config c;

    assert_int_equal(weft__config_parse(no_env, NULL, &proc, &c), 0);
    c.buffer_size = WEFT__MIN_BUFFER;
    c.pool_size = pool;
    c.overflow_discard = discard;
    c.stall_ms = stall_ms;
    pthread_mutex_lock(&weft__S.mu);
    weft__S.cfg = c;
    weft__bufs_free_locked();
    weft__S.stalled = weft__S.stall_warned = 0;
    weft__S.progress_ms = weft__now_ms();
    atomic_store(&weft__S.state, WEFT__ST_ACTIVE);
    weft__raise_attention_locked();
    pthread_mutex_unlock(&weft__S.mu);
}

static size_t queued(void)
{
    size_t n = 0;

    pthread_mutex_lock(&weft__S.mu);
    for (weft__buf *b = weft__S.q_head; b; b = b->next)
        n++;
    pthread_mutex_unlock(&weft__S.mu);
    return n;
}

/* Plays weftd's Ack for the oldest queued batch. */
static void ack_one(void)
{
    weft__buf *b;

    pthread_mutex_lock(&weft__S.mu);
    b = weft__S.q_head;
    assert_non_null(b);
    weft__S.q_head = b->next;
    if (!weft__S.q_head)
        weft__S.q_tail = NULL;
    weft__buf_free_locked(b);
    pthread_mutex_unlock(&weft__S.mu);
}

static uint64_t queued_events(uint32_t location)
{
    uint64_t n = 0;

    pthread_mutex_lock(&weft__S.mu);
    for (weft__buf *b = weft__S.q_head; b; b = b->next)
        if (b->location == location)
            n += b->events;
    pthread_mutex_unlock(&weft__S.mu);
    return n;
}

static uint64_t dropped(uint32_t location, uint32_t type)
{
    uint64_t n = 0;

    assert_int_equal(weft_dropped(location, type, &n), 0);
    return n;
}

/* Runs fn on a new thread (a new location) and joins it. */
static void on_thread(void *(*fn)(void *), void *arg)
{
    pthread_t th;

    assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
}

/* Checks that t's current buffer opens with the marks of a gap from
 * `off` to `on`, followed by an Enter at `next`. */
static void check_gap_marks(const weft__thread *t, uint64_t off, uint64_t on,
                            uint64_t next)
{
    weft_decoder dec;
    weft_record r;

    assert_non_null(t->cur);
    weft_decoder_init(&dec, t->cur->data, (size_t)(t->p - t->cur->data), 1,
                      t->cur->base_time);
    assert_int_equal(weft_decoder_next(&dec, &r), 1);
    assert_int_equal(r.type, WEFT_REC_MeasurementOnOff);
    assert_int_equal(r.time, off);
    assert_int_equal(r.u.MeasurementOnOff.measurementMode,
                     OTF2_MEASUREMENT_OFF);
    assert_int_equal(weft_decoder_next(&dec, &r), 1);
    assert_int_equal(r.type, WEFT_REC_MeasurementOnOff);
    assert_int_equal(r.time, on);
    assert_int_equal(r.u.MeasurementOnOff.measurementMode,
                     OTF2_MEASUREMENT_ON);
    assert_int_equal(weft_decoder_next(&dec, &r), 1);
    assert_int_equal(r.type, WEFT_REC_Enter);
    assert_int_equal(r.time, next);
    assert_int_equal(weft_decoder_next(&dec, &r), 0);
    weft_decoder_free(&dec);
}

/* WEFT_OVERFLOW=discard with a pool of 2: the third buffer is a gap; its
 * records are counted as dropped by type, and the next buffer (after an
 * Ack) opens with the gap's marks. */
static void *discard_gap(void *arg)
{
    uint64_t time = 1000, gap_start = 0, in_batches;
    uint32_t loc = weft_location_index();
    weft__thread *t = weft__tls;
    int ndrop = 0;

    (void)arg;
    while (!t->in_gap) {
        assert_int_equal(weft_evt_Enter(NULL, ++time, 1), 0);
        assert_true(weft__S.nbufs <= 2);
    }
    gap_start = time;
    ndrop = 1;
    assert_int_equal(queued(), 2);
    assert_int_equal(weft__S.gaps, 1);
    for (int i = 0; i < 10; i++, ndrop++) {
        assert_int_equal(weft_evt_Leave(NULL, ++time, 1), 0);
    }
    /* Records in the gap are counted when the slow path next runs. */
    in_batches = queued_events(loc);
    assert_int_equal(t->recorded, in_batches);
    ack_one();
    assert_int_equal(atomic_load(&t->attention), 1);
    assert_int_equal(weft_evt_Enter(NULL, time + 5, 1), 0);
    assert_false(t->in_gap);
    assert_int_equal(weft__S.gaps, 0);
    assert_int_equal(dropped(loc, WEFT_TYPE_ANY), (uint64_t)ndrop);
    assert_int_equal(dropped(loc, WEFT_REC_Enter), 1);
    assert_int_equal(dropped(loc, WEFT_REC_Leave), 10);
    assert_int_equal(dropped(loc, WEFT_REC_MpiSend), 0);
    check_gap_marks(t, gap_start, time, time + 5);
    assert_int_equal(t->nevents, 3);
    assert_int_equal(weft__S.nbufs, 2);
    return NULL;
}

static void test_discard_gap(void **state)
{
    (void)state;
    session_setup(2, 1, 30000);
    on_thread(discard_gap, NULL);
}

/* Threads that each hold a buffer while blocked get one each, even past
 * WEFT_POOL_SIZE: the pool never has fewer than the live threads + 1. */
static pthread_barrier_t hold_barrier;

static void *hold_one(void *arg)
{
    (void)arg;
    assert_int_equal(weft_evt_Enter(NULL, 10, 1), 0);
    pthread_barrier_wait(&hold_barrier);
    pthread_barrier_wait(&hold_barrier);
    return NULL;
}

static void test_pool_floor(void **state)
{
    pthread_t th[3];

    (void)state;
    session_setup(2, 1, 30000);
    pthread_barrier_init(&hold_barrier, NULL, 4);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hold_one, NULL), 0);
    pthread_barrier_wait(&hold_barrier);
    assert_int_equal(weft__S.nbufs, 3);
    assert_int_equal(weft__S.gaps, 0);
    pthread_barrier_wait(&hold_barrier);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&hold_barrier);
    /* Each thread's buffer went to the send queue when it ended. */
    assert_int_equal(queued(), 3);
}

/* The default (wait) with weftd making no progress: the thread waits
 * WEFT_STALL_MS for a buffer, then gives up into a gap (stalled, one
 * warning); progress ends the stall. */
static void *stall_gap(void *arg)
{
    uint64_t time = 1, t0 = 0;
    uint32_t loc = weft_location_index();
    weft__thread *t = weft__tls;

    (void)arg;
    while (!t->in_gap) {
        if (queued() == 2 && !t0)
            t0 = weft__now_ms();
        assert_int_equal(weft_evt_Enter(NULL, ++time, 1), 0);
    }
    assert_true(weft__now_ms() - t0 >= 50);
    assert_true(weft__S.stalled);
    assert_true(weft__S.stall_warned);
    pthread_mutex_lock(&weft__S.mu);
    weft__progress_locked();
    pthread_mutex_unlock(&weft__S.mu);
    assert_false(weft__S.stalled);
    ack_one();
    assert_int_equal(weft_evt_Enter(NULL, ++time, 1), 0);
    assert_false(t->in_gap);
    assert_int_equal(dropped(loc, WEFT_TYPE_ANY), 1);
    return NULL;
}

static void test_stall_gap(void **state)
{
    (void)state;
    session_setup(2, 0, 50);
    on_thread(stall_gap, NULL);
}

/* Tracing off (DISCARD) is one long gap: nothing is queued, everything is
 * counted, and recording again starts with the marks. */
static void *tracing_off(void *arg)
{
    uint32_t loc = weft_location_index();
    weft__thread *t = weft__tls;

    (void)arg;
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.state, WEFT__ST_DISCARD);
    weft__raise_attention_locked();
    pthread_mutex_unlock(&weft__S.mu);
    for (uint64_t time = 100; time < 105; time++)
        assert_int_equal(weft_evt_Enter(NULL, time, 1), 0);
    assert_int_equal(queued(), 0);
    assert_true(t->in_gap);
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.state, WEFT__ST_ACTIVE);
    weft__raise_attention_locked();
    pthread_mutex_unlock(&weft__S.mu);
    assert_int_equal(weft_evt_Enter(NULL, 200, 1), 0);
    assert_int_equal(dropped(loc, WEFT_REC_Enter), 5);
    check_gap_marks(t, 100, 104, 200);
    return NULL;
}

static void test_tracing_off(void **state)
{
    (void)state;
    session_setup(4, 0, 30000);
    on_thread(tracing_off, NULL);
}

/* Time going backwards and records larger than a buffer are refused. */
static void *refusals(void *arg)
{
    (void)arg;
    assert_int_equal(weft_evt_Enter(NULL, 50, 1), 0);
    assert_int_equal(weft_evt_Enter(NULL, 49, 1), WEFT_ETIME);
    return NULL;
}

static void test_refusals(void **state)
{
    (void)state;
    session_setup(4, 0, 30000);
    on_thread(refusals, NULL);
    assert_int_equal(weft_dropped(UINT32_MAX - 1, WEFT_TYPE_ANY,
                                  &(uint64_t){ 0 }), WEFT_EINVAL);
}

static int group_setup(void **state)
{
    (void)state;
    weft__pool_cv_init();
    weft__thread_key_init();
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    pthread_mutex_lock(&weft__S.mu);
    atomic_store(&weft__S.state, WEFT__ST_CLOSED);
    weft__bufs_free_locked();
    pthread_mutex_unlock(&weft__S.mu);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_discard_gap),
        cmocka_unit_test(test_pool_floor),
        cmocka_unit_test(test_stall_gap),
        cmocka_unit_test(test_tracing_off),
        cmocka_unit_test(test_refusals),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
