/* export.c - `weft export TRACE --format chrome-json -o FILE [FILTERS]`:
 * the archive as Trace Event Format JSON (the format of Chrome's former
 * chrome://tracing, which the Perfetto UI reads), streaming, plain or
 * gzip (FILE.gz).
 *
 * Processes are location groups (pid = rank + 1, named "rank R (host)",
 * sorted by rank), threads are locations (tid = thread index). What each
 * event kind becomes is export_events.c's; times are the archive's,
 * corrected by its ClockOffsets as libotf2 applies them (archive.c reads
 * each location's local definitions first), in microseconds since the
 * trace's start. Filters: --from/--to (a time window), --ranks,
 * --regions (a glob on region names), --min-duration (of slices).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "export.h"

/* The largest rank --ranks takes (its table has an entry per rank). */
#define MAX_RANK (1u << 24)

/* A time option: seconds since the trace's start, @TICKS, or a wall
 * clock time (converted once the archive's clock is known). */
typedef struct xtime {
    int set, abs, wall;
    double secs;
    uint64_t ticks;
    int date, utc;                  /* wall: a date was given; in UTC */
    int y, mo, d, h, mi, sec;       /* wall: as given */
    double frac;                    /* wall: fraction of a second */
} xtime;

/* Parses a wall clock time into t: "[YYYY-MM-DD ]HH:MM:SS[.frac]" (or
 * with a T after the date), local time, or UTC with a trailing " UTC"
 * or "Z". 0 or -1. */
static int parse_wall(const char *s, xtime *t)
{
    size_t len = strlen(s);
    int n = -1;
    char *end;

    if (len > 4 && strcmp(s + len - 4, " UTC") == 0)
        len -= 4, t->utc = 1;
    else if (len > 1 && s[len - 1] == 'Z')
        len--, t->utc = 1;
    if (sscanf(s, "%4d-%2d-%2d%n", &t->y, &t->mo, &t->d, &n) == 3 &&
        n == 10 && (s[10] == ' ' || s[10] == 'T'))
        t->date = 1, s += 11, len -= 11;
    n = -1;
    if (len < 8 || sscanf(s, "%2d:%2d:%2d%n", &t->h, &t->mi, &t->sec, &n) != 3 ||
        n != 8 || t->h > 23 || t->mi > 59 || t->sec > 60)
        return -1;
    t->frac = 0;
    if (len > 8) {
        if (s[8] != '.' || len == 9 || strspn(s + 9, "0123456789") != len - 9)
            return -1;
        t->frac = strtod(s + 8, &end);
    }
    t->wall = 1;
    return 0;
}

/* Parses "1.5", "1.5s", "250ms", "20us", "100ns" (seconds and units) or,
 * when abs_ok, "@TICKS" (a timestamp of the archive, as otf2-print shows
 * it) or a wall clock time (parse_wall). Returns EXIT_OK or a usage
 * error naming opt. */
