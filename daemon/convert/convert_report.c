/* convert_report.c - what `weft report` draws, from a conversion: which
 * locations get a timeline summary, and, once the archive is written,
 * the timelines, the regions they name, the MPI message matrix, the file
 * I/O and the metric series into the conversion's result (issue #17).
 * Split from convert.c along this seam; the state is convert_internal.h's.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_internal.h"
#include "weft_errors.h"

/* See convert_internal.h: which locations get a timeline and metric
 * series, with how many bins, and the first bins' width: summary.h's
 * plan, as `weft import` makes it. */
void weft__conv_plan_timelines(conv *c)
{
    weft_summary_plan plan;
    size_t n = 0;

    for (size_t i = 0; i < c->nmems; i++)
        for (size_t j = 0; j < c->mems[i].nlocs; j++, n++) {
            c->mems[i].locs[j].has_metrics = weft_summary_has_metrics(n);
            c->mems[i].locs[j].has_timeline = weft_summary_has_timeline(n);
        }
    plan = weft_summary_plan_of(n, c->resolution);
    c->tl_cap = plan.bins;
    c->tl_width = plan.width;
}

/* The timeline of l of m as a row of out (its bins move there), times
 * in seconds after the trace's first event, on weftd's clock as every
 * other time of the archive (its ClockOffsets applied). */
static void timeline_row(const conv *c, const member *m, loc *l,
                         weft_timeline_row *row)
{
    weft_timeline *tl = &l->tl;
    uint64_t a = weft__conv_corrected(m, tl->first);
    uint64_t b = weft__conv_corrected(m, tl->first + tl->n * tl->width);
    double res = (double)c->resolution;

    row->location = weft__loc_id(m, l);
    row->start_s = a > c->out->time_first
                       ? (double)(a - c->out->time_first) / res : 0.0;
    row->width_s = b > a ? (double)(b - a) / tl->n / res
                         : (double)tl->width / res;
    row->bins = tl->bins;
    row->nbins = tl->n;
    tl->bins = NULL;
}

/* weft_summary_sends_fn: member i's sends (ctx: the conversion). */
static const weft_commsum *member_sends(const void *ctx, size_t i,
                                        uint32_t *rank)
{
    const conv *c = ctx;

    *rank = c->mems[i].rank;
    return &c->mems[i].sends;
}

/* The timelines, the names of the regions they hold, and the message
 * matrix, into c->out. */
static int report_result(conv *c)
{
    weft_convert_result *out = c->out;
    size_t n = 0;

    for (size_t i = 0; i < c->nmems; i++)
        for (size_t j = 0; j < c->mems[i].nlocs; j++)
            n += c->mems[i].locs[j].tl.bins && c->mems[i].locs[j].tl.n;
    out->timelines = n ? calloc(n, sizeof *out->timelines) : NULL;
    if (n && !out->timelines)
        goto oom;
    for (size_t i = 0; i < c->nmems; i++) {
        member *m = &c->mems[i];
        for (size_t j = 0; j < m->nlocs; j++) {
            loc *l = &m->locs[j];
            if (!l->tl.bins || !l->tl.n)
                continue;  /* (then out->timelines may be NULL) */
            timeline_row(c, m, l, &out->timelines[out->ntimelines++]);
        }
    }
    if (weft_summary_messages(member_sends, c, c->nmems, &out->messages,
                              &out->nmessages) < 0 ||
        weft_summary_timeline_regions(
            out->timelines, out->ntimelines,
            weft_unify_count(c->u, WEFT_REC_Region), weft_unify_region_name,
            c->u, &out->timeline_regions, &out->ntimeline_regions) < 0)
        goto oom;
    return 0;
oom:
    return weft__conv_fail(c, WEFT_ENOMEM, "out of memory");
}

/* The files of the members' I/O (summed in rank order, each member's
 * handles in the trace's ids) into c->out. */
static int io_result(conv *c)
{
    weft_iosum all = { 0 };
    weft_defview defs = weft_unify_view(c->u);
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < c->nmems; i++)
        rc = weft_iosum_add_mapped(&all, &c->mems[i].io,
                                   c->mems[i].handles.v,
                                   c->mems[i].handles.n);
    if (rc == 0)
        rc = weft_iosum_files(&all, &defs, c->resolution,
                              WEFT_CONVERT_IO_FILES, &c->out->io_files,
                              &c->out->nio_files);
    weft_iosum_free(&all);
    return rc < 0 ? weft__conv_fail(c, rc, "out of memory") : 0;
}

