/* verify.c - `weft verify TRACE`: read an archive back with libotf2 and
 * compare it with the catalog; also the archive reader export.c uses.
 *
 * The event count of a location is what OTF2_Reader_ReadLocalEvents says
 * it read (every record, whatever its type); the time range comes from
 * one callback per event record of weft_records.def, generated with the
 * record table so each has libotf2's exact signature.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "weft_errors.h"

/* libotf2 reports errors through one process-wide callback; the command
 * is single-threaded, so the last message is kept here for ours. */
static char otf2_last[512];

static OTF2_ErrorCode otf2_error(void *ud, const char *file, uint64_t line,
                                 const char *func, OTF2_ErrorCode code,
                                 const char *fmt, va_list va)
{
    (void)ud;
    (void)file;
    (void)line;
    (void)func;
    if (fmt && *fmt)
        vsnprintf(otf2_last, sizeof otf2_last, fmt, va);
    else
        snprintf(otf2_last, sizeof otf2_last, "%s",
                 OTF2_Error_GetDescription(code));
    return code;
}

__attribute__((format(printf, 2, 3)))
static int arc_err(char **err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    if (vasprintf(err, fmt, ap) < 0)
        *err = NULL;
    va_end(ap);
    return -1;
}

/* Array p of *n elements of size sz grown to hold index i, new elements
 * all 0xff bytes; returns the array, or NULL (p still valid). */
static void *grow(void *p, size_t *n, size_t i, size_t sz)
{
    size_t m;
    void *q;

    if (i < *n)
        return p;
    if (i > (1u << 26))   /* ids of a sane archive are dense */
        return NULL;
    m = i + 1 > *n * 2 ? i + 1 : *n * 2;
    q = realloc(p, m * sz);
    if (!q)
        return NULL;
    memset((char *)q + *n * sz, 0xff, (m - *n) * sz);
    *n = m;
    return q;
}

#define GROW(arr, n, i)                                                      \
    ({ void *tmp_ = grow((arr), &(n), (i), sizeof *(arr));                  \
       tmp_ ? ((arr) = tmp_, 0) : -1; })

