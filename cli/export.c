/* export.c - `weft export TRACE --format chrome-json -o FILE`: the archive
 * as Trace Event JSON (what Perfetto UI and chrome://tracing open).
 *
 * Processes are members (pid = rank, "rank R"), threads are locations
 * (tid = thread index, the location's name); Enter/Leave become B/E
 * slices named after the region, Metric becomes C counters. Output is
 * written as the events are read, one location after the other: nothing
 * but the definitions is held in memory.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "cli.h"

typedef struct exporter {
    FILE *out;
    const weft__arc *a;
    uint32_t pid, tid;
    uint64_t events;         /* written so far, for progress */
    uint64_t total;          /* events in the archive */
    int progress;            /* stderr is a terminal */
    int first;               /* no event written yet (no comma) */
} exporter;

/* s as a JSON string: quotes, backslash and controls escaped; bytes of
 * invalid UTF-8 become U+FFFD so the output stays valid JSON. */
static void put_str(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    fputc('"', out);
    while (*p) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4
                   : 0;
        size_t i;

        for (i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                break;
        if (n == 0 || i < n) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fwrite(p, 1, n, out);
        p += n;
    }
    fputc('"', out);
}

static void begin_event(exporter *e, const char *ph, const char *name,
                        uint32_t pid, uint32_t tid)
{
    fputs(e->first ? "\n" : ",\n", e->out);
    e->first = 0;
    fprintf(e->out, "{\"ph\":\"%s\",\"name\":", ph);
    put_str(e->out, name);
    fprintf(e->out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, pid, tid);
}

/* Microseconds since the trace's start, as a JSON number. */
static void put_ts(exporter *e, OTF2_TimeStamp t)
{
    const weft__arc *a = e->a;
    uint64_t d = t >= a->offset ? t - a->offset : 0;
    uint64_t res = a->resolution ? a->resolution : 1;

    fprintf(e->out, ",\"ts\":%.3f", (double)d * 1e6 / (double)res);
}

static void tick(exporter *e)
{
    if (++e->events % 100000 == 0 && e->progress)
        fprintf(stderr, "\rweft export: %" PRIu64 " of %" PRIu64 " events"
                " (%.0f%%)", e->events, e->total,
                e->total ? 100.0 * (double)e->events / (double)e->total : 0.0);
}

static const char *region_name(const weft__arc *a, OTF2_RegionRef r)
{
    return r < a->nregions ? weft__arc_string(a, a->regions[r]) : "";
}

static void slice(exporter *e, const char *ph, OTF2_TimeStamp t,
                  OTF2_RegionRef r)
{
    char buf[32];
    const char *name = region_name(e->a, r);

    if (!*name) {
        snprintf(buf, sizeof buf, "region %" PRIu32, r);
        name = buf;
    }
    begin_event(e, ph, name, e->pid, e->tid);
    put_ts(e, t);
    fputs("}", e->out);
    tick(e);
}

