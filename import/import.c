/* import.c - the rows of an imported archive, checked and stored
 * (import.h). */
#include "import.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fail.h"
#include "metricsum.h"
#include "spool.h"
#include "weft_errors.h"

/* A string field: at most max bytes, no control characters. */
static int check_str(const char *what, const char *s, size_t max, int empty_ok,
                     char *err, size_t errlen)
{
    size_t n = s ? strlen(s) : 0;

    if (!n && !empty_ok)
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: %s is empty",
                          what);
    if (n > max)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %s is %zu "
                          "bytes long, at most %zu are allowed", what, n, max);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: %s has a "
                              "control character (0x%02x) at byte %zu", what,
                              (unsigned char)s[i], i);
    return 0;
}

/* An absolute path without "." or ".." components, "//" or a trailing
 * slash: what realpath(3) gives. */
static int check_path(const char *p, char *err, size_t errlen)
{
    int rc = check_str("path", p, WEFT_IMPORT_MAX_STRING, 0, err, errlen);

    if (rc < 0)
        return rc;
    if (p[0] != '/' || strstr(p, "//") || strstr(p, "/./") ||
        strstr(p, "/../") || (strlen(p) > 1 && p[strlen(p) - 1] == '/') ||
        (strlen(p) >= 2 && strcmp(p + strlen(p) - 2, "/.") == 0) ||
        (strlen(p) >= 3 && strcmp(p + strlen(p) - 3, "/..") == 0))
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: path '%s' is "
                          "not an absolute path resolved (realpath)", p);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static int check_tags(const Weft__ImportTrace *m, char *err, size_t errlen)
{
    size_t total = 0;
    int rc;

    if (m->n_tags > WEFT_IMPORT_MAX_TAGS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu tags, at "
                          "most %d are allowed", m->n_tags,
                          WEFT_IMPORT_MAX_TAGS);
    for (size_t i = 0; i < m->n_tags; i++) {
        const char *k = m->tags[i]->key, *v = m->tags[i]->value;
        if ((rc = check_str("a tag key", k, WEFT_IMPORT_MAX_TAG_KEY, 0, err,
                            errlen)) < 0 ||
            (rc = check_str("a tag value", v, WEFT_IMPORT_MAX_STRING, 1, err,
                            errlen)) < 0)
            return rc;
        if (strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                      "0123456789_.-") != strlen(k))
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: tag key "
                              "'%s' has a character other than A-Z a-z 0-9 _ . "
                              "-", k);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->tags[j]->key, k) == 0)
                return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: tag "
                                  "'%s' is given twice", k);
        total += strlen(k) + strlen(v);
        if (total > WEFT_IMPORT_MAX_STRING)
            return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: the tags "
                              "are over %d bytes", WEFT_IMPORT_MAX_STRING);
    }
    return 0;
}

/* Members and locations: counts, ranks below members, events adding up.
 * ids (sorted location ids, n_locations) for the profile's rows. */
static int check_places(const Weft__ImportTrace *m, uint64_t *ids, char *err,
                        size_t errlen)
{
    uint64_t events = 0;
    int rc;

    if (m->members > WEFT_IMPORT_MAX_MEMBERS ||
        m->n_member_rows > m->members)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %u members "
                          "with %zu rows (at most %u, and no more rows than "
                          "members)", m->members, m->n_member_rows,
                          WEFT_IMPORT_MAX_MEMBERS);
    for (size_t i = 0; i < m->n_member_rows; i++) {
        const Weft__ImportMember *mr = m->member_rows[i];
        if (mr->rank >= m->members)
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: member "
                              "rank %u of %u members", mr->rank, m->members);
        if ((rc = check_str("a member's host", mr->host,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (m->member_rows[j]->rank == mr->rank)
                return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: "
                                  "member rank %u is given twice", mr->rank);
        if (i > 4096) /* the quadratic check above is for small traces */
            break;
    }
    if (m->n_locations > WEFT_IMPORT_MAX_LOCATIONS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu "
                          "locations, at most %u are allowed", m->n_locations,
                          WEFT_IMPORT_MAX_LOCATIONS);
    for (size_t i = 0; i < m->n_locations; i++) {
        const Weft__ImportLocation *l = m->locations[i];
        if (m->members && l->rank >= m->members)
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: location "
                              "%" PRIu64 " has rank %u of %u members", l->id,
                              l->rank, m->members);
        if ((rc = check_str("a location name", l->name,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0)
            return rc;
        if (l->events > UINT64_MAX - events)
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: the "
                              "events of the locations overflow");
        events += l->events;
        ids[i] = l->id;
    }
    if (events != m->events)
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: %" PRIu64
                          " events, its locations hold %" PRIu64, m->events,
                          events);
    if (m->n_locations)
        qsort(ids, m->n_locations, sizeof *ids, cmp_u64);
    for (size_t i = 1; i < m->n_locations; i++)
        if (ids[i] == ids[i - 1])
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: location "
                              "%" PRIu64 " is given twice", ids[i]);
    return 0;
}

