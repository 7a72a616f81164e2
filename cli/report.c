/* report.c - weft report TRACE [-o FILE]: one self-contained HTML page
 * that shows what happened in a trace.
 *
 * DESIGN: the report never reads the archive's events (a 33 M-event
 * trace must take well under 2 s): everything comes from the catalog,
 * where the conversion left it (store/catalog.h, schema 6: the region
 * profile, per location and summed; the timeline summary of each
 * location; the MPI message matrix; schema 7: file I/O per file and
 * metric series). It is gathered here into one JSON
 * document (jansson) that goes into the page inside <script
 * type="application/json">, with every '<' written as \u003c so nothing
 * in a name can close that element; the page's own inline script
 * (report_page.c) draws it into SVG and canvas. Nothing is loaded from
 * anywhere: no network, no fonts, no external scripts. A trace
 * converted before schema 6 has no timeline: the page says so and shows
 * the rest.
 * Sizes: the timeline rows (run-length encoded: [region, count, ...]) of
 * at most 4096 locations with 2^20 bins in all, per-location profile
 * rows only of the regions the page shows (load balance: the top
 * BALANCE_REGIONS), MPI time summed per rank, the message matrix as
 * stored (65536 pairs at most), 51 file rows, 16 metric series of 256
 * points: a few MB at most. A NaN point (a bin without a value) is
 * null in the JSON.
 * Paradigms (issue #35): each profile row says its region's paradigm
 * (catalog schema 15), and "paradigms" maps the name of every region
 * the page names (the profile's bars, the timeline's) to its paradigm,
 * which the page groups and colours regions by (its legend says MPI,
 * OpenMP, threads, I/O or the paradigm); a trace converted before has
 * none there, and the page guesses from the names as it used to. MPI
 * time per rank sums the regions of paradigm "mpi" (by name, MPI_*,
 * when the rows have no paradigm).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "catalog.h"
#include "cli.h"
#include "out.h"
#include "profile.h"
#include "report_page.h"

/* Regions of the profile chart, and of the load balance charts. */
#define PROFILE_REGIONS 25
#define BALANCE_REGIONS 6

typedef struct report_ctx {
    weft_catalog *cat;
    json_t *regions;     /* profile: sums, most exclusive first */
    json_t *balance;     /* region name -> { location id: excl_s } */
    json_t *mpi;         /* rank -> seconds in MPI_* regions */
    json_t *timelines;   /* rows */
    json_t *tl_regions;  /* id -> name */
    json_t *messages;    /* [sender, receiver, messages, bytes] */
    json_t *locations;   /* [{id, rank, thread, name, events, process:
                            of a process tree only}] */
    json_t *io_files;    /* [{name, others, read, written, ops, time}] */
    json_t *metrics;     /* [{loc, name, unit, start, width, total,
                             points: [min, max, last, ...]}] */
    json_t *rank_of;     /* location id -> its rank (locations table) */
    json_t *paradigm_of; /* region name -> paradigm, of every sum row
                            with one (the first row of a name) */
} report_ctx;

