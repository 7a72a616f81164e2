/* convclock.c - the converter's clocks: each member's ClockOffsets made
 * ready for the archive, and the archive's timer resolution (convert.c
 * calls weft__conv_pick_resolution after pass 1).
 *
 * DESIGN (see proto/clock.h and README "Clocks"): traces from several
 * hosts line up through OTF2 ClockOffset definitions, not by rewriting
 * timestamps. libweft measures its offset to weftd's CLOCK_MONOTONIC at
 * start and before Goodbye and sends it as ClockOffset records (offset in
 * ns), which go to the local definitions of the member's locations;
 * readers (otf2-print, the otf2 Python module) apply them, interpolating
 * linearly between them. The archive's timer resolution is the members'
 * rate, the lowest rank's, when every member counts at it or within 10
 * ppm of it with ClockOffsets (the processes of one host that read its
 * TSC measure the kernel's frequency within a few ppm, client/timer.c):
 * the members' ticks stay as they are and their offsets are written in
 * archive ticks, exactly (offset_ticks), so the archive's global clock
 * is weftd's CLOCK_MONOTONIC counted at that rate. When members differ
 * more (hosts with different TSC rates, or TSC and CLOCK_MONOTONIC
 * processes without offsets) it is 1 ns and the
 * timestamps of the other members (event times, BufferFlush stopTime,
 * ClockOffset times, the Hello's clock_at_realtime) are scaled to ns.
 * ClockProperties' globalOffset and traceLength, and the catalog's time
 * range, are in corrected (offset-applied) time.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_internal.h"
#include "weft_errors.h"

#define DEFAULT_RESOLUTION 1000000000u
/* Members whose rates differ by at most 1 / WEFT_RATE_SLACK of the
 * archive's (10 ppm) keep their ticks when ClockOffsets correct them:
 * tick differences (durations, the profile) are that close. */
#define WEFT_RATE_SLACK 100000u

/* Any thread. */
uint64_t weft__conv_corrected(const member *m, uint64_t t)
{
    int64_t off = weft_clock_offset_at(m->offsets, m->noffsets, t);

    if (off < 0 && (uint64_t)-off > t)
        return 0;
    return t + (uint64_t)off;
}

/* The offset (archive ticks at res) of m's time t (its ticks) to the
 * archive's global clock, weftd's CLOCK_MONOTONIC counted at res, given
 * the offset off_ns libweft measured at t: weftd read t / its rate +
 * off_ns then, which is that times res in the archive's ticks. Exact
 * (long double) to the nearest tick; for m counting at res it is off_ns
 * in ticks, for res = 1e9 off_ns itself. */
static int64_t offset_ticks(const member *m, uint64_t t, int64_t off_ns,
                            uint64_t res)
{
    /* At one rate t cancels out: leave it out, so that a huge t does not
     * cost the offset its last bits. */
    long double g = m->timer_resolution == res
        ? (long double)off_ns * (long double)res / 1e9L
        : ((long double)t * 1e9L / (long double)m->timer_resolution +
           (long double)off_ns) * (long double)res / 1e9L - (long double)t;

    return (int64_t)(g < 0 ? g - 0.5L : g + 0.5L);
}

/* r's error bound: its standardDeviation, 0 where that is no bound (a
 * process's own ClockOffset may say anything). */
static double offset_error(const weft_record *r)
{
    double sd = r->u.ClockOffset.standardDeviation;

    return isfinite(sd) && sd > 0 ? sd : 0;
}

/* Drift that the measurements cannot tell from their error: each
 * ClockOffset (ns, as libweft measured it) is exact within its
 * standardDeviation (rtt/2, an error bound). Where consecutive ones'
 * bounds overlap, one offset is true of them all, and readers would
 * otherwise turn the noise into a rate: 60 us of error over a 0.1 s run
 * stretches every duration by 600 ppm. Such a run of points gets the one
 * offset, the best measured one moved into every bound. Real drift
 * (hosts whose clocks part by more than the measurements' error) stays.
 * r: m's local definitions, ClockOffsets in time order. */