static int check_seconds(const char *what, double s, char *err,
                         size_t errlen)
{
    if (!isfinite(s) || s < 0)
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: %s is %g, "
                          "not a number of seconds", what, s);
    return 0;
}

/* The profile and the timelines; ids: sorted location ids. */
static int check_report(const Weft__ImportTrace *m, const uint64_t *ids,
                        char *err, size_t errlen)
{
    int rc;

    if (m->n_regions > WEFT_IMPORT_MAX_REGIONS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu profile "
                          "rows, at most %u are allowed", m->n_regions,
                          WEFT_IMPORT_MAX_REGIONS);
    for (size_t i = 0; i < m->n_regions; i++) {
        const Weft__ImportRegion *r = m->regions[i];
        if ((rc = check_str("a region name", r->region,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0 ||
            (rc = check_str("a region's paradigm", r->paradigm,
                            WEFT_IMPORT_MAX_PARADIGM, 1, err, errlen)) < 0 ||
            (rc = check_seconds("a region's inclusive time", r->incl_s, err,
                                errlen)) < 0 ||
            (rc = check_seconds("a region's exclusive time", r->excl_s, err,
                                errlen)) < 0)
            return rc;
        if (!r->all && !bsearch(&r->location, ids, m->n_locations,
                                sizeof *ids, cmp_u64))
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a "
                              "profile row of location %" PRIu64 ", which it "
                              "does not have", r->location);
    }
    if (m->n_timelines > WEFT_IMPORT_MAX_TIMELINES)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu "
                          "timelines, at most %d are allowed", m->n_timelines,
                          WEFT_IMPORT_MAX_TIMELINES);
    for (size_t i = 0; i < m->n_timelines; i++) {
        const Weft__ImportTimeline *t = m->timelines[i];
        if (t->n_bins > WEFT_IMPORT_MAX_BINS)
            return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: a "
                              "timeline of %zu bins, at most %d are allowed",
                              t->n_bins, WEFT_IMPORT_MAX_BINS);
        if ((rc = check_seconds("a timeline's start", t->start_s, err,
                                errlen)) < 0 ||
            (rc = check_seconds("a timeline's bin width", t->width_s, err,
                                errlen)) < 0)
            return rc;
        if (!bsearch(&t->location, ids, m->n_locations, sizeof *ids, cmp_u64))
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a "
                              "timeline of location %" PRIu64 ", which it does "
                              "not have", t->location);
    }
    if (m->n_timeline_regions > WEFT_IMPORT_MAX_REGIONS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu timeline "
                          "regions, at most %u are allowed",
                          m->n_timeline_regions, WEFT_IMPORT_MAX_REGIONS);
    for (size_t i = 0; i < m->n_timeline_regions; i++)
        if ((rc = check_str("a timeline region's name",
                            m->timeline_regions[i]->name,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0)
            return rc;
    return 0;
}

/* Two u64 keys, for finding duplicates. */
typedef struct pair {
    uint64_t a, b;
} pair;

static int cmp_pair(const void *x, const void *y)
{
    const pair *p = x, *q = y;

    return p->a != q->a ? (p->a < q->a ? -1 : 1)
                        : p->b < q->b ? -1 : p->b > q->b;
}

/* Sorts v[0..n) and returns whether two are equal (the first in *dup). */
static int has_dup(pair *v, size_t n, pair *dup)
{
    qsort(v, n, sizeof *v, cmp_pair);
    for (size_t i = 1; i < n; i++)
        if (v[i].a == v[i - 1].a && v[i].b == v[i - 1].b) {
            *dup = v[i];
            return 1;
        }
    return 0;
}

/* The message matrix: pairs of ranks, each once. */
static int check_messages(const Weft__ImportTrace *m, char *err,
                          size_t errlen)
{
    pair *v, dup;
    int rc = 0;

    if (m->n_messages > WEFT_IMPORT_MAX_MESSAGES)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu message "
                          "rows, at most %d are allowed", m->n_messages,
                          WEFT_IMPORT_MAX_MESSAGES);
    if (!(v = malloc((m->n_messages + 1) * sizeof *v)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n_messages; i++)
        v[i] = (pair){ m->messages[i]->sender, m->messages[i]->receiver };
    if (has_dup(v, m->n_messages, &dup))
        rc = weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: two message "
                        "rows from rank %" PRIu64 " to rank %" PRIu64, dup.a,
                        dup.b);
    free(v);
    return rc;
}