/* json helpers that exit on out of memory, as the other commands do. */
static void push(json_t *arr, json_t *v)
{
    if (!v || json_array_append_new(arr, v) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
}

static json_t *need(json_t *v)
{
    if (!v) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    return v;
}

static int on_sum_region(const weft_region_row *r, void *arg)
{
    report_ctx *x = arg;
    json_t *o = need(json_object()), *name = weft__cli_jstr(r->region);
    /* keyed by the name as the page has it (valid UTF-8) */
    const char *key = json_string_value(name);

    weft__cli_jset(o, "name", name);
    weft__cli_jset(o, "paradigm", weft__cli_jstr(r->paradigm));
    weft__cli_jset(o, "visits", weft__cli_ju64(r->visits));
    weft__cli_jset(o, "incl", json_real(r->incl_s));
    weft__cli_jset(o, "excl", json_real(r->excl_s));
    push(x->regions, o);
    if (key && r->paradigm && *r->paradigm &&
        !json_object_get(x->paradigm_of, key))
        weft__cli_jset(x->paradigm_of, key, weft__cli_jstr(r->paradigm));
    if (json_array_size(x->regions) <= BALANCE_REGIONS)
        weft__cli_jset(x->balance, r->region ? r->region : "",
                       need(json_object()));
    return 0;
}

static int on_loc_region(const weft_region_row *r, void *arg)
{
    report_ctx *x = arg;
    const char *name = r->region ? r->region : "";
    json_t *b = json_object_get(x->balance, name);
    char key[32];

    snprintf(key, sizeof key, "%" PRId64, r->location);
    if (b)
        weft__cli_jset(b, key, json_real(r->excl_s));
    if (r->paradigm && *r->paradigm ? strcmp(r->paradigm, "mpi") == 0
                                    : strncmp(name, "MPI_", 4) == 0) {
        /* The location row's rank: an imported archive's location ids
         * are its own, not weftd's rank << 32 | thread. */
        json_t *v = json_object_get(x->rank_of, key);
        snprintf(key, sizeof key, "%" PRIu32,
                 v ? (uint32_t)json_integer_value(v)
                   : (uint32_t)(r->location >> 32));
        v = json_object_get(x->mpi, key);
        weft__cli_jset(x->mpi, key,
                       json_real((v ? json_real_value(v) : 0.0) + r->excl_s));
    }
    return 0;
}

static int on_location(const weft_location_row *l, void *arg)
{
    report_ctx *x = arg;
    json_t *o = need(json_object());
    char key[32];

    weft__cli_jset(o, "id", weft__cli_ju64(l->id));
    weft__cli_jset(o, "rank", json_integer(l->rank));
    weft__cli_jset(o, "thread", json_integer(l->thread));
    weft__cli_jset(o, "name", weft__cli_jstr(l->name));
    weft__cli_jset(o, "events", weft__cli_ju64(l->events));
    if (l->process && *l->process)
        weft__cli_jset(o, "process", weft__cli_jstr(l->process));
    push(x->locations, o);
    snprintf(key, sizeof key, "%" PRId64, (int64_t)l->id);
    weft__cli_jset(x->rank_of, key, json_integer(l->rank));
    return 0;
}

/* A timeline row: its bins run-length encoded, [region + 1, count, ...]. */
static int on_timeline(const weft_timeline_row *t, void *arg)
{
    report_ctx *x = arg;
    json_t *o = need(json_object()), *runs = need(json_array());

    for (size_t i = 0; i < t->nbins;) {
        size_t j = i + 1;
        while (j < t->nbins && t->bins[j] == t->bins[i])
            j++;
        push(runs, json_integer(t->bins[i]));
        push(runs, json_integer((json_int_t)(j - i)));
        i = j;
    }
    weft__cli_jset(o, "loc", weft__cli_ju64(t->location));
    weft__cli_jset(o, "start", json_real(t->start_s));
    weft__cli_jset(o, "width", json_real(t->width_s));
    weft__cli_jset(o, "n", json_integer((json_int_t)t->nbins));
    weft__cli_jset(o, "runs", runs);
    push(x->timelines, o);
    return 0;
}

static int on_tl_region(const weft_timeline_region *r, void *arg)
{
    report_ctx *x = arg;
    char key[16];

    snprintf(key, sizeof key, "%" PRIu32, r->id + 1);
    weft__cli_jset(x->tl_regions, key, weft__cli_jstr(r->name));
    return 0;
}

static int on_message(const weft_message_row *m, void *arg)
{
    report_ctx *x = arg;
    json_t *a = need(json_array());

    push(a, json_integer(m->sender));
    push(a, json_integer(m->receiver));
    push(a, weft__cli_ju64(m->messages));
    push(a, weft__cli_ju64(m->bytes));
    push(x->messages, a);
    return 0;
}

static int on_io_file(const weft_io_file_row *f, void *arg)
{
    report_ctx *x = arg;
    json_t *o = need(json_object());

    weft__cli_jset(o, "name", weft__cli_jstr(f->name));
    weft__cli_jset(o, "others", weft__cli_ju64(f->others));
    weft__cli_jset(o, "read", weft__cli_ju64(f->bytes_read));
    weft__cli_jset(o, "written", weft__cli_ju64(f->bytes_written));
    weft__cli_jset(o, "ops", weft__cli_ju64(f->operations));
    weft__cli_jset(o, "time", json_real(f->time_s));
    push(x->io_files, o);
    return 0;
}

static int on_metric(const weft_metric_row *m, void *arg)
{
    report_ctx *x = arg;
    json_t *o = need(json_object()), *pts = need(json_array());

    for (size_t i = 0; i < m->npoints * 3; i++)
        push(pts, isfinite(m->points[i]) ? json_real(m->points[i])
                                         : json_null());
    weft__cli_jset(o, "loc", weft__cli_ju64(m->location));
    weft__cli_jset(o, "name", weft__cli_jstr(m->name));
    weft__cli_jset(o, "unit", weft__cli_jstr(m->unit));
    weft__cli_jset(o, "start", json_real(m->start_s));
    weft__cli_jset(o, "width", json_real(m->width_s));
    weft__cli_jset(o, "total", weft__cli_ju64(m->series_total));
    weft__cli_jset(o, "points", pts);
    push(x->metrics, o);
    return 0;
}

/* The paradigms of the regions the page names: those of the profile's
 * bars (x->regions, cut to PROFILE_REGIONS) and of the timeline. */
static json_t *named_paradigms(const report_ctx *x)
{
    json_t *out = need(json_object()), *v;
    const char *key;
    size_t i;

    json_array_foreach(x->regions, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        json_t *p = name ? json_object_get(x->paradigm_of, name) : NULL;
        if (p)
            weft__cli_jset(out, name, json_incref(p));
    }
    json_object_foreach(x->tl_regions, key, v) {
        const char *name = json_string_value(v);
        json_t *p = name ? json_object_get(x->paradigm_of, name) : NULL;
        (void)key;
        if (p)
            weft__cli_jset(out, name, json_incref(p));
    }
    return out;
}

/* The document the page draws. NULL after saying why. */
static json_t *gather(cli *c, const weft_trace_row *row)
{
    report_ctx x = { c->catalog, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                     NULL, NULL, NULL, NULL };
    json_t *doc = need(json_object()), *trace, *tags;
    struct passwd *pw = getpwuid(row->uid);
    int rc;

    x.regions = need(json_array());
    x.balance = need(json_object());
    x.mpi = need(json_object());
    x.timelines = need(json_array());
    x.tl_regions = need(json_object());
    x.messages = need(json_array());
    x.locations = need(json_array());
    x.io_files = need(json_array());
    x.metrics = need(json_array());
    x.rank_of = need(json_object());
    x.paradigm_of = need(json_object());
    trace = weft__cli_trace_json(row);
    weft__cli_jset(trace, "owner", weft__cli_jstr(pw ? pw->pw_name : ""));
    /* duration_s (the time range) and wall_time_s: trace_json's */
    if (!(tags = weft__cli_tags_json(c, row)))
        goto fail;
    weft__cli_jset(trace, "tags", tags);
    weft__cli_jset(doc, "trace", trace);
    rc = weft_catalog_locations(c->catalog, row->id, on_location, &x);
    if (rc == 0)
        rc = weft_catalog_regions(c->catalog, row->id, WEFT_RGROUP_ALL,
                                  WEFT_RSORT_EXCL, 0,
                                  on_sum_region, &x);
    if (rc == 0)
        rc = weft_catalog_regions(c->catalog, row->id, WEFT_RGROUP_LOCATION,
                                  WEFT_RSORT_EXCL, 0,
                                  on_loc_region, &x);
    if (rc == 0)
        rc = weft_catalog_timelines(c->catalog, row->id, on_timeline, &x);
    if (rc == 0)
        rc = weft_catalog_timeline_regions(c->catalog, row->id,
                                           on_tl_region, &x);
    if (rc == 0)
        rc = weft_catalog_messages(c->catalog, row->id, on_message, &x);
    if (rc == 0)
        rc = weft_catalog_io_files(c->catalog, row->id, on_io_file, &x);
    if (rc == 0)
        rc = weft_catalog_metrics(c->catalog, row->id, on_metric, &x);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto fail;
    }
    while (json_array_size(x.regions) > PROFILE_REGIONS)
        json_array_remove(x.regions, PROFILE_REGIONS);
    weft__cli_jset(doc, "locations", x.locations);
    weft__cli_jset(doc, "regions", x.regions);
    weft__cli_jset(doc, "balance", x.balance);
    weft__cli_jset(doc, "mpi_time", x.mpi);
    weft__cli_jset(doc, "timelines", x.timelines);
    weft__cli_jset(doc, "paradigms", named_paradigms(&x));
    weft__cli_jset(doc, "timeline_regions", x.tl_regions);
    weft__cli_jset(doc, "outside", json_string(WEFT_PROFILE_OUTSIDE));
    weft__cli_jset(doc, "messages", x.messages);
    weft__cli_jset(doc, "io_files", x.io_files);
    weft__cli_jset(doc, "metrics", x.metrics);
    json_decref(x.rank_of);
    json_decref(x.paradigm_of);
    return doc;
fail:
    json_decref(doc);
    json_decref(x.regions);
    json_decref(x.balance);
    json_decref(x.mpi);
    json_decref(x.timelines);
    json_decref(x.tl_regions);
    json_decref(x.messages);
    json_decref(x.locations);
    json_decref(x.io_files);
    json_decref(x.metrics);
    json_decref(x.rank_of);
    json_decref(x.paradigm_of);
    return NULL;
}

