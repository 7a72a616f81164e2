/* test_worker.c - threads of their own for slow work (daemon/worker.c),
 * on a private loop.
 *
 * One thread runs its jobs in the order submitted and hands them back in
 * that order; with max N no more than N jobs run at once and all of them
 * finish, also when the bound changes while jobs wait; a held worker
 * starts nothing (its jobs are counted as queued) until released; a
 * stopped worker still runs and hands back what was queued, even held,
 * and lets the loop close; a transient worker ends by itself once idle;
 * a done callback may submit the next job. Each test ends with
 * uv_loop_close() succeeding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "weft_errors.h"
#include "worker.h"

#define NJOBS 16

typedef struct fixture {
    uv_loop_t loop;
    weft_worker *w;
    pthread_mutex_t lock;
    int running, peak;              /* lock: jobs in work() now, most */
    int worked[NJOBS], nworked;     /* lock: order work() ran */
    int done[NJOBS], ndone;         /* loop thread: order done() ran */
    int chain;                      /* loop thread: jobs still to chain */
} fixture;

typedef struct job {
    weft_work work;                 /* first: the job is its work */
    fixture *f;
    int id;
    int sleep_ms;
} job;

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

static void job_work(weft_work *w)
{
    job *j = (job *)w;
    fixture *f = j->f;

    pthread_mutex_lock(&f->lock);
    if (++f->running > f->peak)
        f->peak = f->running;
    f->worked[f->nworked++] = j->id;
    pthread_mutex_unlock(&f->lock);
    sleep_ms(j->sleep_ms);
    pthread_mutex_lock(&f->lock);
    f->running--;
    pthread_mutex_unlock(&f->lock);
}

static void job_done(weft_work *w)
{
    job *j = (job *)w;

    assert_true(j->f->ndone < NJOBS);
    j->f->done[j->f->ndone++] = j->id;
    free(j);
}