static void flatten_offsets(weft_record *r, size_t n)
{
    size_t i = 0;

    while (i < n) {
        if (r[i].type != WEFT_REC_ClockOffset) {
            i++;
            continue;
        }
        double lo = (double)r[i].u.ClockOffset.offset - offset_error(&r[i]),
               hi = (double)r[i].u.ClockOffset.offset + offset_error(&r[i]);
        size_t j = i + 1, best = i;
        for (; j < n && r[j].type == WEFT_REC_ClockOffset; j++) {
            double a = (double)r[j].u.ClockOffset.offset - offset_error(&r[j]),
                   b = (double)r[j].u.ClockOffset.offset + offset_error(&r[j]);
            if (a > hi || b < lo)
                break;
            lo = a > lo ? a : lo;
            hi = b < hi ? b : hi;
            if (offset_error(&r[j]) < offset_error(&r[best]))
                best = j;
        }
        int64_t v = r[best].u.ClockOffset.offset;
        /* the bounds are within int64_t's range but for rounding */
        if ((double)v < lo && lo < 9e18)
            v = (int64_t)ceil(lo);
        else if ((double)v > hi && hi > -9e18)
            v = (int64_t)floor(hi);
        for (size_t k = i; k < j; k++)
            r[k].u.ClockOffset.offset = v;
        i = j;
    }
}

/* Orders m's ClockOffsets by time (readers interpolate between
 * neighbours; a member's own records come in time order, but a process
 * may add some of its own) and turns them into the archive's units: their
 * times scaled to ns when m is rescaled, else their offsets (ns, as
 * libweft measures them) into archive ticks (offset_ticks), after
 * flatten_offsets() took out drift within their error. A lone one (a
 * process that never said Goodbye) gets a second point a second after
 * it: libotf2's readers apply no offset at all from a single ClockOffset,
 * and from two they correct the rate too. Keeps the (time, offset) points
 * for weft__conv_corrected(). */
static int prepare_offsets(conv *c, member *m)
{
    size_t n = 0, lone = 0;
    int rc;

    for (size_t i = 1; i < m->nlocal; i++) {
        weft_record r = m->local_defs[i];
        size_t k = i;
        if (r.type != WEFT_REC_ClockOffset)
            continue;
        while (k > 0 && m->local_defs[k - 1].type == WEFT_REC_ClockOffset &&
               m->local_defs[k - 1].u.ClockOffset.time >
                   r.u.ClockOffset.time) {
            m->local_defs[k] = m->local_defs[k - 1];
            k--;
        }
        m->local_defs[k] = r;
    }
    for (size_t i = 0; i < m->nlocal; i++)
        if (m->local_defs[i].type == WEFT_REC_ClockOffset) {
            lone = i;
            n++;
        }
    if (n == 1) {
        weft_record r = m->local_defs[lone];
        r.u.ClockOffset.time += m->timer_resolution;
        if (r.u.ClockOffset.time > m->local_defs[lone].u.ClockOffset.time) {
            if ((rc = weft__conv_keep_local_def(c, m, &r)) < 0)
                return rc;
            n++;
        }
    }
    flatten_offsets(m->local_defs, m->nlocal);
    for (size_t i = 0; i < m->nlocal; i++) {
        weft_record *r = &m->local_defs[i];
        if (r->type != WEFT_REC_ClockOffset)
            continue;
        if (m->rescale) {
            r->u.ClockOffset.time = weft_clock_ticks_to_ns(
                r->u.ClockOffset.time, m->timer_resolution);
        } else {
            r->u.ClockOffset.offset = offset_ticks(
                m, r->u.ClockOffset.time, r->u.ClockOffset.offset,
                c->resolution);
            r->u.ClockOffset.standardDeviation *=
                (double)c->resolution / 1e9;
        }
    }
    if (!n)
        return 0;
    m->offsets = calloc(n, sizeof *m->offsets);
    if (!m->offsets)
        return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->nlocal; i++) {
        const weft_record *r = &m->local_defs[i];
        if (r->type != WEFT_REC_ClockOffset)
            continue;
        m->offsets[m->noffsets].time = r->u.ClockOffset.time;
        m->offsets[m->noffsets].offset = r->u.ClockOffset.offset;
        m->noffsets++;
    }
    /* Corrected time t + offset(t) grows with t where the offset falls by
     * less than half a tick per tick (rounding the interpolated offset
     * then takes at most one tick back): true of any real clock. */
    for (size_t i = 1; i < m->noffsets; i++) {
        long double dt = (long double)m->offsets[i].time -
                         (long double)m->offsets[i - 1].time,
                    doff = (long double)m->offsets[i].offset -
                           (long double)m->offsets[i - 1].offset;
        if (dt > 0 && 2 * doff <= -dt)
            m->each_time = 1;
    }
    return 0;
}

