/* view_marks.c - the timeline's events that are not region visits, for
 * weft view (see view_index.h): MPI collectives, RMA operations and
 * synchronisations, threads created and joined (arrows from ThreadCreate
 * to the thread's ThreadBegin, from its ThreadEnd to the ThreadWait),
 * locks held, I/O operations.
 *
 * DESIGN
 * A mark is read as its events are: a begin waits in the location's
 * loader (one collective, one RMA synchronisation, up to
 * WEFT__VIEW_MARK_OPEN I/O operations by handle and matching id and as
 * many locks by lock id) for its end; the thread events wait in one
 * list, paired once every location is read, as OTF2 pairs them (the
 * contingent's comm and the sequence count). Then the marks are sorted
 * by their earlier time (an arrow's ends may be either way round when
 * two clocks disagree) and cut into blocks of WEFT__VIEW_MARK_BLOCK,
 * each with the latest time of its marks: a window skips every block
 * that ends before it and stops at the first mark after it, so a lock
 * held for the whole run costs its own block, not a walk over every
 * mark. Like visits, marks narrower than a column are thinned to the
 * first per location, kind and column.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "view_index.h"

static const char *const kind_names[WEFT__VMARK__KINDS] = {
    [WEFT__VMARK_COLL] = "collective", [WEFT__VMARK_RMA] = "rma",
    [WEFT__VMARK_RMA_SYNC] = "rma_sync", [WEFT__VMARK_CREATE] = "create",
    [WEFT__VMARK_JOIN] = "join", [WEFT__VMARK_LOCK] = "lock",
    [WEFT__VMARK_IO] = "io",
};

/* An event of ld's location at ts: seen (its span), and its time since
 * the trace's offset. */
static uint64_t rel(weft__vloader *ld, OTF2_TimeStamp ts)
{
    weft__arc_see(&ld->span, ts);
    return ts > ld->offset ? ts - ld->offset : 0;
}

static uint64_t lo_of(const weft__vmark *m)
{
    return m->t < m->end ? m->t : m->end;
}

static uint64_t hi_of(const weft__vmark *m)
{
    return m->t < m->end ? m->end : m->t;
}

int weft__view_mark(weft__view *v, const weft__vmark *m)
{
    if (weft__view_grow(&v->marks, &v->capmarks, v->nmarks + 1,
                        sizeof *v->marks, 256) < 0)
        return -1;
    v->marks[v->nmarks++] = *m;
    if (m->kind < WEFT__VMARK__KINDS)
        v->mark_kinds[m->kind]++;
    return 0;
}

int weft__view_thread_end(weft__view *v, uint32_t comm, uint64_t seq,
                          unsigned side, size_t i, uint64_t t)
{
    if (weft__view_grow(&v->tends, &v->captends, v->ntends + 1,
                        sizeof *v->tends, 64) < 0)
        return -1;
    v->tends[v->ntends++] = (weft__vtend){ .seq = seq, .t = t, .comm = comm,
                                           .loc = (uint32_t)i, .side = side };
    return 0;
}