/* The file I/O rows: names, times. */
static int check_io_files(const Weft__ImportTrace *m, char *err,
                          size_t errlen)
{
    int rc;

    if (m->n_io_files > WEFT_IMPORT_MAX_IO_FILES)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu file I/O "
                          "rows, at most %d are allowed", m->n_io_files,
                          WEFT_IMPORT_MAX_IO_FILES);
    for (size_t i = 0; i < m->n_io_files; i++)
        if ((rc = check_str("a file's name", m->io_files[i]->name,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0 ||
            (rc = check_seconds("a file's time in I/O",
                                m->io_files[i]->time_s, err, errlen)) < 0)
            return rc;
    return 0;
}

/* The metric series: of locations the trace has, each (location,
 * member) once, points in threes, finite or NaN (no value). */
static int check_metrics(const Weft__ImportTrace *m, const uint64_t *ids,
                         char *err, size_t errlen)
{
    pair v[WEFT_IMPORT_MAX_METRICS], dup;
    int rc;

    if (m->n_metrics > WEFT_IMPORT_MAX_METRICS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu metric "
                          "series, at most %d are allowed", m->n_metrics,
                          WEFT_IMPORT_MAX_METRICS);
    for (size_t i = 0; i < m->n_metrics; i++) {
        const Weft__ImportMetric *x = m->metrics[i];
        if ((rc = check_str("a metric's name", x->name,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0 ||
            (rc = check_str("a metric's unit", x->unit,
                            WEFT_IMPORT_MAX_STRING, 1, err, errlen)) < 0 ||
            (rc = check_seconds("a metric series' start", x->start_s, err,
                                errlen)) < 0 ||
            (rc = check_seconds("a metric series' bin width", x->width_s,
                                err, errlen)) < 0)
            return rc;
        if (!bsearch(&x->location, ids, m->n_locations, sizeof *ids, cmp_u64))
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a metric "
                              "series of location %" PRIu64 ", which it does "
                              "not have", x->location);
        if (x->n_points > WEFT_IMPORT_MAX_POINTS || x->n_points % 3)
            return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a metric "
                              "series of %zu values (minimum, maximum and last "
                              "of at most %d bins)", x->n_points,
                              WEFT_IMPORT_MAX_POINTS / 3);
        for (size_t k = 0; k < x->n_points; k++)
            if (isinf(x->points[k]))
                return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a "
                                  "metric series has the value %g",
                                  x->points[k]);
        v[i] = (pair){ x->location, x->member };
    }
    if (has_dup(v, m->n_metrics, &dup))
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: two series "
                          "of metric member %" PRIu64 " on location %" PRIu64,
                          dup.b, dup.a);
    return 0;
}

