/* view_window.c - the viewer's questions of a trace's index (see
 * view_index.h and view_index.c's DESIGN): the visits and messages of a
 * window of the timeline, one visit's details, what a trace holds. The
 * index is built and kept by view_index.c and view_file.c; summaries and
 * searches are view_summary.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "view_index.h"

/* (Galloping from `from`: the probes stay near it, so that a walk's next
 * visit, mostly a few visits on, reads the pages there and not pages all
 * over the depth, each of which a freshly written index maps as a large
 * folio: 246 MiB for one narrow window of a 100 M-event trace when this
 * was a binary search over the rest of the depth.) */
size_t weft__view_ending_after(const weft__vdepth *d, size_t from,
                               uint64_t t)
{
    size_t lo = from, hi, step = 1;

    if (lo >= d->n || d->v[lo].end > t)
        return lo;
    /* v[lo] ends at t or before: the first after it ending after t lies
     * in (lo, hi] */
    for (hi = lo + 1; hi < d->n && d->v[hi].end <= t; hi = lo + step) {
        lo = hi;
        step *= 2;
    }
    if (hi > d->n)
        hi = d->n;
    lo++;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->v[mid].end > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

size_t weft__view_sent_from(const weft__view *v, uint64_t t)
{
    size_t lo = 0, hi = v->nmsgs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->msgs[mid].send_t >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

size_t weft__view_at(const weft__vloc *l, unsigned d, uint64_t t)
{
    size_t k;

    if (d >= l->ndepth)
        return SIZE_MAX;
    k = weft__view_ending_after(&l->depth[d], 0, t);
    return k < l->depth[d].n && l->depth[d].v[k].start <= t ? k : SIZE_MAX;
}

/* Appends [a, b, c, d] (all integers) to arr; -1 out of memory. */
static int push4(json_t *arr, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    json_t *e = json_pack("[IIII]", (json_int_t)a, (json_int_t)b,
                          (json_int_t)c, (json_int_t)d);
    return e ? json_array_append_new(arr, e) : -1;
}

static int push3(json_t *arr, uint64_t a, uint64_t b, uint64_t c)
{
    json_t *e = json_pack("[III]", (json_int_t)a, (json_int_t)b,
                          (json_int_t)c);
    return e ? json_array_append_new(arr, e) : -1;
}

/* The walk of DESIGN over the n visits v of depth d: visits a column
 * wide into spans, a bin for the columns of narrower ones (binned: the
 * columns of this depth that have one). Column k covers
 * [t0 + k * w, t0 + (k + 1) * w), w = (t1 - t0) / px, a real number;
 * times are compared as such (a visit is a column wide when its length
 * is at least w). */
static int walk(const weft__vspan *v, size_t n, size_t k, unsigned d,
                uint64_t t0, uint64_t t1, unsigned px, uint8_t *binned,
                json_t *spans, json_t *bins)
{
    weft__vdepth dv = { .v = (weft__vspan *)v, .n = n };
    double w = (double)(t1 - t0) / px;
    uint64_t t = t0;

    for (;;) {
        const weft__vspan *s;
        uint64_t from;
        unsigned col;

        k = weft__view_ending_after(&dv, k, t);
        if (k >= n || v[k].start >= t1)
            return 0;
        s = &v[k];
        if ((double)(s->end - s->start) >= w) {
            if (push4(spans, s->start, s->end, s->region, d) < 0)
                return -1;
            t = s->end;
            k++;
            continue;
        }
        from = s->start > t ? s->start : t;
        col = (unsigned)((double)(from - t0) / w);
        if (col >= px)
            col = px - 1;
        if (!binned[col]) {
            binned[col] = 1;
            if (push3(bins, col, d, s->region) < 0)
                return -1;
        }
        /* on to the next column's start (at least one tick on) */
        t = t0 + (uint64_t)((double)(col + 1) * w);
        if (t <= from)
            t = from + 1;
        if (t >= t1)
            return 0;
    }
}

/* The first visit of dv that may end after t: the first of the block
 * whose last visit ends after t, found among the blocks' times (a small
 * array), so that the walk begins by reading one block, not pages all
 * over the depth; 0 without blocks. */
static size_t block_from(const weft__vdepth *dv, unsigned bsize, uint64_t t)
{
    size_t lo = 0, hi = dv->nblk;

    if (!dv->blk || !dv->bt)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dv->bt[mid].end > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo * bsize < dv->n ? lo * bsize : dv->n;
}

/* Depth d of a window: from the coarsest level whose width is at most a
 * column's, else from the visits themselves (DESIGN). */
static int window_depth(const weft__vdepth *dv, unsigned bsize, unsigned d,
                        uint64_t t0, uint64_t t1, unsigned px,
                        uint8_t *binned, json_t *spans, json_t *bins)
{
    double w = (double)(t1 - t0) / px;
    const weft__vlevel *lv = NULL;

    memset(binned, 0, px);
    for (unsigned k = 0; k < dv->nlv && (double)dv->lv[k].width <= w; k++)
        lv = &dv->lv[k];
    if (!lv)
        return walk(dv->v, dv->n, block_from(dv, bsize, t0), d, t0, t1, px,
                    binned, spans, bins);
    if (walk(lv->wide, lv->nwide, 0, d, t0, t1, px, binned, spans, bins) <
        0)
        return -1;
    for (uint64_t b = t0 > lv->base ? (t0 - lv->base) / lv->width : 0;
         b < lv->nfirst && lv->base + b * lv->width < t1; b++) {
        uint64_t at = lv->base + b * lv->width, from = at > t0 ? at : t0;
        unsigned col = (unsigned)((double)(from - t0) / w);
        if (lv->first[b] == WEFT__VIEW_NONE)
            continue;
        if (col >= px)
            col = px - 1;
        if (!binned[col]) {
            binned[col] = 1;
            if (push3(bins, col, d, lv->first[b]) < 0)
                return -1;
        }
    }
    return 0;
}

/* The messages part of a window (view_index.h) into o; in: the
 * locations asked for (by index; NULL: all). */
static int window_messages(const weft__view *v, uint64_t t0, uint64_t t1,
                           const uint8_t *in, json_t *o)
{
    json_t *msgs = json_array();
    uint64_t more = 0;
    size_t k, hi;

    if (!msgs || json_object_set_new(o, "messages", msgs) < 0)
        return -1;
    /* sent before t1: the ones below the first sent at t1 or later, in
     * blocks; a block whose messages all ended before t0 is skipped */
    hi = weft__view_sent_from(v, t1);
    for (k = 0; k < hi; k++) {
        const weft__vmsg *m = &v->msgs[k];
        json_t *e;
        if (k % WEFT__VIEW_MARK_BLOCK == 0 &&
            v->msg_hi[k / WEFT__VIEW_MARK_BLOCK] < t0) {
            k += WEFT__VIEW_MARK_BLOCK - 1;
            continue;
        }
        /* in flight during the window (a receive timed before its send,
         * clocks apart, still overlaps by its two ends) */
        if ((m->recv_t < t0 && m->send_t < t0) ||
            (m->recv_t >= t1 && m->send_t >= t1))
            continue;
        if (in && !in[m->send_loc] && !in[m->recv_loc])
            continue;
        if (json_array_size(msgs) == WEFT__VIEW_MSG_MAX) {
            more++;
            continue;
        }
        e = json_pack("[IIIIIII]", (json_int_t)v->locs[m->send_loc].loc,
                      (json_int_t)m->send_t,
                      (json_int_t)v->locs[m->recv_loc].loc,
                      (json_int_t)m->recv_t, (json_int_t)m->tag,
                      (json_int_t)m->bytes, (json_int_t)m->comm);
        if (!e || json_array_append_new(msgs, e) < 0)
            return -1;
    }
    return json_object_set_new(o, "messages_more", json_integer((json_int_t)more));
}

json_t *weft__view_window(const weft__view *v, uint64_t t0, uint64_t t1,
                          unsigned px, const size_t *locs, size_t n)
{
    json_t *o = json_pack("{sIsIsI}", "t0", (json_int_t)t0, "t1",
                          (json_int_t)t1, "px", (json_int_t)px);
    json_t *rows = json_array();
    uint8_t *binned = malloc(px), *in = NULL;

    if (!o || !rows || !binned || json_object_set_new(o, "rows", rows) < 0)
        goto oom;
    if (locs) {
        if (!(in = calloc(v->nlocs ? v->nlocs : 1, 1)))
            goto oom;
        for (size_t k = 0; k < n; k++)
            in[locs[k]] = 1;
    }
    if (!locs)
        n = v->nlocs;
    for (size_t r = 0; r < n; r++) {
        const weft__vloc *l = &v->locs[locs ? locs[r] : r];
        json_t *spans = json_array(), *bins = json_array();
        json_t *row = json_pack("{sIsoso}", "loc", (json_int_t)l->loc,
                                "spans", spans, "bins", bins);

        if (!row || json_array_append_new(rows, row) < 0)
            goto oom;
        for (unsigned d = 0; d < l->ndepth; d++)
            if (window_depth(&l->depth[d], weft__view_block(v), d, t0, t1,
                             px, binned, spans, bins) < 0)
                goto oom;
    }
    if (window_messages(v, t0, t1, in, o) < 0 ||
        weft__view_window_marks(v, t0, t1, px, in, o) < 0)
        goto oom;
    free(binned);
    free(in);
    return o;
oom:
    free(binned);
    free(in);
    json_decref(o);
    return NULL;
}

/* Region r's source as api/span says it: {file, begin, end} (lines 0
 * where unknown), or null where the definition names no file. */
static json_t *span_source(const weft__view *v, uint32_t r)
{
    const weft__vregion *g = r < v->nregions ? &v->regions[r] : NULL;

    if (!g || !g->file || !*g->file)
        return json_null();
    return json_pack("{sssIsI}", "file", g->file, "begin",
                     (json_int_t)g->begin, "end", (json_int_t)g->end);
}

json_t *weft__view_span(const weft__view *v, size_t i, unsigned depth,
                        uint64_t t, int *missing)
{
    const weft__vloc *l = &v->locs[i];
    size_t k = weft__view_at(l, depth, t);
    const weft__vspan *s;
    json_t *o, *path;

    *missing = k == SIZE_MAX;
    if (*missing)
        return NULL;
    s = &l->depth[depth].v[k];
    path = json_array();
    if (!path)
        return NULL;
    /* outermost first: walk up, inserting at the front */
    for (unsigned d = depth + 1, at = (unsigned)k; d-- > 0;) {
        const weft__vspan *p = &l->depth[d].v[at];
        const char *name = p->region < v->nregions
                               ? v->regions[p->region].name : "";
        if (json_array_insert_new(path, 0, json_string(name)) < 0) {
            json_decref(path);
            return NULL;
        }
        at = p->parent;
    }
    o = json_pack("{sIsIsIsssssIsIsIsIsIso}",
                  "loc", (json_int_t)l->loc, "depth", (json_int_t)depth,
                  "region", (json_int_t)s->region,
                  "name", s->region < v->nregions
                              ? v->regions[s->region].name : "",
                  "paradigm", s->region < v->nregions
                                  ? v->regions[s->region].paradigm : "",
                  "start", (json_int_t)s->start, "end", (json_int_t)s->end,
                  "duration", (json_int_t)(s->end - s->start),
                  "inclusive", (json_int_t)(s->end - s->start),
                  "exclusive", (json_int_t)(s->end - s->start - s->children),
                  "path", path);
    if (o && json_object_set_new(o, "source", span_source(v, s->region)) < 0) {
        json_decref(o);
        return NULL;
    }
    /* its Enter's attributes, where it had any */
    if (o) {
        json_t *attrs = weft__view_attrs_of(v, i, depth, s->start);
        if (attrs && json_object_set_new(o, "attributes", attrs) < 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *weft__view_describe(const weft__view *v, size_t index)
{
    json_t *locs = json_array(), *regions = json_array(),
           *comms = json_array(), *o;

    if (!locs || !regions || !comms)
        goto oom;
    for (size_t i = 0; i < v->nlocs; i++) {
        const weft__vloc *l = &v->locs[i];
        json_t *e = json_pack("{sIsssssssI}", "loc", (json_int_t)l->loc,
                              "name", l->name, "group", l->group,
                              "host", l->host, "depth",
                              (json_int_t)l->ndepth);
        /* its first and last events' times (none without events): the
         * span of its time outside traced regions */
        if (e && l->any &&
            (json_object_set_new(e, "first", json_integer((json_int_t)l->first)) < 0 ||
             json_object_set_new(e, "last", json_integer((json_int_t)l->last)) < 0)) {
            json_decref(e);
            e = NULL;
        }
        if (!e || json_array_append_new(locs, e) < 0)
            goto oom;
    }
    for (size_t r = 0; r < v->nregions; r++) {
        json_t *e = json_pack("{sIssss}", "id", (json_int_t)r, "name",
                              v->regions[r].name, "paradigm",
                              v->regions[r].paradigm);
        if (!e || json_array_append_new(regions, e) < 0)
            goto oom;
    }
    for (size_t c = 0; c < v->ncomms; c++)
        if (json_array_append_new(comms, json_string(v->comms[c])) < 0)
            goto oom;
    o = json_pack("{sIsssssIsIsIsIsIsIsIsIsososo}", "index", (json_int_t)index,
                  "name", v->name ? v->name : "", "key",
                  v->key ? v->key : "", "resolution",
                  (json_int_t)v->resolution, "offset",
                  (json_int_t)v->offset, "t0", (json_int_t)0, "t1",
                  (json_int_t)v->length, "visits", (json_int_t)v->visits,
                  "messages", (json_int_t)v->nmsgs, "unmatched_messages",
                  (json_int_t)v->unmatched_msgs, "counted",
                  (json_int_t)v->counted, "locations", locs,
                  "regions", regions, "comms", comms);
    if (o && weft__view_describe_marks(v, o) < 0) {
        json_decref(o);
        return NULL;
    }
    if (o)
        return o;
    locs = regions = comms = NULL;  /* json_pack took them, even failing */
oom:
    json_decref(locs);
    json_decref(regions);
    json_decref(comms);
    return NULL;
}
