/* import_events.c - a location's events into the profile, its timeline
 * and the report's summaries for `weft import` (see import_events.h).
 */
#include "import_events.h"

#include <stdlib.h>

#include "record.h"

/* ---- events: profile and timeline, weftd's rules (replay.c) ---- */

static inline uint32_t top_region(const weft_profile_loc *p)
{
    return p->depth ? p->stack[p->depth - 1].region : WEFT_TIMELINE_NONE;
}

static OTF2_CallbackCode on_enter(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    imp_loc *l = ud;

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&l->span, t);
    if (l->tl.bins)
        weft_timeline_note(&l->tl, top_region(&l->pl), t);
    if (weft_profile_enter(l->prof, &l->pl, region, t) < 0) {
        l->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static void leave_top(imp_loc *l, uint64_t t)
{
    if (l->tl.bins)
        weft_timeline_note(&l->tl, top_region(&l->pl), t);
    weft_profile_leave(&l->pl, t);
}

/* A Leave closes the innermost open frame of its region: frames above
 * it are left at its time, a Leave of a region not open is ignored. */
static OTF2_CallbackCode on_leave(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud,
                                  OTF2_AttributeList *al,
                                  OTF2_RegionRef region)
{
    imp_loc *l = ud;
    size_t i = l->pl.depth;

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&l->span, t);
    while (i > 0 && l->pl.stack[i - 1].region != region)
        i--;
    if (i == 0) {
        l->unmatched++;
        return OTF2_CALLBACK_SUCCESS;
    }
    if (i != l->pl.depth)
        l->misnested++;
    while (l->pl.depth >= i)
        leave_top(l, t);
    return OTF2_CALLBACK_SUCCESS;
}

/* The report's summaries, as replay.c's note_send and note_report. */
static OTF2_CallbackCode noted(imp_loc *l, int rc)
{
    if (rc < 0) {
        l->oom = 1;
        return OTF2_CALLBACK_INTERRUPT;
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode send_to(imp_loc *l, OTF2_TimeStamp t,
                                 uint32_t receiver, OTF2_CommRef comm,
                                 uint64_t bytes)
{
    weft__arc_see(&l->span, t);
    return noted(l, weft_commsum_add(l->sends, weft_commmap_world(
                     &l->sums->cmap, comm, receiver), bytes));
}

static OTF2_CallbackCode on_send(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                 uint64_t pos, void *ud,
                                 OTF2_AttributeList *al, uint32_t receiver,
                                 OTF2_CommRef comm, uint32_t tag,
                                 uint64_t bytes)
{
    (void)loc, (void)pos, (void)al, (void)tag;
    return send_to(ud, t, receiver, comm, bytes);
}

static OTF2_CallbackCode on_isend(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud,
                                  OTF2_AttributeList *al, uint32_t receiver,
                                  OTF2_CommRef comm, uint32_t tag,
                                  uint64_t bytes, uint64_t request)
{
    (void)loc, (void)pos, (void)al, (void)tag, (void)request;
    return send_to(ud, t, receiver, comm, bytes);
}

static OTF2_CallbackCode on_io_begin(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                     uint64_t pos, void *ud,
                                     OTF2_AttributeList *al,
                                     OTF2_IoHandleRef handle,
                                     OTF2_IoOperationMode mode,
                                     OTF2_IoOperationFlag flags,
                                     uint64_t request, uint64_t matching)
{
    imp_loc *l = ud;

    (void)loc, (void)pos, (void)al, (void)flags, (void)request;
    weft__arc_see(&l->span, t);
    return noted(l, weft_iosum_begin(&l->io, handle, (uint8_t)mode,
                                     matching, t));
}

static OTF2_CallbackCode on_io_complete(OTF2_LocationRef loc,
                                        OTF2_TimeStamp t, uint64_t pos,
                                        void *ud, OTF2_AttributeList *al,
                                        OTF2_IoHandleRef handle,
                                        uint64_t bytes, uint64_t matching)
{
    imp_loc *l = ud;

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&l->span, t);
    return noted(l, weft_iosum_end(&l->sums->io, &l->io, handle, matching,
                                   bytes, 0, t));
}

static OTF2_CallbackCode on_io_cancelled(OTF2_LocationRef loc,
                                         OTF2_TimeStamp t, uint64_t pos,
                                         void *ud, OTF2_AttributeList *al,
                                         OTF2_IoHandleRef handle,
                                         uint64_t matching)
{
    imp_loc *l = ud;

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&l->span, t);
    return noted(l, weft_iosum_end(&l->sums->io, &l->io, handle, matching,
                                   0, 1, t));
}

static OTF2_CallbackCode on_metric(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                   uint64_t pos, void *ud,
                                   OTF2_AttributeList *al,
                                   OTF2_MetricRef metric, uint8_t n,
                                   const OTF2_Type *types,
                                   const OTF2_MetricValue *values)
{
    imp_loc *l = ud;
    weft_record r = { .type = WEFT_REC_Metric, .time = t };

    (void)loc, (void)pos, (void)al;
    weft__arc_see(&l->span, t);
    r.u.Metric = (weft_Metric){ .metric = metric, .numberOfMetrics = n,
                                .typeIDs = types, .metricValues = values };
    if (noted(l, weft_callcounts_event(&l->sums->ccount, &l->sums->mmap,
                                       l->prof, &l->pl, &r,
                                       l->sums->resolution)) !=
        OTF2_CALLBACK_SUCCESS)
        return OTF2_CALLBACK_INTERRUPT;
    if (!l->ml || weft_callcounts_only(&l->sums->ccount, &l->sums->mmap, &r))
        return OTF2_CALLBACK_SUCCESS;
    return noted(l, weft_metricsum_event(l->ml, &l->sums->mmap, &r,
                                         l->sums->plan.width));
}

/* See import_events.h. */
OTF2_EvtReaderCallbacks *weft__import_callbacks(void)
{
    OTF2_EvtReaderCallbacks *cbs = weft__arc_time_callbacks();

    if (!cbs)
        return NULL;
    OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, on_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, on_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cbs, on_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cbs, on_isend);
    OTF2_EvtReaderCallbacks_SetIoOperationBeginCallback(cbs, on_io_begin);
    OTF2_EvtReaderCallbacks_SetIoOperationCompleteCallback(cbs,
                                                           on_io_complete);
    OTF2_EvtReaderCallbacks_SetIoOperationCancelledCallback(
        cbs, on_io_cancelled);
    OTF2_EvtReaderCallbacks_SetMetricCallback(cbs, on_metric);
    return cbs;
}
