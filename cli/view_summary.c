/* view_summary.c - what `weft view` sums up of a window of a trace
 * (api/summary: call paths, regions, paradigms per location, messages)
 * and what it finds in it (api/find: the visits of the regions whose
 * name holds a text, their count, the next or previous one), exact,
 * from the index of view_index.c.
 *
 * DESIGN
 * Every visit is on a call path (weft__vpath: the region, entered from
 * its parent's path), numbered as the visits are read; each depth keeps
 * its visits' path ids beside them (4 bytes a visit). Over a window
 * [t0, t1) a visit counts its time clipped to the window (incl), and its
 * exclusive time is that less its children's clipped times. Since a
 * child overlapping the window has its parent overlapping it too, the
 * exclusive time of a path is its inclusive time less that of its
 * children's paths: a visit adds its clipped time to its path's incl and
 * excl and takes it from its parent path's excl, and nothing needs to
 * know which visit was whose parent.
 *
 * At one depth the visits overlapping the window are one index range
 * (two searches), of which only the first and the last can be clipped. Each depth is cut into blocks of B (WEFT__VIEW_BLOCK) visits,
 * and each block keeps, per path met in it, its visits and their time
 * (weft__vagg, sorted by path): the blocks wholly inside the range add
 * their aggregates, only the two edge blocks are walked visit by visit.
 * Each block also keeps its first visit's start and its last visit's
 * end (weft__vbtime): the window's first and last visits are searched
 * among the blocks' times, then within one block, and an edge block
 * wholly inside the window is added up from its aggregates too. So an
 * answer reads the visits of at most two blocks per depth, not pages all
 * over the depth as a binary search over its visits does: each page
 * read stays in the viewer's memory until the answer is sent, and the
 * page cache may hold a freshly written file in large folios that map
 * 2 MB at a time (a whole-trace summary of bench/view.sh's trace took
 * 236 MB so; with the blocks' times it takes 5 MB, and no summary or
 * search of its steps more than 75 MB).
 * A window thus costs at most 2 B visits and (visits / B) blocks'
 * aggregates per depth and location, whatever its width: a few thousand
 * aggregates for a whole 16.8 M-visit trace, a few thousand visits for a
 * narrow window. A block's aggregates are as many as the paths in it,
 * few in practice, so they cost about 16 * paths / B bytes per visit:
 * with the path ids, the index grows by 4 bytes and a little per visit
 * (bench/view.sh's trace: about 2 bytes more per event, 15.5 in all).
 *
 * A region's inclusive time counts a visit inside a visit of the same
 * region once, the outermost (a path whose region is also an
 * ancestor's, `nested`, adds none), as weft profile does; for the whole
 * trace and every location the regions' figures are weft profile's, in
 * ticks (but for visits nested deeper than WEFT__VIEW_DEPTH_MAX, which
 * the index does not keep). Calls counted and not recorded one by one
 * (view_counts.c) add up as visits of their path at the time they were
 * counted. A location's "outside" is the window's time within its first
 * and last events (of any kind) that no depth-0 visit (or count) covers:
 * over the whole trace, weft profile's "outside traced calls" row. Its
 * paradigms are weft profile's names of its regions' (the region's
 * definition's paradigm; "unknown" for a region without one).
 *
 * Find's next and previous walk each depth from the time asked for,
 * skipping the blocks whose aggregates have no path of a matching
 * region (the one the time is in too, unsearched), so they read the
 * visits of the block where they find one, and of the first block
 * when it has one. The
 * messages of a summary are those sent in the window, walked one by one
 * (they are sorted by send time): that costs what the window sends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashtab.h"
#include "view_index.h"

/* A number's digits (as a string literal). */
#define TEXT_(n) #n
#define TEXT(n) TEXT_(n)

/* A paradigm's name for a region without one. */
#define PARADIGM_UNKNOWN "unknown"

unsigned weft__view_block(const weft__view *v)
{
    return v->block ? v->block : WEFT__VIEW_BLOCK;
}

/* ---- building ------------------------------------------------------------ */

static int agg_order(const void *pa, const void *pb)
{
    const weft__vagg *a = pa, *b = pb;

    return a->path < b->path ? -1 : a->path > b->path;
}