int weft_import_check(const Weft__ImportTrace *m, char *err, size_t errlen)
{
    uint64_t *ids = NULL;
    int partial, rc;

    if ((rc = check_str("name", m->name, WEFT_IMPORT_MAX_STRING, 0, err,
                        errlen)) < 0 ||
        (rc = check_path(m->path, err, errlen)) < 0 ||
        (rc = check_str("hosts", m->hosts, WEFT_IMPORT_MAX_STRING, 1, err,
                        errlen)) < 0 ||
        (rc = check_str("error", m->error, WEFT_IMPORT_MAX_ERROR, 1, err,
                        errlen)) < 0 ||
        (rc = check_tags(m, err, errlen)) < 0)
        return rc;
    partial = strcmp(m->state, WEFT_STATE_PARTIAL) == 0;
    if (!partial && strcmp(m->state, WEFT_STATE_COMPLETE) != 0)
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: state "
                          "'%.32s' (complete or partial)", m->state);
    if (partial != (*m->error != 0))
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: a partial "
                          "trace says why in error, a complete one has none");
    if (m->timer_resolution == 0 || m->time_first > m->time_last)
        return weft__fail(err, errlen, WEFT_EINVAL, "ImportTrace: timer "
                          "resolution %" PRIu64 ", time %" PRIu64 " .. %"
                          PRIu64, m->timer_resolution, m->time_first,
                          m->time_last);
    if (m->n_locations > WEFT_IMPORT_MAX_LOCATIONS)
        return weft__fail(err, errlen, WEFT_ELIMIT, "ImportTrace: %zu "
                          "locations, at most %u are allowed", m->n_locations,
                          WEFT_IMPORT_MAX_LOCATIONS);
    if (!(ids = malloc((m->n_locations + 1) * sizeof *ids)))
        return weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
    if ((rc = check_places(m, ids, err, errlen)) == 0 &&
        (rc = check_report(m, ids, err, errlen)) == 0 &&
        (rc = check_messages(m, err, errlen)) == 0 &&
        (rc = check_io_files(m, err, errlen)) == 0)
        rc = check_metrics(m, ids, err, errlen);
    free(ids);
    return rc;
}

/* calloc of n elements (at least one). */
#define NEW(p, n) ((p) = calloc((n) ? (n) : 1, sizeof *(p)))

