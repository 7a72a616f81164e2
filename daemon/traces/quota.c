/* quota.c - each user's bytes in the spool (see quota.h). */
#include "quota.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

/* The index of uid's entry, or where it would go. */
static size_t find(const weft_quota *q, uint32_t uid)
{
    size_t lo = 0, hi = q->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->v[mid].uid < uid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static weft_quota_user *get(weft_quota *q, uint32_t uid)
{
    size_t i = find(q, uid);

    if (i < q->n && q->v[i].uid == uid)
        return &q->v[i];
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 16;
        weft_quota_user *p = realloc(q->v, cap * sizeof *p);
        if (!p)
            return NULL;
        q->v = p;
        q->cap = cap;
    }
    memmove(q->v + i + 1, q->v + i, (q->n - i) * sizeof *q->v);
    q->v[i] = (weft_quota_user){ .uid = uid };
    q->n++;
    return &q->v[i];
}

int weft_quota_live(weft_quota *q, uint32_t uid, int64_t bytes)
{
    weft_quota_user *u = get(q, uid);

    if (!u)
        return WEFT_ENOMEM;
    q->live_total -= u->live;
    if (bytes < 0 && (uint64_t)-bytes > u->live)
        u->live = 0;  /* never below: a release matches its charges */
    else
        u->live += (uint64_t)bytes;
    q->live_total += u->live;
    return 0;
}

int weft_quota_stored(weft_quota *q, uint32_t uid, uint64_t bytes)
{
    weft_quota_user *u = get(q, uid);

    if (!u)
        return WEFT_ENOMEM;
    u->stored += bytes;
    if (q->counting)
        u->since += bytes;
    return 0;
}

void weft_quota_count_begin(weft_quota *q)
{
    for (size_t i = 0; i < q->n; i++)
        q->v[i].since = 0;
    q->counting = 1;
}

void weft_quota_count_end(weft_quota *q, const weft_quota_sum *v, size_t n,
                          int ok)
{
    q->counting = 0;
    if (!ok)
        return;
    for (size_t i = 0; i < q->n; i++)
        q->v[i].stored = q->v[i].since;
    for (size_t i = 0; i < n; i++) {
        weft_quota_user *u = get(q, v[i].uid);
        if (u)
            u->stored += v[i].bytes;
    }
}

uint64_t weft_quota_used(const weft_quota *q, uint32_t uid)
{
    size_t i = find(q, uid);

    if (i < q->n && q->v[i].uid == uid)
        return q->v[i].stored + q->v[i].live;
    return 0;
}

uint64_t weft_quota_promised(const weft_quota *q)
{
    return q->live_total / WEFT_QUOTA_JOURNAL_FACTOR *
           (WEFT_QUOTA_JOURNAL_FACTOR - 1);
}

uint64_t weft_quota_live_of(const weft_quota *q, uint32_t uid)
{
    size_t i = find(q, uid);

    return i < q->n && q->v[i].uid == uid ? q->v[i].live : 0;
}

int weft_quota_check(const weft_quota *q, uint32_t uid, uint64_t max,
                     uint64_t more, char *err, size_t errlen)
{
    uint64_t used = weft_quota_used(q, uid);

    if (max == 0 || (used < max && more <= max - used))
        return 0;
    snprintf(err, errlen, "uid %u has %" PRIu64 " bytes of traces in the "
             "spool: max_user_spool_bytes is %" PRIu64 " (weft rm some of "
             "them)", uid, used, max);
    return WEFT_ELIMIT;
}

void weft_quota_free(weft_quota *q)
{
    free(q->v);
    memset(q, 0, sizeof *q);
}
