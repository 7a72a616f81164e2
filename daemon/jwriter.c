/* jwriter.c - journal appends on a thread of their own (see jwriter.h).
 *
 * Two lists under one mutex: `queued` (loop -> writer, woken by the
 * condition variable) and `written` (writer -> loop, woken by uv_async).
 * The writer takes the whole queued list at once and appends it entry by
 * entry, so a burst costs one lock round trip. The async handle is
 * referenced only while entries are out, so an idle writer does not keep
 * the loop running.
 */
#include "jwriter.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "server.h"
#include "trace.h"
#include "weft_errors.h"

struct weft_jwriter {
    weft_daemon *d;
    weft_jwriter_done_cb done;
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    weft_jentry *queued, *queued_tail;   /* lock */
    weft_jentry *written, *written_tail; /* lock */
    int quit;                            /* lock */
    int held;                            /* lock: weft_jwriter_hold */
    uv_async_t async;                    /* loop thread */
    uint64_t pending;                    /* loop thread: out, not back */
};

static void append(weft_jentry **head, weft_jentry **tail, weft_jentry *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

/* Writer thread: member fields write_failed and write_errno are its own
 * while entries of the member are out (see jwriter.h). */
static void write_entry(weft_jentry *j)
{
    weft_member *m = j->member;

    if (m->write_failed) {
        j->rc = WEFT_EIO;
        j->err = m->write_errno;
        return;
    }
    j->rc = weft_journal_append(m->journal, &j->e);
    if (j->rc < 0) {
        j->err = errno;
        m->write_failed = 1;
        m->write_errno = errno;
    }
}

static void *writer_run(void *arg)
{
    struct weft_jwriter *w = arg;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        weft_jentry *batch, *next;
        while ((!w->queued || w->held) && !w->quit)
            pthread_cond_wait(&w->wake, &w->lock);
        if (!w->queued)
            break;  /* quit, and nothing left */
        batch = w->queued;
        w->queued = w->queued_tail = NULL;
        pthread_mutex_unlock(&w->lock);
        for (weft_jentry *j = batch; j; j = j->next)
            write_entry(j);
        pthread_mutex_lock(&w->lock);
        for (weft_jentry *j = batch; j; j = next) {
            next = j->next;
            append(&w->written, &w->written_tail, j);
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
        assert(w->pending > 0 && j->member->pending > 0);
        assert(d->buffered >= sizeof *j + j->e.len);
        w->pending--;
        j->member->pending--;
        j->member->pending_bytes -= sizeof *j + j->e.len;
        d->buffered -= sizeof *j + j->e.len;
        w->done(d, j);
        free(j);
    }
    if (w->pending == 0 && !uv_is_closing((uv_handle_t *)&w->async))
        uv_unref((uv_handle_t *)&w->async);
    weft_server_buffered_fell(d);
}

static void on_async(uv_async_t *a)
{
    hand_back(a->data);
}

int weft_jwriter_start(weft_daemon *d, weft_jwriter_done_cb done)
{
    struct weft_jwriter *w;

    assert(d && done && !d->jw);
    w = calloc(1, sizeof *w);
    if (!w)
        return WEFT_ENOMEM;
    w->d = d;
    w->done = done;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (uv_async_init(d->loop, &w->async, on_async) != 0) {
        free(w);
        return WEFT_EIO;
    }
    w->async.data = w;
    uv_unref((uv_handle_t *)&w->async);
    if (pthread_create(&w->tid, NULL, writer_run, w) != 0) {
        uv_close((uv_handle_t *)&w->async, NULL);
        /* The handle is freed with w once the loop closed it: w leaks
         * here, at a start that fails anyway. */
        return WEFT_EIO;
    }
    d->jw = w;
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
    struct weft_jwriter *w = d->jw;

    assert(w && j && j->member && j->member->journal);
    if (w->pending++ == 0)
        uv_ref((uv_handle_t *)&w->async);
    j->member->pending++;
    j->member->pending_bytes += sizeof *j + j->e.len;
    d->buffered += sizeof *j + j->e.len;  /* what it holds in memory */
    pthread_mutex_lock(&w->lock);
    append(&w->queued, &w->queued_tail, j);
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

void weft_jwriter_hold(weft_daemon *d, int hold)
{
    struct weft_jwriter *w = d->jw;

    pthread_mutex_lock(&w->lock);
    w->held = hold;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

uint64_t weft_jwriter_pending(const weft_daemon *d)
{
    return d->jw ? d->jw->pending : 0;
}

static void on_close(uv_handle_t *h)
{
    struct weft_jwriter *w = h->data;

    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w);
}

void weft_jwriter_stop(weft_daemon *d)
{
    struct weft_jwriter *w = d->jw;

    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->tid, NULL);
    hand_back(w);
    d->jw = NULL;
    uv_close((uv_handle_t *)&w->async, on_close);
}
