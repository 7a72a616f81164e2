/* sums.c - a member's sums (sums.h): adopted into a conversion from a
 * stream, packed on a node, checked and adopted on its head.
 *
 * DESIGN (issue #34, step B): a node's weftd writes its ranks' event
 * files into the trace's archive directory with a stream of its own
 * (events only) and sends the head, at a member's end, what the head's
 * conversion would have summed from those events: everything
 * weft__sums_adopt moves from a stream's member. The head's pass 1
 * reads the member's journal as always (no events in it) and builds its
 * unifier from the same definitions in the same order, so the ids of
 * the sums are its own; the sums are checked against it (counts of its
 * definitions, the resolution and rescaling, ids and indices below
 * their counts, times within the location's) and adopted as a stream's
 * member is. What is open at a member's end is closed on the node where
 * that is what the head would do next with nothing between: the
 * profile's frames (the stream's end leaves every open region), the
 * timelines (finished at the location's last time, as weft__replay_member
 * finishes an adopted member's, whose finish then finds nothing to do);
 * I/O operations still in flight are never matched once the member is
 * done and are not sent.
 */
#include "sums.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "otf2out.h"
#include "replay.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* ---- adopting ------------------------------------------------------- */

/* Moves l's replay from sl (NULL or without events: nothing was written
 * of it, it gets an empty event file now). */
static int adopt_loc(conv *c, member *m, loc *l, loc *sl)
{
    if (!sl || !sl->events) {
        if (sl) {
            weft_timeline_free(&sl->tl);
            weft_metricloc_free(&sl->ml);
            weft_profile_loc_free(&sl->prof);
        }
        if (weft__otf2_open_writer(c, m, l) < 0 ||
            weft__replay_close_writers(c, m) < 0)
            return WEFT_EOTF2;
        if (sl)
            l->replayed = sl->replayed;
        return 0;
    }
    l->events = sl->events;
    l->replayed = sl->replayed;
    l->last_time = sl->last_time;
    l->prof = sl->prof;
    memset(&sl->prof, 0, sizeof sl->prof);
    l->io = sl->io;
    memset(&sl->io, 0, sizeof sl->io);
    /* The conversion's plan says which locations have summaries; the
     * stream's bins are kept where it wants one. */
    if (l->has_timeline) {
        l->tl = sl->tl;
        memset(&sl->tl, 0, sizeof sl->tl);
    }
    if (l->has_metrics) {
        l->ml = sl->ml;
        memset(&sl->ml, 0, sizeof sl->ml);
    }
    return 0;
}

/* See sums.h. */
int weft__sums_adopt(conv *c, member *m, member *from, weft__nesting *n)
{
    int rc;

    for (size_t k = 0; k < m->nlocs; k++) {
        loc *l = &m->locs[k];
        if ((rc = adopt_loc(c, m, l, weft__conv_loc(from, l->thread, 0))) < 0)
            return rc;
    }
    m->sends = from->sends;
    memset(&from->sends, 0, sizeof from->sends);
    m->io = from->io;
    memset(&from->io, 0, sizeof from->io);
    m->nested = from->nested;
    c->anomalies += n->anomalies;
    c->added += n->added;
    c->unmatched += n->unmatched;
    for (size_t k = 0; k < n->nloc_refs; k++)
        if ((rc = weft__conv_note_location(c, n->loc_refs[k])) < 0)
            return rc;
    weft__replay_note_times(c, m);
    m->adopted = 1;
    c->out->streamed++;
    return 0;
}

/* ---- packing (a node) ------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Frees what pack_loc made of *p (not p). */
static void free_loc_msg(Weft__SumsLocation *p)
{
    free(p->slot_region);
    free(p->slot_visits);
    free(p->slot_incl);
    free(p->slot_excl);
    for (size_t i = 0; i < p->n_series; i++) {
        free(p->series[i]->bins);
        free(p->series[i]);
    }
    free(p->series);
}

/* l of m as *p (arrays malloc'd; its timeline's bins and its other
 * metric members point into l's). 0, WEFT_ENOMEM or WEFT_ESTATE (a
 * frame still open, a timeline not finished). */
