/* replay.c - pass 2 of a conversion (replay.h).
 *
 * DESIGN: the event batches of each member's journal are replayed through
 * libotf2, one EvtWriter per location, with the member's own ids (the
 * mapping tables of its locations' local definitions make them global
 * for readers, otf2out.h). What is checked and summed here is each event
 * mapped by the member's own unifier (member.u: its definitions alone,
 * its local ids of one content made one), so that nothing of a member's
 * replay waits for another member's definitions (issue #33: the way to
 * replaying it while the job runs): the nesting, the profile, the
 * timelines, the sends, the I/O and metric sums are in those ids, and
 * taken to the trace's (c->u) once the member is done (member_to_trace;
 * its I/O where the members' are added), through what its ids are in
 * the trace's (weft_unify_compose). The profile keeps the rows of a
 * location's regions of equal time in the trace's order of them, so the
 * result is as if summed in the trace's ids; a timeline's bin whose
 * regions tie (or that holds more of them than it has candidates) may
 * name another of them. A member's writers are closed
 * when its journal is done, so only the members being replayed hold
 * writers. Each open writer holds a libotf2 chunk, so their number is
 * bounded (weft_convert_input.max_writers, shared by the threads): a
 * member with more locations than its thread's share is replayed in
 * groups of locations, one pass over its journal per group, the events
 * of the other locations skipped (a location is written in one pass,
 * whole, so its file is the same as without groups). The profile
 * (profile.h) is fed where each event is written, from Enter and Leave
 * (the member's unified region ids), per location; when a member's
 * journal is done its locations are finished. So is the timeline summary (timeline.h)
 * of each location, told at each Enter and Leave which region was the
 * innermost open one until then, and the communication matrix
 * (commsum.h), from each MpiSend and MpiIsend written; and, from the
 * other events written (never on the short way of Enters and Leaves),
 * the file I/O of each member by handle (iosum.h: operations matched
 * on their location) and the metric values of each location over time
 * (metricsum.h).
 * Running pass 2 on worker threads, the merge of what they summed:
 * replay_workers.c.
 */
#include "replay.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "fail.h"
#include "otf2out.h"
#include "weft_errors.h"

/* ---- time ------------------------------------------------------------- */

/* Widens the trace's time range by m's event at t. */
static void note_time(conv *c, const member *m, uint64_t t)
{
    uint64_t lo = t, hi = t;

    if (m->noffsets) {
        /* A ns of margin: readers may round the interpolated offset the
         * other way. */
        lo = hi = weft__conv_corrected(m, t);
        lo -= lo > 0;
        hi += hi < UINT64_MAX - 1;
    }
    if (!c->any_event || lo < c->tmin)
        c->tmin = lo;
    if (!c->any_event || hi > c->tmax)
        c->tmax = hi;
    c->any_event = 1;
}

/* Scales the timestamps of event r of m from its ticks to ns. */
static void rescale_event(const member *m, weft_record *r)
{
    r->time = weft_clock_ticks_to_ns(r->time, m->timer_resolution);
    if (r->type == WEFT_REC_BufferFlush)
        r->u.BufferFlush.stopTime = weft_clock_ticks_to_ns(
            r->u.BufferFlush.stopTime, m->timer_resolution);
}

/* Counts an event at time t written to location l of m. A location's
 * times only grow, and so do their corrected times unless m's
 * ClockOffsets fall faster than time passes (m->each_time): its first
 * event widens the time range here, its last when its writer is closed;
 * else every event does. */
static void wrote(conv *c, const member *m, loc *l, uint64_t t)
{
    if (m->each_time || !l->events)
        note_time(c, m, t);
    if (!l->events)
        l->prof.start = t;  /* the profile's span (outside any region) */
    l->events++;
    l->last_time = t;
}