/* 1 if m has ClockOffset records. */
static int has_offsets(const member *m)
{
    for (size_t i = 0; i < m->nlocal; i++)
        if (m->local_defs[i].type == WEFT_REC_ClockOffset)
            return 1;
    return 0;
}

/* 1 if m's ticks can go into an archive counting res as they are: m
 * counts at res, or within WEFT_RATE_SLACK of it and has ClockOffsets
 * that correct the difference (processes of one host calibrating its
 * TSC, client/timer.c). */
static int keeps_ticks(const member *m, uint64_t res)
{
    return m->timer_resolution == res ||
           (weft__conv_rate_near(m->timer_resolution, res) &&
            has_offsets(m));
}

/* See convert_internal.h. */
int weft__conv_rate_near(uint64_t rate, uint64_t res)
{
    uint64_t d = rate > res ? rate - res : res - rate;

    return d <= res / WEFT_RATE_SLACK;
}

/* See convert_internal.h. */
int weft__conv_rescaled(uint64_t rate, uint64_t fixed)
{
    return rate && rate != fixed;
}

/* See convert_internal.h. Picks the trace's resolution: the lowest
 * rank's, if every member's ticks can stay as they are with it
 * (keeps_ticks), else 1 ns with the members that count otherwise
 * rescaled (see the DESIGN note); a fixed one
 * (weft_convert_input.resolution) rescales every member of another
 * rate, as a stream decides from its Hello alone. Then prepares every
 * member's clock offsets. */
int weft__conv_pick_resolution(conv *c)
{
    uint64_t fixed = c->in->resolution;
    int rc;

    c->resolution = fixed;
    for (size_t i = 0; i < c->nmems && !c->resolution; i++)
        c->resolution = c->mems[i].timer_resolution;
    for (size_t i = 0; i < c->nmems && !fixed; i++)
        if (c->mems[i].timer_resolution &&
            !keeps_ticks(&c->mems[i], c->resolution))
            c->resolution = 0;
    if (!c->resolution)
        c->resolution = DEFAULT_RESOLUTION;
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        m->rescale = fixed ? weft__conv_rescaled(m->timer_resolution, fixed)
                           : m->timer_resolution &&
                                 !keeps_ticks(m, c->resolution);
        if ((rc = prepare_offsets(c, m)) < 0)
            return rc;
    }
    return 0;
}


/* See convert_internal.h. */
void weft__conv_clocks(const conv *c, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = 0;
    for (const char *const *k = weft_clock_names; *k; k++)
        for (size_t i = 0; i < c->nmems; i++)
            if (c->mems[i].clock && strcmp(c->mems[i].clock, *k) == 0) {
                if (at < len)
                    at += (size_t)snprintf(buf + at, len - at, "%s%s",
                                           at ? "," : "", *k);
                break;
            }
}
