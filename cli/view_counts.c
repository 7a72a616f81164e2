/* view_counts.c - calls counted instead of recorded one by one
 * (proto/counts.h: a recorder's Metric events whose members count the
 * calls of a region, and their time) in weft view's summaries, so that
 * over the whole trace a summary's regions are weft profile's, which
 * adds them too (summary/callcounts.c).
 *
 * DESIGN
 * Each such Metric event becomes a count at its location and time: the
 * calls and the ticks of each region it counts, on the call path of
 * that region entered from the visit open at the event (none: from
 * outside any region), as if the calls were a visit there. A summary
 * adds the counts of its window as it adds visits (view_summary.c):
 * visits and time to that path, the time taken from the open visit's
 * path (from the time outside traced regions at depth 0), as weft
 * profile takes it from the region open at the event. Counts are kept
 * per location in time order (a location's are one range of the
 * counts), and a window's are a binary search away.
 */
#include <stdlib.h>
#include <string.h>

#include "counts.h"
#include "view_index.h"

int weft__view_countmap(weft__vcountmap *cm, const weft__arc *a,
                        const weft__view *v)
{
    weft_defview dv = weft__arc_view(a);
    size_t n = weft_defview_count(&dv, WEFT_REC_MetricMember);

    memset(cm, 0, sizeof *cm);
    cm->classes = a->classes;
    cm->nclasses = a->nclasses;
    cm->resolution = a->resolution;
    if (!n)
        return 0;
    cm->region = calloc(n, sizeof *cm->region);
    cm->is_time = calloc(n, sizeof *cm->is_time);
    if (!cm->region || !cm->is_time)
        return -1;
    cm->n = n;
    for (size_t m = 0; m < n; m++) {
        const weft_record *r = weft_defview_get(&dv, WEFT_REC_MetricMember, m);
        const char *desc, *name;
        if (!r || r->u.MetricMember.self >= n)
            continue;
        desc = weft_defview_string(&dv, r->u.MetricMember.description);
        name = weft_defview_string(&dv, r->u.MetricMember.name);
        if (!desc || !name || (strcmp(desc, WEFT_COUNTS_CALLS) != 0 &&
                               strcmp(desc, WEFT_COUNTS_TIME) != 0))
            continue;
        cm->is_time[m] = strcmp(desc, WEFT_COUNTS_TIME) == 0;
        /* the region of that name (weft profile's rows are by name) */
        for (size_t g = 0; g < v->nregions; g++)
            if (strcmp(v->regions[g].name, name) == 0) {
                cm->region[m] = (uint32_t)g + 1;
                break;
            }
    }
    return 0;
}

void weft__view_countmap_free(weft__vcountmap *cm)
{
    free(cm->region);
    free(cm->is_time);
    memset(cm, 0, sizeof *cm);
}

int weft__view_count(weft__view *v, size_t i, uint64_t t, uint32_t path,
                     uint64_t calls, uint64_t ticks)
{
    weft__vloc *l = &v->locs[i];

    if (weft__view_grow(&v->counts, &v->capcounts, v->ncounts + 1,
                        sizeof *v->counts, 64) < 0)
        return -1;
    if (!l->ncount)
        l->count0 = v->ncounts;
    else if (l->count0 + l->ncount != v->ncounts ||
             v->counts[v->ncounts - 1].t > t)
        return 0;   /* (a location's counts are read at once, in order) */
    v->counts[v->ncounts++] = (weft__vcount){ .t = t, .calls = calls,
                                              .ticks = ticks, .path = path };
    l->ncount++;
    v->counted += calls;
    return 0;
}

/* The path of the visit open at location ld now, or WEFT__VIEW_NONE. */
static uint32_t open_path(const weft__vloader *ld)
{
    const weft__vloc *l = &ld->v->locs[ld->i];
    unsigned d = ld->depth < l->ndepth ? ld->depth : l->ndepth;

    if (!d || !l->depth[d - 1].n)
        return WEFT__VIEW_NONE;
    return l->depth[d - 1].path[l->depth[d - 1].n - 1];
}

static OTF2_CallbackCode on_metric(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                   uint64_t pos, void *arg,
                                   OTF2_AttributeList *al,
                                   OTF2_MetricRef metric, uint8_t nvalues,
                                   const OTF2_Type *types,
                                   const OTF2_MetricValue *values)
{
    weft__vloader *ld = arg;
    const weft__vcountmap *cm = ld->cm;
    const OTF2_MetricMemberRef *members;
    uint64_t t;

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&ld->span, ts);
    t = ts > ld->offset ? ts - ld->offset : 0;
    if (!cm || !cm->n || metric >= cm->nclasses || !cm->classes[metric])
        return OTF2_CALLBACK_SUCCESS;
    members = cm->classes[metric];
    /* each counted member on its own; a region's calls and time are two
     * members, one count each (their sums are what matters) */
    for (unsigned k = 0; k < nvalues && k < members[0]; k++) {
        uint32_t m = members[k + 1], path;
        uint64_t calls = 0, ticks = 0;
        if (m >= cm->n || !cm->region[m] || types[k] != OTF2_TYPE_UINT64)
            continue;
        if (cm->is_time[m])
            ticks = (uint64_t)((long double)values[k].unsigned_int *
                               (long double)cm->resolution / 1e9L);
        else
            calls = values[k].unsigned_int;
        if (!calls && !ticks)
            continue;
        path = weft__view_path(ld->v, open_path(ld), cm->region[m] - 1);
        if (path == WEFT__VIEW_NONE ||
            weft__view_count(ld->v, ld->i, t, path, calls, ticks) < 0) {
            ld->oom = 1;
            return OTF2_CALLBACK_INTERRUPT;
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

void weft__view_count_callbacks(OTF2_EvtReaderCallbacks *cbs)
{
    OTF2_EvtReaderCallbacks_SetMetricCallback(cbs, on_metric);
}

void weft__view_counts_walk(const weft__view *v, const weft__vloc *l,
                            uint64_t t0, uint64_t t1,
                            void (*add)(void *, uint32_t, uint64_t,
                                        uint64_t),
                            void *ctx)
{
    const weft__vcount *c = v->counts + l->count0;
    size_t lo = 0, hi = l->ncount;

    if (!l->ncount || l->count0 + l->ncount > v->ncounts)
        return;
    while (lo < hi) {   /* the first at t0 or later */
        size_t mid = lo + (hi - lo) / 2;
        if (c[mid].t >= t0)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (; lo < l->ncount && c[lo].t < t1; lo++)
        if (c[lo].path < v->npaths)
            add(ctx, c[lo].path, c[lo].calls, c[lo].ticks);
}