/* The innermost open region of l (WEFT_TIMELINE_NONE: none). */
static inline uint32_t top_region(const weft_profile_loc *p)
{
    return p->depth ? p->stack[p->depth - 1].region : WEFT_TIMELINE_NONE;
}

/* ---- nesting (issue #11) ----------------------------------------------
 * Every location of the archive nests: each Leave closes the innermost
 * open region. l->prof.stack is what is open, and these functions are the
 * only writers of Enter and Leave (but for replay_enter_leave's inline
 * copy of their common case):
 *   - a Leave of a region open further down first leaves the regions
 *     above it, at its time; a Leave of a region that is not open is not
 *     written (a lost Enter: records dropped in a gap, or a client bug);
 *     either is an anomaly (profile_anomalies: ingest does not check the
 *     nesting, so such traces reach us);
 *   - MeasurementOnOff OFF leaves every open region at its time (after
 *     them the OFF), and the next ON enters them again at its time (after
 *     it), outermost first: a reader sees no time in regions during a gap
 *     (Enters and Leaves lost in the gap are not guessed at);
 *   - regions still open at a location's end are left at its last
 *     event's time (a process killed mid-run).
 * The profile sees exactly what is written, so `weft profile` equals what
 * any reader computes from the archive. */

/* The attribute list of an event nesting adds to m (libotf2 empties it
 * once the event is written), NULL when out of memory. Its attribute has
 * m's own id for it, as the events of m have theirs (otf2out.h). */
static OTF2_AttributeList *nest_mark(conv *c, member *m)
{
    if (OTF2_AttributeList_RemoveAllAttributes(c->nest_al) != OTF2_SUCCESS ||
        OTF2_AttributeList_AddUint8(c->nest_al, WEFT__NEST_LOCAL, 1) !=
            OTF2_SUCCESS)
        return NULL;
    m->nested++;
    return c->nest_al;
}

static int note_local(void *arg, uint64_t local, uint64_t id)
{
    conv *c = arg;

    if (id < c->nrev && !c->rev[id])
        c->rev[id] = (uint32_t)local + 1u;
    return 0;
}

/* m's local id of region g of its unifier (one m entered: the regions
 * open on its locations) in *out, for the Enters and Leaves nesting
 * adds: the first it gave that region; the undefined region is itself.
 * 0, or WEFT_ENOMEM or WEFT_EREF (m has no id of it, which cannot be)
 * with c failed. */
static int local_region(conv *c, const member *m, uint32_t g, uint32_t *out)
{
    *out = g;
    if (g == OTF2_UNDEFINED_REGION)
        return 0;
    if (c->rev_of != m) {
        size_t n = weft_unify_count(m->u, WEFT_REC_Region);
        if (n > c->nrev) {
            uint32_t *v = realloc(c->rev, n * sizeof *v);
            if (!v)
                return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            c->rev = v;
            c->nrev = n;
        }
        memset(c->rev, 0, c->nrev * sizeof *c->rev);
        weft_unify_each_local(m->u, m->rank, WEFT_REF_REGION, note_local, c);
        c->rev_of = m;
    }
    if (g >= c->nrev || !c->rev[g])
        return weft__conv_fail(c, WEFT_EREF, "%s: region %" PRIu32 " to "
                               "leave or enter again is none of its own",
                               m->path, g);
    *out = c->rev[g] - 1u;
    return 0;
}

/* Fails c: libotf2 refused `what` (an Enter, a Leave) at t on l. */
static int refused(conv *c, const member *m, const loc *l, const char *what,
                   uint64_t t, OTF2_ErrorCode orc)
{
    return weft__conv_fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": libotf2 "
                           "refused %s at %" PRIu64 ": %s", m->path,
                           l->thread, what, t, weft__otf2_msg(orc));
}

/* Writes an Enter of region (an id of m->u) at t on l: the journal's
 * record r as written (m's own ids) with attributes al, or without r one
 * of its own (`added` says nesting added it). */
