/* convq.c - conversions waiting for a slot, round robin by uid (see
 * convq.h). */
#include "convq.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "fifo.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"

/* uid's entry in q->users, made if need be; NULL when out of memory. */
static weft_convq_user *user_entry(weft_convq *q, uint32_t uid)
{
    return weft_uidmap_get(&q->users, uid, sizeof(weft_convq_user));
}

int weft_convq_push(weft_convq *q, weft_convq_item *it, uint32_t uid)
{
    weft_convq_user *u;

    assert(q && it);
    if (!(u = user_entry(q, uid)))
        return WEFT_ENOMEM;
    it->uid = uid;
    WEFT_FIFO_PUSH(u->head, u->tail, it);
    q->count++;
    return 0;
}

weft_convq_item *weft_convq_pop(weft_convq *q)
{
    weft_convq_user *u;
    weft_convq_item *it;
    size_t i;

    if (!q || q->users.n == 0)
        return NULL;
    /* The first user after the one served last; past the end, the first. */
    i = q->served && q->last_uid < UINT32_MAX
            ? weft_uidmap_find(&q->users, q->last_uid + 1, sizeof *u)
            : 0;
    if (i == q->users.n)
        i = 0;
    u = weft_uidmap_at(&q->users, i, sizeof *u);
    it = WEFT_FIFO_SHIFT(u->head, u->tail);
    if (!u->head)
        weft_uidmap_remove(&q->users, i, sizeof *u);
    it->next = NULL;
    q->count--;
    q->last_uid = it->uid;
    q->served = 1;
    return it;
}

void weft_convq_free(weft_convq *q)
{
    if (!q)
        return;
    weft_uidmap_free(&q->users);
    memset(q, 0, sizeof *q);
}

/* Hands d->traces->converter waiting conversions while it has free
 * slots. A conversion the converter cannot take (no thread) waits for
 * the next call (the next conversion's end, or the tick). */
static void pump(weft_daemon *d)
{
    weft_traces *ts = d->traces;
    weft_convq *q = ts->convq;

    while (q && q->count > 0) {
        weft_worker_counts n;
        weft_convq_item *it;
        if (!ts->converter &&
            weft_worker_start(d->loop, (unsigned)d->cfg.max_conversions,
                              WEFT_WORKER_TRANSIENT, &ts->converter) < 0)
            return;
        n = weft_worker_count(ts->converter);
        if (n.running + n.queued >= d->cfg.max_conversions)
            return;
        it = weft_convq_pop(q);
        if (weft_worker_submit(ts->converter, it->work, it->run,
                               it->done) < 0) {
            /* Back at the head of its user's queue (its entry was there
             * a moment ago: no allocation fails), for the next call. */
            weft_convq_user *u = user_entry(q, it->uid);
            it->next = u->head;
            u->head = it;
            if (!u->tail)
                u->tail = it;
            q->count++;
            return;
        }
    }
}

int weft_convq_submit(struct weft_daemon *d, weft_convq_item *it,
                      uint32_t uid)
{
    weft_traces *ts = d->traces;
    int rc;

    if (!ts->convq && !(ts->convq = calloc(1, sizeof *ts->convq)))
        return WEFT_ENOMEM;
    rc = weft_convq_push(ts->convq, it, uid);

    if (rc == 0)
        pump(d);
    return rc;
}

void weft_convq_next(struct weft_daemon *d)
{
    pump(d);
}

/* trace.h: the conversions handed over and waiting. */
weft_trace_conversions weft_trace_count_conversions(const weft_daemon *d)
{
    const weft_traces *ts = d->traces;
    weft_trace_conversions n = { ts->convq ? (unsigned)ts->convq->count : 0,
                                 0, ts->conversions_peak,
                                 ts->converting };
    weft_worker_counts c;

    if (!ts->converter)
        return n;
    c = weft_worker_count(ts->converter);
    n.queued += c.queued;
    n.running = c.running;
    if (c.peak > n.peak)
        n.peak = c.peak;
    return n;
}

void weft_trace_set_max_conversions(weft_daemon *d, uint64_t max)
{
    d->cfg.max_conversions = max;
    if (d->traces->converter)
        weft_worker_set_max(d->traces->converter, (unsigned)max);
    weft_convq_next(d);
}
