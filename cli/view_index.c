/* view_index.c - each location's region visits by depth, and the
 * viewer's questions of them (see view_index.h).
 *
 * DESIGN
 * A window of the timeline is answered depth by depth with a walk that
 * jumps: from a time t, the first visit ending after t is a search away
 * (galloping from the walk's last visit, the first one from the block
 * where the window begins, view_window.c); a visit at least a column
 * wide is sent whole and the walk
 * goes on from its end; a narrower one gives its column a bin and the
 * walk jumps to the next column. Every visit a column wide or more spans
 * a column boundary, so none is skipped, and a window costs at most
 * three searches per column and depth, however many visits the trace
 * holds there.
 *
 * Far out, the columns hold many visits each, and searching each
 * column's start in the whole array touches the whole array (the index
 * of a 33.6 M-event trace is 460 MB). So each depth of more than
 * LEVEL_MIN visits also has levels: for widths w_0 < w_1 < ... (w_0 a
 * power of two of at least LEVEL_RATIO times the mean space between
 * visits, each 4 times the one before, while the depth's time holds
 * LEVEL_MIN_BUCKETS of them) the visits at least w_k long (at most one
 * per w_k ticks: they do not overlap) and, per bucket of w_k ticks from
 * the depth's first visit, the region of the first shorter visit that
 * starts in it. A window of
 * columns w wide takes the coarsest level with w_k <= w: its long
 * visits hold every visit a column wide (walked as above), its buckets
 * (at most 4 per column) mark where the narrower ones are. Windows
 * finer than w_0 walk the visits themselves, which are then at most
 * about LEVEL_RATIO per column, side by side in the array. Either way a
 * window reads a few bytes per column, wherever it is: the levels cost
 * at most 2.7 bytes per visit (32 / LEVEL_RATIO * 4/3 for the long ones,
 * 4 / LEVEL_RATIO * 4/3 for the buckets).
 *
 * As a visit is entered it gets its call path (the path of the visit
 * open one depth up, and its region: weft__vpath, one table per trace,
 * each path's children a list), kept beside it; once a location is read
 * its depths are cut into blocks that add up their visits per path, for
 * the summaries and searches of view_summary.c (see its DESIGN). All
 * told the index holds 36 bytes per visit (the visit, its path id), the
 * levels and the blocks' aggregates: 15.5 bytes per event for
 * bench/view.sh's trace (two events a visit).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "view_index.h"

/* A visit not left yet. */
#define OPEN UINT64_MAX
/* Levels (DESIGN): a depth has them from this many visits on, the
 * finest w_0 of LEVEL_RATIO times the visits' mean space, while
 * LEVEL_MIN_BUCKETS of a width fit the depth's time. */
#define LEVEL_MIN 4096
#define LEVEL_RATIO 16
#define LEVEL_MIN_BUCKETS 64

/* ---- building ------------------------------------------------------------ */

/* t is a time of location l's events. */
static void see(weft__vloc *l, uint64_t t)
{
    if (!l->any || t < l->first)
        l->first = t;
    if (!l->any || t > l->last)
        l->last = t;
    l->any = 1;
}

/* The id of the path entering region from path parent (WEFT__VIEW_NONE:
 * from none), made when new: the children of a path are a list (few, as
 * a program calls few things from one place). Returns it, or
 * WEFT__VIEW_NONE out of memory. */
static uint32_t path_of(weft__view *v, uint32_t parent, uint32_t region);

uint32_t weft__view_path(weft__view *v, uint32_t parent, uint32_t region)
{
    return path_of(v, parent, region);
}