static OTF2_CallbackCode def_clock(void *ud, uint64_t res, uint64_t off,
                                   uint64_t len, uint64_t realtime)
{
    weft__arc *a = ud;

    (void)realtime;
    a->have_clock = 1;
    a->resolution = res;
    a->offset = off;
    a->length = len;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_string(void *ud, OTF2_StringRef self,
                                    const char *s)
{
    weft__arc *a = ud;
    size_t old = a->nstrings;

    if (GROW(a->strings, a->nstrings, self) < 0)
        return OTF2_CALLBACK_ERROR;
    for (size_t i = old; i < a->nstrings; i++)
        a->strings[i] = NULL;
    free(a->strings[self]);
    a->strings[self] = strdup(s ? s : "");
    return a->strings[self] ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
}

static OTF2_CallbackCode def_location(void *ud, OTF2_LocationRef self,
                                      OTF2_StringRef name,
                                      OTF2_LocationType type, uint64_t nev,
                                      OTF2_LocationGroupRef group)
{
    weft__arc *a = ud;
    weft__arc_loc *l;

    (void)type;
    (void)group;
    l = realloc(a->locs, (a->nlocs + 1) * sizeof *l);
    if (!l)
        return OTF2_CALLBACK_ERROR;
    a->locs = l;
    l += a->nlocs++;
    l->id = self;
    l->name = name;
    l->events = nev;
    l->seen = 0;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_region(void *ud, OTF2_RegionRef self,
                                    OTF2_StringRef name, OTF2_StringRef canon,
                                    OTF2_StringRef desc, OTF2_RegionRole role,
                                    OTF2_Paradigm par, OTF2_RegionFlag flags,
                                    OTF2_StringRef file, uint32_t b,
                                    uint32_t e)
{
    weft__arc *a = ud;

    (void)canon, (void)desc, (void)role, (void)par, (void)flags, (void)file;
    (void)b, (void)e;
    if (GROW(a->regions, a->nregions, self) < 0)
        return OTF2_CALLBACK_ERROR;
    a->regions[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_member(void *ud, OTF2_MetricMemberRef self,
                                    OTF2_StringRef name, OTF2_StringRef desc,
                                    OTF2_MetricType mt, OTF2_MetricMode mm,
                                    OTF2_Type vt, OTF2_Base base,
                                    int64_t exp, OTF2_StringRef unit)
{
    weft__arc *a = ud;

    (void)desc, (void)mt, (void)mm, (void)vt, (void)base, (void)exp;
    (void)unit;
    if (GROW(a->members, a->nmembers, self) < 0)
        return OTF2_CALLBACK_ERROR;
    a->members[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}

static int set_class(weft__arc *a, OTF2_MetricRef self, uint8_t n,
                     const OTF2_MetricMemberRef *m)
{
    size_t old = a->nclasses;
    OTF2_MetricMemberRef *c;

    if (GROW(a->classes, a->nclasses, self) < 0)
        return -1;
    for (size_t i = old; i < a->nclasses; i++)
        a->classes[i] = NULL;
    c = malloc((n + 1u) * sizeof *c);
    if (!c)
        return -1;
    c[0] = n;
    if (n)
        memcpy(c + 1, m, n * sizeof *c);
    free(a->classes[self]);
    a->classes[self] = c;
    return 0;
}

static OTF2_CallbackCode def_class(void *ud, OTF2_MetricRef self, uint8_t n,
                                   const OTF2_MetricMemberRef *m,
                                   OTF2_MetricOccurrence occ,
                                   OTF2_RecorderKind kind)
{
    (void)occ;
    (void)kind;
    return set_class(ud, self, n, m) < 0 ? OTF2_CALLBACK_ERROR
                                         : OTF2_CALLBACK_SUCCESS;
}

/* An instance has the members of its class (classes come first). */
static OTF2_CallbackCode def_instance(void *ud, OTF2_MetricRef self,
                                      OTF2_MetricRef cls,
                                      OTF2_LocationRef rec,
                                      OTF2_MetricScope scope, uint64_t s)
{
    weft__arc *a = ud;
    OTF2_MetricMemberRef *c;

    (void)rec, (void)scope, (void)s;
    if (cls >= a->nclasses || !(c = a->classes[cls]))
        return OTF2_CALLBACK_SUCCESS;
    return set_class(a, self, (uint8_t)c[0], c + 1) < 0
           ? OTF2_CALLBACK_ERROR : OTF2_CALLBACK_SUCCESS;
}

/* Returns 0 or -1 with *err (malloc'd). */
int weft__arc_open(weft__arc *a, const char *anchor, char **err)
{
    OTF2_GlobalDefReaderCallbacks *cb = NULL;
    OTF2_GlobalDefReader *gr;
    OTF2_ErrorCode orc;
    uint64_t n = 0;
    int rc = -1;

    memset(a, 0, sizeof *a);
    *err = NULL;
    OTF2_Error_RegisterCallback(otf2_error, NULL);
    otf2_last[0] = 0;
    a->reader = OTF2_Reader_Open(anchor);
    if (!a->reader)
        return arc_err(err, "cannot open %s: %s", anchor,
                       otf2_last[0] ? otf2_last : "not an OTF2 archive");
    if ((orc = OTF2_Reader_SetSerialCollectiveCallbacks(a->reader)) !=
        OTF2_SUCCESS)
        return arc_err(err, "%s: %s", anchor, OTF2_Error_GetDescription(orc));
    gr = OTF2_Reader_GetGlobalDefReader(a->reader);
    cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!gr || !cb) {
        arc_err(err, "%s: cannot read the global definitions: %s", anchor,
                otf2_last);
        goto out;
    }
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, def_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, def_string);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, def_region);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, def_member);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, def_class);
    OTF2_GlobalDefReaderCallbacks_SetMetricInstanceCallback(cb,
                                                            def_instance);
    OTF2_Reader_RegisterGlobalDefCallbacks(a->reader, gr, cb, a);
    orc = OTF2_Reader_ReadAllGlobalDefinitions(a->reader, gr, &n);
    if (orc != OTF2_SUCCESS) {
        arc_err(err, "%s: reading the global definitions failed after %"
                PRIu64 " definitions: %s", anchor, n,
                otf2_last[0] ? otf2_last : OTF2_Error_GetDescription(orc));
        goto out;
    }
    OTF2_Reader_CloseGlobalDefReader(a->reader, gr);
    rc = 0;
out:
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    return rc;
}

int weft__arc_open_events(weft__arc *a, char **err)
{
    OTF2_ErrorCode orc;

    *err = NULL;
    for (size_t i = 0; i < a->nlocs; i++)
        OTF2_Reader_SelectLocation(a->reader, a->locs[i].id);
    orc = OTF2_Reader_OpenEvtFiles(a->reader);
    if (orc != OTF2_SUCCESS)
        return arc_err(err, "cannot open the event files: %s",
                       OTF2_Error_GetDescription(orc));
    return 0;
}