static int parse_time(const char *opt, const char *s, int abs_ok, xtime *t)
{
    static const struct { const char *suffix; double scale; } units[] = {
        { "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "ns", 1e-9 },
    };
    char *end;

    t->set = 1;
    if (abs_ok && s[0] == '@') {
        errno = 0;
        t->abs = 1;
        t->ticks = strtoull(s + 1, &end, 10);
        if (s[1] >= '0' && s[1] <= '9' && !*end && !errno)
            return EXIT_OK;
    } else if (abs_ok && strchr(s, ':')) {
        if (parse_wall(s, t) == 0)
            return EXIT_OK;
    } else {
        t->secs = strtod(s, &end);
        for (size_t i = 0; end != s && i < sizeof units / sizeof units[0];
             i++)
            if (strcmp(end, units[i].suffix) == 0 && isfinite(t->secs) &&
                t->secs >= 0 && (s[0] >= '0' && s[0] <= '9')) {
                t->secs *= units[i].scale;
                return EXIT_OK;
            }
    }
    char *v = weft__cli_escape(s);
    weft__cli_usage("export", "%s: '%s' is not a time (seconds such as "
                    "1.5, 250ms, 20us, 100ns%s)", opt, v,
                    abs_ok ? "; @TICKS; or a wall clock time such as "
                    "'2026-11-27 15:08:05.25', '15:08:05' (the trace's "
                    "day), local time, or with ' UTC'" : "");
    free(v);
    return EXIT_USAGE;
}

/* Wall clock time t in a's ticks, into *out. 0, or -1 when a has no
 * wall clock time or t is not a real moment (a message said so). */
static int wall_ticks(const char *opt, const xtime *t, const weft__arc *a,
                      uint64_t *out)
{
    int y = t->y, mo = t->mo, d = t->d;
    int64_t secs;
    long double ns, at;

    if (!a->have_clock || a->realtime == OTF2_UNDEFINED_TIMESTAMP) {
        weft__cli_usage("export", "%s: the archive has no wall clock time "
                        "(its ClockProperties have no realtimeTimestamp): "
                        "give seconds since its start or @TICKS", opt);
        return -1;
    }
    if (!t->date) {  /* the day the trace began, in the time's zone */
        time_t start = (time_t)(a->realtime / 1000000000u);
        struct tm tm;
        if (!(t->utc ? gmtime_r(&start, &tm) : localtime_r(&start, &tm)))
            goto bad;
        y = tm.tm_year + 1900, mo = tm.tm_mon + 1, d = tm.tm_mday;
    }
    if (t->utc) {
        struct tm tm = { .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                         .tm_hour = t->h, .tm_min = t->mi, .tm_sec = t->sec };
        time_t v = timegm(&tm);
        if (v == (time_t)-1 || tm.tm_mday != d || tm.tm_mon != mo - 1)
            goto bad;
        secs = (int64_t)v;
    } else if (weft__cli_local_time(y, mo, d, t->h, t->mi, t->sec, &secs) < 0) {
        goto bad;
    }
    ns = (long double)secs * 1e9L + (long double)t->frac * 1e9L;
    at = (long double)a->offset + (ns - (long double)a->realtime) *
         (long double)(a->resolution ? a->resolution : 1000000000u) / 1e9L;
    *out = at <= 0 ? 0 : at >= 1.8e19L ? UINT64_MAX : (uint64_t)llroundl(at);
    return 0;
bad:
    weft__cli_usage("export", "%s: %04d-%02d-%02d %02d:%02d:%02d is not a "
                    "time that exists", opt, y, mo, d, t->h, t->mi, t->sec);
    return -1;
}

/* t in archive ticks (a's clock); a wall clock time went through
 * wall_ticks first. */
static uint64_t ticks_of(const xtime *t, const weft__arc *a)
{
    double x;

    if (t->abs)
        return t->ticks;
    x = t->secs * (double)(a->resolution ? a->resolution : 1000000000u);
    return x >= 1.8e19 ? UINT64_MAX - a->offset : (uint64_t)llround(x) +
           a->offset;
}

/* "0-3,8" into e->rank_ok. Returns EXIT_OK or a usage error. */
static int parse_ranks(const char *s, weft__export *e)
{
    const char *p = s;
    uint64_t lo, hi;
    char *end;

    e->nrank_ok = 0;
    while (*p) {
        if (*p < '0' || *p > '9')
            goto bad;
        lo = hi = strtoull(p, &end, 10);
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                goto bad;
            hi = strtoull(end + 1, &end, 10);
        }
        if (hi < lo || hi >= MAX_RANK || (*end && *end != ','))
            goto bad;
        if (hi + 1 > e->nrank_ok) {
            e->rank_ok = weft__cli_xrealloc(e->rank_ok, hi + 1);
            memset(e->rank_ok + e->nrank_ok, 0, hi + 1 - e->nrank_ok);
            e->nrank_ok = hi + 1;
        }
        memset(e->rank_ok + lo, 1, hi - lo + 1);
        p = *end ? end + 1 : end;
        if (*end && !*p)
            goto bad;
    }
    if (e->nrank_ok)
        return EXIT_OK;
bad:;
    char *v = weft__cli_escape(s);
    weft__cli_usage("export", "--ranks: '%s' is not a list of ranks and "
                    "ranges such as 0-3,8 (ranks below %u)", v, MAX_RANK);
    free(v);
    return EXIT_USAGE;
}

/* Checks the options into e (times still unconverted: *from, *to,
 * *min). Returns EXIT_OK or a usage error. */
