/* metricsum.c - metric values over time (metricsum.h). */
#include "metricsum.h"

#include <math.h>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <stdlib.h>
#include <string.h>

#include "weft_errors.h"

/* 0 or WEFT_ENOMEM. */
int weft_metricmap_build(weft_metricmap *m, const weft_defview *defs)
{
    size_t nc = weft_defview_count(defs, WEFT_REC_MetricClass);
    size_t ni = weft_defview_count(defs, WEFT_REC_MetricInstance);

    memset(m, 0, sizeof *m);
    if (!nc)
        return 0;
    m->n = nc + ni;
    if (!(m->cls = calloc(m->n, sizeof *m->cls)))
        return WEFT_ENOMEM;
    for (size_t i = 0; i < nc; i++) {
        const weft_record *c = weft_defview_get(defs, WEFT_REC_MetricClass,
                                                i);
        if (c && c->u.MetricClass.self < m->n)
            m->cls[c->u.MetricClass.self] = c;
    }
    for (size_t i = 0; i < ni; i++) {
        const weft_record *x = weft_defview_get(defs,
                                                WEFT_REC_MetricInstance, i);
        uint32_t k;
        if (!x || x->u.MetricInstance.self >= m->n)
            continue;
        k = x->u.MetricInstance.metricClass;
        if (k < m->n && m->cls[k] &&
            m->cls[k]->type == WEFT_REC_MetricClass)
            m->cls[x->u.MetricInstance.self] = m->cls[k];
    }
    return 0;
}

void weft_metricmap_free(weft_metricmap *m)
{
    free(m->cls);
    memset(m, 0, sizeof *m);
}

/* Halves the bins of s: pairs merged, width doubled. */
static void merge(weft_metric_series *s)
{
    weft_metric_bin *b = s->bins;

    for (uint32_t i = 0; i < WEFT_METRICSUM_BINS / 2; i++) {
        weft_metric_bin x = b[2 * i], y = b[2 * i + 1];
        if (isnan(x.min))
            b[i] = y;
        else if (isnan(y.min))
            b[i] = x;
        else
            b[i] = (weft_metric_bin){ fmin(x.min, y.min),
                                      fmax(x.max, y.max), y.last };
    }
    for (uint32_t i = WEFT_METRICSUM_BINS / 2; i < WEFT_METRICSUM_BINS; i++)
        b[i].min = b[i].max = b[i].last = NAN;
    s->n = (s->n + 1) / 2;
    s->width *= 2;
}

/* The series of member in l, made when new and there is room; NULL when
 * counted only, *oom set when out of memory. */
static weft_metric_series *series(weft_metricloc *l, uint32_t member,
                                  int *oom)
{
    weft_metric_series *s;

    for (size_t i = 0; i < l->n; i++)
        if (l->s[i].member == member)
            return &l->s[i];
    if (l->n == WEFT_METRICSUM_PER_LOC) {
        for (size_t i = 0; i < l->nothers; i++)
            if (l->others[i] == member)
                return NULL;
        if (l->nothers == l->others_cap) {
            size_t cap = l->others_cap ? l->others_cap * 2 : 16;
            uint32_t *v = realloc(l->others, cap * sizeof *v);
            if (!v) {
                *oom = 1;
                return NULL;
            }
            l->others = v;
            l->others_cap = cap;
        }
        l->others[l->nothers++] = member;
        return NULL;
    }
    if (!l->s && !(l->s = calloc(WEFT_METRICSUM_PER_LOC, sizeof *l->s))) {
        *oom = 1;
        return NULL;
    }
    s = &l->s[l->n];
    if (!(s->bins = malloc(WEFT_METRICSUM_BINS * sizeof *s->bins))) {
        *oom = 1;
        return NULL;
    }
    for (uint32_t i = 0; i < WEFT_METRICSUM_BINS; i++)
        s->bins[i].min = s->bins[i].max = s->bins[i].last = NAN;
    s->member = member;
    s->n = 0;
    l->n++;
    return s;
}

/* 0 or WEFT_ENOMEM. */
int weft_metricsum_add(weft_metricloc *l, uint32_t member, uint64_t t,
                       double v, uint64_t width)
{
    int oom = 0;
    weft_metric_series *s = series(l, member, &oom);
    weft_metric_bin *b;
    uint64_t k;

    if (!s)
        return oom ? WEFT_ENOMEM : 0;
    if (isnan(v))
        return 0;
    if (!s->n) {
        s->first = t;
        s->width = width ? width : 1;
    }
    if (t < s->first)
        t = s->first;
    while ((k = (t - s->first) / s->width) >= WEFT_METRICSUM_BINS)
        merge(s);
    b = &s->bins[k];
    if (isnan(b->min))
        *b = (weft_metric_bin){ v, v, v };
    else
        *b = (weft_metric_bin){ fmin(b->min, v), fmax(b->max, v), v };
    if (k + 1 > s->n)
        s->n = (uint32_t)k + 1;
    return 0;
}