static int nest_enter(conv *c, member *m, loc *l, uint32_t region, uint64_t t,
                      OTF2_AttributeList *al, const weft_record *r,
                      int added)
{
    OTF2_ErrorCode orc;
    uint32_t own = region;
    int rc;

    if (!r && (rc = local_region(c, m, region, &own)) < 0)
        return rc;
    if (added && !(al = nest_mark(c, m)))
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    orc = r ? weft__otf2_write_event(l->w, al, r)
            : OTF2_EvtWriter_Enter(l->w, al, t, own);

    if (orc != OTF2_SUCCESS)
        return refused(c, m, l, "an Enter", t, orc);
    weft_timeline_note(&l->tl, top_region(&l->prof), t);
    if ((rc = weft_profile_enter(&c->prof, &l->prof, region, t)) < 0)
        return weft__conv_fail(c, rc, "out of memory");
    wrote(c, m, l, t);
    c->added += added != 0;
    return 0;
}

/* Writes a Leave of the innermost open region at t: the journal's record
 * r as written with attributes al, or without r one of its own (`added`
 * says nesting added it). */
static int nest_leave_top(conv *c, member *m, loc *l, uint64_t t,
                          OTF2_AttributeList *al, const weft_record *r,
                          int added)
{
    uint32_t region = l->prof.stack[l->prof.depth - 1].region, own = region;
    OTF2_ErrorCode orc;
    int rc;

    if (!r && (rc = local_region(c, m, region, &own)) < 0)
        return rc;
    if (added && !(al = nest_mark(c, m)))
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    orc = r ? weft__otf2_write_event(l->w, al, r)
            : OTF2_EvtWriter_Leave(l->w, al, t, own);

    if (orc != OTF2_SUCCESS)
        return refused(c, m, l, "a Leave", t, orc);
    weft_timeline_note(&l->tl, region, t);
    weft_profile_leave(&l->prof, t);
    wrote(c, m, l, t);
    c->added += added != 0;
    return 0;
}

/* A Leave of region at t (r: its record with attributes al, or NULL). */
static int nest_leave(conv *c, member *m, loc *l, uint32_t region, uint64_t t,
                      OTF2_AttributeList *al, const weft_record *r)
{
    weft_profile_loc *p = &l->prof;
    size_t i = p->depth;
    int rc;

    while (i > 0 && p->stack[i - 1].region != region)
        i--;
    if (i == 0 || i != p->depth)
        c->anomalies++;
    if (i == 0) {
        c->unmatched++;
        return 0;
    }
    while (p->depth > i)
        if ((rc = nest_leave_top(c, m, l, t, NULL, NULL, 1)) < 0)
            return rc;
    return nest_leave_top(c, m, l, t, al, r, 0);
}

/* MeasurementOnOff r (attributes al): see the nesting note. */
static int nest_onoff(conv *c, member *m, loc *l, OTF2_AttributeList *al,
                      const weft_record *r)
{
    OTF2_ErrorCode orc;
    weft_profile_loc *p = &l->prof;
    int on = r->u.MeasurementOnOff.measurementMode == OTF2_MEASUREMENT_ON;
    int rc;

    if (!on) {
        /* A second OFF: what was entered since the first one is open
         * inside what the first one left. */
        if (!l->off)
            l->ngap = 0;
        if (l->ngap + p->depth > l->gap_cap) {
            size_t n = l->ngap + p->depth;
            uint32_t *v = realloc(l->gap, n * sizeof *v);
            if (!v)
                return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
            l->gap = v;
            l->gap_cap = n;
        }
        for (size_t i = 0; i < p->depth; i++)
            l->gap[l->ngap + i] = p->stack[i].region;
        l->ngap += p->depth;
        l->off = 1;
        while (p->depth)
            if ((rc = nest_leave_top(c, m, l, r->time, NULL, NULL, 1)) < 0)
                return rc;
    }
    orc = weft__otf2_write_event(l->w, al, r);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": "
                               "libotf2 refused a MeasurementOnOff at %"
                               PRIu64 ": %s", m->path, l->thread, r->time,
                               weft__otf2_msg(orc));
    wrote(c, m, l, r->time);
    if (on && l->off) {
        l->off = 0;
        for (size_t i = 0; i < l->ngap; i++)
            if ((rc = nest_enter(c, m, l, l->gap[i], r->time, NULL, NULL,
                                 1)) < 0)
                return rc;
        l->ngap = 0;
    }
    return 0;
}

