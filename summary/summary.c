/* summary.c - the plan of a trace's summaries (see summary.h). */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

#include "timeline.h"
#include "weft_errors.h"

/* See summary.h: a location's bins are halved until the timelines' bins
 * fit WEFT_CONVERT_TIMELINE_BINS, down to WEFT_CONVERT_MIN_BINS. */
weft_summary_plan weft_summary_plan_of(size_t nlocs, uint64_t resolution)
{
    weft_summary_plan p = { WEFT_TIMELINE_BINS,
                            resolution / 1000000 ? resolution / 1000000 : 1 };
    uint64_t n = nlocs < WEFT_CONVERT_TIMELINES ? nlocs
                                                : WEFT_CONVERT_TIMELINES;

    while (p.bins > WEFT_CONVERT_MIN_BINS &&
           (uint64_t)p.bins * n > WEFT_CONVERT_TIMELINE_BINS)
        p.bins /= 2;
    return p;
}

/* See summary.h. */
int weft_summary_timeline_regions(weft_timeline_row *rows, size_t nrows,
                                  size_t nregions, weft_profile_name_fn name,
                                  const void *arg,
                                  weft_timeline_region **out, size_t *nout)
{
    uint8_t *used = calloc(nregions + 1, 1);
    size_t n = 0;
    int rc = WEFT_ENOMEM;

    *out = NULL;
    *nout = 0;
    if (!used)
        return WEFT_ENOMEM;
    for (size_t i = 0; i < nrows; i++)
        for (size_t k = 0; k < rows[i].nbins; k++)
            if (rows[i].bins[k] && rows[i].bins[k] <= nregions)
                used[rows[i].bins[k] - 1] = 1;
            else
                rows[i].bins[k] = 0;  /* a region outside the profile */
    for (size_t r = 0; r < nregions; r++)
        n += used[r];
    if (n && !(*out = calloc(n, sizeof **out)))
        goto out;
    for (size_t r = 0; r < nregions; r++) {
        weft_timeline_region *tr;
        if (!used[r])
            continue;
        tr = &(*out)[*nout];  /* *out is NULL when no region is used */
        tr->id = (uint32_t)r;
        if (!(tr->name = strdup(name(arg, (uint32_t)r))))
            goto out;
        (*nout)++;
    }
    rc = 0;
out:
    free(used);
    return rc;
}

/* See summary.h. */
int weft_summary_messages(weft_summary_sends_fn sends, const void *ctx,
                          size_t n, weft_message_row **rows, size_t *nrows)
{
    size_t k = 0, cap = 0;

    *rows = NULL;
    *nrows = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t rank;
        const weft_commsum *s = sends(ctx, i, &rank);
        if (weft_commsum_rows(s, rank, rows, &k, &cap) < 0)
            return WEFT_ENOMEM;
    }
    *nrows = weft_commsum_cap(*rows, k, WEFT_CONVERT_MESSAGE_ROWS);
    return 0;
}