int weft__arc_read_location(weft__arc *a, size_t i,
                            const OTF2_EvtReaderCallbacks *cbs, void *arg,
                            uint64_t *nread, char **err)
{
    OTF2_EvtReader *r;
    OTF2_ErrorCode orc;

    *nread = 0;
    *err = NULL;
    otf2_last[0] = 0;
    r = OTF2_Reader_GetEvtReader(a->reader, a->locs[i].id);
    if (!r)
        return arc_err(err, "no event reader: %s",
                       otf2_last[0] ? otf2_last : "unknown error");
    OTF2_Reader_RegisterEvtCallbacks(a->reader, r, cbs, arg);
    orc = OTF2_Reader_ReadLocalEvents(a->reader, r, OTF2_UNDEFINED_UINT64,
                                      nread);
    OTF2_Reader_CloseEvtReader(a->reader, r);
    if (orc != OTF2_SUCCESS)
        return arc_err(err, "reading events failed after %" PRIu64
                       " events: %s", *nread,
                       otf2_last[0] ? otf2_last
                                    : OTF2_Error_GetDescription(orc));
    return 0;
}

const char *weft__arc_string(const weft__arc *a, OTF2_StringRef s)
{
    return s < a->nstrings && a->strings[s] ? a->strings[s] : "";
}

void weft__arc_close(weft__arc *a)
{
    if (a->reader)
        OTF2_Reader_Close(a->reader);
    for (size_t i = 0; i < a->nstrings; i++)
        free(a->strings[i]);
    for (size_t i = 0; i < a->nclasses; i++)
        free(a->classes[i]);
    free(a->strings);
    free(a->locs);
    free(a->regions);
    free(a->members);
    free(a->classes);
    memset(a, 0, sizeof *a);
}

/* ---- verify ----------------------------------------------------------- */

typedef struct tspan {
    uint64_t min, max;
    int any;
} tspan;

static void see_time(tspan *t, OTF2_TimeStamp ts)
{
    if (!t->any || ts < t->min)
        t->min = ts;
    if (!t->any || ts > t->max)
        t->max = ts;
    t->any = 1;
}