/* See replay.h. */
int weft__replay_nest_finish(conv *c, member *m)
{
    for (size_t i = 0; i < m->nlocs; i++) {
        loc *l = &m->locs[i];
        int rc;
        while (l->w && l->prof.depth)
            if ((rc = nest_leave_top(c, m, l, l->last_time, NULL, NULL,
                                     1)) < 0)
                return rc;
    }
    return 0;
}

/* ---- an events entry -------------------------------------------------- */

/* An events entry being replayed: where it is (for messages) and its
 * decoder. */
typedef struct entry {
    conv *c;
    member *m;
    loc *l;
    const weft_journal_entry *e;
    uint64_t off;       /* of the entry in m's journal */
    uint64_t n;         /* events read from it so far */
    weft_decoder d;
} entry;

#define WHERE "%s: entry at offset %" PRIu64 " (thread %" PRIu32 " seq %"    \
              PRIu64 "), event %" PRIu64
#define WHERE_ARGS(x) (x)->m->path, (x)->off, (x)->l->thread, (x)->e->seq,  \
                      (x)->n

/* The short way of Enters and Leaves (those of members that count ns):
 * replays those that come next, read in place with the region ids mapped
 * through `table`, and leaves anything else (another record, a region
 * the table lacks, a time going back) to the decoder. What nesting and
 * the profile do with them is nest_enter's and nest_leave's, done here
 * inline with l's profile stack, event count and last time in locals
 * while nothing else is to be done: an Enter with room on the stack of a
 * region the location has a profile slot for, a Leave of the innermost
 * open region. Anything else (the first Enter of a region, a deeper
 * stack, a Leave that does not match) goes to nest_enter or nest_leave
 * with the locals put back. The archive and profile are the same either
 * way (tests compare them: weft__convert_trace). The timeline is told
 * of each as nest_enter and nest_leave_top tell it, with the innermost
 * open region kept in a local (top). 0 or the code of a failure. */