static uint32_t path_of(weft__view *v, uint32_t parent, uint32_t region)
{
    uint32_t *at, p;

    for (p = v->cappaths ? v->path_child[parent + 1u] : WEFT__VIEW_NONE;
         p != WEFT__VIEW_NONE; p = v->path_next[p])
        if (v->paths[p].region == region)
            return p;
    if (v->npaths == v->cappaths) {
        size_t cap = v->cappaths ? v->cappaths * 2 : 64;
        weft__vpath *m = realloc(v->paths, cap * sizeof *m);
        uint32_t *c, *x;
        if (!m)
            return WEFT__VIEW_NONE;
        v->paths = m;
        if (!(c = realloc(v->path_child, (cap + 1) * sizeof *c)))
            return WEFT__VIEW_NONE;
        v->path_child = c;
        if (!(x = realloc(v->path_next, cap * sizeof *x)))
            return WEFT__VIEW_NONE;
        v->path_next = x;
        if (!v->cappaths)
            v->path_child[0] = WEFT__VIEW_NONE;
        v->cappaths = cap;
    }
    at = &v->path_child[parent + 1u];
    if (v->npaths >= WEFT__VIEW_NONE)
        return WEFT__VIEW_NONE;
    p = (uint32_t)v->npaths++;
    v->paths[p] = (weft__vpath){
        .parent = parent, .region = region,
        .depth = parent == WEFT__VIEW_NONE ? 0 : v->paths[parent].depth + 1,
    };
    for (uint32_t a = parent; a != WEFT__VIEW_NONE; a = v->paths[a].parent)
        if (v->paths[a].region == region)
            v->paths[p].nested = 1;
    v->path_child[p + 1] = WEFT__VIEW_NONE;
    v->path_next[p] = *at;
    *at = p;
    return p;
}

int weft__view_enter(weft__view *v, size_t i, uint32_t region, uint64_t t,
                     unsigned *depth)
{
    weft__vloc *l = &v->locs[i];
    unsigned d = (*depth)++;
    weft__vdepth *dv;
    uint32_t path;

    see(l, t);
    if (d >= WEFT__VIEW_DEPTH_MAX) {
        v->too_deep++;
        return 0;
    }
    if (d >= l->ndepth) {
        weft__vdepth *m = realloc(l->depth, (d + 1) * sizeof *m);
        if (!m)
            return -1;
        memset(&m[l->ndepth], 0, (d + 1 - l->ndepth) * sizeof *m);
        l->depth = m;
        l->ndepth = d + 1;
    }
    dv = &l->depth[d];
    if (dv->n == dv->cap) {
        size_t cap = dv->cap ? dv->cap * 2 : 64;
        weft__vspan *m = realloc(dv->v, cap * sizeof *m);
        uint32_t *p;
        if (!m)
            return -1;
        dv->v = m;
        if (!(p = realloc(dv->path, cap * sizeof *p)))
            return -1;
        dv->path = p;
        dv->cap = cap;
    }
    path = path_of(v, d ? l->depth[d - 1].path[l->depth[d - 1].n - 1]
                        : WEFT__VIEW_NONE, region);
    if (path == WEFT__VIEW_NONE)
        return -1;
    dv->path[dv->n] = path;
    dv->v[dv->n++] = (weft__vspan){
        .start = t, .end = OPEN, .region = region,
        .parent = d ? (uint32_t)(l->depth[d - 1].n - 1) : UINT32_MAX,
    };
    v->visits++;
    return 0;
}

int weft__view_leave(weft__view *v, size_t i, uint64_t t, unsigned *depth)
{
    weft__vloc *l = &v->locs[i];
    weft__vspan *s;
    unsigned d;

    see(l, t);
    if (*depth == 0) {
        v->unmatched++;
        return 0;
    }
    d = --(*depth);
    if (d >= WEFT__VIEW_DEPTH_MAX)
        return 0;
    s = &l->depth[d].v[l->depth[d].n - 1];
    s->end = t < s->start ? s->start : t;
    if (d > 0)
        l->depth[d - 1].v[s->parent].children += s->end - s->start;
    return 0;
}

/* One level of width w over the visits of d, from base for span ticks
 * (DESIGN). */
