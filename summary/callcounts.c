/* callcounts.c - counted calls in the profile (callcounts.h). */
#include "callcounts.h"

#include <otf2/OTF2_GeneralDefinitions.h>
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "weft_errors.h"

/* The id + 1 of p's region named `name`, 0 if none. */
static uint32_t region_named(const weft_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nregions; i++)
        if (strcmp(p->name(p->name_arg, (uint32_t)i), name) == 0)
            return (uint32_t)i + 1;
    return 0;
}

/* 0 or WEFT_ENOMEM. */
int weft_callcounts_build(weft_callcounts *cc, const weft_defview *defs,
                          const weft_profile *p)
{
    size_t n = weft_defview_count(defs, WEFT_REC_MetricMember);

    memset(cc, 0, sizeof *cc);
    if (!n)
        return 0;
    cc->region = calloc(n, sizeof *cc->region);
    cc->is_time = calloc(n, sizeof *cc->is_time);
    cc->is_count = calloc(n, sizeof *cc->is_count);
    if (!cc->region || !cc->is_time || !cc->is_count)
        return WEFT_ENOMEM;
    cc->n = n;
    for (size_t i = 0; i < n; i++) {
        const weft_record *m = weft_defview_get(defs, WEFT_REC_MetricMember,
                                                i);
        const char *desc;
        int is_time;

        if (!m || m->u.MetricMember.self >= n)
            continue;
        desc = weft_defview_string(defs, m->u.MetricMember.description);
        is_time = strcmp(desc, WEFT_COUNTS_TIME) == 0;
        if (!is_time && strcmp(desc, WEFT_COUNTS_CALLS) != 0)
            continue;
        cc->region[m->u.MetricMember.self] = region_named(
            p, weft_defview_string(defs, m->u.MetricMember.name));
        cc->is_time[m->u.MetricMember.self] = (uint8_t)is_time;
        cc->is_count[m->u.MetricMember.self] = 1;
    }
    return 0;
}

void weft_callcounts_free(weft_callcounts *cc)
{
    free(cc->region);
    free(cc->is_time);
    free(cc->is_count);
    memset(cc, 0, sizeof *cc);
}

/* 0 or WEFT_ENOMEM. */
int weft_callcounts_event(const weft_callcounts *cc,
                          const weft_metricmap *mm, const weft_profile *p,
                          weft_profile_loc *l, const weft_record *r,
                          uint64_t resolution)
{
    const weft_record *cls;

    if (r->type != WEFT_REC_Metric || !cc->n ||
        r->u.Metric.metric >= mm->n || !(cls = mm->cls[r->u.Metric.metric]))
        return 0;
    for (size_t i = 0; i < r->u.Metric.numberOfMetrics &&
                       i < cls->u.MetricClass.numberOfMetrics; i++) {
        uint32_t m = cls->u.MetricClass.metricMembers[i];
        uint64_t v = r->u.Metric.metricValues[i].unsigned_int, ticks;
        int rc;

        if (m >= cc->n || !cc->region[m] ||
            r->u.Metric.typeIDs[i] != OTF2_TYPE_UINT64)
            continue;
        ticks = (uint64_t)((long double)v * (long double)resolution / 1e9L);
        rc = cc->is_time[m]
                 ? weft_profile_count(p, l, cc->region[m] - 1, 0, ticks)
                 : weft_profile_count(p, l, cc->region[m] - 1, v, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int weft_callcounts_only(const weft_callcounts *cc,
                         const weft_metricmap *mm, const weft_record *r)
{
    const weft_record *cls;

    if (r->type != WEFT_REC_Metric || !cc->n ||
        r->u.Metric.metric >= mm->n || !(cls = mm->cls[r->u.Metric.metric]) ||
        cls->u.MetricClass.numberOfMetrics == 0)
        return 0;
    for (uint32_t i = 0; i < cls->u.MetricClass.numberOfMetrics; i++) {
        uint32_t m = cls->u.MetricClass.metricMembers[i];
        if (m >= cc->n || !cc->is_count[m])
            return 0;
    }
    return 1;
}
