/* jwriter.c - journal opens and appends on threads of their own (see
 * jwriter.h).
 *
 * One mutex guards a `queued` list per thread (loop -> thread, woken by
 * the thread's condition variable) and one `written` list (threads ->
 * loop, woken by uv_async). A thread takes its whole queued list at once
 * and handles it entry by entry, so a burst costs one lock round trip.
 * The async handle is referenced only while entries are out, so an idle
 * writer does not keep the loop running.
 */
#include "jwriter.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fifo.h"
#include "server.h"
#include "weft_errors.h"

enum { APPENDS, OPENS, NTHREADS };

struct weft_jwriter;

typedef struct jthread {
    struct weft_jwriter *w;
    pthread_t tid;
    int started;                         /* loop thread */
    pthread_cond_t wake;
    weft_jentry *queued, *queued_tail;   /* lock */
    int held;                            /* lock: weft_jwriter_hold */
} jthread;

struct weft_jwriter {
    weft_daemon *d;
    weft_jwriter_done_cb done;
    pthread_mutex_t lock;
    jthread th[NTHREADS];
    weft_jentry *written, *written_tail; /* lock */
    int quit;                            /* lock */
    uv_async_t async;                    /* loop thread */
    uint64_t pending;                    /* loop thread: out, not back */
};

/* An EventBatch entry j (or a refused one) could not be appended (errno
 * j->err): it becomes a refused entry saying why, appended if there is
 * room for a header, and is handed back as written (see jwriter.h). Its
 * payload stays for d->srv->buffered's count. */
static void not_stored(weft_jentry *j)
{
    weft_journal_entry r = {
        .kind = WEFT_JE_REFUSED, .location = j->e.location,
        .count = j->e.count, .seq = j->e.seq,
        .base_time = WEFT_REFUSED_ERRNO + (uint64_t)j->err
    };

    j->rc = 0;
    if (j->e.kind == WEFT_JE_REFUSED) {  /* it was that entry: keeps why */
        j->lost = 1;
        return;
    }
    j->lost = weft_journal_append(j->in->journal, &r) < 0;
    j->e.kind = WEFT_JE_REFUSED;
    j->e.base_time = r.base_time;
}

/* Writer threads: the member's write_failed and write_errno are the
 * thread's that holds the member's entries (see jwriter.h). */
static void write_entry(weft_jentry *j)
{
    weft_memberin *in = j->in;

    if (in->write_failed) {
        j->rc = WEFT_EIO;
        j->err = in->write_errno;
        return;
    }
    j->rc = weft_journal_append(in->journal, &j->e);
    if (j->rc < 0 && (j->e.kind == WEFT_JE_EVENTS ||
                      j->e.kind == WEFT_JE_REFUSED)) {
        j->err = errno;
        not_stored(j);
    } else if (j->rc < 0) {
        j->err = errno;
        in->write_failed = 1;
        in->write_errno = errno;
    }
}

/* Open thread: opens the member's journal, then appends j to it. */
static void open_entry(weft_jentry *j)
{
    char err[512];

    j->rc = j->open(j->in, err, sizeof err);
    if (j->rc < 0) {
        j->msg = strdup(err);
        return;
    }
    write_entry(j);
}

