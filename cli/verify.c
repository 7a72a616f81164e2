/* verify.c - `weft verify TRACE`: read an archive back with libotf2 and
 * compare it with the catalog (the reader is archive.c).
 *
 * The event count of a location is what OTF2_Reader_ReadLocalEvents says
 * it read (every record, whatever its type); the time range comes from
 * one callback per event record of weft_records.def (archive.c's
 * weft__arc_time_callbacks).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "archive.h"
#include "cli.h"
#include "weft_errors.h"

/* The catalog's locations, collected. */
typedef struct cat_locs {
    weft_location_row *v;
    size_t n;
    int *seen;
} cat_locs;

static int collect_loc(const weft_location_row *l, void *arg)
{
    cat_locs *c = arg;
    weft_location_row *v = realloc(c->v, (c->n + 1) * sizeof *v);

    if (!v)
        return WEFT_ENOMEM;
    c->v = v;
    v[c->n] = *l;
    v[c->n].name = NULL;  /* not needed; owned by the catalog */
    c->n++;
    return 0;
}

typedef struct verifier {
    const char *trace;   /* escaped name for messages */
    unsigned problems;
    json_t *list;        /* --json: the problems, else NULL (stderr) */
} verifier;

__attribute__((format(printf, 2, 3)))
static void problem(verifier *v, const char *fmt, ...)
{
    char text[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    v->problems++;
    if (!v->list) {
        fprintf(stderr, "weft verify %s: %s\n", v->trace, text);
        return;
    }
    if (json_array_append_new(v->list, weft__cli_jstr(text)) != 0) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
}

/* --json: the verdict as one object; takes v->list. Returns an exit
 * status (EXIT_FAIL when there were problems). */
static int verdict_json(verifier *v, const weft_trace_row *row,
                        const char *anchor, size_t nlocs, uint64_t total)
{
    json_t *o = json_object();
    int ok = v->problems == 0;

    if (!o) {
        weft__cli_fail("out of memory");
        exit(EXIT_FAIL);
    }
    weft__cli_jset(o, "id", json_integer(row->id));
    weft__cli_jset(o, "name", weft__cli_jstr(row->name));
    weft__cli_jset(o, "archive", weft__cli_jstr(anchor));
    weft__cli_jset(o, "ok", json_boolean(ok));
    weft__cli_jset(o, "locations", json_integer((json_int_t)nlocs));
    weft__cli_jset(o, "events", weft__cli_ju64(total));
    weft__cli_jset(o, "time_first", weft__cli_ju64(row->time_first));
    weft__cli_jset(o, "time_last", weft__cli_ju64(row->time_last));
    weft__cli_jset(o, "problems", v->list);
    v->list = NULL;
    if (weft__cli_print_json(o) != EXIT_OK)
        return EXIT_FAIL;
    return ok ? EXIT_OK : EXIT_FAIL;
}

static weft_location_row *cat_find(cat_locs *cl, uint64_t id, size_t *idx)
{
    for (size_t i = 0; i < cl->n; i++)
        if (cl->v[i].id == id) {
            *idx = i;
            return &cl->v[i];
        }
    return NULL;
}

/* The clock of the archive's definitions against the catalog. */
static void verify_clock(verifier *v, const weft__arc *a,
                         const weft_trace_row *row)
{
    if (!a->have_clock) {
        problem(v, "the archive has no ClockProperties");
        return;
    }
    if (a->resolution != row->timer_resolution)
        problem(v, "timer resolution: archive %" PRIu64 ", catalog %"
                PRIu64, a->resolution, row->timer_resolution);
    if (row->events && a->offset != row->time_first)
        problem(v, "ClockProperties globalOffset %" PRIu64 " differs "
                "from the catalog's first timestamp %" PRIu64, a->offset,
                row->time_first);
    if (row->events && a->length &&
        a->offset + a->length - 1 != row->time_last)
        problem(v, "ClockProperties traceLength %" PRIu64 " ends at %"
                PRIu64 ", the catalog's last timestamp is %" PRIu64,
                a->length, a->offset + a->length - 1, row->time_last);
}

/* The locations of the archive's definitions against the catalog's (cl).
 * Returns 0, or -1 when out of memory (said). */
static int verify_locations(verifier *v, const weft__arc *a,
                            const weft_trace_row *row, cat_locs *cl)
{
    if (a->nlocs != row->locations)
        problem(v, "%zu locations in the archive, the catalog says %"
                PRIu64, a->nlocs, row->locations);
    if (cl->n != row->locations)
        problem(v, "the catalog lists %zu locations but its trace row "
                "says %" PRIu64, cl->n, row->locations);
    cl->seen = calloc(cl->n + 1, sizeof *cl->seen);
    if (!cl->seen)
        return weft__cli_fail("out of memory"), -1;
    for (size_t i = 0; i < a->nlocs; i++) {
        size_t k;
        weft_location_row *l = cat_find(cl, a->locs[i].id, &k);
        if (!l) {
            problem(v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                    PRIu64 ") is in the archive but not in the catalog",
                    a->locs[i].id, a->locs[i].id >> 32,
                    a->locs[i].id & 0xffffffffu);
            continue;
        }
        cl->seen[k] = 1;
        if (l->events != a->locs[i].events)
            problem(v, "location %" PRIu64 " (rank %" PRIu32 " thread %"
                    PRIu32 "): numberOfEvents %" PRIu64 " in the archive, "
                    "%" PRIu64 " in the catalog", l->id, l->rank, l->thread,
                    a->locs[i].events, l->events);
    }
    for (size_t k = 0; k < cl->n; k++)
        if (!cl->seen[k])
            problem(v, "location %" PRIu64 " (rank %" PRIu32 " thread %"
                    PRIu32 ") is in the catalog but not in the archive",
                    cl->v[k].id, cl->v[k].rank, cl->v[k].thread);
    return 0;
}

/* The problem of location al whose events could not be read (err). */
static void unreadable_location(verifier *v, const weft_trace_row *row,
                                const weft__arc_loc *al, const char *err)
{
    char evt[4096];
    struct stat st = { .st_size = -1 };

    snprintf(evt, sizeof evt, "%s/traces/%" PRIu64 ".evt", row->path,
             al->id);
    if (stat(evt, &st) != 0 && errno == ENOENT)
        problem(v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                PRIu64 "): events file %s is missing (%" PRIu64
                " events expected)", al->id, al->id >> 32,
                al->id & 0xffffffffu, evt, al->events);
    else
        problem(v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                PRIu64 "): events file %s (%jd bytes): %s; %" PRIu64
                " events expected", al->id, al->id >> 32,
                al->id & 0xffffffffu, evt, (intmax_t)st.st_size,
                err ? err : "out of memory", al->events);
}

/* Reads the events of every location of a and compares their numbers and
 * time range with the definitions and the catalog; *total is the number
 * read. Returns 0 (problems counted in v), or -1 when out of memory
 * (said). */
static int verify_events(verifier *v, weft__arc *a, const weft_trace_row *row,
                         const char *anchor, uint64_t *total)
{
    OTF2_EvtReaderCallbacks *cbs = weft__arc_time_callbacks();
    weft__arc_span all = { 0 };
    char *err = NULL;

    *total = 0;
    if (!cbs)
        return weft__cli_fail("out of memory"), -1;
    if (weft__arc_open_events(a, &err) < 0) {
        problem(v, "%s: %s", anchor, err ? err : "out of memory");
        goto out;
    }
    for (size_t i = 0; i < a->nlocs; i++) {
        const weft__arc_loc *al = &a->locs[i];
        weft__arc_span t = { 0 };
        uint64_t n = 0;
        free(err);
        err = NULL;
        if (weft__arc_read_location(a, i, cbs, &t, &n, &err) < 0)
            unreadable_location(v, row, al, err);
        else if (n != al->events)
            problem(v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                    PRIu64 "): %" PRIu64 " events read, numberOfEvents says %"
                    PRIu64, al->id, al->id >> 32, al->id & 0xffffffffu, n,
                    al->events);
        *total += n;
        if (t.any) {
            weft__arc_see(&all, t.min);
            weft__arc_see(&all, t.max);
        }
    }
    if (*total != row->events)
        problem(v, "%" PRIu64 " events in the archive, the catalog says %"
                PRIu64, *total, row->events);
    /* Where ClockOffsets apply weftd widens the range by a tick on each
     * side: readers may round an interpolated offset either way. */
    if (all.any && (row->time_first > all.min || row->time_last < all.max ||
                    all.min - row->time_first > 1 ||
                    row->time_last - all.max > 1))
        problem(v, "events span %" PRIu64 " .. %" PRIu64 ", the catalog "
                "says %" PRIu64 " .. %" PRIu64, all.min, all.max,
                row->time_first, row->time_last);
out:
    OTF2_EvtReaderCallbacks_Delete(cbs);
    free(err);
    return 0;
}

int weft__cmd_verify(cli *c)
{
    weft_trace_row row;
    weft__arc a = { 0 };
    cat_locs cl = { 0 };
    verifier v = { 0 };
    uint64_t total = 0;
    char *anchor = NULL, *err = NULL, *name = NULL;
    int status = EXIT_FAIL, rc;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    name = weft__cli_escape(c->args[0]);
    v.trace = name;
    if (c->json && !(v.list = json_array())) {
        weft__cli_fail("out of memory");
        goto out;
    }
    if (!row.path || !*row.path) {
        weft__cli_fail("verify %s: the catalog has no archive path (state "
                       "%s)", name, row.state);
        goto out;
    }
    if (asprintf(&anchor, "%s/traces.otf2", row.path) < 0) {
        anchor = NULL;
        weft__cli_fail("out of memory");
        goto out;
    }
    rc = weft_catalog_locations(c->catalog, row.id, collect_loc, &cl);
    if (rc < 0) {
        weft__cli_fail("%s", weft_catalog_errmsg(c->catalog));
        goto out;
    }
    if (weft__arc_open(&a, anchor, &err) < 0) {
        problem(&v, "%s", err ? err : "out of memory");
    } else {
        verify_clock(&v, &a, &row);
        if (verify_locations(&v, &a, &row, &cl) < 0 ||
            verify_events(&v, &a, &row, anchor, &total) < 0)
            goto out;
    }
    if (c->json)
        status = verdict_json(&v, &row, anchor, a.nlocs, total);
    if (v.problems) {
        weft__cli_fail("verify %s: %u difference%s between %s and the "
                       "catalog", name, v.problems,
                       v.problems == 1 ? "" : "s", anchor);
        status = EXIT_FAIL;
        goto out;
    }
    if (c->json)
        goto out;
    printf("OK %s: %zu locations, %" PRIu64 " events, time %" PRIu64
           " .. %" PRIu64 " match the catalog\n", name, a.nlocs, total,
           row.time_first, row.time_last);
    status = EXIT_OK;
out:
    json_decref(v.list);
    weft__arc_close(&a);
    free(cl.v);
    free(cl.seen);
    free(err);
    free(anchor);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}