static int make_level(const weft__vdepth *d, uint64_t w, uint64_t base,
                      uint64_t span, weft__vlevel *lv)
{
    size_t nwide = 0;

    memset(lv, 0, sizeof *lv);
    lv->width = w;
    lv->base = base;
    lv->nfirst = (size_t)(span / w + 1);
    for (size_t k = 0; k < d->n; k++)
        nwide += d->v[k].end - d->v[k].start >= w;
    lv->first = malloc(lv->nfirst * sizeof *lv->first);
    lv->wide = malloc((nwide ? nwide : 1) * sizeof *lv->wide);
    if (!lv->first || !lv->wide)
        return -1;
    memset(lv->first, 0xff, lv->nfirst * sizeof *lv->first);
    for (size_t k = 0; k < d->n; k++) {
        const weft__vspan *s = &d->v[k];
        if (s->end - s->start >= w)
            lv->wide[lv->nwide++] = *s;
        else if (lv->first[(s->start - base) / w] == WEFT__VIEW_NONE)
            lv->first[(s->start - base) / w] = s->region;
    }
    return 0;
}

int weft__view_levels(weft__view *v, size_t i)
{
    weft__vloc *l = &v->locs[i];

    for (unsigned k = 0; k < l->ndepth; k++) {
        weft__vdepth *d = &l->depth[k];
        uint64_t base, span, w = 1;

        if (d->n < LEVEL_MIN)
            continue;
        /* the depth's own time, not the trace's (a thread may start
         * late, end early) */
        base = d->v[0].start;
        span = d->v[d->n - 1].end - base;
        while (w < span / d->n * LEVEL_RATIO && w < UINT64_MAX / 8)
            w *= 2;
        for (; span / w >= LEVEL_MIN_BUCKETS &&
               d->nlv < WEFT__VIEW_LEVEL_MAX; w *= 4) {
            weft__vlevel *m = realloc(d->lv, (d->nlv + 1) * sizeof *m);
            if (!m)
                return -1;
            d->lv = m;
            if (make_level(d, w, base, span, &d->lv[d->nlv]) < 0) {
                free(d->lv[d->nlv].first);
                free(d->lv[d->nlv].wide);
                return -1;
            }
            d->nlv++;
        }
    }
    return weft__view_blocks(v, i);
}

typedef weft__vloader loader;