static int pack_loc(const member *m, const loc *l, Weft__SumsLocation *p)
{
    const weft_profile_loc *pr = &l->prof;
    size_t n = pr->slots.used, k = 0;

    weft__sums_location__init(p);
    if (pr->depth)
        return WEFT_ESTATE;
    p->location = weft__loc_id(m, l);
    p->events = l->events;
    p->replayed = l->replayed;
    p->refused = l->refused;
    p->last_time = l->last_time;
    p->start = pr->start;
    p->top = pr->top;
    p->slot_region = calloc(n + 1, sizeof *p->slot_region);
    p->slot_visits = calloc(n + 1, sizeof *p->slot_visits);
    p->slot_incl = calloc(n + 1, sizeof *p->slot_incl);
    p->slot_excl = calloc(n + 1, sizeof *p->slot_excl);
    p->series = calloc(l->ml.n + 1, sizeof *p->series);
    if (!p->slot_region || !p->slot_visits || !p->slot_incl ||
        !p->slot_excl || !p->series)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < pr->slots.ncells; i++) {
        const weft_profile_slot *sl = weft_hashtab_at(&pr->slots, i,
                                                      sizeof *sl);
        if (!sl)
            continue;
        p->slot_region[k] = sl->key - 1u;
        p->slot_visits[k] = sl->visits;
        p->slot_incl[k] = sl->incl;
        p->slot_excl[k] = sl->excl;
        k++;
    }
    p->n_slot_region = p->n_slot_visits = p->n_slot_incl =
        p->n_slot_excl = k;
    if (l->tl.bins) {
        if (l->tl.ticks)  /* not finished */
            return WEFT_ESTATE;
        p->has_timeline = 1;
        p->tl_first = l->tl.first;
        p->tl_width = l->tl.width;
        p->tl_cap = l->tl.cap;
        p->n_tl_bins = l->tl.n;
        p->tl_bins = l->tl.bins;
    }
    for (size_t i = 0; i < l->ml.n; i++) {
        const weft_metric_series *s = &l->ml.s[i];
        Weft__SumsMetricSeries *x = malloc(sizeof *x);
        if (!x)
            return WEFT_ENOMEM;
        weft__sums_metric_series__init(x);
        x->member = s->member;
        x->first = s->first;
        x->width = s->width;
        p->series[p->n_series++] = x;
        if (!(x->bins = malloc((3 * (size_t)s->n + 1) * sizeof *x->bins)))
            return WEFT_ENOMEM;
        for (uint32_t b = 0; b < s->n; b++) {
            x->bins[x->n_bins++] = s->bins[b].min;
            x->bins[x->n_bins++] = s->bins[b].max;
            x->bins[x->n_bins++] = s->bins[b].last;
        }
    }
    p->n_metric_others = l->ml.nothers;
    p->metric_others = l->ml.others;
    return 0;
}

/* m's sends as three packed arrays of s (malloc'd). */
static int pack_sends(const weft_commsum *c, Weft__MemberSums *s)
{
    size_t n = c->t.used, k = 0;

    s->send_receiver = calloc(n + 1, sizeof *s->send_receiver);
    s->send_messages = calloc(n + 1, sizeof *s->send_messages);
    s->send_bytes = calloc(n + 1, sizeof *s->send_bytes);
    if (!s->send_receiver || !s->send_messages || !s->send_bytes)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < c->t.ncells; i++) {
        const weft_commsum_cell *x = weft_hashtab_at(&c->t, i, sizeof *x);
        if (!x)
            continue;
        s->send_receiver[k] = x->key - 1u;
        s->send_messages[k] = x->messages;
        s->send_bytes[k] = x->bytes;
        k++;
    }
    s->n_send_receiver = s->n_send_messages = s->n_send_bytes = k;
    return 0;
}

