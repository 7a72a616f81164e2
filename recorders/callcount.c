/* callcount.c - the metric class of counted calls and its events
 * (callcount.h, proto/counts.h). */
#include <string.h>

#include "callcount.h"
#include "counts.h"
#include "recorder.h"
#include "weft.h"

/* See callcount.h. */
int callcount_define(callcount_class *c, const char *(*name)(unsigned))
{
    OTF2_MetricMemberRef m[254];
    unsigned n = 0;

    for (unsigned i = 0; i < c->n; i++) {
        OTF2_StringRef s;
        if (!c->counted[i])
            continue;
        if (n + 2 > sizeof m / sizeof *m)
            return -1;
        s = weft_string(name(i));
        for (int k = 0; k < 2; k++) {
            m[n] = weft__recorder_newid(WEFT_REF_METRIC_MEMBER);
            if (weft_def_MetricMember(
                    m[n], s,
                    weft_string(k ? WEFT_COUNTS_TIME : WEFT_COUNTS_CALLS),
                    OTF2_METRIC_TYPE_OTHER, OTF2_METRIC_ABSOLUTE_LAST,
                    OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, k ? -9 : 0,
                    weft_string(k ? "s" : "calls")) < 0)
                return -1;
            n++;
        }
        c->slot[i] = (uint8_t)(n - 2);
    }
    c->nmembers = (uint8_t)n;
    c->metric = weft__recorder_newid(WEFT_REF_METRIC);
    if (weft_def_MetricClass(c->metric, c->nmembers, m,
                             OTF2_METRIC_SYNCHRONOUS,
                             OTF2_RECORDER_KIND_ABSTRACT) < 0) {
        c->metric = OTF2_UNDEFINED_METRIC;
        return -1;
    }
    return 0;
}

/* See callcount.h. */
void callcount_flush(const callcount_class *c, uint64_t t, callcount *counts)
{
    OTF2_Type types[254];
    OTF2_MetricValue v[254];

    if (c->metric == OTF2_UNDEFINED_METRIC)
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