static void *thread_run(void *arg)
{
    jthread *th = arg;
    struct weft_jwriter *w = th->w;

    pthread_setname_np(pthread_self(), "weftd-journal");
    pthread_mutex_lock(&w->lock);
    for (;;) {
        weft_jentry *batch, *next;
        while ((!th->queued || th->held) && !w->quit)
            pthread_cond_wait(&th->wake, &w->lock);
        if (!th->queued)
            break;  /* quit, and nothing left */
        batch = th->queued;
        th->queued = th->queued_tail = NULL;
        pthread_mutex_unlock(&w->lock);
        for (weft_jentry *j = batch; j; j = j->next) {
            if (j->open)
                open_entry(j);
            else
                write_entry(j);
        }
        pthread_mutex_lock(&w->lock);
        for (weft_jentry *j = batch; j; j = next) {
            next = j->next;
            WEFT_FIFO_PUSH(w->written, w->written_tail, j);
        }
        uv_async_send(&w->async);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Loop thread: hands the written entries back, in order. */
static void hand_back(struct weft_jwriter *w)
{
    weft_daemon *d = w->d;
    weft_jentry *j, *next;

    pthread_mutex_lock(&w->lock);
    j = w->written;
    w->written = w->written_tail = NULL;
    pthread_mutex_unlock(&w->lock);
    for (; j; j = next) {
        next = j->next;
        assert(w->pending > 0 && j->in->pending > 0);
        assert(d->srv->buffered >= sizeof *j + j->e.len);
        w->pending--;
        j->in->pending--;
        j->in->pending_bytes -= sizeof *j + j->e.len;
        d->srv->buffered -= sizeof *j + j->e.len;
        w->done(d, j);
        free(j->msg);
        free(j);
    }
    if (w->pending == 0 && !uv_is_closing((uv_handle_t *)&w->async))
        uv_unref((uv_handle_t *)&w->async);
}

static void on_async(uv_async_t *a)
{
    hand_back(a->data);
}

/* Ends the threads started (writing what is queued) and hands it back. */
static void join_threads(struct weft_jwriter *w)
{
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    for (int i = 0; i < NTHREADS; i++)
        pthread_cond_signal(&w->th[i].wake);
    pthread_mutex_unlock(&w->lock);
    for (int i = 0; i < NTHREADS; i++) {
        if (w->th[i].started)
            pthread_join(w->th[i].tid, NULL);
        w->th[i].started = 0;
    }
    hand_back(w);
}

int weft_jwriter_start(weft_daemon *d, weft_jwriter_done_cb done)
{
    struct weft_jwriter *w;

    assert(d && done && !d->srv->jw);
    w = calloc(1, sizeof *w);
    if (!w)
        return WEFT_ENOMEM;
    w->d = d;
    w->done = done;
    pthread_mutex_init(&w->lock, NULL);
    for (int i = 0; i < NTHREADS; i++) {
        w->th[i].w = w;
        pthread_cond_init(&w->th[i].wake, NULL);
    }
    if (uv_async_init(d->loop, &w->async, on_async) != 0) {
        free(w);
        return WEFT_EIO;
    }
    w->async.data = w;
    uv_unref((uv_handle_t *)&w->async);
    for (int i = 0; i < NTHREADS; i++) {
        if (pthread_create(&w->th[i].tid, NULL, thread_run, &w->th[i]) != 0) {
            join_threads(w);
            uv_close((uv_handle_t *)&w->async, NULL);
            /* The handle is freed with w once the loop closed it: w
             * leaks here, at a start that fails anyway. */
            return WEFT_EIO;
        }
        w->th[i].started = 1;
    }
    d->srv->jw = w;
    return 0;
}

weft_jentry *weft_jentry_new(uint32_t len)
{
    weft_jentry *j = calloc(1, sizeof *j + len);

    if (!j)
        return NULL;
    j->e.payload = j->data;
    j->e.len = len;
    return j;
}

void weft_jwriter_submit(weft_daemon *d, weft_jentry *j)
{
    struct weft_jwriter *w = d->srv->jw;
    jthread *th;

    assert(w && j && j->in && (j->in->journal || j->open));
    th = &w->th[j->open ? OPENS : APPENDS];
    if (w->pending++ == 0)
        uv_ref((uv_handle_t *)&w->async);
    j->in->pending++;
    j->in->pending_bytes += sizeof *j + j->e.len;
    d->srv->buffered += sizeof *j + j->e.len;  /* what it holds in memory */
    pthread_mutex_lock(&w->lock);
    WEFT_FIFO_PUSH(th->queued, th->queued_tail, j);
    pthread_cond_signal(&th->wake);
    pthread_mutex_unlock(&w->lock);
}

void weft_jwriter_hold(weft_daemon *d, unsigned threads)
{
    struct weft_jwriter *w = d->srv->jw;

    pthread_mutex_lock(&w->lock);
    w->th[APPENDS].held = (threads & WEFT_JWRITER_APPENDS) != 0;
    w->th[OPENS].held = (threads & WEFT_JWRITER_OPENS) != 0;
    for (int i = 0; i < NTHREADS; i++)
        pthread_cond_signal(&w->th[i].wake);
    pthread_mutex_unlock(&w->lock);
}

uint64_t weft_jwriter_pending(const weft_daemon *d)
{
    return d->srv->jw ? d->srv->jw->pending : 0;
}

static void on_close(uv_handle_t *h)
{
    struct weft_jwriter *w = h->data;

    pthread_mutex_destroy(&w->lock);
    for (int i = 0; i < NTHREADS; i++)
        pthread_cond_destroy(&w->th[i].wake);
    free(w);
}

void weft_jwriter_stop(weft_daemon *d)
{
    struct weft_jwriter *w = d->srv->jw;

    if (!w)
        return;
    join_threads(w);
    d->srv->jw = NULL;
    uv_close((uv_handle_t *)&w->async, on_close);
}
