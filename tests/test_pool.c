/* test_pool.c - libweft's threads, buffer pool and gaps (client/pool.c)
 * without a weftd: the test plays the sender, taking batches off the send
 * queue and "acknowledging" them by returning their buffers. Covers the
 * pool's size (never below the live threads + 1), a gap when the pool is
 * exhausted with WEFT_OVERFLOW=discard, a stall (no progress for
 * WEFT_STALL_MS) under the default wait, tracing off (DISCARD), and the
 * accounting of each: records dropped per location and type, batches'
 * event counts, and the MeasurementOnOff marks that open the first buffer
 * after a gap; how far buffers are filled (growing for a busy thread,
 * within the pool's units and weftd's largest batch).
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
    static const weft__proc proc = { "test_pool", "node", 1, 1, NULL };
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

/* Bytes of the batch queued n-th (0: the oldest). */
static size_t queued_len(size_t n)
{
    weft__buf *b;

    pthread_mutex_lock(&weft__S.mu);
    for (b = weft__S.q_head; b && n; b = b->next)
        n--;
    pthread_mutex_unlock(&weft__S.mu);
    assert_non_null(b);
    return b->len;
}

/* Fills buffers with Enters until `batches` are queued or t is in a gap. */
static void fill_until(weft__thread *t, uint64_t *time, size_t batches)
{
    while (queued() < batches && !t->in_gap)
        assert_int_equal(weft_evt_Enter(NULL, ++*time, 1), 0);
}

/* A thread that fills its buffers fast (well within WEFT__GROW_MS) gets
 * them filled twice as far each time, 64 KiB, 128 KiB, then what is left
 * of the pool's 6 units (192 KiB, not the 256 KiB it wants); the pool is
 * then spent: a gap (WEFT_OVERFLOW=discard). The first buffer back keeps
 * its 64 KiB: no unit is left to grow it. */
static void *grow(void *arg)
{
    const size_t unit = WEFT__FILL_UNIT;
    weft__thread *t = (weft_location_index(), weft__tls);
    uint64_t time = 1;

    (void)arg;
    fill_until(t, &time, 2);
    assert_true(queued_len(0) <= unit && queued_len(0) > unit - 64);
    assert_true(queued_len(1) <= 2 * unit && queued_len(1) > 2 * unit - 64);
    assert_int_equal(t->want, 4 * unit);
    assert_non_null(t->cur);
    assert_int_equal(t->cur->fill, 3 * unit);
    fill_until(t, &time, 3);
    assert_true(t->in_gap);
    assert_true(queued_len(2) <= 3 * unit && queued_len(2) > 3 * unit - 64);
    assert_int_equal(weft__S.units, 6);
    assert_int_equal(weft__S.nbufs, 3);
    ack_one();
    assert_int_equal(weft_evt_Enter(NULL, ++time, 1), 0);
    assert_false(t->in_gap);
    assert_int_equal(t->cur->fill, unit);
    assert_int_equal(weft__S.units, 6);
    return NULL;
}

static void test_fill_grows(void **state)
{
    (void)state;
    session_setup(6, 1, 30000);
    pthread_mutex_lock(&weft__S.mu);
    weft__S.cfg.buffer_size = 4 * WEFT__FILL_UNIT;
    weft__S.cfg.grow_ms = 600000;  /* however slow the machine */
    weft__S.batch_cap = 1u << 20;
    pthread_mutex_unlock(&weft__S.mu);
    on_thread(grow, NULL);
}

/* weftd's largest batch bounds the fill (100 KiB of a 256 KiB buffer
 * here); until a HelloAck says it, and for a thread that takes longer
 * than WEFT__GROW_MS to fill one (0 here), buffers are filled one unit. */
static void *capped(void *arg)
{
    weft__thread *t = (weft_location_index(), weft__tls);
    uint64_t time = 1;
    size_t cap = *(size_t *)arg;

    fill_until(t, &time, 4);
    assert_false(t->in_gap);
    for (size_t i = 0; i < 4; i++)
        assert_true(queued_len(i) <= (cap ? cap : WEFT__FILL_UNIT));
    if (cap)
        assert_true(queued_len(3) > cap - 64);
    return NULL;
}

static void test_fill_capped(void **state)
{
    /* weftd's largest batch, grow_ms, the most a batch may hold */
    static const struct { size_t batch_cap; uint32_t grow_ms; size_t most; }
        cases[] = { { 100u << 10, 600000, 100u << 10 },
                    { 0, 600000, 0 },
                    { 1u << 20, 0, 0 } };

    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t most = cases[k].most;
        session_setup(64, 1, 30000);
        pthread_mutex_lock(&weft__S.mu);
        weft__S.cfg.buffer_size = 4 * WEFT__FILL_UNIT;
        weft__S.cfg.grow_ms = cases[k].grow_ms;
        weft__S.batch_cap = cases[k].batch_cap;
        pthread_mutex_unlock(&weft__S.mu);
        on_thread(capped, &most);
    }
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
        cmocka_unit_test(test_fill_grows),
        cmocka_unit_test(test_fill_capped),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