/* m's I/O as five packed arrays of s (malloc'd). */
static int pack_io(const weft_iosum *io, Weft__MemberSums *s)
{
    size_t n = io->t.used, k = 0;

    s->io_handle = calloc(n + 1, sizeof *s->io_handle);
    s->io_read = calloc(n + 1, sizeof *s->io_read);
    s->io_written = calloc(n + 1, sizeof *s->io_written);
    s->io_operations = calloc(n + 1, sizeof *s->io_operations);
    s->io_ticks = calloc(n + 1, sizeof *s->io_ticks);
    if (!s->io_handle || !s->io_read || !s->io_written ||
        !s->io_operations || !s->io_ticks)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < io->t.ncells; i++) {
        const weft_iosum_cell *x = weft_hashtab_at(&io->t, i, sizeof *x);
        if (!x)
            continue;
        s->io_handle[k] = x->key - 1u;
        s->io_read[k] = x->bytes_read;
        s->io_written[k] = x->bytes_written;
        s->io_operations[k] = x->operations;
        s->io_ticks[k] = x->ticks;
        k++;
    }
    s->n_io_handle = s->n_io_read = s->n_io_written = s->n_io_operations =
        s->n_io_ticks = k;
    return 0;
}

/* See sums.h. */
int weft__sums_pack(const conv *c, const member *m, const weft__nesting *n,
                    uint8_t **buf, size_t *len)
{
    Weft__MemberSums s = WEFT__MEMBER_SUMS__INIT;
    Weft__SumsLocation *locs = calloc(m->nlocs + 1, sizeof *locs);
    Weft__SumsLocation **lp = calloc(m->nlocs + 1, sizeof *lp);
    uint64_t *refs = NULL;
    size_t nrefs = 0, nl = 0;
    int rc = WEFT_ENOMEM;

    *buf = NULL;
    *len = 0;
    if (!locs || !lp)
        goto out;
    s.rank = m->rank;
    s.resolution = c->resolution;
    s.rescale = m->rescale;
    s.timer_resolution = m->timer_resolution;
    s.ndefs = weft_unify_ndefs(m->u);
    s.nregions = weft_unify_count(m->u, WEFT_REC_Region);
    s.nmetric_members = weft_unify_count(m->u, WEFT_REC_MetricMember);
    s.nio_handles = weft_unify_count(m->u, WEFT_REC_IoHandle);
    s.tl_cap = c->tl_cap;
    for (; nl < m->nlocs; nl++) {
        lp[nl] = &locs[nl];
        if ((rc = pack_loc(m, &m->locs[nl], &locs[nl])) < 0) {
            nl++;
            goto out;
        }
    }
    s.n_locations = nl;
    s.locations = lp;
    rc = WEFT_ENOMEM;
    if (pack_sends(&m->sends, &s) < 0 || pack_io(&m->io, &s) < 0)
        goto out;
    s.nested = m->nested;
    s.anomalies = n->anomalies;
    s.added = n->added;
    s.unmatched = n->unmatched;
    /* Distinct and sorted, as the conversion takes them (replay_workers.c
     * makes each one location once). */
    if (n->nloc_refs) {
        if (!(refs = malloc(n->nloc_refs * sizeof *refs)))
            goto out;
        memcpy(refs, n->loc_refs, n->nloc_refs * sizeof *refs);
        qsort(refs, n->nloc_refs, sizeof *refs, cmp_u64);
        for (size_t i = 0; i < n->nloc_refs; i++)
            if (!nrefs || refs[i] != refs[nrefs - 1])
                refs[nrefs++] = refs[i];
    }
    s.n_loc_refs = nrefs;
    s.loc_refs = refs;
    s.refused_quota = m->refused_quota;
    s.refused_reserve = m->refused_reserve;
    s.refused_write = m->refused_write;
    s.write_errno = m->write_errno;
    *len = weft__member_sums__get_packed_size(&s);
    if (!(*buf = malloc(*len ? *len : 1)))
        goto out;
    weft__member_sums__pack(&s, *buf);
    rc = 0;
out:
    if (rc < 0)
        *len = 0;
    for (size_t i = 0; i < nl; i++)
        free_loc_msg(&locs[i]);
    free(locs);
    free(lp);
    free(s.send_receiver);
    free(s.send_messages);
    free(s.send_bytes);
    free(s.io_handle);
    free(s.io_read);
    free(s.io_written);
    free(s.io_operations);
    free(s.io_ticks);
    free(refs);
    return rc;
}

/* ---- checking and decoding (a head) ----------------------------------- */