static int replay_enter_leave(entry *x, const uint64_t *table, size_t ntable)
{
    conv *c = x->c;
    member *m = x->m;
    loc *l = x->l;
    OTF2_EvtWriter *w = l->w;
    weft_el_run run = weft_el_begin(&x->d), at = run;
    weft_profile_loc p = l->prof;
    weft_timeline *tl = &l->tl;
    uint32_t top = top_region(&p);
    size_t nregions = c->prof.nregions;
    uint64_t events = l->events, last = l->last_time, n = 0;
    int each_time = m->each_time;  /* see wrote() */
    uint32_t type, local, region; /* m's local id, its m->u id */
    int rc = 0;

    while (table && weft_el_next(&run, &type, &local)) {
        uint32_t g = local < ntable ? (uint32_t)table[local] : 0;
        uint64_t t = run.time;
        OTF2_ErrorCode orc;
        if ((!g && local != OTF2_UNDEFINED_REGION) ||
            (events && t < last)) {
            run = at;  /* unread: the general way says what is wrong */
            break;
        }
        n++;
        at = run;
        region = g ? g - 1u : local;
        if (type == WEFT_REC_Enter &&
            weft_profile_enter_fast(&p, nregions, region, t)) {
            weft_timeline_note(tl, top, t);
            top = region;
            if ((orc = OTF2_EvtWriter_Enter(w, NULL, t, local)) !=
                OTF2_SUCCESS) {
                rc = refused(c, m, l, "an Enter", t, orc);
                break;
            }
        } else if (type == WEFT_REC_Leave && p.depth &&
                   p.stack[p.depth - 1].region == region) {
            weft_timeline_note(tl, region, t);
            weft_profile_leave(&p, t);
            top = top_region(&p);
            if ((orc = OTF2_EvtWriter_Leave(w, NULL, t, local)) !=
                OTF2_SUCCESS) {
                rc = refused(c, m, l, "a Leave", t, orc);
                break;
            }
        } else {
            weft_record r = { .type = type, .time = t };
            if (type == WEFT_REC_Enter)
                r.u.Enter.region = local;
            else
                r.u.Leave.region = local;
            l->prof = p;
            l->events = events;
            l->last_time = last;
            rc = type == WEFT_REC_Enter
                     ? nest_enter(c, m, l, region, t, NULL, &r, 0)
                     : nest_leave(c, m, l, region, t, NULL, &r);
            if (rc < 0) {
                x->n += n;  /* l holds what was done */
                return rc;
            }
            p = l->prof;
            top = top_region(&p);
            events = l->events;
            last = l->last_time;
            continue;
        }
        if (each_time || !events)
            note_time(c, m, t);
        if (!events)
            p.start = t;  /* see wrote() */
        events++;
        last = t;
    }
    l->prof = p;
    l->events = events;
    l->last_time = last;
    x->n += n;
    weft_el_end(&run, &x->d);
    return rc;
}

/* Counts r in m's sends if it is an MpiSend or MpiIsend (m->u's ids).
 * 0 or WEFT_ENOMEM (c failed). */
static int note_send(conv *c, member *m, const weft_record *r)
{
    uint32_t to;

    if (r->type == WEFT_REC_MpiSend)
        to = weft_commmap_world(&c->cmap, r->u.MpiSend.communicator,
                                r->u.MpiSend.receiver);
    else if (r->type == WEFT_REC_MpiIsend)
        to = weft_commmap_world(&c->cmap, r->u.MpiIsend.communicator,
                                r->u.MpiIsend.receiver);
    else
        return 0;
    if (weft_commsum_add(&m->sends, to,
                         r->type == WEFT_REC_MpiSend
                             ? r->u.MpiSend.msgLength
                             : r->u.MpiIsend.msgLength) < 0)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    return 0;
}

/* Adds r to what the report draws of m and l if it is an I/O operation
 * (iosum.h) or a Metric (metricsum.h; l's first ones only; and to l's
 * profile when it carries counted calls, callcounts.h), m->u's ids.
 * 0 or WEFT_ENOMEM (c failed). */
static int note_report(conv *c, member *m, loc *l, const weft_record *r)
{
    int rc = 0;

    switch (r->type) {
    case WEFT_REC_IoOperationBegin:
        rc = weft_iosum_begin(&l->io, r->u.IoOperationBegin.handle,
                              (uint8_t)r->u.IoOperationBegin.mode,
                              r->u.IoOperationBegin.matchingId, r->time);
        break;
    case WEFT_REC_IoOperationComplete:
        rc = weft_iosum_end(&m->io, &l->io, r->u.IoOperationComplete.handle,
                            r->u.IoOperationComplete.matchingId,
                            r->u.IoOperationComplete.bytesResult, 0,
                            r->time);
        break;
    case WEFT_REC_IoOperationCancelled:
        rc = weft_iosum_end(&m->io, &l->io,
                            r->u.IoOperationCancelled.handle,
                            r->u.IoOperationCancelled.matchingId, 0, 1,
                            r->time);
        break;
    case WEFT_REC_Metric:
        if (l->has_metrics && !weft_callcounts_only(&c->ccount, &c->mmap, r))
            rc = weft_metricsum_event(&l->ml, &c->mmap, r, c->tl_width);
        if (rc == 0)
            rc = weft_callcounts_event(&c->ccount, &c->mmap, &c->prof,
                                       &l->prof, r, c->resolution);
        break;
    default:
        break;
    }
    return rc < 0 ? weft__conv_fail(c, rc, "out of memory") : 0;
}