/* The locations whose metric series weft_metricsum_pick reads, in
 * rank and thread order. */
typedef struct series_of {
    const conv *c;
    const member **m;
    const loc **l;
} series_of;

/* Series s of the i-th location as row (a weft_metricsum_row_fn): times
 * corrected as timeline_row's. */
static int metric_row(void *ctx, size_t i, const weft_metric_series *s,
                      weft_metric_row *row)
{
    const series_of *x = ctx;
    const member *m = x->m[i];
    weft_defview defs = weft_unify_view(x->c->u);

    return weft_metricsum_row(s, &defs, weft__loc_id(m, x->l[i]),
                              weft__conv_corrected(m, s->first),
                              weft__conv_corrected(m, s->first +
                                                   s->n * s->width),
                              x->c->out->time_first, x->c->resolution, row);
}

/* The first WEFT_CONVERT_METRIC_SERIES metric series (rank, thread, then
 * order of first value) into c->out, each with how many there were. */
static int metric_result(conv *c)
{
    size_t n = 0, k = 0;
    const weft_metricloc **ml;
    series_of x = { c, NULL, NULL };
    int rc = WEFT_ENOMEM;

    for (size_t i = 0; i < c->nmems; i++)
        n += c->mems[i].nlocs;
    ml = calloc(n + 1, sizeof *ml);
    x.m = calloc(n + 1, sizeof *x.m);
    x.l = calloc(n + 1, sizeof *x.l);
    if (ml && x.m && x.l) {
        for (size_t i = 0; i < c->nmems; i++)
            for (size_t j = 0; j < c->mems[i].nlocs; j++, k++) {
                x.m[k] = &c->mems[i];
                x.l[k] = &c->mems[i].locs[j];
                ml[k] = &c->mems[i].locs[j].ml;
            }
        rc = weft_metricsum_pick(ml, n, WEFT_CONVERT_METRIC_SERIES,
                                 metric_row, &x, &c->out->metrics,
                                 &c->out->nmetrics);
    }
    free(ml);
    free(x.m);
    free(x.l);
    return rc < 0 ? weft__conv_fail(c, rc, "out of memory") : 0;
}

/* See convert_internal.h. */
int weft__conv_report_result(conv *c)
{
    int rc;

    if ((rc = report_result(c)) < 0 || (rc = io_result(c)) < 0)
        return rc;
    return metric_result(c);
}

/* See convert_internal.h. */
void weft__conv_refused(member *m, loc *l, const weft_journal_entry *e)
{
    l->refused += e->count;
    if (e->base_time == WEFT_REFUSED_RESERVE) {
        m->refused_reserve += e->count;
    } else if (e->base_time >= WEFT_REFUSED_ERRNO) {
        m->refused_write += e->count;
        m->write_errno = (int)(e->base_time - WEFT_REFUSED_ERRNO);
    } else {
        m->refused_quota += e->count;
    }
}

/* See convert_internal.h. */
uint64_t weft__conv_refused_why(const conv *c, char *buf, size_t len)
{
    uint64_t quota = 0, reserve = 0, write = 0;
    int err = 0;
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < c->nmems; i++) {
        quota += c->mems[i].refused_quota;
        reserve += c->mems[i].refused_reserve;
        write += c->mems[i].refused_write;
        if (c->mems[i].refused_write)
            err = c->mems[i].write_errno;
    }
    if (quota)
        n += (size_t)snprintf(buf + n, len - n, "%" PRIu64 " events refused "
                              "(dropped): the owner was over "
                              "max_user_spool_bytes", quota);
    if (reserve && n < len)
        n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu64 " events "
                              "refused (dropped): the spool's file system "
                              "was short of room (min_free_spool_bytes)",
                              n ? "; " : "", reserve);
    if (write && n < len)
        snprintf(buf + n, len - n, "%s%" PRIu64 " events not stored "
                 "(dropped): writing the journals in %s failed: %s",
                 n ? "; " : "", write, c->in->trace_dir, strerror(err));
    return quota + reserve + write;
}