/* See sums.h. */
weft__sums_want weft__sums_want_of(const conv *c, const member *m)
{
    weft__sums_want w;

    memset(&w, 0, sizeof w);
    w.rank = m->rank;
    w.size = m->size > c->in->members ? m->size : c->in->members;
    w.resolution = c->resolution;
    w.rescale = m->rescale;
    w.timer_resolution = m->timer_resolution;
    w.ndefs = weft_unify_ndefs(m->u);
    w.nregions = weft_unify_count(m->u, WEFT_REC_Region);
    w.nmetric_members = weft_unify_count(m->u, WEFT_REC_MetricMember);
    w.nio_handles = weft_unify_count(m->u, WEFT_REC_IoHandle);
    return w;
}

/* See sums.h. */
void weft__sums_free(weft__sums *s)
{
    if (!s)
        return;
    for (size_t k = 0; k < s->m.nlocs; k++) {
        loc *l = &s->m.locs[k];
        weft_profile_loc_free(&l->prof);
        weft_timeline_free(&l->tl);
        weft_iolive_free(&l->io);
        weft_metricloc_free(&l->ml);
    }
    free(s->m.locs);
    weft_commsum_free(&s->m.sends);
    weft_iosum_free(&s->m.io);
    free(s->n.loc_refs);
    free(s);
}

/* Decoding state: what is checked against, and where a complaint
 * goes. */
typedef struct dec {
    const weft__sums_want *w;
    char *err;
    size_t errlen;
} dec;

/* Says what was wrong (after "rank R: its sums "). WEFT_ECORRUPT. */
__attribute__((format(printf, 2, 3)))
static int bad(dec *d, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(d->err, d->errlen, "rank %" PRIu32 ": its sums ",
                     d->w->rank);

    if (n >= 0 && (size_t)n < d->errlen) {
        va_start(ap, fmt);
        vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return WEFT_ECORRUPT;
}

static int oom(dec *d)
{
    snprintf(d->err, d->errlen, "rank %" PRIu32 ": out of memory",
             d->w->rank);
    return WEFT_ENOMEM;
}

/* The member as a whole: who, at what rate, after which definitions. */
static int check_member(dec *d, const Weft__MemberSums *s)
{
    const weft__sums_want *w = d->w;

    if (s->rank != w->rank)
        return bad(d, "are rank %" PRIu32 "'s", s->rank);
    if (s->resolution != w->resolution || s->rescale != (w->rescale != 0) ||
        s->timer_resolution != w->timer_resolution)
        return bad(d, "were written at %" PRIu64 " ticks a second (its "
                   "clock %" PRIu64 ", %s), the trace's are %" PRIu64
                   " (its clock %" PRIu64 ", %s)", s->resolution,
                   s->timer_resolution, s->rescale ? "rescaled" : "as is",
                   w->resolution, w->timer_resolution,
                   w->rescale ? "rescaled" : "as is");
    if (s->ndefs != w->ndefs || s->nregions != w->nregions ||
        s->nmetric_members != w->nmetric_members ||
        s->nio_handles != w->nio_handles)
        return bad(d, "follow other definitions than its journal here "
                   "(%" PRIu64 " definitions, %" PRIu64 " regions, %"
                   PRIu64 " metric members, %" PRIu64 " I/O handles; here "
                   "%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ")",
                   s->ndefs, s->nregions, s->nmetric_members,
                   s->nio_handles, w->ndefs, w->nregions,
                   w->nmetric_members, w->nio_handles);
    if (s->n_locations > WEFT_SUMS_MAX_LOCATIONS ||
        s->n_loc_refs > WEFT_SUMS_MAX_LOCATIONS)
        return bad(d, "hold %zu locations and name %zu, more than %" PRIu32,
                   s->n_locations, s->n_loc_refs, WEFT_SUMS_MAX_LOCATIONS);
    if (s->write_errno < 0)
        return bad(d, "say errno %" PRId32, s->write_errno);
    return 0;
}

/* The profile of location x into l (region ids below nregions, each
 * once). */