/* Replays event r, the x->n-th of the entry, decoded: mapped to m->u's
 * ids (checked, summed), and written with m's own ids but for those OTF2
 * maps none of, global (otf2out.h). 0 or the code of a failure. */
static int replay_record(entry *x, weft_record *r)
{
    conv *c = x->c;
    member *m = x->m;
    loc *l = x->l;
    weft_record w;      /* r as written */
    OTF2_AttributeList *al;
    OTF2_ErrorCode orc;
    char msg[256];
    int rc;

    if (m->rescale)
        rescale_event(m, r);
    w = *r;
    rc = weft_unify_map_event(m->u, m->rank, r, &c->scratch, msg,
                              sizeof msg);
    if (rc == 0 && c->u)
        rc = weft_unify_map_event_kinds(c->u, m->rank, &w, &c->wscratch,
                                        weft__otf2_global_kinds(), msg,
                                        sizeof msg);
    else if (rc == 0 && weft__conv_refers(&w, weft__otf2_global_kinds() &
                                              ~(UINT32_C(1) <<
                                                WEFT_REF_LOCATION)))
        rc = weft__fail(msg, sizeof msg, WEFT_ESTATE, "it names an id "
                        "that only the trace's definitions number (a "
                        "stream leaves this member to the conversion)");
    if (rc < 0)
        return weft__conv_fail(c, rc, WHERE ": %s", WHERE_ARGS(x), msg);
    if (l->events && r->time < l->last_time)
        return weft__conv_fail(c, WEFT_ETIME, WHERE ": time %" PRIu64 " is "
                               "before the previous event of this location "
                               "(%" PRIu64 ")", WHERE_ARGS(x), r->time,
                               l->last_time);
    if ((rc = weft__conv_note_locations(c, r)) < 0)
        return rc;
    orc = weft__otf2_attributes(c->al, &w, r, &al);
    if (orc != OTF2_SUCCESS)
        return weft__conv_fail(c, WEFT_EOTF2, WHERE ": libotf2 refused it: "
                               "%s", WHERE_ARGS(x), weft__otf2_msg(orc));
    switch (r->type) {
    case WEFT_REC_Enter:
        return nest_enter(c, m, l, r->u.Enter.region, r->time, al, &w, 0);
    case WEFT_REC_Leave:
        return nest_leave(c, m, l, r->u.Leave.region, r->time, al, &w);
    case WEFT_REC_MeasurementOnOff:
        return nest_onoff(c, m, l, al, &w);
    default:
        orc = weft__otf2_write_event(l->w, al, &w);
        if (orc != OTF2_SUCCESS)
            return weft__conv_fail(c, WEFT_EOTF2, WHERE ": libotf2 refused "
                                   "it: %s", WHERE_ARGS(x),
                                   weft__otf2_msg(orc));
        wrote(c, m, l, r->time);
        if ((rc = note_send(c, m, r)) < 0)
            return rc;
        return note_report(c, m, l, r);
    }
}