static int export_options(const cli *c, weft__export *e, xtime *from,
                          xtime *to, xtime *min)
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
    if (c->from && parse_time("--from", c->from, 1, from) != EXIT_OK)
        return EXIT_USAGE;
    if (c->to && parse_time("--to", c->to, 1, to) != EXIT_OK)
        return EXIT_USAGE;
    if (c->min_duration &&
        parse_time("--min-duration", c->min_duration, 0, min) != EXIT_OK)
        return EXIT_USAGE;
    if (c->ranks && parse_ranks(c->ranks, e) != EXIT_OK)
        return EXIT_USAGE;
    if (c->regions && !*c->regions)
        return weft__cli_usage("export", "--regions needs a GLOB");
    return EXIT_OK;
}

/* The filters in the archive's ticks, and which regions --regions
 * keeps. Returns EXIT_OK or a usage error (--from after --to). */
static int set_filters(const cli *c, weft__export *e, const xtime *from,
                       const xtime *to, const xtime *min)
{
    const weft__arc *a = e->a;
    size_t n = a->nnames[WEFT_REF_REGION];

    if ((from->wall && wall_ticks("--from", from, a, &e->from) < 0) ||
        (to->wall && wall_ticks("--to", to, a, &e->to) < 0))
        return EXIT_USAGE;
    if (!from->wall)
        e->from = from->set ? ticks_of(from, a) : 0;
    if (!to->wall)
        e->to = to->set ? ticks_of(to, a) : UINT64_MAX;
    e->min_dur = min->set ? ticks_of(min, a) - a->offset : 0;
    if (e->from > e->to)
        return weft__cli_usage("export", "--from %s is after --to %s",
                               c->from, c->to);
    if (!c->regions)
        return EXIT_OK;
    e->region_ok = weft__cli_xrealloc(NULL, n + 1);
    e->nregion_ok = n + 1;
    for (size_t r = 0; r < n; r++)
        e->region_ok[r] = fnmatch(c->regions, weft__arc_name(a, WEFT_REF_REGION,
                                                             r), 0) == 0;
    e->region_ok[n] = fnmatch(c->regions, "", 0) == 0;
    return EXIT_OK;
}

/* {"ph":"M","pid":P,"tid":T,"name":WHAT,"args":{KEY:VALUE}} */
static void metadata(weft__export *e, uint32_t pid, uint32_t tid,
                     const char *what, const char *key, const char *json)
{
    weft__sbuf *b = &e->out.b;

    weft__cli_sb_printf(b, "%s{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%"
                        PRIu32 ",\"name\":\"%s\",\"args\":{\"%s\":",
                        e->first ? "\n" : ",\n", pid, tid, what, key);
    weft__cli_sb_add(b, json, strlen(json));
    weft__xj_lit(b, "}}");
    e->first = 0;
    weft__xout_flush(&e->out, 0);
}

/* Names and order of the processes and threads that are exported. */
static void write_metadata(weft__export *e)
{
    const weft__arc *a = e->a;
    weft__sbuf s = { 0 }, j = { 0 };

    for (size_t i = 0; i < a->nlocs; i++) {
        uint32_t g = a->locs[i].group, tid = weft__export_tid(a, i);
        int first_of_rank = 1;
        if (!weft__export_rank_ok(e, i))
            continue;
        for (size_t k = 0; k < i; k++)
            if (a->locs[k].group == g)
                first_of_rank = 0;
        if (first_of_rank) {
            const char *host = weft__arc_name(
                a, WEFT_REF_SYSTEM_TREE_NODE,
                g < a->nlg ? a->lg_parent[g] : OTF2_UNDEFINED_SYSTEM_TREE_NODE);
            weft__cli_sb_printf(&s, "rank %" PRIu32, g);
            if (*host)
                weft__cli_sb_printf(&s, " (%s)", host);
            weft__xj_str(&j, s.s);
            metadata(e, g + 1, 0, "process_name", "name", j.s);
            j.len = s.len = 0;
            weft__xj_u64(&j, g);
            weft__cli_sb_add(&j, "", 0);
            metadata(e, g + 1, 0, "process_sort_index", "sort_index", j.s);
            j.len = 0;
        }
        weft__xj_sref(&e->out, &j, a->locs[i].name);
        metadata(e, g + 1, tid, "thread_name", "name", j.s);
        j.len = 0;
        weft__xj_u64(&j, tid);
        weft__cli_sb_add(&j, "", 0);
        metadata(e, g + 1, tid, "thread_sort_index", "sort_index", j.s);
        j.len = 0;
    }
    free(s.s);
    free(j.s);
}

