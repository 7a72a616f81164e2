/* convq.c - conversions waiting for a slot, round robin by uid (see
 * convq.h). */
#include "convq.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "trace.h"
#include "weft_errors.h"

/* The index of uid's entry in q->users, or where it would go. */
static size_t find_user(const weft_convq *q, uint32_t uid)
{
    size_t lo = 0, hi = q->nusers;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->users[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* uid's entry in q->users, made if need be; NULL when out of memory. */
static weft_convq_user *user_entry(weft_convq *q, uint32_t uid)
{
    size_t i = find_user(q, uid);

    if (i == q->nusers || q->users[i].uid != uid) {
        if (q->nusers == q->cap) {
            size_t cap = q->cap ? 2 * q->cap : 8;
            weft_convq_user *v = realloc(q->users, cap * sizeof *v);
            if (!v)
                return NULL;
            q->users = v;
            q->cap = cap;
        }
        memmove(q->users + i + 1, q->users + i,
                (q->nusers - i) * sizeof *q->users);
        q->users[i] = (weft_convq_user){ uid, NULL, NULL };
        q->nusers++;
    }
    return &q->users[i];
}

int weft_convq_push(weft_convq *q, weft_convq_item *it, uint32_t uid)
{
    weft_convq_user *u;

    assert(q && it);
    if (!(u = user_entry(q, uid)))
        return WEFT_ENOMEM;
    it->uid = uid;
    it->next = NULL;
    if (u->tail)
        u->tail->next = it;
    else
        u->head = it;
    u->tail = it;
    q->count++;
    return 0;
}

weft_convq_item *weft_convq_pop(weft_convq *q)
{
    weft_convq_user *u;
    weft_convq_item *it;
    size_t i;

    if (!q || q->nusers == 0)
        return NULL;
    /* The first user after the one served last; past the end, the first. */
    i = q->served && q->last_uid < UINT32_MAX ? find_user(q, q->last_uid + 1)
                                             : 0;
    if (i == q->nusers)
        i = 0;
    u = &q->users[i];
    it = u->head;
    u->head = it->next;
    if (!u->head) {
        memmove(q->users + i, q->users + i + 1,
                (q->nusers - i - 1) * sizeof *q->users);
        q->nusers--;
    }
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
    free(q->users);
    memset(q, 0, sizeof *q);
}

/* Hands d->converter waiting conversions while it has free slots. A
 * conversion the converter cannot take (no thread) waits for the next
 * call (the next conversion's end, or the tick). */
static void pump(weft_daemon *d)
{
    weft_convq *q = &d->convq;

    while (q->count > 0) {
        weft_worker_counts n;
        weft_convq_item *it;
        if (!d->converter &&
            weft_worker_start(d->loop, (unsigned)d->cfg.max_conversions,
                              WEFT_WORKER_TRANSIENT, &d->converter) < 0)
            return;
        n = weft_worker_count(d->converter);
        if (n.running + n.queued >= d->cfg.max_conversions)
            return;
        it = weft_convq_pop(q);
        if (weft_worker_submit(d->converter, it->work, it->run,
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
    int rc = weft_convq_push(&d->convq, it, uid);

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
    weft_trace_conversions n = { (unsigned)d->convq.count, 0,
                                 d->conversions_peak };
    weft_worker_counts c;

    if (!d->converter)
        return n;
    c = weft_worker_count(d->converter);
    n.queued += c.queued;
    n.running = c.running;
    if (c.peak > n.peak)
        n.peak = c.peak;
    return n;
}

void weft_trace_set_max_conversions(weft_daemon *d, uint64_t max)
{
    d->cfg.max_conversions = max;
    if (d->converter)
        weft_worker_set_max(d->converter, (unsigned)max);
    weft_convq_next(d);
}