static int get_profile(dec *d, const Weft__SumsLocation *x, loc *l)
{
    size_t n = x->n_slot_region;

    if (x->n_slot_visits != n || x->n_slot_incl != n || x->n_slot_excl != n)
        return bad(d, "thread %" PRIu32 ": profile arrays of %zu, %zu, %zu "
                   "and %zu", l->thread, n, x->n_slot_visits,
                   x->n_slot_incl, x->n_slot_excl);
    l->prof.start = x->start;
    l->prof.top = x->top;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = x->slot_region[i];
        weft_profile_slot *sl;
        if (r >= d->w->nregions)
            return bad(d, "thread %" PRIu32 ": profile region %" PRIu32
                       " of %" PRIu64, l->thread, r, d->w->nregions);
        if (weft__profile_find(&l->prof, r))
            return bad(d, "thread %" PRIu32 ": profile region %" PRIu32
                       " twice", l->thread, r);
        if (!(sl = weft_hashtab_get(&l->prof.slots, r + 1u, sizeof *sl)))
            return oom(d);
        sl->visits = x->slot_visits[i];
        sl->incl = x->slot_incl[i];
        sl->excl = x->slot_excl[i];
    }
    return 0;
}

/* The timeline of location x into l: finished, fewer bins than its
 * room, each a region (+ 1) of the member or none. */
static int get_timeline(dec *d, const Weft__SumsLocation *x, loc *l)
{
    uint32_t cap = x->tl_cap;

    if (!x->has_timeline)
        return x->n_tl_bins ? bad(d, "thread %" PRIu32 ": timeline bins "
                                  "without a timeline", l->thread)
                            : 0;
    if (cap < 2 || cap > WEFT_TIMELINE_BINS || (cap & (cap - 1)) ||
        x->n_tl_bins >= cap)
        return bad(d, "thread %" PRIu32 ": timeline of %zu bins, room for "
                   "%" PRIu32 " (a power of two to %u)", l->thread,
                   x->n_tl_bins, cap, WEFT_TIMELINE_BINS);
    if (!x->tl_width)
        return bad(d, "thread %" PRIu32 ": timeline bins of 0 ticks",
                   l->thread);
    if (x->n_tl_bins && (x->tl_first < x->start ||
                         x->tl_first > x->last_time))
        return bad(d, "thread %" PRIu32 ": timeline from %" PRIu64 ", "
                   "outside its events (%" PRIu64 " to %" PRIu64 ")",
                   l->thread, x->tl_first, x->start, x->last_time);
    for (size_t i = 0; i < x->n_tl_bins; i++)
        if (x->tl_bins[i] > d->w->nregions)
            return bad(d, "thread %" PRIu32 ": timeline bin %zu names "
                       "region %" PRIu32 " of %" PRIu64, l->thread, i,
                       x->tl_bins[i] - 1u, d->w->nregions);
    /* finished: bins only (as weft_timeline_finish leaves them) */
    if (!(l->tl.bins = malloc((x->n_tl_bins + 1) * sizeof *l->tl.bins)))
        return oom(d);
    if (x->n_tl_bins)
        memcpy(l->tl.bins, x->tl_bins, x->n_tl_bins * sizeof *l->tl.bins);
    l->tl.n = (uint32_t)x->n_tl_bins;
    l->tl.cap = cap;
    l->tl.first = x->tl_first;
    l->tl.width = x->tl_width;
    return 0;
}

/* Whether metric member k is among the first n of the series or
 * others of l. */
static int has_member(const weft_metricloc *ml, uint32_t k)
{
    for (size_t i = 0; i < ml->n; i++)
        if (ml->s[i].member == k)
            return 1;
    for (size_t i = 0; i < ml->nothers; i++)
        if (ml->others[i] == k)
            return 1;
    return 0;
}

/* The metric series of location x into l: at most
 * WEFT_METRICSUM_PER_LOC of WEFT_METRICSUM_BINS bins, each member of the
 * member's once, others only beyond them. */
