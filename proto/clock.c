/* clock.c - see clock.h. Pure arithmetic: no clocks are read here. */
#include "clock.h"

#include <math.h>
#include <string.h>

#include "weft_errors.h"

const char *const weft_clock_names[] = { "monotonic", "tsc", NULL };

const char *weft_clock_name(const char *clock, uint64_t res)
{
    if (!clock || !clock[0])
        return weft_clock_names[res == 1000000000u ? 0 : 1];
    for (const char *const *k = weft_clock_names; *k; k++)
        if (strcmp(clock, *k) == 0)
            return *k;
    return NULL;
}

uint64_t weft_clock_ticks_to_ns(uint64_t t, uint64_t res)
{
    long double ns;

    if (res == 0 || res == 1000000000u)
        return t;
    /* long double keeps 64 bits of mantissa: no ns are lost. */
    ns = (long double)t * 1e9L / (long double)res + 0.5L;
    if (ns >= 18446744073709551615.0L)
        return UINT64_MAX;
    return (uint64_t)ns;
}

int weft_clock_best(const weft_clock_sample *s, size_t n, uint64_t res,
                    weft_clock_estimate *out)
{
    const weft_clock_sample *best = NULL;
    uint64_t best_rtt = UINT64_MAX, mid, rtt_ns;

    for (size_t i = 0; i < n; i++) {
        uint64_t rtt;
        if (s[i].t_recv < s[i].t_send)
            continue;
        rtt = s[i].t_recv - s[i].t_send;
        if (rtt < best_rtt) {
            best_rtt = rtt;
            best = &s[i];
        }
    }
    if (!best)
        return WEFT_ENOTFOUND;
    mid = best->t_send + best_rtt / 2;
    rtt_ns = weft_clock_ticks_to_ns(best_rtt, res);
    out->time = mid;
    out->offset = (int64_t)(best->server_ns - weft_clock_ticks_to_ns(mid, res));
    /* Rounding the middle down costs up to one tick. */
    out->error_ns = rtt_ns / 2 + (rtt_ns & 1) + weft_clock_ticks_to_ns(1, res);
    return 0;
}

int weft_clock_is_zero(const weft_clock_estimate *e)
{
    uint64_t mag = e->offset < 0 ? -(uint64_t)e->offset : (uint64_t)e->offset;

    return mag <= e->error_ns;
}

int64_t weft_clock_offset_at(const weft_clock_point *p, size_t n,
                             uint64_t t)
{
    size_t i = 0;
    double slope = 0, diff;

    if (n == 0)
        return 0;
    if (n == 1)
        return p[0].offset;
    /* The interval [p[i], p[i + 1]] holding t; before the first and after
     * the last, the nearest one, extended (as libotf2 3.0 does). */
    while (i + 2 < n && t > p[i + 1].time)
        i++;
    if (p[i + 1].time > p[i].time)
        slope = (double)(p[i + 1].offset - p[i].offset) /
                (double)(p[i + 1].time - p[i].time);
    diff = t >= p[i].time ? (double)(t - p[i].time)
                          : -(double)(p[i].time - t);
    return p[i].offset + (int64_t)rint(slope * diff);
}