int weft_import_from_msg(const Weft__ImportTrace *m, weft_import_rows *r)
{
    weft_trace_row *row = &r->row;
    weft_trace_detail *d = &r->detail;
    weft_member_row *mem = NULL;
    weft_location_row *loc = NULL;
    weft_tag *tag = NULL;
    weft_region_row *reg = NULL;
    weft_timeline_row *tl = NULL;
    weft_timeline_region *tr = NULL;
    weft_message_row *msg = NULL;
    weft_io_file_row *io = NULL;
    weft_metric_row *met = NULL;

    memset(r, 0, sizeof *r);
    row->name = m->name;
    row->path = m->path;
    row->state = m->state;
    row->error = *m->error ? m->error : NULL;
    row->hosts = m->hosts;
    row->members = row->joined = m->members;
    row->locations = m->n_locations;
    row->events = m->events;
    row->bytes = m->bytes;
    row->time_first = m->time_first;
    row->time_last = m->time_last;
    row->timer_resolution = m->timer_resolution;
    if (!NEW(mem, m->n_member_rows) || !NEW(loc, m->n_locations) ||
        !NEW(tag, m->n_tags) || !NEW(reg, m->n_regions) ||
        !NEW(tl, m->n_timelines) || !NEW(tr, m->n_timeline_regions) ||
        !NEW(msg, m->n_messages) || !NEW(io, m->n_io_files) ||
        !NEW(met, m->n_metrics)) {
        d->members = mem, d->locations = loc, d->tags = tag;
        d->regions = reg, d->timelines = tl, d->timeline_regions = tr;
        d->messages = msg, d->io_files = io, d->metrics = met;
        weft_import_rows_free(r);
        return WEFT_ENOMEM;
    }
    for (size_t i = 0; i < m->n_member_rows; i++)
        mem[i] = (weft_member_row){ .rank = m->member_rows[i]->rank,
            .host = m->member_rows[i]->host,
            .state = (char *)WEFT_MEMBER_COMPLETE,
            .locations = m->member_rows[i]->locations,
            .events = m->member_rows[i]->events };
    for (size_t i = 0; i < m->n_locations; i++)
        loc[i] = (weft_location_row){ .id = m->locations[i]->id,
            .rank = m->locations[i]->rank, .thread = m->locations[i]->thread,
            .name = m->locations[i]->name,
            .events = m->locations[i]->events };
    for (size_t i = 0; i < m->n_tags; i++)
        tag[i] = (weft_tag){ m->tags[i]->key, m->tags[i]->value };
    for (size_t i = 0; i < m->n_regions; i++)
        reg[i] = (weft_region_row){ .location = m->regions[i]->all
                ? WEFT_PROFILE_ALL : (int64_t)m->regions[i]->location,
            .region = m->regions[i]->region,
            .visits = m->regions[i]->visits,
            .incl_s = m->regions[i]->incl_s,
            .excl_s = m->regions[i]->excl_s,
            .paradigm = m->regions[i]->paradigm };
    for (size_t i = 0; i < m->n_timelines; i++)
        tl[i] = (weft_timeline_row){ .location = m->timelines[i]->location,
            .start_s = m->timelines[i]->start_s,
            .width_s = m->timelines[i]->width_s,
            .bins = m->timelines[i]->bins,
            .nbins = m->timelines[i]->n_bins };
    for (size_t i = 0; i < m->n_timeline_regions; i++)
        tr[i] = (weft_timeline_region){ m->timeline_regions[i]->id,
                                        m->timeline_regions[i]->name };
    for (size_t i = 0; i < m->n_messages; i++)
        msg[i] = (weft_message_row){ m->messages[i]->sender,
            m->messages[i]->receiver, m->messages[i]->messages,
            m->messages[i]->bytes };
    for (size_t i = 0; i < m->n_io_files; i++)
        io[i] = (weft_io_file_row){ .name = m->io_files[i]->name,
            .others = m->io_files[i]->others,
            .bytes_read = m->io_files[i]->bytes_read,
            .bytes_written = m->io_files[i]->bytes_written,
            .operations = m->io_files[i]->operations,
            .time_s = m->io_files[i]->time_s };
    for (size_t i = 0; i < m->n_metrics; i++)
        met[i] = (weft_metric_row){ .location = m->metrics[i]->location,
            .member = m->metrics[i]->member, .name = m->metrics[i]->name,
            .unit = m->metrics[i]->unit, .start_s = m->metrics[i]->start_s,
            .width_s = m->metrics[i]->width_s,
            .points = m->metrics[i]->points,
            .npoints = m->metrics[i]->n_points / 3,
            .series_total = m->metrics[i]->series_total };
    d->members = mem, d->nmembers = m->n_member_rows;
    d->locations = loc, d->nlocations = m->n_locations;
    d->tags = tag, d->ntags = m->n_tags;
    d->regions = reg, d->nregions = m->n_regions;
    d->timelines = tl, d->ntimelines = m->n_timelines;
    d->timeline_regions = tr, d->ntimeline_regions = m->n_timeline_regions;
    d->messages = msg, d->nmessages = m->n_messages;
    d->io_files = io, d->nio_files = m->n_io_files;
    d->metrics = met, d->nmetrics = m->n_metrics;
    return 0;
}

void weft_import_rows_free(weft_import_rows *r)
{
    free((void *)r->detail.members);
    free((void *)r->detail.locations);
    free((void *)r->detail.tags);
    free((void *)r->detail.regions);
    free((void *)r->detail.timelines);
    free((void *)r->detail.timeline_regions);
    free((void *)r->detail.messages);
    free((void *)r->detail.io_files);
    free((void *)r->detail.metrics);
    memset(r, 0, sizeof *r);
}

/* n messages of type T, each initialised with init, as an array of
 * pointers to them (one block); NULL when out of memory. */
static void *msg_array(size_t n, size_t size, const void *init)
{
    void **v = calloc(1, n * sizeof *v + n * size + 1);
    char *p = (char *)(v + n);

    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++, p += size) {
        memcpy(p, init, size);
        v[i] = p;
    }
    return v;
}

#define MSGS(v, n, T, INIT)                                                 \
    ((v) = msg_array((n), sizeof(T), &(T)INIT))

/* m's arrays, one per kind of row in d, each element initialised.
 * 0, or WEFT_ENOMEM (m's arrays freed). */