static int get_metrics(dec *d, const Weft__SumsLocation *x, loc *l)
{
    weft_metricloc *ml = &l->ml;

    if (x->n_series > WEFT_METRICSUM_PER_LOC ||
        (x->n_metric_others && x->n_series < WEFT_METRICSUM_PER_LOC) ||
        x->n_metric_others > d->w->nmetric_members)
        return bad(d, "thread %" PRIu32 ": %zu metric series and %zu "
                   "others (at most %u, others beyond them)", l->thread,
                   x->n_series, x->n_metric_others, WEFT_METRICSUM_PER_LOC);
    if (x->n_series &&
        !(ml->s = calloc(WEFT_METRICSUM_PER_LOC, sizeof *ml->s)))
        return oom(d);
    for (size_t i = 0; i < x->n_series; i++) {
        const Weft__SumsMetricSeries *y = x->series[i];
        weft_metric_series *s = &ml->s[i];
        size_t nb = y->n_bins / 3;
        if (y->member >= d->w->nmetric_members ||
            has_member(ml, y->member))
            return bad(d, "thread %" PRIu32 ": metric member %" PRIu32
                       " of %" PRIu64 " (or twice)", l->thread, y->member,
                       d->w->nmetric_members);
        if (y->n_bins % 3 || nb > WEFT_METRICSUM_BINS ||
            (nb && (!y->width || y->first < x->start ||
                    y->first > x->last_time)))
            return bad(d, "thread %" PRIu32 ": metric member %" PRIu32
                       ": %zu values, width %" PRIu64 ", from %" PRIu64,
                       l->thread, y->member, y->n_bins, y->width,
                       y->first);
        if (!(s->bins = malloc(WEFT_METRICSUM_BINS * sizeof *s->bins)))
            return oom(d);
        ml->n++;
        for (size_t b = 0; b < WEFT_METRICSUM_BINS; b++)
            s->bins[b].min = s->bins[b].max = s->bins[b].last = NAN;
        for (size_t b = 0; b < nb; b++) {
            s->bins[b].min = y->bins[3 * b];
            s->bins[b].max = y->bins[3 * b + 1];
            s->bins[b].last = y->bins[3 * b + 2];
        }
        s->member = y->member;
        s->first = y->first;
        s->width = y->width;
        s->n = (uint32_t)nb;
    }
    if (x->n_metric_others) {
        if (!(ml->others = malloc(x->n_metric_others * sizeof *ml->others)))
            return oom(d);
        ml->others_cap = x->n_metric_others;
    }
    for (size_t i = 0; i < x->n_metric_others; i++) {
        uint32_t k = x->metric_others[i];
        if (k >= d->w->nmetric_members || has_member(ml, k))
            return bad(d, "thread %" PRIu32 ": other metric member %"
                       PRIu32 " of %" PRIu64 " (or twice)", l->thread, k,
                       d->w->nmetric_members);
        ml->others[ml->nothers++] = k;
    }
    return 0;
}

/* Location x, the i-th, into l: the member's, after the one before. */
static int get_loc(dec *d, const Weft__SumsLocation *x, uint64_t prev,
                   size_t i, loc *l)
{
    int rc;

    if (x->location >> 32 != d->w->rank || (i && x->location <= prev))
        return bad(d, "name location %" PRIu64 " (rank %" PRIu64 " thread %"
                   PRIu64 "), not one of its own in order", x->location,
                   x->location >> 32, x->location & 0xffffffffu);
    l->thread = (uint32_t)x->location;
    if (x->events && x->start > x->last_time)
        return bad(d, "thread %" PRIu32 ": events from %" PRIu64 " to %"
                   PRIu64, l->thread, x->start, x->last_time);
    l->events = x->events;
    l->replayed = x->replayed;
    l->refused = x->refused;
    l->last_time = x->last_time;
    if ((rc = get_profile(d, x, l)) < 0 || (rc = get_timeline(d, x, l)) < 0)
        return rc;
    return get_metrics(d, x, l);
}

/* The sends (receivers below the trace's size) and the I/O (handles of
 * the member's) into m. */
