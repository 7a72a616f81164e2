/* budget.c - the bytes of libotf2 writers that all streams of a weftd
 * may hold at once (convert.h's weft_convert_budget: convert_memory),
 * and each owner's share of them: one user's streams hold at most half
 * (at least one writer and its file buffer), so that one user's long
 * runs with many threads cannot keep everyone else's traces from being
 * written while they record. Any thread (b->lock).
 */
#include "convert.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void weft_convert_budget_init(weft_convert_budget *b, uint64_t max)
{
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->lock, NULL);
    b->max = max;
}

void weft_convert_budget_destroy(weft_convert_budget *b)
{
    free(b->owners);
    pthread_mutex_destroy(&b->lock);
}

uint64_t weft_convert_budget_share(uint64_t max)
{
    const uint64_t least = WEFT_CONVERT_WRITER_BYTES +
                           WEFT_CONVERT_FILE_BUFFER_BYTES;

    return max == 0 ? 0 : max / 2 > least ? max / 2 : least;
}

/* uid's entry in b->owners; made (with 0 bytes) when `make`; NULL when
 * absent, or out of memory. b->lock held. */
static weft_convert_budget_owner *budget_owner(weft_convert_budget *b,
                                               uint32_t uid, int make)
{
    for (size_t i = 0; i < b->nowners; i++)
        if (b->owners[i].uid == uid)
            return &b->owners[i];
    if (!make)
        return NULL;
    if (b->nowners == b->owners_cap) {
        size_t cap = b->owners_cap ? 2 * b->owners_cap : 8;
        weft_convert_budget_owner *v = realloc(b->owners, cap * sizeof *v);
        if (!v)
            return NULL;
        b->owners = v;
        b->owners_cap = cap;
    }
    b->owners[b->nowners] = (weft_convert_budget_owner){ uid, 0 };
    return &b->owners[b->nowners++];
}

/* o holds nothing: its entry goes. b->lock held. */
static void budget_drop(weft_convert_budget *b, weft_convert_budget_owner *o)
{
    if (o->bytes == 0)
        *o = b->owners[--b->nowners];
}

int weft_convert_budget_take(weft_convert_budget *b, uint32_t uid,
                             uint64_t bytes)
{
    weft_convert_budget_owner *o;
    uint64_t share;
    int why = 0;

    pthread_mutex_lock(&b->lock);
    share = weft_convert_budget_share(b->max);
    o = budget_owner(b, uid, 1);
    if (!o || (b->max && (b->open > b->max || bytes > b->max - b->open)))
        why = WEFT_BUDGET_FULL;
    else if (b->max && (o->bytes > share || bytes > share - o->bytes))
        why = WEFT_BUDGET_SHARE;
    if (!why) {
        b->open += bytes;
        o->bytes += bytes;
    } else if (o) {
        budget_drop(b, o);
    }
    pthread_mutex_unlock(&b->lock);
    return why;
}

void weft_convert_budget_give(weft_convert_budget *b, uint32_t uid,
                              uint64_t bytes)
{
    weft_convert_budget_owner *o;

    pthread_mutex_lock(&b->lock);
    b->open -= bytes < b->open ? bytes : b->open;
    if ((o = budget_owner(b, uid, 0)) != NULL) {
        o->bytes -= bytes < o->bytes ? bytes : o->bytes;
        budget_drop(b, o);
    }
    pthread_mutex_unlock(&b->lock);
}