/* Writes s to f with every '<' as \u003c (JSON text: '<' is only ever
 * inside a string). */
static void put_json(FILE *f, const char *s)
{
    for (const char *p; (p = strchr(s, '<')) != NULL; s = p + 1) {
        fwrite(s, 1, (size_t)(p - s), f);
        fputs("\\u003c", f);
    }
    fputs(s, f);
}

/* Writes the page with doc to path ("-": standard output). */
static int write_page(const char *path, json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII);
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f;

    if (!text) {
        weft__cli_fail("out of memory");
        return EXIT_FAIL;
    }
    f = to_stdout ? stdout : fopen(path, "w");
    if (!f) {
        weft__cli_fail("%s: %s", path, strerror(errno));
        free(text);
        return EXIT_FAIL;
    }
    fputs(weft__report_head, f);
    put_json(f, text);
    fputs(weft__report_tail, f);
    free(text);
    if (ferror(f) | (to_stdout ? fflush(f) : fclose(f))) {
        weft__cli_fail("%s: %s", path, strerror(errno));
        return EXIT_FAIL;
    }
    return EXIT_OK;
}

int weft__cmd_report(cli *c)
{
    const char *out = c->output ? c->output : "report.html";
    weft_trace_row row;
    json_t *doc;
    int status;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    doc = gather(c, &row);
    status = doc ? write_page(out, doc) : EXIT_FAIL;
    if (status == EXIT_OK && strcmp(out, "-") != 0) {
        char *name = weft__cli_escape(row.name);
        fprintf(stderr, "weft: report of trace '%s' (#%" PRId64 ") in %s\n",
                name, row.id, out);
        free(name);
    }
    json_decref(doc);
    weft_catalog_trace_free(&row);
    return status;
}