/* The blocks of depth dv (slot: by path, WEFT__VIEW_NONE, and left so). */
static int depth_blocks(weft__vdepth *dv, unsigned bsize, uint32_t *slot)
{
    size_t cap = 0;

    dv->nblk = (dv->n + bsize - 1) / bsize;
    dv->nagg = 0;
    if (!(dv->blk = malloc((dv->nblk + 1) * sizeof *dv->blk)) ||
        !(dv->bt = malloc((dv->nblk ? dv->nblk : 1) * sizeof *dv->bt)))
        return -1;
    for (size_t b = 0; b < dv->nblk; b++) {
        size_t end = (b + 1) * bsize < dv->n ? (b + 1) * bsize : dv->n;

        dv->bt[b] = (weft__vbtime){ dv->v[b * bsize].start,
                                    dv->v[end - 1].end };
        dv->blk[b] = (uint32_t)dv->nagg;
        for (size_t k = b * bsize; k < end; k++) {
            uint32_t p = dv->path[k];
            if (slot[p] == WEFT__VIEW_NONE) {
                if (dv->nagg == cap) {
                    size_t c = cap ? cap * 2 : 64;
                    weft__vagg *m = realloc(dv->agg, c * sizeof *m);
                    if (!m)
                        return -1;
                    dv->agg = m;
                    cap = c;
                }
                slot[p] = (uint32_t)dv->nagg;
                dv->agg[dv->nagg++] = (weft__vagg){ .path = p };
            }
            dv->agg[slot[p]].visits++;
            dv->agg[slot[p]].incl += dv->v[k].end - dv->v[k].start;
        }
        for (size_t e = dv->blk[b]; e < dv->nagg; e++)
            slot[dv->agg[e].path] = WEFT__VIEW_NONE;
        if (dv->nagg - dv->blk[b] > 1)
            qsort(&dv->agg[dv->blk[b]], dv->nagg - dv->blk[b],
                  sizeof *dv->agg, agg_order);
    }
    dv->blk[dv->nblk] = (uint32_t)dv->nagg;
    return 0;
}

int weft__view_blocks(weft__view *v, size_t i)
{
    weft__vloc *l = &v->locs[i];
    uint32_t *slot = malloc((v->npaths ? v->npaths : 1) * sizeof *slot);
    int rc = 0;

    if (!slot)
        return -1;
    memset(slot, 0xff, (v->npaths ? v->npaths : 1) * sizeof *slot);
    for (unsigned d = 0; d < l->ndepth && rc == 0; d++) {
        weft__vdepth *dv = &l->depth[d];
        /* blk holds 32-bit places (a depth's visits are numbered in 32
         * bits: weft__vspan.parent) */
        if (dv->blk || !dv->cap || dv->n > UINT32_MAX)
            continue;
        rc = depth_blocks(dv, weft__view_block(v), slot);
    }
    free(slot);
    return rc;
}

/* ---- the walk ------------------------------------------------------------ */

/* What a walk adds up: `visits` visits of path p, `ticks` long in the
 * window. */
typedef void add_fn(void *ctx, uint32_t p, uint64_t visits, uint64_t ticks);

/* Does dv have blocks of bsize visits (a mapped file's are checked, but
 * a depth may have none: too many visits)? */
static int has_blocks(const weft__vdepth *dv, unsigned bsize)
{
    return dv->blk && dv->bt && dv->nblk == (dv->n + bsize - 1) / bsize;
}

/* The first visit of dv starting at t or later (ending after t: `end`
 * 1) among [lo, hi). */