/* The callbacks' result of adding m. */
static OTF2_CallbackCode keep(weft__vloader *ld, const weft__vmark *m)
{
    if (weft__view_mark(ld->v, m) < 0) {
        ld->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* A mark of location ld of kind at t, its end not known yet. */
static weft__vmark begun(const weft__vloader *ld, uint32_t kind, uint64_t t)
{
    return (weft__vmark){ .t = t, .end = t, .loc = (uint32_t)ld->i,
                          .to = (uint32_t)ld->i, .kind = kind };
}

/* ---- collectives and RMA ---- */

static OTF2_CallbackCode on_coll_begin(OTF2_LocationRef loc,
                                       OTF2_TimeStamp ts, uint64_t pos,
                                       void *arg, OTF2_AttributeList *al)
{
    weft__vloader *ld = arg;

    (void)loc, (void)pos, (void)al;
    if (ld->coll.kind)
        ld->v->unmatched_marks++;   /* a Begin after a Begin */
    ld->coll = begun(ld, WEFT__VMARK_COLL, rel(ld, ts));
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_coll_end(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                     uint64_t pos, void *arg,
                                     OTF2_AttributeList *al,
                                     OTF2_CollectiveOp op, OTF2_CommRef comm,
                                     uint32_t root, uint64_t sent,
                                     uint64_t received)
{
    weft__vloader *ld = arg;
    weft__vmark m = ld->coll;

    (void)loc, (void)pos, (void)al;
    if (!m.kind) {
        ld->v->unmatched_marks++;
        m = begun(ld, WEFT__VMARK_COLL, rel(ld, ts));
    }
    ld->coll.kind = 0;
    m.end = rel(ld, ts);
    m.op = op;
    m.ref = comm;
    m.peer = root;
    m.bytes = sent + received;
    return keep(ld, &m);
}

static OTF2_CallbackCode on_rma_coll_begin(OTF2_LocationRef loc,
                                           OTF2_TimeStamp ts, uint64_t pos,
                                           void *arg, OTF2_AttributeList *al)
{
    weft__vloader *ld = arg;

    (void)loc, (void)pos, (void)al;
    if (ld->rsync.kind)
        ld->v->unmatched_marks++;
    ld->rsync = begun(ld, WEFT__VMARK_RMA_SYNC, rel(ld, ts));
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_rma_coll_end(
    OTF2_LocationRef loc, OTF2_TimeStamp ts, uint64_t pos, void *arg,
    OTF2_AttributeList *al, OTF2_CollectiveOp op, OTF2_RmaSyncLevel level,
    OTF2_RmaWinRef win, uint32_t root, uint64_t sent, uint64_t received)
{
    weft__vloader *ld = arg;
    weft__vmark m = ld->rsync;

    (void)loc, (void)pos, (void)al, (void)level;
    if (!m.kind) {
        ld->v->unmatched_marks++;
        m = begun(ld, WEFT__VMARK_RMA_SYNC, rel(ld, ts));
    }
    ld->rsync.kind = 0;
    m.end = rel(ld, ts);
    m.op = op;
    m.ref = win;
    m.peer = root;
    m.bytes = sent + received;
    return keep(ld, &m);
}

static OTF2_CallbackCode on_rma_sync(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                     uint64_t pos, void *arg,
                                     OTF2_AttributeList *al,
                                     OTF2_RmaSyncLevel level,
                                     OTF2_RmaWinRef win, OTF2_GroupRef group)
{
    weft__vloader *ld = arg;
    weft__vmark m = begun(ld, WEFT__VMARK_RMA_SYNC, rel(ld, ts));

    (void)loc, (void)pos, (void)al, (void)level, (void)group;
    m.op = UINT32_MAX;
    m.ref = win;
    return keep(ld, &m);
}

static OTF2_CallbackCode rma_op(weft__vloader *ld, OTF2_TimeStamp ts,
                                uint32_t op, OTF2_RmaWinRef win,
                                uint32_t remote, uint64_t bytes)
{
    weft__vmark m = begun(ld, WEFT__VMARK_RMA, rel(ld, ts));

    m.op = op;
    m.ref = win;
    m.peer = remote;
    m.bytes = bytes;
    return keep(ld, &m);
}

static OTF2_CallbackCode on_rma_put(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                    uint64_t pos, void *arg,
                                    OTF2_AttributeList *al,
                                    OTF2_RmaWinRef win, uint32_t remote,
                                    uint64_t bytes, uint64_t matching)
{
    (void)loc, (void)pos, (void)al, (void)matching;
    return rma_op(arg, ts, 0, win, remote, bytes);
}

static OTF2_CallbackCode on_rma_get(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                    uint64_t pos, void *arg,
                                    OTF2_AttributeList *al,
                                    OTF2_RmaWinRef win, uint32_t remote,
                                    uint64_t bytes, uint64_t matching)
{
    (void)loc, (void)pos, (void)al, (void)matching;
    return rma_op(arg, ts, 1, win, remote, bytes);
}

static OTF2_CallbackCode on_rma_atomic(OTF2_LocationRef loc,
                                       OTF2_TimeStamp ts, uint64_t pos,
                                       void *arg, OTF2_AttributeList *al,
                                       OTF2_RmaWinRef win, uint32_t remote,
                                       OTF2_RmaAtomicType type,
                                       uint64_t sent, uint64_t received,
                                       uint64_t matching)
{
    (void)loc, (void)pos, (void)al, (void)matching;
    return rma_op(arg, ts, 2 + (uint32_t)type, win, remote, sent + received);
}

/* ---- threads ---- */

static OTF2_CallbackCode thread_end(weft__vloader *ld, OTF2_TimeStamp ts,
                                    unsigned side, OTF2_CommRef comm,
                                    uint64_t seq)
{
    if (weft__view_thread_end(ld->v, comm, seq, side, ld->i,
                              rel(ld, ts)) < 0) {
        ld->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_create(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                   uint64_t pos, void *arg,
                                   OTF2_AttributeList *al, OTF2_CommRef comm,
                                   uint64_t seq)
{
    (void)loc, (void)pos, (void)al;
    return thread_end(arg, ts, 0, comm, seq);
}

static OTF2_CallbackCode on_begin(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                  uint64_t pos, void *arg,
                                  OTF2_AttributeList *al, OTF2_CommRef comm,
                                  uint64_t seq)
{
    (void)loc, (void)pos, (void)al;
    return thread_end(arg, ts, 1, comm, seq);
}

static OTF2_CallbackCode on_end(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                uint64_t pos, void *arg,
                                OTF2_AttributeList *al, OTF2_CommRef comm,
                                uint64_t seq)
{
    (void)loc, (void)pos, (void)al;
    return thread_end(arg, ts, 2, comm, seq);
}

static OTF2_CallbackCode on_wait(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                 uint64_t pos, void *arg,
                                 OTF2_AttributeList *al, OTF2_CommRef comm,
                                 uint64_t seq)
{
    (void)loc, (void)pos, (void)al;
    return thread_end(arg, ts, 3, comm, seq);
}

/* ---- locks and I/O: begun ones wait by key ---- */

static OTF2_CallbackCode on_acquire(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                    uint64_t pos, void *arg,
                                    OTF2_AttributeList *al,
                                    OTF2_Paradigm model, uint32_t lock,
                                    uint32_t order)
{
    weft__vloader *ld = arg;
    weft__vmark m = begun(ld, WEFT__VMARK_LOCK, rel(ld, ts));

    (void)loc, (void)pos, (void)al, (void)order;
    if (ld->nlock == WEFT__VIEW_MARK_OPEN) {
        ld->v->unmatched_marks++;
        return OTF2_CALLBACK_SUCCESS;
    }
    m.op = model;
    m.ref = lock;
    ld->lock[ld->nlock++] = m;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_release(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                    uint64_t pos, void *arg,
                                    OTF2_AttributeList *al,
                                    OTF2_Paradigm model, uint32_t lock,
                                    uint32_t order)
{
    weft__vloader *ld = arg;
    uint64_t t = rel(ld, ts);

    (void)loc, (void)pos, (void)al, (void)order;
    /* the latest acquisition of that lock (a recursive one nests) */
    for (size_t k = ld->nlock; k-- > 0;) {
        weft__vmark m = ld->lock[k];
        if (m.ref != lock || m.op != (uint32_t)model)
            continue;
        ld->lock[k] = ld->lock[--ld->nlock];
        m.end = t;
        return keep(ld, &m);
    }
    ld->v->unmatched_marks++;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_begin(OTF2_LocationRef loc, OTF2_TimeStamp ts,
                                     uint64_t pos, void *arg,
                                     OTF2_AttributeList *al,
                                     OTF2_IoHandleRef handle,
                                     OTF2_IoOperationMode mode,
                                     OTF2_IoOperationFlag flags,
                                     uint64_t request, uint64_t matching)
{
    weft__vloader *ld = arg;
    weft__vmark m = begun(ld, WEFT__VMARK_IO, rel(ld, ts));

    (void)loc, (void)pos, (void)al, (void)flags;
    if (ld->nio == WEFT__VIEW_MARK_OPEN) {
        ld->v->unmatched_marks++;
        return OTF2_CALLBACK_SUCCESS;
    }
    m.op = mode;
    m.ref = handle;
    m.bytes = request;
    ld->io_match[ld->nio] = matching;
    ld->io[ld->nio++] = m;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode on_io_complete(OTF2_LocationRef loc,
                                        OTF2_TimeStamp ts, uint64_t pos,
                                        void *arg, OTF2_AttributeList *al,
                                        OTF2_IoHandleRef handle,
                                        uint64_t result, uint64_t matching)
{
    weft__vloader *ld = arg;
    uint64_t t = rel(ld, ts);

    (void)loc, (void)pos, (void)al;
    for (size_t k = 0; k < ld->nio; k++) {
        weft__vmark m = ld->io[k];
        if (m.ref != handle || ld->io_match[k] != matching)
            continue;
        ld->nio--;
        ld->io[k] = ld->io[ld->nio];
        ld->io_match[k] = ld->io_match[ld->nio];
        m.end = t;
        m.bytes = result;
        return keep(ld, &m);
    }
    ld->v->unmatched_marks++;
    return OTF2_CALLBACK_SUCCESS;
}

void weft__view_mark_callbacks(OTF2_EvtReaderCallbacks *cbs)
{
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cbs, on_coll_begin);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cbs, on_coll_end);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(cbs,
                                                          on_rma_coll_begin);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cbs, on_rma_coll_end);
    OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(cbs, on_rma_sync);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(cbs, on_rma_put);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(cbs, on_rma_get);
    OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cbs, on_rma_atomic);
    OTF2_EvtReaderCallbacks_SetThreadCreateCallback(cbs, on_create);
    OTF2_EvtReaderCallbacks_SetThreadBeginCallback(cbs, on_begin);
    OTF2_EvtReaderCallbacks_SetThreadEndCallback(cbs, on_end);
    OTF2_EvtReaderCallbacks_SetThreadWaitCallback(cbs, on_wait);
    OTF2_EvtReaderCallbacks_SetThreadAcquireLockCallback(cbs, on_acquire);
    OTF2_EvtReaderCallbacks_SetThreadReleaseLockCallback(cbs, on_release);
    OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(cbs, on_io_begin);
    OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(cbs,
                                                           on_io_complete);
}

int weft__view_marks_location_end(weft__vloader *ld)
{
    uint64_t end = ld->span.any && ld->span.max > ld->offset
                       ? ld->span.max - ld->offset : 0;
    weft__vmark *open[2 + 2 * WEFT__VIEW_MARK_OPEN];
    size_t n = 0;

    if (ld->coll.kind)
        open[n++] = &ld->coll;
    if (ld->rsync.kind)
        open[n++] = &ld->rsync;
    for (size_t k = 0; k < ld->nio; k++)
        open[n++] = &ld->io[k];
    for (size_t k = 0; k < ld->nlock; k++)
        open[n++] = &ld->lock[k];
    ld->coll.kind = ld->rsync.kind = 0;
    ld->nio = ld->nlock = 0;
    for (size_t k = 0; k < n; k++) {
        open[k]->end = end > open[k]->t ? end : open[k]->t;
        ld->v->unmatched_marks++;
        if (weft__view_mark(ld->v, open[k]) < 0)
            return -1;
    }
    return 0;
}

/* ---- once all is read ---- */

static int tend_order(const void *a, const void *b)
{
    const weft__vtend *x = a, *y = b;

    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->side < y->side ? -1 : x->side > y->side;
}

static int mark_order(const void *a, const void *b)
{
    const weft__vmark *x = a, *y = b;
    uint64_t p = lo_of(x), q = lo_of(y);

    if (p != q)
        return p < q ? -1 : 1;
    if (x->loc != y->loc)
        return x->loc < y->loc ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* The thread events paired into arrows: create with begin, end with
 * wait, of one contingent and sequence count (a side twice, or alone:
 * unmatched). */
static int pair_threads(weft__view *v)
{
    size_t k = 0;

    if (v->ntends > 1)
        qsort(v->tends, v->ntends, sizeof *v->tends, tend_order);
    while (k < v->ntends) {
        const weft__vtend *a = &v->tends[k];
        size_t e = k;
        int side[4] = { -1, -1, -1, -1 };
        while (e < v->ntends && v->tends[e].comm == a->comm &&
               v->tends[e].seq == a->seq) {
            if (side[v->tends[e].side] >= 0)
                v->unmatched_marks++;
            else
                side[v->tends[e].side] = (int)e;
            e++;
        }
        for (unsigned p = 0; p < 4; p += 2) {
            weft__vmark m;
            if (side[p] < 0 || side[p + 1] < 0) {
                v->unmatched_marks += (side[p] >= 0) + (side[p + 1] >= 0);
                continue;
            }
            m = (weft__vmark){
                .t = v->tends[side[p]].t, .end = v->tends[side[p + 1]].t,
                .loc = v->tends[side[p]].loc,
                .to = v->tends[side[p + 1]].loc,
                .kind = p ? WEFT__VMARK_JOIN : WEFT__VMARK_CREATE,
                .ref = a->comm, .bytes = a->seq,
            };
            if (weft__view_mark(v, &m) < 0)
                return -1;
        }
        k = e;
    }
    free(v->tends);
    v->tends = NULL;
    v->ntends = v->captends = 0;
    return 0;
}

size_t weft__view_nblocks(size_t n)
{
    return n / WEFT__VIEW_MARK_BLOCK + (n % WEFT__VIEW_MARK_BLOCK != 0);
}

int weft__view_block_his(const void *base, size_t n, size_t size,
                         uint64_t (*hi)(const void *), uint64_t **out,
                         size_t *nblk)
{
    *nblk = weft__view_nblocks(n);
    *out = calloc(*nblk ? *nblk : 1, sizeof **out);
    if (!*out)
        return -1;
    for (size_t k = 0; k < n; k++) {
        uint64_t *h = &(*out)[k / WEFT__VIEW_MARK_BLOCK];
        uint64_t t = hi((const char *)base + k * size);
        if (t > *h)
            *h = t;
    }
    return 0;
}

static uint64_t mark_hi(const void *m)
{
    return hi_of(m);
}

int weft__view_marks_done(weft__view *v)
{
    if (pair_threads(v) < 0)
        return -1;
    if (v->nmarks > 1)
        qsort(v->marks, v->nmarks, sizeof *v->marks, mark_order);
    free(v->mark_hi);
    v->mark_hi = NULL;
    return weft__view_block_his(v->marks, v->nmarks, sizeof *v->marks,
                                mark_hi, &v->mark_hi, &v->nmark_blk);
}

/* ---- the windows ---- */

int weft__view_window_marks(const weft__view *v, uint64_t t0, uint64_t t1,
                            unsigned px, const uint8_t *in, json_t *o)
{
    json_t *marks = json_array();
    uint32_t *last = NULL;      /* [location][kind]: the column shown */
    uint64_t more = 0, span = t1 - t0;

    if (!marks || json_object_set_new(o, "marks", marks) < 0)
        return -1;
    if (v->nmarks &&
        !(last = malloc(v->nlocs * WEFT__VMARK__KINDS * sizeof *last)))
        return -1;
    if (last)
        memset(last, 0xff, v->nlocs * WEFT__VMARK__KINDS * sizeof *last);
    for (size_t b = 0; b < v->nmark_blk; b++) {
        size_t k = b * WEFT__VIEW_MARK_BLOCK, e = k + WEFT__VIEW_MARK_BLOCK;
        if (lo_of(&v->marks[k]) >= t1)
            break;
        if (v->mark_hi[b] < t0)
            continue;
        for (e = e < v->nmarks ? e : v->nmarks; k < e; k++) {
            const weft__vmark *m = &v->marks[k];
            uint64_t lo = lo_of(m), hi = hi_of(m);
            json_t *j;
            if (lo >= t1)
                break;
            if (hi < t0 || (in && !in[m->loc] && !in[m->to]) ||
                m->loc >= v->nlocs || m->to >= v->nlocs ||
                m->kind >= WEFT__VMARK__KINDS)
                continue;
            if ((hi - lo) < span / px) {     /* narrower than a column */
                uint64_t at = lo > t0 ? lo - t0 : 0;
                uint32_t col = (uint32_t)((unsigned __int128)at * px / span);
                uint32_t *l = &last[m->loc * WEFT__VMARK__KINDS + m->kind];
                if (*l == col)
                    continue;
                *l = col;
            }
            if (json_array_size(marks) == WEFT__VIEW_MSG_MAX) {
                more++;
                continue;
            }
            j = json_pack("[IIIIIIIII]", (json_int_t)m->kind,
                          (json_int_t)v->locs[m->loc].loc, (json_int_t)m->t,
                          (json_int_t)m->end,
                          (json_int_t)v->locs[m->to].loc, (json_int_t)m->op,
                          (json_int_t)m->ref, (json_int_t)m->peer,
                          (json_int_t)m->bytes);
            if (!j || json_array_append_new(marks, j) < 0) {
                free(last);
                return -1;
            }
        }
    }
    free(last);
    return json_object_set_new(o, "marks_more", json_integer((json_int_t)more));
}

/* names[n] as a JSON array of strings. */
static json_t *names_array(char *const *names, size_t n)
{
    json_t *a = json_array();

    for (size_t k = 0; a && k < n; k++)
        if (json_array_append_new(a, json_string(names[k] ? names[k] : "")) <
            0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

int weft__view_describe_marks(const weft__view *v, json_t *o)
{
    json_t *kinds = json_object();

    if (!kinds || json_object_set_new(o, "marks", kinds) < 0)
        return -1;
    for (unsigned k = 1; k < WEFT__VMARK__KINDS; k++)
        if (json_object_set_new(kinds, kind_names[k],
                                json_integer((json_int_t)v->mark_kinds[k])) <
            0)
            return -1;
    return json_object_set_new(o, "unmatched_marks",
                               json_integer((json_int_t)v->unmatched_marks)) <
                   0 ||
                   json_object_set_new(o, "handles",
                                       names_array(v->handles,
                                                   v->nhandles)) < 0 ||
                   json_object_set_new(o, "windows",
                                       names_array(v->windows, v->nwindows)) <
                       0
               ? -1
               : 0;
}

void weft__view_marks_forget(weft__view *v)
{
    if (!v->map) {
        free(v->marks);
        free(v->mark_hi);
    }
    free(v->tends);
    v->marks = NULL;
    v->mark_hi = NULL;
    v->tends = NULL;
    v->nmarks = v->capmarks = v->nmark_blk = 0;
    v->ntends = v->captends = 0;
    v->unmatched_marks = 0;
    memset(v->mark_kinds, 0, sizeof v->mark_kinds);
}