/* Reads every exported location of a through the callbacks of pass
 * (export_events.c). Returns EXIT_OK, or EXIT_FAIL after saying why
 * (name: the trace, escaped). */
static int read_pass(weft__export *e, weft__arc *a, int pass,
                     const char *name)
{
    OTF2_EvtReaderCallbacks *cbs = weft__export_callbacks(pass);
    char *err = NULL;
    int status = EXIT_OK;

    if (!cbs)
        return weft__cli_fail("out of memory");
    e->pass = pass;
    for (size_t i = 0; i < a->nlocs && status == EXIT_OK; i++) {
        uint64_t n;
        if (!weft__export_rank_ok(e, i))
            continue;
        if (pass == 1 && e->progress)
            fprintf(stderr, "\rweft export: matching messages, location %zu "
                    "of %zu", i + 1, a->nlocs);
        weft__export_location_begin(e, i);
        if (weft__arc_read_location(a, i, cbs, e, &n, &err) < 0) {
            if (e->progress)
                fputc('\n', stderr);
            status = weft__cli_fail("export %s: location %" PRIu64 ": %s",
                                    name, a->locs[i].id,
                                    err ? err : "out of memory");
        }
        weft__export_location_end(e);
        free(err);
        err = NULL;
    }
    if (pass == 1 && e->progress)
        fputc('\n', stderr);
    OTF2_EvtReaderCallbacks_Delete(cbs);
    return status;
}

/* Writes the whole document. Returns an exit status. */
static int write_document(weft__export *e, weft__arc *a, const char *name)
{
    for (size_t i = 0; i < a->nlocs; i++)
        if (weft__export_rank_ok(e, i))
            e->total += a->locs[i].events;
    if (a->ncomms) {
        if (!(e->mpi = weft__xmpi_new(a)))
            return weft__cli_fail("out of memory");
        if (read_pass(e, a, 1, name) != EXIT_OK)
            return EXIT_FAIL;
        weft__xmpi_seal(e->mpi);
    }
    weft__xj_lit(&e->out.b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    e->first = 1;
    write_metadata(e);
    if (read_pass(e, a, 2, name) != EXIT_OK)
        return EXIT_FAIL;
    weft__xj_lit(&e->out.b, "\n]}\n");
    return EXIT_OK;
}

int weft__cmd_export(cli *c)
{
    weft_trace_row row;
    weft__arc a = { 0 };
    weft__export e = { 0 };
    xtime from = { 0 }, to = { 0 }, min = { 0 };
    char *anchor = NULL, *err = NULL, *name = NULL;
    int status, opened = 0;

    if ((status = export_options(c, &e, &from, &to, &min)) != EXIT_OK)
        goto free_filters;
    if (weft__cli_open_catalog(c) != EXIT_OK ||
        weft__cli_find(c, c->args[0], &row) != EXIT_OK) {
        status = EXIT_FAIL;
        goto free_filters;
    }
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
    e.a = &a;
    if ((status = set_filters(c, &e, &from, &to, &min)) != EXIT_OK)
        goto out;
    status = EXIT_FAIL;
    if (weft__xout_open(&e.out, c->output, &a) < 0) {
        weft__cli_fail("export %s: cannot write %s: %m", name, c->output);
        goto out;
    }
    opened = 1;
    e.progress = isatty(STDERR_FILENO);
    if (write_document(&e, &a, name) != EXIT_OK)
        goto out;
    status = EXIT_OK;
out:
    if (opened && weft__xout_close(&e.out) < 0 && status == EXIT_OK)
        status = weft__cli_fail("export %s: error writing %s: %m", name,
                                c->output);
    if (status == EXIT_OK && e.progress)
        fprintf(stderr, "\rweft export: %" PRIu64 " events read, written to "
                "%s\n", e.events, c->output);
    if (status != EXIT_OK && opened && strcmp(c->output, "-") != 0)
        unlink(c->output);
    weft__xmpi_free(e.mpi);
    free(e.regions.v);
    free(e.pairs.v);
    free(e.scratch.s);
    weft__arc_close(&a);
    free(err);
    free(anchor);
    free(name);
    weft_catalog_trace_free(&row);
free_filters:
    free(e.rank_ok);
    free(e.region_ok);
    return status;
}