static int get_cells(dec *d, const Weft__MemberSums *s, member *m)
{
    size_t n = s->n_send_receiver, k = s->n_io_handle;

    if (s->n_send_messages != n || s->n_send_bytes != n ||
        s->n_io_read != k || s->n_io_written != k ||
        s->n_io_operations != k || s->n_io_ticks != k)
        return bad(d, "hold send or I/O arrays of different lengths");
    for (size_t i = 0; i < n; i++) {
        uint32_t r = s->send_receiver[i];
        weft_commsum_cell *cell;
        if (r >= d->w->size ||
            weft_hashtab_find(&m->sends.t, r + 1u, sizeof *cell))
            return bad(d, "name receiver %" PRIu32 " in a trace of %" PRIu32
                       " (or twice)", r, d->w->size);
        if (!(cell = weft_hashtab_get(&m->sends.t, r + 1u, sizeof *cell)))
            return oom(d);
        cell->messages = s->send_messages[i];
        cell->bytes = s->send_bytes[i];
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t h = s->io_handle[i];
        weft_iosum_cell *cell;
        if (h >= d->w->nio_handles ||
            weft_hashtab_find(&m->io.t, h + 1u, sizeof *cell))
            return bad(d, "name I/O handle %" PRIu32 " of %" PRIu64
                       " (or twice)", h, d->w->nio_handles);
        if (!(cell = weft_hashtab_get(&m->io.t, h + 1u, sizeof *cell)))
            return oom(d);
        cell->bytes_read = s->io_read[i];
        cell->bytes_written = s->io_written[i];
        cell->operations = s->io_operations[i];
        cell->ticks = s->io_ticks[i];
    }
    return 0;
}

/* The locations its events named: sorted, distinct, of the trace's
 * ranks. */
static int get_refs(dec *d, const Weft__MemberSums *s, weft__nesting *n)
{
    for (size_t i = 0; i < s->n_loc_refs; i++)
        if ((s->loc_refs[i] >> 32) >= d->w->size ||
            (i && s->loc_refs[i] <= s->loc_refs[i - 1]))
            return bad(d, "name location %" PRIu64 " (not in order, or of "
                       "no rank of %" PRIu32 ")", s->loc_refs[i],
                       d->w->size);
    if (s->n_loc_refs &&
        !(n->loc_refs = malloc(s->n_loc_refs * sizeof *n->loc_refs)))
        return oom(d);
    if (s->n_loc_refs)
        memcpy(n->loc_refs, s->loc_refs, s->n_loc_refs * sizeof *n->loc_refs);
    n->nloc_refs = s->n_loc_refs;
    n->anomalies = s->anomalies;
    n->added = s->added;
    n->unmatched = s->unmatched;
    return 0;
}

/* See sums.h. */
int weft__sums_unpack(const weft__sums_want *w, const uint8_t *buf,
                      size_t len, weft__sums **out, char *err,
                      size_t errlen)
{
    dec d = { w, err, errlen };
    Weft__MemberSums *s = weft__member_sums__unpack(NULL, len, buf);
    weft__sums *x = NULL;
    int rc;

    *out = NULL;
    if (!s) {
        rc = bad(&d, "do not unpack (%zu bytes: truncated or not "
                 "MemberSums)", len);
        goto out;
    }
    if ((rc = check_member(&d, s)) < 0)
        goto out;
    if (!(x = calloc(1, sizeof *x)) ||
        !(x->m.locs = calloc(s->n_locations + 1, sizeof *x->m.locs))) {
        rc = oom(&d);
        goto out;
    }
    x->m.rank = w->rank;
    x->m.locs_cap = s->n_locations + 1;
    for (size_t i = 0; i < s->n_locations; i++) {
        /* counted first: weft__sums_free frees what it began */
        x->m.nlocs++;
        if ((rc = get_loc(&d, s->locations[i],
                          i ? s->locations[i - 1]->location : 0, i,
                          &x->m.locs[i])) < 0)
            goto out;
    }
    if ((rc = get_cells(&d, s, &x->m)) < 0 ||
        (rc = get_refs(&d, s, &x->n)) < 0)
        goto out;
    x->m.nested = s->nested;
    x->m.refused_quota = s->refused_quota;
    x->m.refused_reserve = s->refused_reserve;
    x->m.refused_write = s->refused_write;
    x->m.write_errno = s->write_errno;
    *out = x;
    x = NULL;
out:
    weft__sums_free(x);
    if (s)
        weft__member_sums__free_unpacked(s, NULL);
    return rc;
}

/* ---- remote members (a head) ------------------------------------------ */