/* See replay.h. */
int weft__replay_events(conv *c, member *m, loc *l,
                        const weft_journal_entry *e, uint64_t off)
{
    entry x = { .c = c, .m = m, .l = l, .e = e, .off = off };
    weft_record r;
    const uint64_t *table;
    size_t ntable = 0;
    int rc;

    weft_decoder_init(&x.d, e->payload, e->len, 1, e->base_time);
    /* Members that count ns have nothing to rescale: their Enter and
     * Leave take the short way. */
    table = m->rescale || c->general_only
                ? NULL
                : weft_unify_id_table(m->u, m->rank, WEFT_REF_REGION,
                                      &ntable);
    for (;;) {
        if ((rc = replay_enter_leave(&x, table, ntable)) < 0)
            goto out;
        if ((rc = weft_decoder_next(&x.d, &r)) != 1)
            break;
        x.n++;
        if ((rc = replay_record(&x, &r)) < 0)
            goto out;
    }
    if (rc < 0) {
        x.n++;
        weft__conv_fail(c, rc, WHERE ": %s", WHERE_ARGS(&x), x.d.error);
        goto out;
    }
    if (x.n != e->count)
        rc = weft__conv_fail(c, WEFT_ECORRUPT, "%s: entry at offset %"
                             PRIu64 " (thread %" PRIu32 " seq %" PRIu64
                             ") announces %" PRIu32 " events but holds %"
                             PRIu64, m->path, off, l->thread, e->seq,
                             e->count, x.n);
    else
        l->replayed += x.n;
out:
    weft_decoder_free(&x.d);
    return rc < 0 ? rc : 0;
}

#undef WHERE
#undef WHERE_ARGS

/* ---- a member --------------------------------------------------------- */

/* Opens the writers of m's locations [lo, hi), and their timelines. */
static int open_writers(conv *c, member *m, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) {
        loc *l = &m->locs[i];
        int rc = weft__otf2_open_writer(c, m, l);
        if (rc < 0)
            return rc;
        if (l->has_timeline &&
            weft_timeline_init(&l->tl, c->tl_cap, c->tl_width) < 0)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    }
    return 0;
}

/* See replay.h. */
int weft__replay_close_writers(conv *c, member *m)
{
    int rc = 0;

    for (size_t i = 0; i < m->nlocs; i++) {
        loc *l = &m->locs[i];
        uint64_t n = 0;
        OTF2_ErrorCode orc, corc;
        if (!l->w)
            continue;
        if (l->events && !m->each_time)
            note_time(c, m, l->last_time);  /* see wrote() */
        orc = OTF2_EvtWriter_GetNumberOfEvents(l->w, &n);
        if (orc == OTF2_SUCCESS && n != l->events)
            rc = weft__conv_fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": "
                                 "libotf2 counted %" PRIu64 " events, weft "
                                 "wrote %" PRIu64, m->path, l->thread, n,
                                 l->events);
        corc = weft__otf2_close_writer(c, l);
        if (orc == OTF2_SUCCESS)
            orc = corc;
        if (orc != OTF2_SUCCESS)
            rc = weft__conv_fail(c, WEFT_EOTF2, "%s: thread %" PRIu32 ": "
                                 "closing its events failed: %s", m->path,
                                 l->thread, weft__otf2_msg(orc));
    }
    return rc;
}

/* m's ids of kind in the trace's, into *map. 0 or the code of a
 * failure (c failed). */
static int member_ids(conv *c, const member *m, unsigned kind, id_map *map)
{
    char msg[256];
    int rc = weft_unify_compose(m->u, c->u, m->rank, kind, &map->v, &map->n,
                                msg, sizeof msg);

    return rc < 0 ? weft__conv_fail(c, rc, "%s: %s", m->path, msg) : 0;
}

/* See replay.h. */
int weft__replay_maps(conv *c, const member *m, size_t keep)
{
    weft_defview defs = weft_unify_view(m->u);

    if (weft_profile_init(&c->prof, weft_unify_region_name,
                          weft_unify_region_paradigm, m->u,
                          weft_unify_count(m->u, WEFT_REC_Region), keep) < 0 ||
        weft_commmap_build(&c->cmap, &defs, NULL, NULL) < 0 ||
        weft_metricmap_build(&c->mmap, &defs) < 0 ||
        weft_callcounts_build(&c->ccount, &defs, &c->prof) < 0)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    return 0;
}

