/* callcount.c - the metric class of counted calls and its events
 * (callcount.h, proto/counts.h). */
#include <sched.h>
#include <string.h>

#include "callcount.h"
#include "counts.h"
#include "recorder.h"
#include "weft.h"

/* Members a class may have (OTF2 counts them in a uint8_t). */
#define CALLCOUNT_MAX_MEMBERS 254

/* See callcount.h. */
int callcount_prepare(callcount_class *c, const char *(*name)(unsigned))
{
    unsigned n = 0;

    for (unsigned i = 0; i < c->n; i++) {
        if (!c->counted[i])
            continue;
        if (n + 2 > CALLCOUNT_MAX_MEMBERS)
            return -1;
        c->slot[i] = (uint8_t)n;
        n += 2;
    }
    c->nmembers = (uint8_t)n;
    c->name = name;
    return 0;
}

/* Defines c's members and class. 0, or -1 when libweft refused one. */
static int define(callcount_class *c)
{
    OTF2_MetricMemberRef m[CALLCOUNT_MAX_MEMBERS];

    for (unsigned i = 0; i < c->n; i++) {
        OTF2_StringRef s;
        if (!c->counted[i])
            continue;
        s = weft_string(c->name(i));
        for (int k = 0; k < 2; k++) {
            OTF2_MetricMemberRef id =
                weft__recorder_newid(WEFT_REF_METRIC_MEMBER);
            m[c->slot[i] + k] = id;
            if (weft_def_MetricMember(
                    id, s,
                    weft_string(k ? WEFT_COUNTS_TIME : WEFT_COUNTS_CALLS),
                    OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_LAST,
                    OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, k ? -9 : 0,
                    weft_string(k ? "s" : "calls")) < 0)
                return -1;
        }
    }
    c->metric = weft__recorder_newid(WEFT_REF_METRIC);
    return weft_def_MetricClass(c->metric, c->nmembers, m,
                                OTF2_METRIC_SYNCHRONOUS,
                                OTF2_RECORDER_KIND_ABSTRACT);
}

/* Whether c's class is defined, defining it if nobody has: the first
 * thread defines it, one that comes meanwhile waits for it (a while:
 * then its counts wait for its next flush). */
static int defined(callcount_class *c)
{
    int s = atomic_load_explicit(&c->state, memory_order_acquire);

    if (s == CALLCOUNT_NONE &&
        atomic_compare_exchange_strong(&c->state, &s, CALLCOUNT_DEFINING)) {
        s = define(c) == 0 ? CALLCOUNT_DEFINED : CALLCOUNT_FAILED;
        atomic_store_explicit(&c->state, s, memory_order_release);
    }
    for (int i = 0; s == CALLCOUNT_DEFINING && i < 100000; i++) {
        sched_yield();
        s = atomic_load_explicit(&c->state, memory_order_acquire);
    }
    return s == CALLCOUNT_DEFINED;
}

/* See callcount.h. */
void callcount_flush(callcount_class *c, uint64_t t, callcount *counts)
{
    OTF2_Type types[CALLCOUNT_MAX_MEMBERS];
    OTF2_MetricValue v[CALLCOUNT_MAX_MEMBERS];

    if (!defined(c))
        return;
    for (unsigned i = 0; i < c->n; i++) {
        if (!c->counted[i])
            continue;
        types[c->slot[i]] = types[c->slot[i] + 1] = OTF2_TYPE_UINT64;
        v[c->slot[i]].unsigned_int = counts[i].calls;
        v[c->slot[i] + 1].unsigned_int =
            callcount_ns(counts[i].ticks, c->resolution);
    }
    if (weft_evt_Metric(NULL, t, c->metric, c->nmembers, types, v) == 0)
        memset(counts, 0, c->n * sizeof *counts);
}