/* See sums.h. */
int weft__sums_mark_remote(conv *c)
{
    for (size_t i = 0; i < c->in->nremote; i++) {
        uint32_t rank = c->in->remote[i].rank;
        member *m = weft__conv_member(c, rank);
        if (!m || m->remote)
            return weft__conv_fail(c, WEFT_EINVAL, "rank %" PRIu32 " is "
                                   "remote %s", rank,
                                   m ? "twice" : "but has no journal in "
                                                 "the trace directory");
        m->remote = 1;
    }
    return 0;
}

/* m's sums (len bytes at p) decoded and checked, its locations made
 * with the node's counts. Sums the head cannot take make m lost, saying
 * why (the other members' archive stands); 0, or WEFT_ENOMEM (c
 * failed). */
static int gather_member(conv *c, member *m, const uint8_t *p, size_t len)
{
    weft__sums_want w = weft__sums_want_of(c, m);
    weft__sums *x;
    char err[400];
    int rc = 0;

    for (size_t k = 0; k < m->nlocs && rc == 0; k++)
        if (m->locs[k].journaled || m->locs[k].refused) {
            snprintf(err, sizeof err, "%s: its journal holds events, and "
                     "its node sent its sums", m->path);
            rc = WEFT_ECORRUPT;
        }
    if (rc == 0)
        rc = weft__sums_unpack(&w, p, len, &x, err, sizeof err);
    if (rc == WEFT_ENOMEM)
        return weft__conv_fail(c, rc, "%s", err);
    if (rc < 0) {
        m->lost = WEFT__LOST_BAD_SUMS;
        if (!(m->lost_why = strdup(err)))
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        return 0;
    }
    m->sums = x;
    for (size_t k = 0; k < x->m.nlocs; k++) {
        const loc *sl = &x->m.locs[k];
        loc *l = weft__conv_loc(m, sl->thread, 1);
        if (!l)
            return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
        /* what its journal on the node held (its stream read it whole) */
        l->journaled = sl->replayed;
        l->refused = sl->refused;
    }
    m->refused_quota = x->m.refused_quota;
    m->refused_reserve = x->m.refused_reserve;
    m->refused_write = x->m.refused_write;
    m->write_errno = x->m.write_errno;
    return 0;
}

/* See sums.h. */
int weft__sums_gather(conv *c)
{
    for (size_t i = 0; i < c->in->nremote; i++) {
        const weft_convert_remote *r = &c->in->remote[i];
        member *m = weft__conv_member(c, r->rank);
        int rc;
        if (!r->sums) {
            m->lost = WEFT__LOST_NO_SUMS;
            continue;
        }
        if ((rc = gather_member(c, m, r->sums, r->len)) < 0)
            return rc;
    }
    return 0;
}

/* Removes the event files of m's rank that its locations do not name
 * (what its node wrote of threads the head does not know). */
static void remove_strays(conv *c, const member *m)
{
    char path[4096];
    DIR *dir;
    struct dirent *de;

    snprintf(path, sizeof path, "%s/traces", c->in->archive_dir);
    if (!(dir = opendir(path)))
        return;
    while ((de = readdir(dir)) != NULL) {
        uint64_t id;
        int end = 0;
        if (sscanf(de->d_name, "%" SCNu64 ".evt%n", &id, &end) != 1 ||
            de->d_name[end] || !end || id >> 32 != m->rank ||
            weft__conv_loc((member *)m, (uint32_t)id, 0))
            continue;
        unlinkat(dirfd(dir), de->d_name, 0);
    }
    closedir(dir);
}

/* See sums.h. */
int weft__sums_adopt_remote(conv *c)
{
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        int rc;
        if (m->sums && !c->archive && !c->aside) {
            /* The archive is made anew: what the node wrote is gone. */
            for (size_t k = 0; k < m->nlocs; k++)
                m->locs[k].journaled = 0;
            weft__sums_free(m->sums);
            m->sums = NULL;
            m->lost = WEFT__LOST_ANEW;
        } else if (m->sums) {
            rc = weft__sums_adopt(c, m, &m->sums->m, &m->sums->n);
            weft__sums_free(m->sums);
            m->sums = NULL;
            if (rc < 0)
                return rc;
        }
        if (m->lost && c->archive)
            remove_strays(c, m);
    }
    return 0;
}