/* 0 or WEFT_ENOMEM. */
int weft_metricsum_event(weft_metricloc *l, const weft_metricmap *m,
                         const weft_record *r, uint64_t width)
{
    const weft_Metric *e = &r->u.Metric;
    const weft_record *c;
    int rc;

    if (e->metric >= m->n || !(c = m->cls[e->metric]))
        return 0;
    for (uint32_t i = 0; i < e->numberOfMetrics &&
                         i < c->u.MetricClass.numberOfMetrics; i++) {
        double v;
        switch (e->typeIDs[i]) {
        case OTF2_TYPE_INT64:
            v = (double)e->metricValues[i].signed_int;
            break;
        case OTF2_TYPE_UINT64:
            v = (double)e->metricValues[i].unsigned_int;
            break;
        case OTF2_TYPE_DOUBLE:
            v = e->metricValues[i].floating_point;
            break;
        default:
            continue;
        }
        rc = weft_metricsum_add(l, c->u.MetricClass.metricMembers[i],
                                r->time, v, width);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void weft_metricloc_free(weft_metricloc *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i].bins);
    free(l->s);
    free(l->others);
    memset(l, 0, sizeof *l);
}

static uint32_t remap(uint32_t m, const uint32_t *map, size_t nmap)
{
    return m < nmap ? map[m] : UINT32_MAX;
}

void weft_metricloc_remap(weft_metricloc *l, const uint32_t *map,
                          size_t nmap)
{
    for (size_t i = 0; i < l->n; i++)
        l->s[i].member = remap(l->s[i].member, map, nmap);
    for (size_t i = 0; i < l->nothers; i++)
        l->others[i] = remap(l->others[i], map, nmap);
}

/* See metricsum.h. */
int weft_metricsum_pick(const weft_metricloc *const *locs, size_t n,
                        size_t max, weft_metricsum_row_fn make, void *ctx,
                        weft_metric_row **rows, size_t *nrows)
{
    uint64_t total = 0;
    size_t want = 0;

    *rows = NULL;
    *nrows = 0;
    for (size_t i = 0; i < n; i++) {
        total += locs[i]->n + locs[i]->nothers;
        for (size_t k = 0; k < locs[i]->n; k++)
            want += locs[i]->s[k].n > 0;
    }
    if (want > max)
        want = max;
    if (!want)
        return 0;
    if (!(*rows = calloc(want, sizeof **rows)))
        return WEFT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < locs[i]->n && *nrows < want; k++) {
            weft_metric_row *row = &(*rows)[*nrows];
            if (!locs[i]->s[k].n)
                continue;
            ++*nrows;
            row->series_total = total;
            if (make(ctx, i, &locs[i]->s[k], row) < 0)
                return WEFT_ENOMEM;
        }
    return 0;
}

/* 0 or WEFT_ENOMEM. */
int weft_metricsum_row(const weft_metric_series *s, const weft_defview *defs,
                       uint64_t location, uint64_t a, uint64_t b, uint64_t t0,
                       uint64_t resolution, weft_metric_row *row)
{
    const weft_record *mm = weft_defview_get(defs, WEFT_REC_MetricMember,
                                             s->member);
    double res = (double)resolution;
    const char *name = "", *unit = "";

    if (mm && mm->u.MetricMember.self == s->member) {
        name = weft_defview_string(defs, mm->u.MetricMember.name);
        unit = weft_defview_string(defs, mm->u.MetricMember.unit);
    }
    row->location = location;
    row->member = s->member;
    row->start_s = a > t0 ? (double)(a - t0) / res : 0.0;
    row->width_s = b > a ? (double)(b - a) / s->n / res
                         : (double)s->width / res;
    row->npoints = s->n;
    row->name = strdup(name);
    row->unit = strdup(unit);
    row->points = malloc((s->n ? s->n : 1) * 3 * sizeof *row->points);
    if (!row->name || !row->unit || !row->points)
        return WEFT_ENOMEM;
    for (uint32_t i = 0; i < s->n; i++) {
        row->points[3 * i] = s->bins[i].min;
        row->points[3 * i + 1] = s->bins[i].max;
        row->points[3 * i + 2] = s->bins[i].last;
    }
    return 0;
}