static size_t search(const weft__vdepth *dv, size_t lo, size_t hi,
                     uint64_t t, int end)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (end ? dv->v[mid].end > t : dv->v[mid].start >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The first block of dv (that has them) whose first visit starts at t
 * or later (whose last visit ends after t: `end` 1), or dv->nblk. */
static size_t first_block(const weft__vdepth *dv, uint64_t t, int end)
{
    size_t lo = 0, hi = dv->nblk;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (end ? dv->bt[mid].end > t : dv->bt[mid].start >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The first visit of dv starting at t or later (ending after t: `end`
 * 1; dv->n if none): among the blocks' times first, then in the one
 * block where it is, so that a search reads one block's visits, not
 * pages all over the depth's (DESIGN). */
static size_t first_visit(const weft__view *v, const weft__vdepth *dv,
                          uint64_t t, int end)
{
    size_t bsize = weft__view_block(v), lo, hi;

    if (!has_blocks(dv, (unsigned)bsize))
        return search(dv, 0, dv->n, t, end);
    /* the first block whose last visit ends after t: it is there; or
     * the first block whose first visit starts at t or later: it is
     * there or at the end of the block before */
    lo = first_block(dv, t, end);
    if (end) {
        if (lo == dv->nblk)
            return dv->n;
        hi = (lo + 1) * bsize < dv->n ? (lo + 1) * bsize : dv->n;
        return search(dv, lo * bsize, hi, t, 1);
    }
    if (lo == 0)
        return 0;
    return search(dv, (lo - 1) * bsize, lo * bsize < dv->n ? lo * bsize
                                                            : dv->n, t, 0);
}

/* Visits [a, b) of dv, one by one, clipped to [t0, t1). */
static void add_visits(const weft__view *v, const weft__vdepth *dv,
                       size_t a, size_t b, uint64_t t0, uint64_t t1,
                       add_fn *add, void *ctx)
{
    for (size_t k = a; k < b; k++) {
        const weft__vspan *s = &dv->v[k];
        uint64_t from = s->start > t0 ? s->start : t0;
        uint64_t to = s->end < t1 ? s->end : t1;
        if (dv->path[k] < v->npaths)    /* (a damaged file's are not) */
            add(ctx, dv->path[k], 1, to > from ? to - from : 0);
    }
}

/* Every visit of l overlapping [t0, t1) (DESIGN): the edge blocks' one
 * by one, the others' aggregates; an edge block too when all its visits
 * are inside the window (its times say so). */
static void walk_location(const weft__view *v, const weft__vloc *l,
                          uint64_t t0, uint64_t t1, add_fn *add, void *ctx)
{
    unsigned bsize = weft__view_block(v);

    for (unsigned d = 0; d < l->ndepth; d++) {
        const weft__vdepth *dv = &l->depth[d];
        size_t a = first_visit(v, dv, t0, 1), b = first_visit(v, dv, t1, 0);
        size_t ba, bl, from, to, bend;

        if (a >= b)
            continue;
        ba = a / bsize;
        bl = (b - 1) / bsize;
        if (ba == bl || !has_blocks(dv, bsize)) {
            add_visits(v, dv, a, b, t0, t1, add, ctx);
            continue;
        }
        /* whole blocks [from, to): strict, as a visit of no length at
         * t0 or t1 is not in the window */
        from = a == ba * bsize && dv->bt[ba].start > t0 ? ba : ba + 1;
        bend = (bl + 1) * bsize < dv->n ? (bl + 1) * bsize : dv->n;
        to = b == bend && dv->bt[bl].end < t1 ? bl + 1 : bl;
        if (from > ba)
            add_visits(v, dv, a, (ba + 1) * bsize, t0, t1, add, ctx);
        for (size_t e = dv->blk[from]; e < dv->blk[to]; e++)
            if (dv->agg[e].path < v->npaths)
                add(ctx, dv->agg[e].path, dv->agg[e].visits,
                    dv->agg[e].incl);
        if (to <= bl)
            add_visits(v, dv, bl * bsize, b, t0, t1, add, ctx);
    }
}

/* ---- api/summary --------------------------------------------------------- */

/* The sums of a summary. */
typedef struct sums {
    const weft__view *v;
    uint64_t *visits, *incl; /* by path, over the locations */
    int64_t *excl;           /* by path (negative while adding up) */
    const uint32_t *par;     /* by path: its region's paradigm index */
    int64_t *lpar;           /* by paradigm: this location's exclusive
                                ticks */
    uint64_t top;            /* this location's ticks at depth 0 */
} sums;

static void add_sums(void *ctx, uint32_t p, uint64_t visits, uint64_t ticks)
{
    sums *x = ctx;
    uint32_t up = x->v->paths[p].parent;

    x->visits[p] += visits;
    x->incl[p] += ticks;
    x->excl[p] += (int64_t)ticks;
    x->lpar[x->par[p]] += (int64_t)ticks;
    if (up == WEFT__VIEW_NONE) {
        x->top += ticks;
    } else {
        x->excl[up] -= (int64_t)ticks;
        x->lpar[x->par[up]] -= (int64_t)ticks;
    }
}

static uint64_t clamp0(int64_t t)
{
    return t > 0 ? (uint64_t)t : 0;
}

/* The paradigms of v's regions: names[k] the k-th distinct one, by[r]
 * region r's index in it; index nregions is PARADIGM_UNKNOWN's. Returns
 * how many, or 0 out of memory. */
static size_t paradigms(const weft__view *v, const char ***names,
                        uint32_t **by)
{
    size_t n = 0;

    *names = malloc((v->nregions + 1) * sizeof **names);
    *by = malloc((v->nregions + 1) * sizeof **by);
    if (!*names || !*by)
        return 0;
    (*names)[n++] = PARADIGM_UNKNOWN;
    for (size_t r = 0; r <= v->nregions; r++) {
        const char *p = r < v->nregions && v->regions[r].paradigm[0]
                            ? v->regions[r].paradigm : PARADIGM_UNKNOWN;
        size_t k = 0;
        while (k < n && strcmp((*names)[k], p))
            k++;
        if (k == n)
            (*names)[n++] = p;
        (*by)[r] = (uint32_t)k;
    }
    return n;
}

/* Appends location l's object to arr: its exclusive ticks per paradigm
 * (those it has) and outside (DESIGN). */
static int location_json(const weft__vloc *l, const sums *x,
                         const char **names, size_t npar, uint64_t t0,
                         uint64_t t1, json_t *arr)
{
    json_t *par = json_object();
    uint64_t from = t0, to = t1, outside = 0;

    if (!par || json_array_append_new(arr, json_pack("{sIso}", "loc",
                                                     (json_int_t)l->loc,
                                                     "paradigms", par)) < 0)
        return -1;
    for (size_t k = 0; k < npar; k++)
        if (x->lpar[k] > 0 &&
            json_object_set_new(par, names[k],
                                json_integer((json_int_t)x->lpar[k])) < 0)
            return -1;
    if (l->any) {
        from = l->first > t0 ? l->first : t0;
        to = l->last < t1 ? l->last : t1;
        if (to > from && to - from > x->top)
            outside = to - from - x->top;
    }
    return json_object_set_new(par, "outside",
                               json_integer((json_int_t)outside));
}

/* Path ids by inclusive time (arg: by path), most first, then by id. */
static int incl_order(const void *pa, const void *pb, void *arg)
{
    const uint64_t *incl = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

    if (incl[a] != incl[b])
        return incl[a] > incl[b] ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* One region's sums. */
typedef struct rsum {
    uint64_t visits, incl, excl;
} rsum;

/* Region ids by exclusive time (arg: rsum by region), most first, as
 * weft profile sorts them, then by id. */
static int excl_order(const void *pa, const void *pb, void *arg)
{
    const rsum *r = arg;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

    if (r[a].excl != r[b].excl)
        return r[a].excl > r[b].excl ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* Appends path p's region ids, outermost first, to arr. */
static int path_json(const weft__view *v, uint32_t p, json_t *arr)
{
    for (uint32_t a = p; a != WEFT__VIEW_NONE; a = v->paths[a].parent)
        if (json_array_insert_new(arr, 0,
                                  json_integer((json_int_t)v->paths[a].region))
            < 0)
            return -1;
    return 0;
}

/* The callpaths and regions parts of a summary into o. */
static int paths_json(const weft__view *v, const sums *x, json_t *o)
{
    json_t *cp = json_array(), *rg = json_array();
    uint32_t *ids = malloc((v->npaths ? v->npaths : 1) * sizeof *ids);
    uint32_t *rids = NULL;
    rsum *reg = NULL;
    size_t n = 0, nreg = 0, nr = 0, shown;
    int rc = -1;

    if (json_object_set_new(o, "callpaths", cp) < 0 ||
        json_object_set_new(o, "regions", rg) < 0 || !ids)
        goto out;
    for (size_t p = 0; p < v->npaths; p++)
        if (v->paths[p].region >= nreg)
            nreg = (size_t)v->paths[p].region + 1;
    if (!(reg = calloc(nreg ? nreg : 1, sizeof *reg)) ||
        !(rids = malloc((nreg ? nreg : 1) * sizeof *rids)))
        goto out;
    for (uint32_t p = 0; p < v->npaths; p++) {
        const weft__vpath *vp = &v->paths[p];
        if (!x->visits[p])
            continue;
        ids[n++] = p;
        reg[vp->region].visits += x->visits[p];
        reg[vp->region].incl += vp->nested ? 0 : x->incl[p];
        reg[vp->region].excl += clamp0(x->excl[p]);
    }
    if (n > 1)
        qsort_r(ids, n, sizeof *ids, incl_order, x->incl);
    shown = n < WEFT__VIEW_CALLPATHS_MAX ? n : WEFT__VIEW_CALLPATHS_MAX;
    for (size_t k = 0; k < shown; k++) {
        uint32_t p = ids[k];
        json_t *path = json_array();
        if (!path || json_array_append_new(
                         cp, json_pack("{sosIsIsI}", "path", path, "visits",
                                       (json_int_t)x->visits[p], "incl",
                                       (json_int_t)x->incl[p], "excl",
                                       (json_int_t)clamp0(x->excl[p]))) < 0 ||
            path_json(v, p, path) < 0)
            goto out;
    }
    if (json_object_set_new(o, "callpaths_more",
                            json_integer((json_int_t)(n - shown))) < 0)
        goto out;
    for (uint32_t r = 0; r < nreg; r++)
        if (reg[r].visits)
            rids[nr++] = r;
    if (nr > 1)
        qsort_r(rids, nr, sizeof *rids, excl_order, reg);
    for (size_t k = 0; k < nr; k++)
        if (json_array_append_new(
                rg, json_pack("{sIsIsIsI}", "region", (json_int_t)rids[k],
                              "visits", (json_int_t)reg[rids[k]].visits,
                              "incl", (json_int_t)reg[rids[k]].incl, "excl",
                              (json_int_t)reg[rids[k]].excl)) < 0)
            goto out;
    rc = 0;
out:
    free(rids);
    free(reg);
    free(ids);
    return rc;
}

/* One cell of the messages' matrix: those from one location to another
 * (key: the receiving location's index + 1). */
typedef struct mcell {
    uint32_t key;
    uint32_t from;           /* the sending location's index */
    uint64_t count, bytes;
} mcell;

static int cell_order(const void *pa, const void *pb)
{
    const mcell *a = pa, *b = pb;

    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The messages part of a summary into o: those sent in [t0, t1) from
 * the locations marked in `in` (NULL: all), and per pair of locations
 * (in the index's order of the sending, then the receiving one). */
static int messages_json(const weft__view *v, uint64_t t0, uint64_t t1,
                         const uint8_t *in, json_t *o)
{
    weft_hashtab *to = calloc(v->nlocs ? v->nlocs : 1, sizeof *to);
    json_t *mx = json_array();
    mcell *cells = NULL;
    uint64_t count = 0, bytes = 0;
    size_t ncells = 0;
    int rc = -1;

    if (!to || !mx)
        goto out;
    for (size_t k = weft__view_sent_from(v, t0);
         k < v->nmsgs && v->msgs[k].send_t < t1; k++) {
        const weft__vmsg *m = &v->msgs[k];
        mcell *c;
        if (m->send_loc >= v->nlocs || m->recv_loc >= v->nlocs ||
            (in && !in[m->send_loc]))
            continue;
        if (!(c = weft_hashtab_get(&to[m->send_loc], m->recv_loc + 1,
                                   sizeof *c)))
            goto out;
        ncells += c->count == 0;
        c->from = m->send_loc;
        c->count++;
        c->bytes += m->bytes;
        count++;
        bytes += m->bytes;
    }
    if (!(cells = malloc((ncells ? ncells : 1) * sizeof *cells)))
        goto out;
    ncells = 0;
    for (size_t s = 0; s < v->nlocs; s++)
        for (size_t i = 0; to[s].used && i < to[s].ncells; i++) {
            const mcell *c = weft_hashtab_at(&to[s], i, sizeof *c);
            if (c)
                cells[ncells++] = *c;
        }
    if (ncells > 1)
        qsort(cells, ncells, sizeof *cells, cell_order);
    for (size_t k = 0; k < ncells; k++)
        if (json_array_append_new(
                mx, json_pack("[IIII]", (json_int_t)v->locs[cells[k].from].loc,
                              (json_int_t)v->locs[cells[k].key - 1].loc,
                              (json_int_t)cells[k].count,
                              (json_int_t)cells[k].bytes)) < 0)
            goto out;
    rc = json_object_set_new(o, "messages",
                             json_pack("{sIsIso}", "count", (json_int_t)count,
                                       "bytes", (json_int_t)bytes, "matrix",
                                       mx));
    mx = NULL;  /* json_pack took it, even failing */
out:
    json_decref(mx);
    for (size_t s = 0; to && s < v->nlocs; s++)
        weft_hashtab_free(&to[s]);
    free(to);
    free(cells);
    return rc;
}

/* The locations marked (NULL: all of them), malloc'd; *oom 1 when out
 * of memory. */
static uint8_t *marked(const weft__view *v, const size_t *locs, size_t n,
                       int *oom)
{
    uint8_t *in;

    *oom = 0;
    if (!locs)
        return NULL;
    if (!(in = calloc(v->nlocs ? v->nlocs : 1, 1))) {
        *oom = 1;
        return NULL;
    }
    for (size_t k = 0; k < n; k++)
        in[locs[k]] = 1;
    return in;
}

json_t *weft__view_summary(const weft__view *v, uint64_t t0, uint64_t t1,
                           const size_t *locs, size_t n)
{
    json_t *o = json_pack("{sIsI}", "t0", (json_int_t)t0, "t1",
                          (json_int_t)t1);
    json_t *larr = json_array();
    size_t np = v->npaths ? v->npaths : 1, npar = 0;
    sums x = { .v = v };
    const char **names = NULL;
    uint32_t *byreg = NULL, *par = NULL;
    uint8_t *in = NULL;
    int oom;

    if (!o || json_object_set_new(o, "locations", larr) < 0)
        goto fail;
    x.visits = calloc(np, sizeof *x.visits);
    x.incl = calloc(np, sizeof *x.incl);
    x.excl = calloc(np, sizeof *x.excl);
    x.par = par = malloc(np * sizeof *par);
    if (!x.visits || !x.incl || !x.excl || !par ||
        !(npar = paradigms(v, &names, &byreg)) ||
        !(x.lpar = calloc(npar, sizeof *x.lpar)))
        goto fail;
    for (size_t p = 0; p < v->npaths; p++)
        par[p] = byreg[v->paths[p].region < v->nregions ? v->paths[p].region
                                                        : v->nregions];
    if (!locs)
        n = v->nlocs;
    for (size_t r = 0; r < n; r++) {
        const weft__vloc *l = &v->locs[locs ? locs[r] : r];
        memset(x.lpar, 0, npar * sizeof *x.lpar);
        x.top = 0;
        walk_location(v, l, t0, t1, add_sums, &x);
        weft__view_counts_walk(v, l, t0, t1, add_sums, &x);
        if (location_json(l, &x, names, npar, t0, t1, larr) < 0)
            goto fail;
    }
    in = marked(v, locs, n, &oom);
    if (oom || paths_json(v, &x, o) < 0 ||
        messages_json(v, t0, t1, in, o) < 0)
        goto fail;
out:
    free(in);
    free(x.visits);
    free(x.incl);
    free(x.excl);
    free(x.lpar);
    free(par);
    free(names);
    free(byreg);
    return o;
fail:
    json_decref(o);
    o = NULL;
    goto out;
}

/* ---- api/find ------------------------------------------------------------ */

/* The paths of a region whose name holds q (case aside): by path, 1 or
 * 0, and the regions as a JSON array (*regions). NULL out of memory, or
 * with *bad when q is not a text to find. */
static uint8_t *matching(const weft__view *v, const char *q,
                         json_t **regions, const char **bad)
{
    uint8_t *byreg, *bypath;
    json_t *utf8;

    *regions = NULL;
    *bad = NULL;
    if (!q || !*q || strlen(q) > WEFT__VIEW_FIND_MAX) {
        *bad = "q: the text to find, 1 to " TEXT(WEFT__VIEW_FIND_MAX)
               " bytes";
        return NULL;
    }
    /* the answer says q again: JSON strings are UTF-8 */
    if (!(utf8 = json_string(q))) {
        *bad = "q: not UTF-8";
        return NULL;
    }
    json_decref(utf8);
    byreg = calloc(v->nregions + 1, 1);
    bypath = calloc(v->npaths ? v->npaths : 1, 1);
    *regions = json_array();
    if (!byreg || !bypath || !*regions)
        goto oom;
    for (size_t r = 0; r < v->nregions; r++)
        if (strcasestr(v->regions[r].name, q)) {
            byreg[r] = 1;
            if (json_array_append_new(*regions,
                                      json_integer((json_int_t)r)) < 0)
                goto oom;
        }
    for (size_t p = 0; p < v->npaths; p++)
        bypath[p] = v->paths[p].region < v->nregions &&
                    byreg[v->paths[p].region];
    free(byreg);
    return bypath;
oom:
    free(byreg);
    free(bypath);
    json_decref(*regions);
    *regions = NULL;
    return NULL;
}

/* A count of the visits of matching paths. */
typedef struct counter {
    const uint8_t *match;
    uint64_t n;
} counter;

static void add_count(void *ctx, uint32_t p, uint64_t visits, uint64_t ticks)
{
    counter *c = ctx;

    (void)ticks;
    if (c->match[p])
        c->n += visits;
}

json_t *weft__view_find(const weft__view *v, const char *q, uint64_t t0,
                        uint64_t t1, const size_t *locs, size_t n,
                        const char **bad)
{
    json_t *regions, *per = json_array(), *o = NULL;
    counter all = { 0 };
    uint8_t *match = matching(v, q, &regions, bad);

    if (!match || !per)
        goto fail;
    all.match = match;
    if (!locs)
        n = v->nlocs;
    for (size_t r = 0; r < n; r++) {
        const weft__vloc *l = &v->locs[locs ? locs[r] : r];
        counter c = { .match = match };
        walk_location(v, l, t0, t1, add_count, &c);
        all.n += c.n;
        if (json_array_append_new(per, json_pack("[II]", (json_int_t)l->loc,
                                                 (json_int_t)c.n)) < 0)
            goto fail;
    }
    o = json_pack("{sssIsIsosIso}", "q", q, "t0", (json_int_t)t0, "t1",
                  (json_int_t)t1, "regions", regions, "count",
                  (json_int_t)all.n, "per_loc", per);
    free(match);
    return o;
fail:
    free(match);
    json_decref(regions);
    json_decref(per);
    return NULL;
}

/* Does block b of dv have a visit of a matching path? (1 when dv has no
 * blocks: then its visits are walked.) */
static int block_matches(const weft__view *v, const weft__vdepth *dv,
                         size_t b, const uint8_t *match)
{
    if (!has_blocks(dv, weft__view_block(v)))
        return 1;
    for (size_t e = dv->blk[b]; e < dv->blk[b + 1]; e++)
        if (dv->agg[e].path < v->npaths && match[dv->agg[e].path])
            return 1;
    return 0;
}

static int visit_matches(const weft__view *v, const weft__vdepth *dv,
                         size_t k, const uint8_t *match)
{
    return dv->path[k] < v->npaths && match[dv->path[k]];
}

/* The first visit of dv starting after t (dir 1), or the last starting
 * before t (dir -1), or at t too with incl, of a matching path: its
 * index, or SIZE_MAX. Whole blocks without one are skipped (DESIGN). */
static size_t next_in_depth(const weft__view *v, const weft__vdepth *dv,
                            const uint8_t *match, uint64_t t, int dir,
                            int incl)
{
    size_t bsize = weft__view_block(v), k, c;

    if (incl && dir < 0) {   /* starting at t or before: before t + 1 */
        if (t == UINT64_MAX)
            return SIZE_MAX;
        t++;
    } else if (!incl && dir > 0) {  /* after t: from t + 1 on */
        if (t == UINT64_MAX)
            return SIZE_MAX;
        t++;
    }
    /* the block where that is (after the blocks before, which start
     * before t): searched only when it has a matching visit */
    if (!has_blocks(dv, (unsigned)bsize)) {
        k = search(dv, 0, dv->n, t, 0);
    } else if ((c = first_block(dv, t, 0)) == 0) {
        k = 0;
    } else if (block_matches(v, dv, c - 1, match)) {
        k = search(dv, (c - 1) * bsize, c * bsize < dv->n ? c * bsize
                                                           : dv->n, t, 0);
    } else {
        k = dir > 0 ? (c * bsize < dv->n ? c * bsize : dv->n)
                    : (c - 1) * bsize;
    }
    if (dir > 0) {
        while (k < dv->n) {
            size_t b = k / bsize, end = (b + 1) * bsize;
            if (end > dv->n)
                end = dv->n;
            if (k == b * bsize && !block_matches(v, dv, b, match)) {
                k = end;
                continue;
            }
            for (; k < end; k++)
                if (visit_matches(v, dv, k, match))
                    return k;
        }
        return SIZE_MAX;
    }
    while (k > 0) {                  /* those before k start before t */
        size_t b = (k - 1) / bsize, begin = b * bsize;
        if ((k == dv->n || k % bsize == 0) &&
            !block_matches(v, dv, b, match)) {
            k = begin;
            continue;
        }
        for (; k > begin; k--)
            if (visit_matches(v, dv, k - 1, match))
                return k - 1;
    }
    return SIZE_MAX;
}

/* Is (i, d) after (ci, cd) in the order of location index, then depth?
 * (ci SIZE_MAX: nothing is after it; a cursor of no place.) */
static int place_after(size_t i, unsigned d, size_t ci, unsigned cd)
{
    return ci != SIZE_MAX && (i > ci || (i == ci && d > cd));
}

json_t *weft__view_find_next(const weft__view *v, const char *q, uint64_t t,
                             size_t ci, unsigned cd, int dir,
                             const size_t *locs, size_t n, const char **bad)
{
    json_t *regions, *hit = NULL, *o;
    uint8_t *match = matching(v, q, &regions, bad);
    const weft__vspan *best = NULL;
    size_t bloc = 0;
    unsigned bdepth = 0;

    if (!match)
        return NULL;
    json_decref(regions);
    if (!locs)
        n = v->nlocs;
    for (size_t r = 0; r < n; r++) {
        size_t i = locs ? locs[r] : r;
        const weft__vloc *l = &v->locs[i];
        for (unsigned d = 0; d < l->ndepth; d++) {
            /* a visit starting at t itself comes after the cursor (next)
             * or before it (previous) by its place */
            int same = dir > 0 ? place_after(i, d, ci, cd)
                               : ci != SIZE_MAX && !place_after(i, d, ci, cd) &&
                                     (i != ci || d != cd);
            size_t k = next_in_depth(v, &l->depth[d], match, t, dir, same);
            const weft__vspan *s = k == SIZE_MAX ? NULL : &l->depth[d].v[k];
            /* better: sooner (next) or later (previous), then, at the same
             * time, the first place after the cursor (next) or the last
             * before it (previous) */
            if (s && (!best ||
                      (dir > 0 ? s->start < best->start
                               : s->start > best->start) ||
                      (s->start == best->start &&
                       (dir > 0 ? !place_after(i, d, bloc, bdepth)
                                : place_after(i, d, bloc, bdepth))))) {
                best = s;
                bloc = i;
                bdepth = d;
            }
        }
    }
    free(match);
    if (best &&
        !(hit = json_pack("{sIsIsIsIsI}", "loc", (json_int_t)v->locs[bloc].loc,
                          "depth", (json_int_t)bdepth, "start",
                          (json_int_t)best->start, "end",
                          (json_int_t)best->end, "region",
                          (json_int_t)best->region)))
        return NULL;
    o = json_pack("{ssso}", "q", q, "hit", hit ? hit : json_null());
    return o;
}
