/* summary.h - the sizes of the report's summaries (profile rows,
 * timelines, message matrix, I/O files, metric series) and the plan of
 * a trace's timelines: one place for both of their makers, weftd's
 * conversion (convert_report.c, replay.c) and `weft import`
 * (cli/import.c), which must make the same rows of the same events.
 * Pure (libweftsummary).
 */
#ifndef WEFT_SUMMARY_H
#define WEFT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "commsum.h"
#include "profile.h"

/* Per location, the region profile keeps the rows of this many regions
 * (those with the most exclusive time), so that 1000 locations of 1000
 * regions do not make a million rows; the rows summed over all
 * locations always have every region. */
#define WEFT_PROFILE_ROWS_PER_LOCATION 100

/* The timeline summary (timeline.h) of a trace: locations with a
 * timeline at most (the first ones in rank order; the report says how
 * many it lacks), and bins over all of them at most: a location's bins
 * (WEFT_TIMELINE_BINS at most) are halved until they fit, down to
 * WEFT_CONVERT_MIN_BINS. At most 4 MiB of bins in memory (16 bytes a
 * bin while replaying), a few MB stored. */
#define WEFT_CONVERT_TIMELINES 4096
#define WEFT_CONVERT_TIMELINE_BINS (UINT32_C(1) << 20)
#define WEFT_CONVERT_MIN_BINS 256
/* Sender -> receiver pairs of the communication matrix kept, at most
 * (those of most bytes): a full matrix of 256 ranks. */
#define WEFT_CONVERT_MESSAGE_ROWS 65536
/* Files of the I/O table (those of most time in I/O; the rest summed in
 * one "others" row), locations whose metric values are kept (the first
 * ones in rank order), and metric series stored (the first ones by
 * location, then by order of first value). */
#define WEFT_CONVERT_IO_FILES 50
#define WEFT_CONVERT_METRIC_LOCS 64
#define WEFT_CONVERT_METRIC_SERIES 16

/* How a trace's locations are summed: which get a timeline and metric
 * series (the first ones in rank order), how many bins a timeline has,
 * and the first bins' width (1 us in the trace's ticks; also the metric
 * series'). */
typedef struct weft_summary_plan {
    uint32_t bins;       /* bins per timeline, WEFT_CONVERT_MIN_BINS to
                          * WEFT_TIMELINE_BINS */
    uint64_t width;      /* ticks */
} weft_summary_plan;

/* The plan of a trace of nlocs locations at resolution ticks a second. */
weft_summary_plan weft_summary_plan_of(size_t nlocs, uint64_t resolution);

/* Does the location at index i in rank order get a timeline? */
static inline int weft_summary_has_timeline(size_t i)
{
    return i < WEFT_CONVERT_TIMELINES;
}

/* Does the location at index i in rank order get metric series? */
static inline int weft_summary_has_metrics(size_t i)
{
    return i < WEFT_CONVERT_METRIC_LOCS;
}

/* The regions the timelines' bins name (bins hold id + 1; a bin naming
 * none of the nregions regions becomes 0), in id order, each with its
 * name (name(arg, id), copied). *out (malloc'd, NULL when none, its
 * names malloc'd, *nout of them) is the caller's either way. 0 or
 * WEFT_ENOMEM. */
int weft_summary_timeline_regions(weft_timeline_row *rows, size_t nrows,
                                  size_t nregions, weft_profile_name_fn name,
                                  const void *arg,
                                  weft_timeline_region **out, size_t *nout);

/* The i-th sender's sums for weft_summary_messages, its rank in *rank. */
typedef const weft_commsum *(*weft_summary_sends_fn)(const void *ctx,
                                                     size_t i,
                                                     uint32_t *rank);

/* The message matrix of n senders (sends(ctx, i, &rank)): each one's
 * rows by receiver, then the WEFT_CONVERT_MESSAGE_ROWS of most bytes
 * kept, in sender, receiver order. *rows (malloc'd, *nrows of them) is
 * the caller's either way. 0 or WEFT_ENOMEM. */
int weft_summary_messages(weft_summary_sends_fn sends, const void *ctx,
                          size_t n, weft_message_row **rows, size_t *nrows);

#endif
