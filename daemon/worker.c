/* worker.c - threads of their own for slow work (see worker.h).
 *
 * Two lists under one mutex: `queued` (loop -> threads, woken by the
 * condition variable) and `finished` (threads -> loop, woken by
 * uv_async; sent under the mutex, so once the loop has taken a job back
 * no thread will touch the handle for it). `pending` (loop thread)
 * counts the jobs out, queued or running or finished but not handed
 * back: when it falls to 0 after a stop, every thread is idle or ending,
 * so joining them is quick, and the handle closes.
 */
#include "worker.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

#include "fifo.h"
#include "weft_errors.h"

struct weft_worker {
    weft_worker **home;          /* loop thread: cleared by stop */
    int flags;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    weft_work *queued, *queued_tail;     /* lock */
    weft_work *finished, *finished_tail; /* lock */
    unsigned nqueued;            /* lock */
    unsigned running;            /* lock */
    unsigned peak;               /* lock: most running at once */
    unsigned max;                /* lock */
    int held;                    /* lock: weft_worker_hold */
    int quit;                    /* lock: run the queue, then end */
    pthread_t *threads;          /* loop thread (made, joined) */
    unsigned nthreads;
    uv_async_t async;            /* loop thread */
    uint64_t pending;            /* loop thread: jobs out */
    int stopped;                 /* loop thread */
    int closing;                 /* loop thread: handle closing */
};

/* Under the lock: may a thread start the next job? */
static int can_start(const struct weft_worker *w)
{
    return w->queued && (!w->held || w->quit) && w->running < w->max;
}

static void *thread_main(void *arg)
{
    struct weft_worker *w = arg;

    pthread_setname_np(pthread_self(), "weftd-work");
    pthread_mutex_lock(&w->lock);
    for (;;) {
        weft_work *j;
        while (!can_start(w) && !(w->quit && !w->queued))
            pthread_cond_wait(&w->wake, &w->lock);
        if (!can_start(w))
            break;  /* quit, and nothing left */
        j = WEFT_FIFO_SHIFT(w->queued, w->queued_tail);
        w->nqueued--;
        if (++w->running > w->peak)
            w->peak = w->running;
        pthread_mutex_unlock(&w->lock);
        j->work(j);
        pthread_mutex_lock(&w->lock);
        w->running--;
        WEFT_FIFO_PUSH(w->finished, w->finished_tail, j);
        uv_async_send(&w->async);
        pthread_cond_signal(&w->wake);  /* a slot is free */
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void on_close(uv_handle_t *h)
{
    struct weft_worker *w = h->data;

    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w->threads);
    free(w);
}

/* Loop thread, stopped and nothing out: ends the threads (idle, or about
 * to wait) and closes the handle, which frees w. */
static void finish(struct weft_worker *w)
{
    assert(w->stopped && w->pending == 0 && !w->closing);
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (unsigned i = 0; i < w->nthreads; i++)
        pthread_join(w->threads[i], NULL);
    w->nthreads = 0;
    w->closing = 1;
    uv_close((uv_handle_t *)&w->async, on_close);
}

/* Loop thread: hands the finished jobs back, in the order they finished.
 * A done callback may submit more, or stop w. */
static void on_async(uv_async_t *a)
{
    struct weft_worker *w = a->data;
    weft_work *j, *next;

    pthread_mutex_lock(&w->lock);
    j = w->finished;
    w->finished = w->finished_tail = NULL;
    pthread_mutex_unlock(&w->lock);
    for (; j; j = next) {
        next = j->next;
        assert(w->pending > 0);
        w->pending--;
        j->done(j);
    }
    if (w->pending > 0 || w->closing)
        return;
    if ((w->flags & WEFT_WORKER_TRANSIENT) && !w->stopped)
        weft_worker_stop(w);  /* finishes it */
    else if (w->stopped)
        finish(w);
    else
        uv_unref((uv_handle_t *)&w->async);
}

int weft_worker_start(uv_loop_t *loop, unsigned max, int flags,
                      weft_worker **home)
{
    struct weft_worker *w;

    assert(loop && home && max >= 1);
    w = calloc(1, sizeof *w);
    if (!w)
        return WEFT_ENOMEM;
    w->home = home;
    w->flags = flags;
    w->max = max;
    if (uv_async_init(loop, &w->async, on_async) != 0) {
        free(w);
        return WEFT_EIO;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    w->async.data = w;
    uv_unref((uv_handle_t *)&w->async);
    *home = w;
    return 0;
}

/* Under the lock: threads enough for the jobs running and queued, within
 * the bound. 0, or -1 if one could not be made. */
static int grow(struct weft_worker *w)
{
    while (w->nthreads < w->max && w->nthreads < w->running + w->nqueued) {
        pthread_t *v = realloc(w->threads, (w->nthreads + 1) * sizeof *v);
        if (!v)
            return -1;
        w->threads = v;
        if (pthread_create(&v[w->nthreads], NULL, thread_main, w) != 0)
            return -1;
        w->nthreads++;
    }
    return 0;
}

int weft_worker_submit(weft_worker *w, weft_work *job, weft_work_fn work,
                       weft_work_fn done)
{
    assert(w && !w->stopped && job && work && done);
    job->work = work;
    job->done = done;
    pthread_mutex_lock(&w->lock);
    WEFT_FIFO_PUSH(w->queued, w->queued_tail, job);
    w->nqueued++;
    if (grow(w) < 0 && w->nthreads == 0) {
        /* Nobody to run it: take it back (it is the only one). */
        w->queued = w->queued_tail = NULL;
        w->nqueued = 0;
        pthread_mutex_unlock(&w->lock);
        if ((w->flags & WEFT_WORKER_TRANSIENT) && w->pending == 0)
            weft_worker_stop(w);
        return WEFT_EIO;
    }
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (w->pending++ == 0)
        uv_ref((uv_handle_t *)&w->async);
    return 0;
}

void weft_worker_set_max(weft_worker *w, unsigned max)
{
    assert(max >= 1);
    pthread_mutex_lock(&w->lock);
    w->max = max;
    grow(w);  /* if none could be made, those there take the queue */
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void weft_worker_hold(weft_worker *w, int hold)
{
    pthread_mutex_lock(&w->lock);
    w->held = hold;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

weft_worker_counts weft_worker_count(weft_worker *w)
{
    weft_worker_counts c;

    pthread_mutex_lock(&w->lock);
    c.queued = w->nqueued;
    c.running = w->running;
    c.peak = w->peak;
    pthread_mutex_unlock(&w->lock);
    return c;
}

void weft_worker_stop(weft_worker *w)
{
    if (!w || w->stopped)
        return;
    w->stopped = 1;
    *w->home = NULL;
    pthread_mutex_lock(&w->lock);
    w->quit = 1;  /* the queue runs even while held */
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    if (w->pending == 0)
        finish(w);
}
