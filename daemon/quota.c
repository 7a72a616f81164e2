/* quota.c - each user's bytes in the spool (see quota.h). */
#include "quota.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

#define CELL sizeof(weft_quota_user)

static weft_quota_user *get(weft_quota *q, uint32_t uid)
{
    return weft_uidmap_get(&q->users, uid, CELL);
}

/* uid's entry, NULL if it has none. */
static const weft_quota_user *lookup(const weft_quota *q, uint32_t uid)
{
    return weft_uidmap_lookup(&q->users, uid, CELL);
}

static weft_quota_user *at(const weft_quota *q, size_t i)
{
    return weft_uidmap_at(&q->users, i, CELL);
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
    for (size_t i = 0; i < q->users.n; i++)
        at(q, i)->since = 0;
    q->counting = 1;
}

void weft_quota_count_end(weft_quota *q, const weft_quota_sum *v, size_t n,
                          int ok)
{
    q->counting = 0;
    if (!ok)
        return;
    for (size_t i = 0; i < q->users.n; i++)
        at(q, i)->stored = at(q, i)->since;
    for (size_t i = 0; i < n; i++) {
        weft_quota_user *u = get(q, v[i].uid);
        if (u)
            u->stored += v[i].bytes;
    }
}

uint64_t weft_quota_used(const weft_quota *q, uint32_t uid)
{
    const weft_quota_user *u = lookup(q, uid);

    return u ? u->stored + u->live : 0;
}

uint64_t weft_quota_promised(const weft_quota *q)
{
    uint64_t p = q->live_total / WEFT_QUOTA_JOURNAL_FACTOR *
                 (WEFT_QUOTA_JOURNAL_FACTOR - 1);

    return p > q->streamed ? p - q->streamed : 0;
}

void weft_quota_streamed(weft_quota *q, int64_t bytes)
{
    if (bytes < 0 && (uint64_t)-bytes > q->streamed)
        q->streamed = 0;
    else
        q->streamed += (uint64_t)bytes;
}

uint64_t weft_quota_live_of(const weft_quota *q, uint32_t uid)
{
    const weft_quota_user *u = lookup(q, uid);

    return u ? u->live : 0;
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
    weft_uidmap_free(&q->users);
    memset(q, 0, sizeof *q);
}