static uint64_t rel(const loader *ld, OTF2_TimeStamp ts)
{
    return ts > ld->offset ? ts - ld->offset : 0;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                  uint64_t pos, void *arg,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    loader *ld = arg;

    (void)loc, (void)pos;
    weft__arc_see(&ld->span, ts);
    if (weft__view_attrs_enter(ld, al, rel(ld, ts), ld->depth) < 0 ||
        weft__view_enter(ld->v, ld->i, region, rel(ld, ts), &ld->depth) < 0) {
        ld->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                  uint64_t pos, void *arg,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    loader *ld = arg;

    (void)loc, (void)pos, (void)al, (void)region;
    weft__arc_see(&ld->span, ts);
    weft__view_leave(ld->v, ld->i, rel(ld, ts), &ld->depth);
    return OTF2_CALLBACK_SUCCESS;
}

/* A send (recv 0) or receive of this location's, to rank `peer` of comm:
 * its channel as weft export keys it (export_events.c). */
static OTF2_CallbackCode message_end(loader *ld, OTF2_TimeStamp ts,
                                     int recv, uint32_t peer,
                                     OTF2_CommRef comm, uint32_t tag,
                                     uint64_t bytes)
{
    weft__xchan_key k = { .kind = WEFT__XCHAN_MESSAGE, .comm = comm,
                          .tag = tag };

    weft__arc_see(&ld->span, ts);
    if (ld->mpi)
        peer = weft__xmpi_process(ld->mpi, comm, peer, ld->self);
    k.from = recv ? peer : ld->self;
    k.to = recv ? ld->self : peer;
    if (weft__view_msg_end(ld->v, &k, recv, ld->i, rel(ld, ts), bytes) < 0) {
        ld->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_send(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                 uint64_t pos, void *arg,
                                 OTF2_AttributeList *al, uint32_t receiver,
                                 OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes)
{
    (void)loc, (void)pos, (void)al;
    return message_end(arg, ts, 0, receiver, comm, tag, bytes);
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                  uint64_t pos, void *arg,
                                  OTF2_AttributeList *al, uint32_t receiver,
                                  OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)loc, (void)pos, (void)al, (void)request;
    return message_end(arg, ts, 0, receiver, comm, tag, bytes);
}

static OTF2_CallbackCode on_recv(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                 uint64_t pos, void *arg,
                                 OTF2_AttributeList *al, uint32_t sender,
                                 OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes)
{
    (void)loc, (void)pos, (void)al;
    return message_end(arg, ts, 1, sender, comm, tag, bytes);
}

static OTF2_CallbackCode on_irecv(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                  uint64_t pos, void *arg,
                                  OTF2_AttributeList *al, uint32_t sender,
                                  OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)loc, (void)pos, (void)al, (void)request;
    return message_end(arg, ts, 1, sender, comm, tag, bytes);
}

/* See view_index.h. */
int weft__view_grow(void *pp, size_t *cap, size_t need, size_t size,
                    size_t first)
{
    size_t c = *cap ? *cap * 2 : first;
    void *p, *n;

    if (need <= *cap)
        return 0;
    if (c < need)
        c = need;
    if (c > SIZE_MAX / size)
        return -1;
    memcpy(&p, pp, sizeof p);
    if (!(n = realloc(p, c * size)))
        return -1;
    memcpy(pp, &n, sizeof n);
    *cap = c;
    return 0;
}

int weft__view_msg_end(weft__view *v, const weft__xchan_key *k, int recv,
                       size_t i, uint64_t t, uint64_t bytes)
{
    if (weft__view_grow(&v->ends, &v->capends, v->nends + 1, sizeof *v->ends,
                        256) < 0)
        return -1;
    v->ends[v->nends] = (weft__vend){ .k = *k, .loc = (uint32_t)i,
                                      .recv = recv, .t = t, .bytes = bytes,
                                      .seq = v->nends };
    v->nends++;
    return 0;
}

/* Ends by channel, sends before receives, each in the order read. */
static int end_order(const void *pa, const void *pb)
{
    const weft__vend *a = pa, *b = pb;
    const uint32_t ka[] = { a->k.kind, a->k.comm, a->k.from, a->k.to,
                            a->k.tag, (uint32_t)a->recv };
    const uint32_t kb[] = { b->k.kind, b->k.comm, b->k.from, b->k.to,
                            b->k.tag, (uint32_t)b->recv };

    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* A message's later end (a receive may be timed before its send when
 * clocks disagree). */
static uint64_t msg_hi(const void *p)
{
    const weft__vmsg *m = p;

    return m->send_t > m->recv_t ? m->send_t : m->recv_t;
}

static int msg_order(const void *pa, const void *pb)
{
    const weft__vmsg *a = pa, *b = pb;

    if (a->send_t != b->send_t)
        return a->send_t < b->send_t ? -1 : 1;
    return a->recv_t < b->recv_t ? -1 : a->recv_t > b->recv_t;
}

static int same_channel(const weft__xchan_key *a, const weft__xchan_key *b)
{
    return a->kind == b->kind && a->comm == b->comm && a->from == b->from &&
           a->to == b->to && a->tag == b->tag;
}

int weft__view_match(weft__view *v)
{
    size_t k = 0;

    if (v->nends > 1) /* (v->ends is NULL without messages) */
        qsort(v->ends, v->nends, sizeof *v->ends, end_order);
    free(v->msgs);
    v->msgs = calloc(v->nends / 2 + 1, sizeof *v->msgs);
    if (!v->msgs)
        return -1;
    v->nmsgs = 0;
    while (k < v->nends) {
        /* one channel: sends [k, r), then receives [r, e) */
        const weft__xchan_key *ch = &v->ends[k].k;
        size_t r = k, e, n;
        while (r < v->nends && !v->ends[r].recv &&
               same_channel(&v->ends[r].k, ch))
            r++;
        e = r;
        while (e < v->nends && same_channel(&v->ends[e].k, ch))
            e++;
        n = r - k < e - r ? r - k : e - r;
        for (size_t m = 0; m < n; m++) {
            const weft__vend *s = &v->ends[k + m], *d = &v->ends[r + m];
            v->msgs[v->nmsgs++] = (weft__vmsg){
                .send_t = s->t, .recv_t = d->t, .send_loc = s->loc,
                .recv_loc = d->loc, .comm = s->k.comm, .tag = s->k.tag,
                .bytes = s->bytes,
            };
        }
        v->unmatched_msgs += (e - k) - 2 * n;
        k = e;
    }
    if (v->nmsgs > 1)
        qsort(v->msgs, v->nmsgs, sizeof *v->msgs, msg_order);
    free(v->msg_hi);
    v->msg_hi = NULL;
    if (weft__view_block_his(v->msgs, v->nmsgs, sizeof *v->msgs, msg_hi,
                             &v->msg_hi, &v->nmsg_blk) < 0)
        return -1;
    free(v->ends);
    v->ends = NULL;
    v->nends = v->capends = 0;
    return 0;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* The regions' names and paradigms. */
static int load_regions(weft__view *v, const weft__arc *a)
{
    size_t n = a->nnames[WEFT_REF_REGION];

    v->regions = calloc(n ? n : 1, sizeof *v->regions);
    if (!v->regions)
        return -1;
    v->nregions = n;
    for (size_t r = 0; r < n; r++) {
        v->regions[r].name =
            dup_or_empty(weft__arc_name(a, WEFT_REF_REGION, r));
        if (!v->regions[r].name)
            return -1;
        char buf[sizeof v->regions[r].paradigm];
        snprintf(v->regions[r].paradigm, sizeof v->regions[r].paradigm, "%s",
                 weft__arc_region_paradigm(a, (uint32_t)r, buf));
        /* its source, where the definition names one */
        if (r < a->nregions && a->regions[r].file != OTF2_UNDEFINED_STRING)
            v->regions[r].file = dup_or_empty(
                weft__arc_string(a, a->regions[r].file));
        else
            v->regions[r].file = strdup("");
        if (!v->regions[r].file)
            return -1;
        if (r < a->nregions && *v->regions[r].file) {
            v->regions[r].begin = a->regions[r].begin != UINT32_MAX
                                      ? a->regions[r].begin : 0;
            v->regions[r].end = a->regions[r].end != UINT32_MAX
                                    ? a->regions[r].end : 0;
        }
    }
    return 0;
}

/* The communicators' names. */
/* The names of id space `kind` (comms, I/O handles, RMA windows) into
 * *names by id. */
static int load_names_of(char ***names, size_t *n, const weft__arc *a,
                         unsigned kind)
{
    *n = a->nnames[kind];
    *names = calloc(*n ? *n : 1, sizeof **names);
    if (!*names)
        return -1;
    for (size_t c = 0; c < *n; c++)
        if (!((*names)[c] = dup_or_empty(weft__arc_name(a, kind, c))))
            return -1;
    return 0;
}

static int load_comms(weft__view *v, const weft__arc *a)
{
    return load_names_of(&v->comms, &v->ncomms, a, WEFT_REF_COMM) < 0 ||
                   load_names_of(&v->handles, &v->nhandles, a,
                                 WEFT_REF_IO_HANDLE) < 0 ||
                   load_names_of(&v->windows, &v->nwindows, a,
                                 WEFT_REF_RMA_WIN) < 0
               ? -1
               : 0;
}

/* Location i's names: its own, its process's (location group), its
 * host's (the group's system tree node). */
static int load_names(weft__vloc *l, const weft__arc *a, size_t i)
{
    uint32_t g = a->locs[i].group;

    l->loc = a->locs[i].id;
    l->name = dup_or_empty(weft__arc_string(a, a->locs[i].name));
    l->group = dup_or_empty(weft__arc_name(a, WEFT_REF_LOCATION_GROUP, g));
    l->host = dup_or_empty(weft__arc_name(
        a, WEFT_REF_SYSTEM_TREE_NODE,
        g < a->nlg ? a->lg_parent[g] : OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    return l->name && l->group && l->host ? 0 : -1;
}

/* Closes what location i left open at its last event. */
static void close_open(weft__view *v, loader *ld)
{
    uint64_t end = ld->span.any ? rel(ld, ld->span.max) : 0;

    while (ld->depth > 0) {
        v->unmatched++;
        weft__view_leave(v, ld->i, end, &ld->depth);
    }
}

/* Reads the events of every location of a into v, each written into f
 * (when f) as soon as it is read. Returns 0, or -1 with *err (and
 * *cache_err when f failed: then *f is freed and v holds everything). */
static int read_events(weft__view *v, weft__arc *a, weft__vfile **f,
                       char **cache_err, char **err)
{
    OTF2_EvtReaderCallbacks *cbs = weft__arc_time_callbacks();
    weft__xmpi *mpi = NULL;
    weft__vcountmap cm = { 0 };
    uint64_t last = 0;

    if (!cbs)
        goto oom;
    OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, on_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, on_isend);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cbs, on_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cbs, on_irecv);
    weft__view_mark_callbacks(cbs);
    weft__view_count_callbacks(cbs);
    if ((a->ncomms && !(mpi = weft__xmpi_new(a))) ||
        weft__view_countmap(&cm, a, v) < 0)
        goto oom;
    for (size_t i = 0; i < a->nlocs; i++) {
        loader ld = { .v = v, .i = i, .offset = a->offset, .mpi = mpi,
                      .self = a->locs[i].group, .cm = &cm, .arc = a };
        uint64_t nread;

        if (weft__arc_read_location(a, i, cbs, &ld, &nread, err) < 0) {
            if (ld.oom) {
                free(*err);
                goto oom;
            }
            goto fail;
        }
        close_open(v, &ld);
        if (weft__view_marks_location_end(&ld) < 0)
            goto oom;
        if (ld.span.any) {
            see(&v->locs[i], rel(&ld, ld.span.min));
            see(&v->locs[i], rel(&ld, ld.span.max));
        }
        if (ld.span.any && rel(&ld, ld.span.max) > last)
            last = rel(&ld, ld.span.max);
        if (weft__view_levels(v, i) < 0)
            goto oom;
        if (*f && weft__vfile_location(*f, v, i) < 0) {
            /* the locations written are gone from v: read them again,
             * into memory this time */
            if (asprintf(cache_err, "cannot write %s: %s", (*f)->tmp,
                         strerror(errno)) < 0)
                *cache_err = NULL;
            weft__vfile_free(*f);
            *f = NULL;
            weft__xmpi_free(mpi);
            weft__view_countmap_free(&cm);
            OTF2_EvtReaderCallbacks_Delete(cbs);
            weft__view_forget(v);
            return read_events(v, a, f, cache_err, err);
        }
    }
    if (last > v->length)   /* the clock properties are the writer's word */
        v->length = last;
    if (weft__view_match(v) < 0 || weft__view_marks_done(v) < 0)
        goto oom;
    weft__xmpi_free(mpi);
    weft__view_countmap_free(&cm);
    OTF2_EvtReaderCallbacks_Delete(cbs);
    return 0;
oom:
    if (asprintf(err, "out of memory reading the events") < 0)
        *err = NULL;
fail:
    weft__xmpi_free(mpi);
    weft__view_countmap_free(&cm);
    if (cbs)
        OTF2_EvtReaderCallbacks_Delete(cbs);
    return -1;
}

int weft__view_load(weft__view *v, weft__arc *a, const struct stat *anchor,
                    const char *cache, int *built, char **cache_err,
                    char **err)
{
    weft__vfile file, *f = NULL;
    weft__vmsg *msgs;
    int r;

    *err = *cache_err = NULL;
    *built = 0;
    v->resolution = a->resolution;
    v->offset = a->offset;
    v->length = a->length;
    if (load_regions(v, a) < 0 || load_comms(v, a) < 0 ||
        !(v->locs = calloc(a->nlocs ? a->nlocs : 1, sizeof *v->locs)))
        goto oom;
    v->nlocs = a->nlocs;
    for (size_t i = 0; i < a->nlocs; i++)
        if (load_names(&v->locs[i], a, i) < 0)
            goto oom;
    if (cache) {
        if ((r = weft__vfile_map(v, cache, anchor)) == 1)
            return 0;
        if (r < 0)
            goto oom;
        if (weft__vfile_begin(&file, cache) == 0) {
            f = &file;
        } else {
            if (asprintf(cache_err, "cannot write %s: %s",
                         file.tmp ? file.tmp : cache, strerror(errno)) < 0)
                *cache_err = NULL;
            weft__vfile_free(&file);
        }
    }
    if (read_events(v, a, &f, cache_err, err) < 0)
        goto fail;
    if (!f)
        return 0;
    *built = 1;
    msgs = v->msgs;         /* in memory until the map has them */
    if ((r = weft__vfile_end(f, v, anchor)) < 0 ||
        (r = weft__vfile_map(v, cache, anchor)) == 0) {
        /* not written, or not usable: read it all again into memory */
        if (asprintf(cache_err, "cannot write %s: %s", cache,
                     r < 0 ? strerror(errno) : "not readable back") < 0)
            *cache_err = NULL;
        weft__vfile_free(f);
        f = NULL;
        unlink(cache);
        weft__view_forget(v);
        *built = 0;
        if (read_events(v, a, &f, cache_err, err) < 0)
            goto fail;
        return 0;
    }
    weft__vfile_free(f);
    f = NULL;
    if (r < 0)
        goto oom;
    free(msgs);
    return 0;
oom:
    if (asprintf(err, "out of memory reading the events") < 0)
        *err = NULL;
fail:
    if (f)
        weft__vfile_free(f);
    return -1;
}

void weft__view_forget_location(weft__view *v, size_t i)
{
    weft__vloc *l = &v->locs[i];

    for (unsigned d = 0; d < l->ndepth; d++) {
        weft__vdepth *dv = &l->depth[d];
        for (unsigned k = 0; dv->cap && k < dv->nlv; k++) {
            free(dv->lv[k].wide);
            free(dv->lv[k].first);
        }
        free(dv->lv);
        if (dv->cap) {  /* else in the map */
            free(dv->v);
            free(dv->path);
            free(dv->blk);
            free(dv->bt);
            free(dv->agg);
        }
    }
    free(l->depth);
    l->depth = NULL;
    l->ndepth = 0;
    l->first = l->last = 0;
    l->any = 0;
}

void weft__view_forget(weft__view *v)
{
    for (size_t i = 0; i < v->nlocs; i++)
        weft__view_forget_location(v, i);
    if (!v->map) {
        free(v->msgs);
        free(v->msg_hi);
    }
    v->msg_hi = NULL;
    v->nmsg_blk = 0;
    free(v->ends);
    if (v->cappaths)    /* else in the map */
        free(v->paths);
    free(v->path_child);
    free(v->path_next);
    v->paths = NULL;
    v->path_child = v->path_next = NULL;
    v->npaths = v->cappaths = 0;
    v->msgs = NULL;
    v->ends = NULL;
    v->nmsgs = v->nends = v->capends = 0;
    weft__view_marks_forget(v);
    if (!v->map)
        free(v->counts);
    v->counts = NULL;
    v->ncounts = v->capcounts = 0;
    v->counted = 0;
    if (!v->map) {
        free(v->attrs);
        free(v->apool);
    }
    v->attrs = NULL;
    v->apool = NULL;
    v->nattrs = v->capattrs = v->napool = v->capapool = 0;
    for (size_t i = 0; i < v->nlocs; i++) {
        v->locs[i].count0 = v->locs[i].ncount = 0;
        v->locs[i].attr0 = v->locs[i].nattr = 0;
    }
    v->visits = v->too_deep = v->unmatched = v->unmatched_msgs = 0;
}

void weft__view_free(weft__view *v)
{
    weft__view_forget(v);
    if (v->map)
        munmap(v->map, v->maplen);
    for (size_t i = 0; i < v->nlocs; i++) {
        free(v->locs[i].name);
        free(v->locs[i].group);
        free(v->locs[i].host);
    }
    free(v->locs);
    for (size_t r = 0; r < v->nregions; r++) {
        free(v->regions[r].name);
        free(v->regions[r].file);
    }
    free(v->regions);
    for (size_t c = 0; c < v->ncomms; c++)
        free(v->comms[c]);
    free(v->comms);
    for (size_t c = 0; c < v->nhandles; c++)
        free(v->handles[c]);
    free(v->handles);
    for (size_t c = 0; c < v->nwindows; c++)
        free(v->windows[c]);
    free(v->windows);
    free(v->name);
    free(v->key);
    memset(v, 0, sizeof *v);
}