static int msg_arrays(const weft_trace_detail *d, Weft__ImportTrace *m)
{
    if (!MSGS(m->tags, d->ntags, Weft__Tag, WEFT__TAG__INIT) ||
        !MSGS(m->member_rows, d->nmembers, Weft__ImportMember,
              WEFT__IMPORT_MEMBER__INIT) ||
        !MSGS(m->locations, d->nlocations, Weft__ImportLocation,
              WEFT__IMPORT_LOCATION__INIT) ||
        !MSGS(m->regions, d->nregions, Weft__ImportRegion,
              WEFT__IMPORT_REGION__INIT) ||
        !MSGS(m->timelines, d->ntimelines, Weft__ImportTimeline,
              WEFT__IMPORT_TIMELINE__INIT) ||
        !MSGS(m->timeline_regions, d->ntimeline_regions,
              Weft__ImportTimelineRegion,
              WEFT__IMPORT_TIMELINE_REGION__INIT) ||
        !MSGS(m->messages, d->nmessages, Weft__ImportMessage,
              WEFT__IMPORT_MESSAGE__INIT) ||
        !MSGS(m->io_files, d->nio_files, Weft__ImportIoFile,
              WEFT__IMPORT_IO_FILE__INIT) ||
        !MSGS(m->metrics, d->nmetrics, Weft__ImportMetric,
              WEFT__IMPORT_METRIC__INIT)) {
        weft_import_msg_free(m);
        return WEFT_ENOMEM;
    }
    return 0;
}

/* m's tags, members and locations from d's (pointing into d). */
static void msg_places(const weft_trace_detail *d, Weft__ImportTrace *m)
{
    m->n_tags = d->ntags;
    for (size_t i = 0; i < d->ntags; i++) {
        m->tags[i]->key = d->tags[i].key;
        m->tags[i]->value = d->tags[i].value;
    }
    m->n_member_rows = d->nmembers;
    for (size_t i = 0; i < d->nmembers; i++) {
        Weft__ImportMember *x = m->member_rows[i];
        x->rank = d->members[i].rank;
        x->host = d->members[i].host ? d->members[i].host : (char *)"";
        x->locations = d->members[i].locations;
        x->events = d->members[i].events;
    }
    m->n_locations = d->nlocations;
    for (size_t i = 0; i < d->nlocations; i++) {
        Weft__ImportLocation *x = m->locations[i];
        x->id = d->locations[i].id;
        x->rank = d->locations[i].rank;
        x->thread = d->locations[i].thread;
        x->name = d->locations[i].name ? d->locations[i].name : (char *)"";
        x->events = d->locations[i].events;
    }
}

/* m's summaries (regions, timelines, messages, I/O files, metrics) from
 * d's (pointing into d). */
static void msg_summaries(const weft_trace_detail *d, Weft__ImportTrace *m)
{
    m->n_regions = d->nregions;
    for (size_t i = 0; i < d->nregions; i++) {
        Weft__ImportRegion *x = m->regions[i];
        x->all = d->regions[i].location == WEFT_PROFILE_ALL;
        x->location = x->all ? 0 : (uint64_t)d->regions[i].location;
        x->region = d->regions[i].region;
        x->visits = d->regions[i].visits;
        x->incl_s = d->regions[i].incl_s;
        x->excl_s = d->regions[i].excl_s;
        x->paradigm = d->regions[i].paradigm ? d->regions[i].paradigm
                                             : (char *)"";
    }
    m->n_timelines = d->ntimelines;
    for (size_t i = 0; i < d->ntimelines; i++) {
        Weft__ImportTimeline *x = m->timelines[i];
        x->location = d->timelines[i].location;
        x->start_s = d->timelines[i].start_s;
        x->width_s = d->timelines[i].width_s;
        x->bins = d->timelines[i].bins;
        x->n_bins = d->timelines[i].nbins;
    }
    m->n_timeline_regions = d->ntimeline_regions;
    for (size_t i = 0; i < d->ntimeline_regions; i++) {
        m->timeline_regions[i]->id = d->timeline_regions[i].id;
        m->timeline_regions[i]->name = d->timeline_regions[i].name;
    }
    m->n_messages = d->nmessages;
    for (size_t i = 0; i < d->nmessages; i++) {
        Weft__ImportMessage *x = m->messages[i];
        x->sender = d->messages[i].sender;
        x->receiver = d->messages[i].receiver;
        x->messages = d->messages[i].messages;
        x->bytes = d->messages[i].bytes;
    }
    m->n_io_files = d->nio_files;
    for (size_t i = 0; i < d->nio_files; i++) {
        Weft__ImportIoFile *x = m->io_files[i];
        x->name = d->io_files[i].name ? d->io_files[i].name : (char *)"";
        x->others = d->io_files[i].others;
        x->bytes_read = d->io_files[i].bytes_read;
        x->bytes_written = d->io_files[i].bytes_written;
        x->operations = d->io_files[i].operations;
        x->time_s = d->io_files[i].time_s;
    }
    m->n_metrics = d->nmetrics;
    for (size_t i = 0; i < d->nmetrics; i++) {
        Weft__ImportMetric *x = m->metrics[i];
        x->location = d->metrics[i].location;
        x->member = d->metrics[i].member;
        x->name = d->metrics[i].name ? d->metrics[i].name : (char *)"";
        x->unit = d->metrics[i].unit ? d->metrics[i].unit : (char *)"";
        x->start_s = d->metrics[i].start_s;
        x->width_s = d->metrics[i].width_s;
        x->points = d->metrics[i].points;
        x->n_points = d->metrics[i].npoints * 3;
        x->series_total = d->metrics[i].series_total;
    }
}