/* See replay.h. */
void weft__replay_maps_free(conv *c)
{
    weft_profile_free(&c->prof);
    weft_commmap_free(&c->cmap);
    weft_metricmap_free(&c->mmap);
    weft_callcounts_free(&c->ccount);
}

/* Before m is replayed with c (a worker's copy): what its ids are in the
 * trace's, and the profile, communicator, metric and counted-call maps of
 * its own definitions, in which its events are summed (a member a stream
 * replayed, stream.c, brings its profile's tables in its locations). 0
 * or the code of a failure (c failed). */
static int member_begin(conv *c, member *m)
{
    int rc;

    if ((rc = member_ids(c, m, WEFT_REF_REGION, &m->regions)) < 0 ||
        (rc = member_ids(c, m, WEFT_REF_METRIC_MEMBER,
                         &m->metric_members)) < 0 ||
        (rc = member_ids(c, m, WEFT_REF_IO_HANDLE, &m->handles)) < 0 ||
        (rc = weft__replay_maps(c, m, c->psum.keep)) < 0)
        return rc;
    /* Rows of equal time in the trace's order of their regions. */
    c->prof.order = m->regions.v;
    c->prof.norder = m->regions.n;
    return 0;
}

/* m is replayed: its sums and summaries in the trace's ids (its I/O is
 * mapped where the members' are added, convert_report.c). */
static void member_to_trace(conv *c, member *m)
{
    weft_profile_add_mapped(&c->psum, &c->prof, m->regions.v, m->regions.n);
    for (size_t k = 0; k < m->nlocs; k++) {
        weft_timeline_remap(&m->locs[k].tl, m->regions.v, m->regions.n);
        weft_metricloc_remap(&m->locs[k].ml, m->metric_members.v,
                             m->metric_members.n);
    }
}

/* Replays member m with c (a worker's copy), closes its writers, finishes
 * the profiles of its locations and gives m its rows. Its locations are
 * written c->window at a time (all at once without a window), one pass
 * over its journal per group: events of the others are skipped. A member
 * a stream replayed (m->adopted, stream.c) is only finished. */
/* See replay.h. */
int weft__replay_member(conv *c, member *m)
{
    size_t per = c->window ? c->window : m->nlocs, lo = 0;
    int rc = member_begin(c, m);

    if (rc < 0) {
        weft__replay_maps_free(c);
        return rc;
    }
    while (!m->adopted) {
        size_t hi = m->nlocs - lo < per ? m->nlocs : lo + per;
        rc = open_writers(c, m, lo, hi);
        c->passes++;
        if (rc == 0)
            rc = weft__conv_read_member(c, m, weft__replay_events);
        if (rc == 0)
            rc = weft__replay_nest_finish(c, m);
        if (rc == 0)
            rc = weft__replay_close_writers(c, m);
        else
            weft__replay_close_writers(c, m);
        lo = hi;
        if (rc < 0 || lo >= m->nlocs)
            break;
    }
    for (size_t k = 0; rc == 0 && k < m->nlocs; k++) {
        loc *l = &m->locs[k];
        weft_timeline_finish(&l->tl, WEFT_TIMELINE_NONE, l->last_time);
        rc = weft_profile_finish_loc(&c->prof, &l->prof,
                                     (int64_t)weft__loc_id(m, l),
                                     l->last_time);
        if (rc < 0)
            rc = weft__conv_fail(c, rc, "out of memory");
    }
    m->prows = c->prof.rows;
    m->nprows = c->prof.nrows;
    c->prof.rows = NULL;
    c->prof.nrows = c->prof.cap = 0;
    if (rc == 0)
        member_to_trace(c, m);
    weft__replay_maps_free(c);
    return rc;
}

/* See replay.h. */
void weft__replay_note_times(conv *c, const member *m)
{
    for (size_t k = 0; k < m->nlocs; k++)
        if (m->locs[k].events) {
            note_time(c, m, m->locs[k].prof.start);
            note_time(c, m, m->locs[k].last_time);
        }
}
