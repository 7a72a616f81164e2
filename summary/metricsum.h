/* metricsum.h - metric values over time (issue #17): per location and
 * metric member, the values of the Metric events the converter writes,
 * downsampled to at most WEFT_METRICSUM_BINS bins (minimum, maximum and
 * last value of each), for `weft report`'s line plots.
 *
 * As the timeline (timeline.h), the range is not known until the end:
 * the first bin starts at the series' first value and is `width` ticks
 * wide; when a value falls beyond the last bin, bins are merged in pairs
 * and the width doubled. A location keeps the points of its first
 * WEFT_METRICSUM_PER_LOC members (in the order their first values came)
 * and counts the others. A Metric event names a MetricClass or a
 * MetricInstance (of a class) and holds a value per member of the class;
 * weft_metricmap (built after pass 1, then read only) says which.
 * One thread owns a weft_metricloc.
 */
#ifndef WEFT_METRICSUM_H
#define WEFT_METRICSUM_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "defview.h"
#include "record.h"

/* Bins of one series at most (a power of two). */
#define WEFT_METRICSUM_BINS 256
/* Series with points per location at most. */
#define WEFT_METRICSUM_PER_LOC 16

/* The MetricClass of each global METRIC id (a class, or an instance's
 * class; NULL: not defined). */
typedef struct weft_metricmap {
    const weft_record **cls;
    size_t n;
} weft_metricmap;

/* Builds m from defs' MetricClass and MetricInstance definitions. 0 or
 * WEFT_ENOMEM; weft_metricmap_free frees m either way. */
int weft_metricmap_build(weft_metricmap *m, const weft_defview *defs);
void weft_metricmap_free(weft_metricmap *m);

/* One bin: min is NaN while the bin has no value. */
typedef struct weft_metric_bin {
    double min, max, last;
} weft_metric_bin;

typedef struct weft_metric_series {
    uint32_t member;          /* global MetricMember id */
    uint64_t first;           /* time of its first value: bin 0 */
    uint64_t width;           /* ticks per bin */
    uint32_t n;               /* bins up to the one of the last value */
    weft_metric_bin *bins;    /* [WEFT_METRICSUM_BINS] */
} weft_metric_series;

/* The series of one location. */
typedef struct weft_metricloc {
    weft_metric_series *s;    /* [WEFT_METRICSUM_PER_LOC], at first use */
    size_t n;
    uint32_t *others;         /* members beyond those, distinct */
    size_t nothers, others_cap;
} weft_metricloc;

/* Value v of member at t (times of a location never go back), the first
 * bins `width` ticks wide (at least 1). 0 or WEFT_ENOMEM. */
int weft_metricsum_add(weft_metricloc *l, uint32_t member, uint64_t t,
                       double v, uint64_t width);
/* The values of Metric event r (global ids) at its time. 0 or
 * WEFT_ENOMEM. */
int weft_metricsum_event(weft_metricloc *l, const weft_metricmap *m,
                         const weft_record *r, uint64_t width);
void weft_metricloc_free(weft_metricloc *l);
/* Renames l's metric members: m becomes map[m] (m < nmap; else
 * UINT32_MAX, no member): a process's series, kept in its own ids, in
 * the trace's. */
void weft_metricloc_remap(weft_metricloc *l, const uint32_t *map,
                          size_t nmap);

/* Series s of location `location` as a catalog row: its member's name
 * and unit (from defs; "" when not defined), its bins copied; a and b
 * are the times its first bin starts and its last bin ends (ticks of
 * `resolution` per second, on the trace's clock: the caller corrects
 * them), t0 the trace's first time, start_s counted from it. row's
 * strings and points are malloc'd (the caller frees them, also on
 * failure). 0 or WEFT_ENOMEM. */
int weft_metricsum_row(const weft_metric_series *s, const weft_defview *defs,
                       uint64_t location, uint64_t a, uint64_t b, uint64_t t0,
                       uint64_t resolution, weft_metric_row *row);

/* Makes *row of series s of the i-th location given to
 * weft_metricsum_pick (weft_metricsum_row with the caller's location id
 * and times). 0 or WEFT_ENOMEM. */
typedef int (*weft_metricsum_row_fn)(void *ctx, size_t i,
                                     const weft_metric_series *s,
                                     weft_metric_row *row);
/* The report's series of a trace: the first `max` series with a value
 * of the n locations' locs[i] (location order, then order of first
 * value), each row made by make and told how many series there were in
 * all (series_total). *rows is malloc'd (NULL when none; the caller
 * frees it and the rows' strings and points, also on failure). 0 or
 * WEFT_ENOMEM. */
int weft_metricsum_pick(const weft_metricloc *const *locs, size_t n,
                        size_t max, weft_metricsum_row_fn make, void *ctx,
                        weft_metric_row **rows, size_t *nrows);

#endif