int weft_import_to_msg(const weft_import_rows *r, Weft__ImportTrace *m)
{
    const weft_trace_row *row = &r->row;
    const weft_trace_detail *d = &r->detail;

    weft__import_trace__init(m);
    m->name = row->name;
    m->path = row->path;
    m->state = row->state;
    m->error = row->error ? row->error : (char *)"";
    m->hosts = row->hosts ? row->hosts : (char *)"";
    m->members = row->members;
    m->events = row->events;
    m->bytes = row->bytes;
    m->time_first = row->time_first;
    m->time_last = row->time_last;
    m->timer_resolution = row->timer_resolution;
    if (msg_arrays(d, m) != 0)
        return WEFT_ENOMEM;
    msg_places(d, m);
    msg_summaries(d, m);
    return 0;
}

void weft_import_msg_free(Weft__ImportTrace *m)
{
    free(m->tags);
    free(m->member_rows);
    free(m->locations);
    free(m->regions);
    free(m->timelines);
    free(m->timeline_regions);
    free(m->messages);
    free(m->io_files);
    free(m->metrics);
    m->messages = NULL;
    m->io_files = NULL;
    m->metrics = NULL;
    m->tags = NULL;
    m->member_rows = NULL;
    m->locations = NULL;
    m->regions = NULL;
    m->timelines = NULL;
    m->timeline_regions = NULL;
}

int weft_import_store(const char *catalog, const char *spool, uint32_t uid,
                      weft_import_rows *r, char **key, char *err,
                      size_t errlen)
{
    weft_catalog *cat = NULL;
    char *msg = NULL, *dir = NULL, *command = NULL;
    time_t now = time(NULL);
    int rc;

    rc = weft_catalog_open(catalog, 0, &cat, &msg);
    if (rc < 0) {
        weft__fail(err, errlen, rc, "%s", msg ? msg : weft_strerror(rc));
        goto out;
    }
    /* How `weft show` says where it came from, and how weft rm knows an
     * archive outside the spool is not the spool's to remove. */
    if (!r->row.command &&
        asprintf(&command, "weft import %s/traces.otf2", r->row.path) < 0) {
        command = NULL;
        rc = weft__fail(err, errlen, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    if (!*key && (rc = weft_spool_reserve(spool, r->row.name, now, key, &dir,
                                          err, errlen)) < 0)
        goto out;
    r->row.key = *key;
    r->row.uid = uid;
    r->row.created = r->row.finished = (int64_t)now;
    if (command)
        r->row.command = command;
    r->row.job_id = (char *)"";
    r->row.run = (char *)"";
    r->row.clock = (char *)"";
    rc = weft_catalog_trace_finish_detail(cat, &r->row, &r->detail);
    if (rc == 0)
        rc = weft_catalog_trace_charge(cat, *key, r->charged);
    if (rc < 0) {
        weft__fail(err, errlen, rc, "%s", weft_catalog_errmsg(cat));
        if (dir) {
            remove(dir);
            free(*key);
            *key = NULL;
        }
    }
out:
    r->row.key = NULL;
    if (command)
        r->row.command = NULL;
    free(command);
    free(dir);
    free(msg);
    weft_catalog_close(cat);
    return rc;
}