static void submit(fixture *f, int id, int ms)
{
    job *j = calloc(1, sizeof *j);

    assert_non_null(j);
    j->f = f;
    j->id = id;
    j->sleep_ms = ms;
    assert_int_equal(weft_worker_submit(f->w, &j->work, job_work, job_done),
                     0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    assert_non_null(f);
    assert_int_equal(uv_loop_init(&f->loop), 0);
    pthread_mutex_init(&f->lock, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    weft_worker_stop(f->w);
    uv_run(&f->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&f->loop), 0);
    pthread_mutex_destroy(&f->lock);
    free(f);
    return 0;
}

/* Runs the loop until n jobs came back (10 s at most). */
static void wait_done(fixture *f, int n)
{
    for (int i = 0; i < 10000 && f->ndone < n; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        if (f->ndone < n)
            sleep_ms(1);
    }
    assert_int_equal(f->ndone, n);
}

static void test_fifo(void **state)
{
    fixture *f = *state;

    assert_int_equal(weft_worker_start(&f->loop, 1, 0, &f->w), 0);
    for (int i = 0; i < NJOBS; i++)
        submit(f, i, 0);
    wait_done(f, NJOBS);
    for (int i = 0; i < NJOBS; i++) {
        assert_int_equal(f->worked[i], i);
        assert_int_equal(f->done[i], i);
    }
    assert_int_equal(f->peak, 1);
    assert_int_equal(weft_worker_count(f->w).peak, 1);
    /* Idle: it does not keep the loop running. */
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
}

static void test_bound(void **state)
{
    fixture *f = *state;
    weft_worker_counts c;

    assert_int_equal(weft_worker_start(&f->loop, 2, 0, &f->w), 0);
    for (int i = 0; i < 8; i++)
        submit(f, i, 20);
    c = weft_worker_count(f->w);
    assert_true(c.running <= 2);
    assert_true(c.queued + c.running <= 8);
    wait_done(f, 8);
    assert_true(f->peak >= 1 && f->peak <= 2);
    c = weft_worker_count(f->w);
    assert_int_equal(c.peak, (unsigned)f->peak);
    assert_int_equal(c.queued, 0);
    assert_int_equal(c.running, 0);
    /* First come, first served: they are taken in the order submitted;
     * two threads that took neighbours may note them the other way
     * round, so each is at most one place from its turn. */
    for (int i = 0; i < 8; i++)
        assert_true(f->worked[i] >= i - 1 && f->worked[i] <= i + 1);
}

static void test_hold(void **state)
{
    fixture *f = *state;
    weft_worker_counts c;

    assert_int_equal(weft_worker_start(&f->loop, 2, 0, &f->w), 0);
    weft_worker_hold(f->w, 1);
    for (int i = 0; i < 3; i++)
        submit(f, i, 0);
    for (int i = 0; i < 50; i++) {
        uv_run(&f->loop, UV_RUN_NOWAIT);
        sleep_ms(2);
    }
    assert_int_equal(f->ndone, 0);
    c = weft_worker_count(f->w);
    assert_int_equal(c.queued, 3);
    assert_int_equal(c.running, 0);
    weft_worker_hold(f->w, 0);
    wait_done(f, 3);
}

static void test_set_max(void **state)
{
    fixture *f = *state;

    assert_int_equal(weft_worker_start(&f->loop, 1, 0, &f->w), 0);
    weft_worker_hold(f->w, 1);
    for (int i = 0; i < 6; i++)
        submit(f, i, 20);
    weft_worker_set_max(f->w, 3);
    weft_worker_hold(f->w, 0);
    wait_done(f, 6);
    assert_true(f->peak >= 1 && f->peak <= 3);
    weft_worker_set_max(f->w, 1);
    f->peak = 0;
    for (int i = 0; i < 4; i++)
        submit(f, 10 + i, 5);
    wait_done(f, 10);
    assert_int_equal(f->peak, 1);
}

/* Stopped while held with jobs queued: they run all the same, come
 * back, and the loop ends with the worker closed. */
static void test_stop_runs_queue(void **state)
{
    fixture *f = *state;

    assert_int_equal(weft_worker_start(&f->loop, 1, 0, &f->w), 0);
    weft_worker_hold(f->w, 1);
    for (int i = 0; i < 4; i++)
        submit(f, i, 1);
    weft_worker_stop(f->w);
    assert_null(f->w);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(f->done[i], i);
}

static void test_transient(void **state)
{
    fixture *f = *state;

    assert_int_equal(weft_worker_start(&f->loop, 2, WEFT_WORKER_TRANSIENT,
                                       &f->w), 0);
    submit(f, 0, 5);
    submit(f, 1, 5);
    assert_non_null(f->w);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 2);
    assert_null(f->w);  /* it ended by itself */
    /* A new one for the next burst. */
    assert_int_equal(weft_worker_start(&f->loop, 1, WEFT_WORKER_TRANSIENT,
                                       &f->w), 0);
    submit(f, 2, 0);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 3);
    assert_null(f->w);
}

static void chain_done(weft_work *w)
{
    job *j = (job *)w;
    fixture *f = j->f;

    job_done(w);
    if (f->chain-- > 0) {
        job *n = calloc(1, sizeof *n);
        assert_non_null(n);
        n->f = f;
        n->id = f->ndone;
        assert_int_equal(weft_worker_submit(f->w, &n->work, job_work,
                                            chain_done), 0);
    }
}

/* A done callback submits the next job: the worker stays referenced
 * until the last one, which a transient worker then outlives no more. */
static void test_submit_from_done(void **state)
{
    fixture *f = *state;
    job *j = calloc(1, sizeof *j);

    assert_non_null(j);
    assert_int_equal(weft_worker_start(&f->loop, 1, WEFT_WORKER_TRANSIENT,
                                       &f->w), 0);
    f->chain = 5;
    j->f = f;
    assert_int_equal(weft_worker_submit(f->w, &j->work, job_work,
                                        chain_done), 0);
    assert_int_equal(uv_run(&f->loop, UV_RUN_DEFAULT), 0);
    assert_int_equal(f->ndone, 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(f->done[i], i);
    assert_null(f->w);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_fifo),
        T(test_bound),
        T(test_hold),
        T(test_set_max),
        T(test_stop_runs_queue),
        T(test_transient),
        T(test_submit_from_done),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