static OTF2_CallbackCode ev_enter(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef r)
{
    (void)loc;
    (void)pos;
    (void)al;
    slice(ud, "B", t, r);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_leave(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                  uint64_t pos, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef r)
{
    (void)loc;
    (void)pos;
    (void)al;
    slice(ud, "E", t, r);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_metric(OTF2_LocationRef loc, OTF2_TimeStamp t,
                                   uint64_t pos, void *ud, OTF2_AttributeList *al,
                                   OTF2_MetricRef m, uint8_t n,
                                   const OTF2_Type *types,
                                   const OTF2_MetricValue *vals)
{
    exporter *e = ud;
    const weft__arc *a = e->a;
    const OTF2_MetricMemberRef *mem =
        m < a->nclasses && a->classes[m] ? a->classes[m] + 1 : NULL;
    uint8_t nmem = mem ? (uint8_t)a->classes[m][0] : 0;
    char buf[32];
    const char *name = "";

    (void)loc;
    (void)pos;
    (void)al;
    if (n == 1 && nmem >= 1 && mem[0] < a->nmembers)
        name = weft__arc_string(a, a->members[mem[0]]);
    if (!*name) {
        snprintf(buf, sizeof buf, "metric %" PRIu32, m);
        name = buf;
    }
    begin_event(e, "C", name, e->pid, e->tid);
    put_ts(e, t);
    fputs(",\"args\":{", e->out);
    for (uint8_t i = 0; i < n; i++) {
        const char *mn = i < nmem && mem[i] < a->nmembers
                         ? weft__arc_string(a, a->members[mem[i]]) : "";
        if (i)
            fputc(',', e->out);
        if (*mn) {
            put_str(e->out, mn);
        } else {
            fprintf(e->out, "\"value %u\"", i);
        }
        fputc(':', e->out);
        switch (types[i]) {
        case OTF2_TYPE_INT64:
            fprintf(e->out, "%" PRId64, vals[i].signed_int);
            break;
        case OTF2_TYPE_UINT64:
            fprintf(e->out, "%" PRIu64, vals[i].unsigned_int);
            break;
        default:
            /* JSON has no NaN or infinities. */
            if (vals[i].floating_point == vals[i].floating_point &&
                vals[i].floating_point < 1e308 &&
                vals[i].floating_point > -1e308)
                fprintf(e->out, "%.17g", vals[i].floating_point);
            else
                fputs("null", e->out);
        }
    }
    fputs("}}", e->out);
    tick(e);
    return OTF2_CALLBACK_SUCCESS;
}

static void metadata(exporter *e, const char *what, uint32_t pid,
                     uint32_t tid, const char *value)
{
    begin_event(e, "M", what, pid, tid);
    fputs(",\"args\":{\"name\":", e->out);
    put_str(e->out, value);
    fputs("}}", e->out);
}

/* Checks --format and -o. Returns EXIT_OK or a usage error. */
static int export_options(const cli *c)
{
    if (!c->format)
        return weft__cli_usage("export", "--format is required (chrome-json)");
    if (strcmp(c->format, "chrome-json") != 0) {
        char *f = weft__cli_escape(c->format);
        weft__cli_usage("export", "unknown format '%s' (known: chrome-json)",
                        f);
        free(f);
        return EXIT_USAGE;
    }
    if (!c->output || !*c->output)
        return weft__cli_usage("export", "-o FILE is required");
    return EXIT_OK;
}

/* Metadata first: one process_name per rank, one thread_name each. */
static void write_metadata(exporter *e)
{
    const weft__arc *a = e->a;

    for (size_t i = 0; i < a->nlocs; i++) {
        uint32_t pid = (uint32_t)(a->locs[i].id >> 32);
        uint32_t tid = (uint32_t)a->locs[i].id;
        int first_of_rank = 1;
        char rank[32];

        for (size_t j = 0; j < i; j++)
            if ((uint32_t)(a->locs[j].id >> 32) == pid)
                first_of_rank = 0;
        if (first_of_rank) {
            snprintf(rank, sizeof rank, "rank %" PRIu32, pid);
            metadata(e, "process_name", pid, 0, rank);
        }
        metadata(e, "thread_name", pid, tid,
                 weft__arc_string(a, a->locs[i].name));
    }
}

/* The events of every location of archive a (its event files open), as
 * slices and counters. Returns EXIT_OK, or EXIT_FAIL after saying why
 * (name: the trace, escaped). */
static int write_events(exporter *e, weft__arc *a, const char *name)
{
    OTF2_EvtReaderCallbacks *cbs = OTF2_EvtReaderCallbacks_New();
    char *err = NULL;
    int status = EXIT_OK;

    if (!cbs)
        return weft__cli_fail("out of memory");
    OTF2_EvtReaderCallbacks_SetEnterCallback(cbs, ev_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cbs, ev_leave);
    OTF2_EvtReaderCallbacks_SetMetricCallback(cbs, ev_metric);
    for (size_t i = 0; i < a->nlocs && status == EXIT_OK; i++) {
        uint64_t n;
        e->pid = (uint32_t)(a->locs[i].id >> 32);
        e->tid = (uint32_t)a->locs[i].id;
        if (weft__arc_read_location(a, i, cbs, e, &n, &err) < 0) {
            if (e->progress)
                fputc('\n', stderr);
            status = weft__cli_fail("export %s: location %" PRIu64 ": %s",
                                    name, a->locs[i].id,
                                    err ? err : "out of memory");
        }
        free(err);
        err = NULL;
    }
    OTF2_EvtReaderCallbacks_Delete(cbs);
    return status;
}

int weft__cmd_export(cli *c)
{
    weft_trace_row row;
    weft__arc a = { 0 };
    exporter e = { 0 };
    char *anchor = NULL, *err = NULL, *name = NULL;
    FILE *out = NULL;
    int status;

    if ((status = export_options(c)) != EXIT_OK)
        return status;
    if (weft__cli_open_catalog(c) != EXIT_OK ||
        weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    status = EXIT_FAIL;
    name = weft__cli_escape(c->args[0]);
    if (!row.path || !*row.path) {
        weft__cli_fail("export %s: the trace has no archive (state %s)",
                       name, row.state);
        goto out;
    }
    if (asprintf(&anchor, "%s/traces.otf2", row.path) < 0) {
        anchor = NULL;
        weft__cli_fail("out of memory");
        goto out;
    }
    if (weft__arc_open(&a, anchor, &err) < 0 ||
        weft__arc_open_events(&a, &err) < 0) {
        weft__cli_fail("export %s: %s", name, err ? err : "out of memory");
        goto out;
    }
    out = strcmp(c->output, "-") == 0 ? stdout : fopen(c->output, "w");
    if (!out) {
        weft__cli_fail("export %s: cannot write %s: %m", name, c->output);
        goto out;
    }
    e.out = out;
    e.a = &a;
    e.first = 1;
    e.progress = isatty(STDERR_FILENO);
    for (size_t i = 0; i < a.nlocs; i++)
        e.total += a.locs[i].events;

    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
    write_metadata(&e);
    if (write_events(&e, &a, name) != EXIT_OK)
        goto out;
    fputs("\n]}\n", out);
    if (e.progress)
        fprintf(stderr, "\rweft export: %" PRIu64 " events written to %s\n",
                e.events, c->output);
    if (fflush(out) != 0 || ferror(out)) {
        weft__cli_fail("export %s: error writing %s: %m", name, c->output);
        goto out;
    }
    status = EXIT_OK;
out:
    if (out && out != stdout && fclose(out) != 0 && status == EXIT_OK)
        status = weft__cli_fail("export %s: error writing %s: %m", name,
                                c->output);
    if (status != EXIT_OK && out && out != stdout)
        unlink(c->output);
    weft__arc_close(&a);
    free(err);
    free(anchor);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}