/* One callback per event of the record table, each noting the time. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define S(ctype, name, K) , ctype name
#define R(ctype, name, K) , ctype name
#define F(ctype, name, W) , ctype name
#define FA(ctype, name, count, W) , const ctype *name
#define RA(ctype, name, count, K) , const ctype *name
#define TV(ctype, name, typefield) , ctype name
#define TVA(ctype, name, count, types) , const ctype *name
#define RS(ctype, name, sel, MAP) , ctype name
#define RSA(ctype, name, count, sel, MAP) , const ctype *name
#define WEFT_EVENT(id, Name, fields)                                         \
    static OTF2_CallbackCode time_##Name(OTF2_LocationRef loc,               \
                                         OTF2_TimeStamp t, uint64_t pos,     \
                                         void *ud,                           \
                                         OTF2_AttributeList *al fields)      \
    {                                                                        \
        see_time(ud, t);                                                     \
        return OTF2_CALLBACK_SUCCESS;                                        \
    }
#include "weft_records.def"

static OTF2_EvtReaderCallbacks *time_callbacks(void)
{
    OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();

    if (!cb)
        return NULL;
#define WEFT_EVENT(id, Name, fields)                                         \
    OTF2_EvtReaderCallbacks_Set##Name##Callback(cb, time_##Name);
#include "weft_records.def"
    return cb;
}
#undef S
#undef R
#undef F
#undef FA
#undef RA
#undef TV
#undef TVA
#undef RS
#undef RSA
#pragma GCC diagnostic pop

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
} verifier;

__attribute__((format(printf, 2, 3)))
static void problem(verifier *v, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "weft verify %s: ", v->trace);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    v->problems++;
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

int weft__cmd_verify(cli *c)
{
    weft_trace_row row;
    weft__arc a = { 0 };
    cat_locs cl = { 0 };
    verifier v = { 0 };
    OTF2_EvtReaderCallbacks *cbs = NULL;
    tspan all = { 0, 0, 0 };
    uint64_t total = 0;
    char *anchor = NULL, *err = NULL, *name = NULL;
    int status = EXIT_FAIL, rc;

    if (weft__cli_find(c, c->args[0], &row) != EXIT_OK)
        return EXIT_FAIL;
    name = weft__cli_escape(c->args[0]);
    v.trace = name;
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
        goto report;
    }

    /* Definitions against the catalog. */
    if (!a.have_clock) {
        problem(&v, "the archive has no ClockProperties");
    } else {
        if (a.resolution != row.timer_resolution)
            problem(&v, "timer resolution: archive %" PRIu64 ", catalog %"
                    PRIu64, a.resolution, row.timer_resolution);
        if (row.events && a.offset != row.time_first)
            problem(&v, "ClockProperties globalOffset %" PRIu64 " differs "
                    "from the catalog's first timestamp %" PRIu64, a.offset,
                    row.time_first);
        if (row.events && a.length &&
            a.offset + a.length - 1 != row.time_last)
            problem(&v, "ClockProperties traceLength %" PRIu64 " ends at %"
                    PRIu64 ", the catalog's last timestamp is %" PRIu64,
                    a.length, a.offset + a.length - 1, row.time_last);
    }
    if (a.nlocs != row.locations)
        problem(&v, "%zu locations in the archive, the catalog says %"
                PRIu64, a.nlocs, row.locations);
    if (cl.n != row.locations)
        problem(&v, "the catalog lists %zu locations but its trace row "
                "says %" PRIu64, cl.n, row.locations);
    cl.seen = calloc(cl.n + 1, sizeof *cl.seen);
    if (!cl.seen) {
        weft__cli_fail("out of memory");
        goto out;
    }
    for (size_t i = 0; i < a.nlocs; i++) {
        size_t k;
        weft_location_row *l = cat_find(&cl, a.locs[i].id, &k);
        if (!l) {
            problem(&v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                    PRIu64 ") is in the archive but not in the catalog",
                    a.locs[i].id, a.locs[i].id >> 32,
                    a.locs[i].id & 0xffffffffu);
            continue;
        }
        cl.seen[k] = 1;
        if (l->events != a.locs[i].events)
            problem(&v, "location %" PRIu64 " (rank %" PRIu32 " thread %"
                    PRIu32 "): numberOfEvents %" PRIu64 " in the archive, "
                    "%" PRIu64 " in the catalog", l->id, l->rank, l->thread,
                    a.locs[i].events, l->events);
    }
    for (size_t k = 0; k < cl.n; k++)
        if (!cl.seen[k])
            problem(&v, "location %" PRIu64 " (rank %" PRIu32 " thread %"
                    PRIu32 ") is in the catalog but not in the archive",
                    cl.v[k].id, cl.v[k].rank, cl.v[k].thread);

    /* Events of every location. */
    cbs = time_callbacks();
    if (!cbs) {
        weft__cli_fail("out of memory");
        goto out;
    }
    free(err);
    if (weft__arc_open_events(&a, &err) < 0) {
        problem(&v, "%s: %s", anchor, err ? err : "out of memory");
        goto report;
    }
    for (size_t i = 0; i < a.nlocs; i++) {
        const weft__arc_loc *al = &a.locs[i];
        tspan t = { 0, 0, 0 };
        uint64_t n = 0;
        free(err);
        err = NULL;
        if (weft__arc_read_location(&a, i, cbs, &t, &n, &err) < 0) {
            char evt[4096];
            struct stat st = { .st_size = -1 };
            snprintf(evt, sizeof evt, "%s/traces/%" PRIu64 ".evt", row.path,
                     al->id);
            if (stat(evt, &st) != 0 && errno == ENOENT)
                problem(&v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                        PRIu64 "): events file %s is missing (%" PRIu64
                        " events expected)", al->id, al->id >> 32,
                        al->id & 0xffffffffu, evt, al->events);
            else
                problem(&v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                        PRIu64 "): events file %s (%jd bytes): %s; %" PRIu64
                        " events expected", al->id, al->id >> 32,
                        al->id & 0xffffffffu, evt, (intmax_t)st.st_size,
                        err ? err : "out of memory", al->events);
        } else if (n != al->events) {
            problem(&v, "location %" PRIu64 " (rank %" PRIu64 " thread %"
                    PRIu64 "): %" PRIu64 " events read, numberOfEvents says %"
                    PRIu64, al->id, al->id >> 32, al->id & 0xffffffffu, n,
                    al->events);
        }
        total += n;
        if (t.any) {
            see_time(&all, t.min);
            see_time(&all, t.max);
        }
    }
    if (total != row.events)
        problem(&v, "%" PRIu64 " events in the archive, the catalog says %"
                PRIu64, total, row.events);
    if (all.any && (all.min != row.time_first || all.max != row.time_last))
        problem(&v, "events span %" PRIu64 " .. %" PRIu64 ", the catalog "
                "says %" PRIu64 " .. %" PRIu64, all.min, all.max,
                row.time_first, row.time_last);

report:
    if (v.problems) {
        weft__cli_fail("verify %s: %u difference%s between %s and the "
                       "catalog", name, v.problems,
                       v.problems == 1 ? "" : "s", anchor);
        goto out;
    }
    printf("OK %s: %zu locations, %" PRIu64 " events, time %" PRIu64
           " .. %" PRIu64 " match the catalog\n", name, a.nlocs, total,
           row.time_first, row.time_last);
    status = EXIT_OK;
out:
    if (cbs)
        OTF2_EvtReaderCallbacks_Delete(cbs);
    weft__arc_close(&a);
    free(cl.v);
    free(cl.seen);
    free(err);
    free(anchor);
    free(name);
    weft_catalog_trace_free(&row);
    return status;
}
