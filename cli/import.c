/* import.c - `weft import ARCHIVE/traces.otf2 [--name N] [--tag K=V]
 * [--copy]`: an OTF2 archive another tool wrote (Score-P, libotf2
 * directly), catalogued as a trace.
 *
 * DESIGN: this command, running as the user, reads the archive with
 * libotf2 (archive.c: global definitions; per location its local
 * definitions, so MappingTables and ClockOffsets apply, then its
 * events), checks it as `weft verify` does (events against
 * numberOfEvents, times not going back, ClockProperties covering the
 * events) and computes the rows weftd stores for its own traces: the
 * region profile with weftd's own code (summary/profile.c, the same
 * nesting rules as daemon/convert/replay.c; each region's paradigm is
 * its Region definition's), the timeline summary for `weft
 * report` (summary/timeline.c), the message matrix, the file I/O and the
 * metric series with the code conversion uses (summary/commsum.c,
 * iosum.c, metricsum.c, reading the archive's definitions through
 * weft__arc_view; the event callbacks are import_events.c's, the
 * timelines' plan and the matrix summary.c's, as conversion's), members
 * (location groups of type
 * PROCESS, rank = their index, host = their system tree node), locations
 * and hosts. Then:
 *  - whoever may write the catalog (root, weftd's user) stores the rows
 *    directly, as `weft reindex` writes it, owner = the archive file's
 *    owner; --copy copies the archive into the spool first;
 *  - anyone else sends the rows to weftd (import/import.h), which stores
 *    them as the asker's without opening the archive, so nobody makes
 *    weftd read what they cannot read. --copy is refused for them: a
 *    copy in the spool would have to be made by weftd, which would then
 *    read the user's files on their word.
 * An archive libotf2 cannot read, or a location whose events it cannot
 * read, is refused with the reader's message. An archive with duplicate
 * definitions (EZTrace 2.0 writes them) is refused saying so: otf2-print
 * -Werror and the otf2 Python reader refuse it, and which of two
 * definitions counts is a guess. A readable archive whose checks found
 * problems is catalogued partial, its error naming them.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "archive.h"
#include "cli.h"
#include "commsum.h"
#include "fsutil.h"
#include "import.h"
#include "import_events.h"
#include "iosum.h"
#include "metricsum.h"
#include "profile.h"
#include "spool.h"
#include "summary.h"
#include "timeline.h"
#include "weft.pb-c.h"
#include "weft_errors.h"

/* Problems the checks found, for the trace's error. */
typedef struct problems {
    weft__sbuf text;
    unsigned n;
} problems;

__attribute__((format(printf, 2, 3)))
static void problem(problems *p, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft import: warning: %s\n", buf);
    if (p->n++ < 3)
        weft__cli_sb_printf(&p->text, "%s%s", p->n > 1 ? "; " : "", buf);
    else if (p->n == 4)
        weft__cli_sb_printf(&p->text, "; ...");
}

static const char *region_name(const void *a, uint32_t id)
{
    return weft__arc_name(a, WEFT_REF_REGION, id);
}

/* ---- the rows ---- */

/* Everything import builds; freed by imp_free. */
typedef struct imp {
    weft__arc a;
    weft_profile prof;
    weft_import_rows r;
    weft_location_row *locs;
    weft_member_row *members;
    uint32_t *lg_rank;        /* location group id -> rank, or UINT32_MAX */
    weft_region_row *regions;
    size_t nregions;
    weft_timeline_row *tls;
    size_t ntls;
    weft_timeline_region *tl_regions;
    size_t ntl_regions;
    imp_sums sums;
    weft_message_row *msgs;
    weft_io_file_row *files;
    weft_metric_row *metrics;
    size_t nfiles, nmetrics;
    weft_tag *tags;
    problems probs;
    char *hosts, *name, *dir;
} imp;

static void imp_free(imp *x)
{
    for (size_t i = 0; x->locs && i < x->a.nlocs; i++)
        free(x->locs[i].program);
    weft__arc_close(&x->a);
    weft_profile_free(&x->prof);
    for (size_t i = 0; i < x->nregions; i++) {
        free(x->regions[i].region);
        free(x->regions[i].paradigm);
    }
    for (size_t i = 0; i < x->ntls; i++)
        free(x->tls[i].bins);
    free(x->regions);
    free(x->tls);
    for (size_t i = 0; i < x->ntl_regions; i++)
        free(x->tl_regions[i].name);
    free(x->tl_regions);
    weft_commmap_free(&x->sums.cmap);
    weft_metricmap_free(&x->sums.mmap);
    weft_callcounts_free(&x->sums.ccount);
    for (size_t i = 0; i < x->sums.nsends; i++)
        weft_commsum_free(&x->sums.sends[i]);
    free(x->sums.sends);
    weft_iosum_free(&x->sums.io);
    for (size_t i = 0; i < x->sums.nml; i++)
        weft_metricloc_free(&x->sums.ml[i]);
    free(x->sums.ml);
    free(x->msgs);
    for (size_t i = 0; i < x->nfiles; i++)
        free(x->files[i].name);
    free(x->files);
    for (size_t i = 0; i < x->nmetrics; i++) {
        free(x->metrics[i].name);
        free(x->metrics[i].unit);
        free(x->metrics[i].points);
    }
    free(x->metrics);
    free(x->locs);
    free(x->members);
    free(x->lg_rank);
    free(x->tags);
    free(x->probs.text.s);
    free(x->hosts);
    free(x->name);
    free(x->dir);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Members: the PROCESS location groups by id, rank = their index, host
 * = the name of their system tree node; hosts: the distinct ones. */
static int members_of(imp *x)
{
    weft__arc *a = &x->a;
    const char **hv;
    size_t n = 0, nh = 0;
    weft__sbuf hs = { 0 };

    if (weft__arc_members(a, &x->members, &n, &x->lg_rank) < 0 ||
        !(hv = calloc(n + 1, sizeof *hv)))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (*x->members[i].host)
            hv[nh++] = x->members[i].host;
    x->r.detail.members = x->members;
    x->r.detail.nmembers = n;
    x->r.row.members = x->r.row.joined = (uint32_t)n;
    if (nh)
        qsort(hv, nh, sizeof *hv, cmp_str);
    for (size_t i = 0; i < nh; i++)
        if (i == 0 || strcmp(hv[i], hv[i - 1]) != 0)
            weft__cli_sb_printf(&hs, "%s%s", hs.s && *hs.s ? "," : "",
                                hv[i]);
    free(hv);
    x->hosts = hs.s ? hs.s : weft__cli_xstrdup("");
    x->r.row.hosts = x->hosts;
    return 0;
}

/* A location's rank (rank_of's table). */
typedef struct loc_rank {
    uint64_t id;
    uint32_t rank;
} loc_rank;

static int cmp_loc_rank(const void *a, const void *b)
{
    const loc_rank *p = a, *q = b;

    return p->id < q->id ? -1 : p->id > q->id;
}

/* The rank of location x->a.locs[i]: its process's (members_of), 0
 * when it belongs to none. */
static uint32_t rank_of_loc(const imp *x, size_t i)
{
    OTF2_LocationGroupRef g = x->a.locs[i].group;

    return g < x->a.nlg_type && x->lg_rank[g] != UINT32_MAX
           ? x->lg_rank[g] : 0;
}

/* What rank_of looks locations up in: loc_ranks sorted by id. */
typedef struct rank_table {
    const loc_rank *v;
    size_t n;
} rank_table;

/* weft_commmap_rank_fn: ctx is a rank_table. */
static uint32_t rank_of(const void *ctx, uint64_t id)
{
    const rank_table *t = ctx;
    loc_rank key = { id, 0 };
    const loc_rank *hit = bsearch(&key, t->v, t->n, sizeof key,
                                  cmp_loc_rank);

    return hit ? hit->rank : WEFT_COMMMAP_UNKNOWN;
}


/* The sums' maps and tables, before the events are read (conversion
 * builds them after its pass 1). 0 or -1 (out of memory). */
static int sums_init(imp *x)
{
    weft__arc *a = &x->a;
    weft_defview defs = weft__arc_view(a);
    loc_rank *v = calloc(a->nlocs + 1, sizeof *v);
    rank_table t = { v, a->nlocs };
    int rc = -1;

    x->sums.nsends = x->r.detail.nmembers ? x->r.detail.nmembers : 1;
    x->sums.sends = calloc(x->sums.nsends, sizeof *x->sums.sends);
    x->sums.ml = calloc(a->nlocs + 1, sizeof *x->sums.ml);
    x->sums.plan = weft_summary_plan_of(a->nlocs, a->resolution);
    if (!v || !x->sums.sends || !x->sums.ml)
        goto out;
    x->sums.nml = a->nlocs;
    for (size_t i = 0; i < a->nlocs; i++)
        v[i] = (loc_rank){ a->locs[i].id, rank_of_loc(x, i) };
    qsort(v, a->nlocs, sizeof *v, cmp_loc_rank);
    x->sums.resolution = a->resolution;
    if (weft_commmap_build(&x->sums.cmap, &defs, rank_of, &t) < 0 ||
        weft_metricmap_build(&x->sums.mmap, &defs) < 0)
        goto out;
    rc = 0;
out:
    free(v);
    return rc;
}

/* What location i's events say besides its sums: its row, its member's
 * counts, the problems found, its timeline. */
static void location_done(imp *x, size_t i, uint32_t rank, uint32_t thread,
                          imp_loc *l, uint64_t n)
{
    const weft__arc_loc *al = &x->a.locs[i];
    weft_location_row *lr = &x->locs[i];
    const char *process;

    lr->id = al->id;
    lr->rank = rank;
    lr->thread = thread;
    lr->name = (char *)weft__arc_string(&x->a, al->name);
    /* A process tree's archive that weftd wrote: its processes' names
     * and programs (out of memory: left out) */
    if (weft__arc_tree_process(&x->a, al->group, &process, &lr->program) == 1)
        lr->process = (char *)process;
    lr->events = n;
    x->r.row.events += n;
    if (lr->rank < x->r.detail.nmembers) {
        x->members[lr->rank].locations++;
        x->members[lr->rank].events += n;
    }
    if (n != al->events)
        problem(&x->probs, "location %" PRIu64 ": %" PRIu64 " events "
                "read, numberOfEvents says %" PRIu64, al->id, n,
                al->events);
    if (l->span.backwards)
        problem(&x->probs, "location %" PRIu64 ": %" PRIu64 " events "
                "earlier than the one before (the first at %" PRIu64 ")",
                al->id, l->span.backwards, l->span.back_at);
    if (l->unmatched || l->misnested)
        problem(&x->probs, "location %" PRIu64 ": %" PRIu64 " Leaves of "
                "a region not open, %" PRIu64 " of one open further "
                "down (the profile closes what is above it)", al->id,
                l->unmatched, l->misnested);
    if (l->tl.bins) {
        weft_timeline_finish(&l->tl, WEFT_TIMELINE_NONE, l->span.max);
        if (l->tl.n) {
            weft_timeline_row *t = &x->tls[x->ntls++];
            t->location = al->id;
            t->start_s = (double)l->tl.first;  /* ticks until below */
            t->width_s = (double)l->tl.width;
            t->bins = l->tl.bins;
            t->nbins = l->tl.n;
            l->tl.bins = NULL;
        }
    }
    weft_timeline_free(&l->tl);
}

/* Reads location i's events (a timeline's bins as the plan says) into
 * its row, the profile, the timelines, the sums and *all (the span of
 * every location). 0, or -1 after saying why. */
static int read_location(imp *x, size_t i, OTF2_EvtReaderCallbacks *cbs,
                         uint32_t *thread, weft__arc_span *all,
                         const char *anchor)
{
    weft__arc *a = &x->a;
    const weft__arc_loc *al = &a->locs[i];
    uint32_t rank = rank_of_loc(x, i);
    imp_loc l = { .prof = &x->prof, .sums = &x->sums,
                  .sends = &x->sums.sends[rank < x->sums.nsends ? rank : 0],
                  .ml = weft_summary_has_metrics(i) ? &x->sums.ml[i] : NULL };
    uint64_t n = 0;
    char *err = NULL;
    int rc;

    if (weft_summary_has_timeline(i)) /* none when no memory */
        weft_timeline_init(&l.tl, x->sums.plan.bins, x->sums.plan.width);
    rc = weft__arc_read_location(a, i, cbs, &l, &n, &err);
    weft_iolive_free(&l.io);
    if (rc < 0 || l.oom) {
        weft__cli_fail("import: %s: location %" PRIu64 " (%s): %s", anchor,
                       al->id, weft__arc_string(a, al->name),
                       l.oom ? "out of memory" : err ? err : "?");
        free(err);
        weft_profile_loc_free(&l.pl);
        weft_timeline_free(&l.tl);
        return -1;
    }
    free(err);
    location_done(x, i, rank,
                  al->group < a->nlg_type ? thread[al->group]++ : 0, &l, n);
    if (l.span.any) {
        weft__arc_see(all, l.span.min);
        weft__arc_see(all, l.span.max);
    }
    l.pl.start = l.span.min;  /* the outside row's span (profile.h) */
    if (weft_profile_finish_loc(&x->prof, &l.pl, (int64_t)al->id,
                                l.span.max) < 0) {
        weft__cli_fail("out of memory");
        return -1;
    }
    return 0;
}

/* The trace's range is its ClockProperties' when they cover the events
 * (all), as for weftd's own traces (whose ClockProperties have a tick of
 * margin around corrected times), so weft verify finds the two alike;
 * else where the events are. */
static void time_range(imp *x, const weft__arc_span *all)
{
    const weft__arc *a = &x->a;

    if (!all->any) {
        x->r.row.time_first = x->r.row.time_last = a->offset;
        return;
    }
    x->r.row.time_first = all->min;
    x->r.row.time_last = all->max;
    if (all->min < a->offset ||
        (a->length && all->max > a->offset + a->length - 1)) {
        problem(&x->probs, "events span %" PRIu64 " .. %" PRIu64 ", "
                "ClockProperties %" PRIu64 " .. %" PRIu64, all->min,
                all->max, a->offset, a->offset + a->length - 1);
    } else {
        x->r.row.time_first = a->offset;
        if (a->length)
            x->r.row.time_last = a->offset + a->length - 1;
    }
}

/* Reads every location's events into its row, the profile and the
 * timelines. Returns EXIT_OK, or EXIT_FAIL after saying why (a location
 * libotf2 cannot read). */
static int read_events(imp *x, const char *anchor)
{
    weft__arc *a = &x->a;
    weft_defview defs = weft__arc_view(a);
    OTF2_EvtReaderCallbacks *cbs = weft__import_callbacks();
    weft__arc_span all = { 0 };
    uint32_t *thread = calloc(a->nlg_type + 1, sizeof *thread);
    char *err = NULL;
    int status = EXIT_FAIL;

    x->locs = calloc(a->nlocs + 1, sizeof *x->locs);
    x->tls = calloc(a->nlocs + 1, sizeof *x->tls);
    if (!cbs || !thread || !x->locs || !x->tls || sums_init(x) < 0 ||
        weft_profile_init(&x->prof, region_name, weft__arc_region_paradigm,
                          a, a->nnames[WEFT_REF_REGION],
                          WEFT_PROFILE_ROWS_PER_LOCATION) < 0 ||
        weft_callcounts_build(&x->sums.ccount, &defs, &x->prof) < 0) {
        weft__cli_fail("out of memory");
        goto out;
    }
    if (weft__arc_open_events(a, &err) < 0) {
        weft__cli_fail("import: %s: %s", anchor, err ? err : "out of memory");
        goto out;
    }
    for (size_t i = 0; i < a->nlocs; i++)
        if (read_location(x, i, cbs, thread, &all, anchor) < 0)
            goto out;
    time_range(x, &all);
    status = EXIT_OK;
out:
    if (cbs)
        OTF2_EvtReaderCallbacks_Delete(cbs);
    free(thread);
    free(err);
    return status;
}

/* The profile's rows, and the timelines in seconds with the names of
 * the regions their bins hold. 0 or -1 (out of memory). */
static int report_rows(imp *x)
{
    double res = (double)x->a.resolution;

    if (weft_profile_result(&x->prof, x->a.resolution, &x->regions,
                            &x->nregions) < 0)
        return -1;
    for (size_t i = 0; i < x->ntls; i++) {
        weft_timeline_row *t = &x->tls[i];
        uint64_t first = (uint64_t)t->start_s;
        t->start_s = first > x->r.row.time_first
                     ? (double)(first - x->r.row.time_first) / res : 0.0;
        t->width_s /= res;
    }
    if (weft_summary_timeline_regions(x->tls, x->ntls,
                                      x->a.nnames[WEFT_REF_REGION],
                                      region_name, &x->a, &x->tl_regions,
                                      &x->ntl_regions) < 0)
        return -1;
    x->r.detail.regions = x->regions;
    x->r.detail.nregions = x->nregions;
    x->r.detail.timelines = x->tls;
    x->r.detail.ntimelines = x->ntls;
    x->r.detail.timeline_regions = x->tl_regions;
    x->r.detail.ntimeline_regions = x->ntl_regions;
    return 0;
}

/* Series s of location i as row (a weft_metricsum_row_fn): the
 * archive's times, which libotf2 corrected (ClockOffsets). */
static int metric_row(void *ctx, size_t i, const weft_metric_series *s,
                      weft_metric_row *row)
{
    const imp *x = ctx;
    weft_defview defs = weft__arc_view(&x->a);

    return weft_metricsum_row(s, &defs, x->a.locs[i].id, s->first,
                              s->first + s->n * s->width,
                              x->r.row.time_first, x->a.resolution, row);
}

/* weft_summary_sends_fn: rank i's sends (ctx: the sums). */
static const weft_commsum *rank_sends(const void *ctx, size_t i,
                                      uint32_t *rank)
{
    const imp_sums *m = ctx;

    *rank = (uint32_t)i;
    return &m->sends[i];
}

/* The message matrix, the files and the metric series, as conversion
 * makes them of its sums (daemon/convert/convert_report.c): the matrix's rows of
 * most bytes, the files of most time, the first series (location order,
 * then order of first value). 0 or -1 (out of memory). */
static int summary_rows(imp *x)
{
    weft_defview defs = weft__arc_view(&x->a);
    imp_sums *m = &x->sums;
    const weft_metricloc **ml = calloc(x->a.nlocs + 1, sizeof *ml);
    size_t nmsg = 0;
    int rc = -1;

    if (!ml || weft_summary_messages(rank_sends, m, m->nsends, &x->msgs,
                                     &nmsg) < 0)
        goto out;
    if (weft_iosum_files(&m->io, &defs, x->a.resolution,
                         WEFT_CONVERT_IO_FILES, &x->files, &x->nfiles) < 0)
        goto out;
    for (size_t i = 0; i < x->a.nlocs; i++)
        ml[i] = &m->ml[i];
    if (weft_metricsum_pick(ml, x->a.nlocs, WEFT_CONVERT_METRIC_SERIES,
                            metric_row, x, &x->metrics, &x->nmetrics) < 0)
        goto out;
    x->r.detail.messages = x->msgs;
    x->r.detail.nmessages = nmsg;
    x->r.detail.io_files = x->files;
    x->r.detail.nio_files = x->nfiles;
    x->r.detail.metrics = x->metrics;
    x->r.detail.nmetrics = x->nmetrics;
    rc = 0;
out:
    free(ml);
    return rc;
}

/* ---- where the rows go ---- */

/* The spool to reserve the trace's key in (--spool, else the catalog's
 * directory when it is a spool, else weftd's configuration's), as a
 * malloc'd path, or NULL after saying why. */
static char *import_spool(const cli *c)
{
    char *dir = weft__cli_xstrdup(c->spool ? c->spool : c->catalog_path);
    char *traces = NULL;
    struct stat st;
    weft_config cfg;
    char err[512];

    if (!c->spool) {           /* the catalog's directory */
        char *slash = strrchr(dir, '/');
        if (!slash)
            strcpy(dir, ".");
        else
            slash[slash == dir] = 0;
    }
    if (asprintf(&traces, "%s/traces", dir) >= 0 && stat(traces, &st) == 0 &&
        S_ISDIR(st.st_mode)) {
        free(traces);
        return dir;
    }
    free(traces);
    if (!c->spool && weft__cli_load_config(&cfg, err, sizeof err) == 0 &&
        cfg.spool && asprintf(&traces, "%s/traces", cfg.spool) >= 0) {
        if (stat(traces, &st) == 0 && S_ISDIR(st.st_mode)) {
            free(dir);
            dir = weft__cli_xstrdup(cfg.spool);
            free(traces);
            weft_config_free(&cfg);
            return dir;
        }
        free(traces);
    }
    if (!c->spool)
        weft_config_free(&cfg);
    weft__cli_fail("import: no spool to give the trace a key in (neither "
                   "the catalog's directory nor weftd's configuration has "
                   "traces/); give it with --spool DIR");
    free(dir);
    return NULL;
}

/* Copies the files of the archive of anchor (ANCHOR's base name: its
 * .otf2, .def and directory) into dst/archive. */
static const char *copy_to;
static size_t copy_from_len;

static int copy_entry(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    char *to = NULL;
    const char *rel = path + copy_from_len;
    int rc = 0;

    (void)ftw;
    if (ftw->level == 1 && strncmp(path + ftw->base, "traces", 6) != 0)
        return flag == FTW_D ? FTW_SKIP_SUBTREE : 0;
    if (asprintf(&to, "%s%s", copy_to, rel) < 0)
        return -1;
    if (flag == FTW_D) {
        rc = mkdir(to, 0755) == 0 || errno == EEXIST ? 0 : -1;
    } else if (flag == FTW_F && S_ISREG(st->st_mode)) {
        FILE *in = fopen(path, "rb"), *out = in ? fopen(to, "wb") : NULL;
        char buf[65536];
        size_t n;
        while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
            if (fwrite(buf, 1, n, out) != n)
                break;
        rc = in && out && !ferror(in) && !ferror(out) ? 0 : -1;
        if (out && fclose(out) != 0)
            rc = -1;
        if (in)
            fclose(in);
    }
    if (rc < 0)
        weft__cli_fail("import: cannot copy %s to %s: %s", path, to,
                       strerror(errno));
    free(to);
    return rc < 0 ? -1 : 0;
}

/* The copy is the spool owner's, as everything weftd writes there. */
static uid_t chown_uid;
static gid_t chown_gid;

static int chown_entry(const char *path, const struct stat *st, int flag,
                       struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (lchown(path, chown_uid, chown_gid) != 0)
        fprintf(stderr, "weft import: warning: cannot give %s to uid %u: "
                "%s\n", path, (unsigned)chown_uid, strerror(errno));
    return 0;
}

static int copy_archive(const char *src, const char *dst)
{
    char *to = NULL;
    int rc;

    if (asprintf(&to, "%s/archive", dst) < 0)
        return -1;
    copy_to = to;
    copy_from_len = strlen(src);
    rc = nftw(src, copy_entry, 16, FTW_PHYS | FTW_ACTIONRETVAL);
    free(to);
    return rc == 0 ? 0 : -1;
}

/* Root or weftd's user: the rows into the catalog. */
static int store_direct(cli *c, imp *x, const char *anchor)
{
    char *spool = import_spool(c), *key = NULL, *dir = NULL, *path = NULL;
    char err[1024];
    struct stat st;
    int status = EXIT_FAIL;

    if (!spool)
        return EXIT_FAIL;
    if (stat(anchor, &st) != 0) {
        weft__cli_fail("import: %s: %s", anchor, strerror(errno));
        goto out;
    }
    x->r.row.uid = st.st_uid;
    if (c->copy) {
        struct stat sp;
        if (weft_spool_reserve(spool, x->r.row.name, time(NULL), &key, &dir,
                               err, sizeof err) < 0) {
            weft__cli_fail("import: %s", err);
            goto out;
        }
        if (copy_archive(x->dir, dir) < 0 ||
            asprintf(&path, "%s/archive", dir) < 0) {
            weft_rm_tree(dir);
            goto out;
        }
        x->r.row.path = path;
        x->r.row.bytes = weft__arc_bytes(path);
        if (geteuid() == 0 && stat(spool, &sp) == 0) {
            chown_uid = sp.st_uid;
            chown_gid = sp.st_gid;
            nftw(dir, chown_entry, 16, FTW_PHYS);
        }
        if (weft_share_tree(dir, x->r.row.uid, err, sizeof err) < 0)
            fprintf(stderr, "weft import: warning: %s\n", err);
    }
    if (weft_import_store(c->catalog_path, spool, x->r.row.uid, &x->r, &key,
                          err, sizeof err) < 0) {
        weft__cli_fail("import: %s", err);
        if (dir)
            weft_rm_tree(dir);
        goto out;
    }
    printf("imported %s as trace '%s' (key %s)%s%s\n", anchor, x->r.row.name,
           key, path ? ", copied to " : "", path ? path : "");
    status = EXIT_OK;
out:
    x->r.row.path = NULL;
    free(path);
    free(dir);
    free(key);
    free(spool);
    return status;
}

/* Anyone else: weftd stores the rows (import/import.h); here: a node's
 * own catalog, not its head's. */
static int store_asking(imp *x, int here)
{
    Weft__ImportTrace m;
    unsigned char *line = NULL;
    size_t len;
    int status;

    if (weft_import_to_msg(&x->r, &m) < 0)
        return weft__cli_fail("out of memory");
    status = weft__cli_ask_import(&m, here, &line, &len);
    if (status == EXIT_OK)
        fputs((const char *)line, stdout);
    free(line);
    weft_import_msg_free(&m);
    return status;
}

/* --tag K=V options as tags; EXIT_OK or a usage error. */
static int parse_tags(cli *c, imp *x)
{
    x->tags = calloc((size_t)c->ntags + 1, sizeof *x->tags);
    if (!x->tags)
        return weft__cli_fail("out of memory");
    for (int i = 0; i < c->ntags; i++) {
        const char *eq = strchr(c->tags[i], '=');
        size_t kl = eq ? (size_t)(eq - c->tags[i]) : 0;
        if (!eq || kl == 0 || kl > WEFT_IMPORT_MAX_TAG_KEY ||
            strspn(c->tags[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq"
                               "rstuvwxyz0123456789_.-") != kl)
            return weft__cli_usage("import", "--tag needs KEY=VALUE, KEY of "
                                   "1 to %d characters A-Z a-z 0-9 _ . - "
                                   "(not '%s')", WEFT_IMPORT_MAX_TAG_KEY,
                                   c->tags[i]);
        x->tags[i].key = strndup(c->tags[i], kl);
        x->tags[i].value = (char *)eq + 1;
        if (!x->tags[i].key)
            return weft__cli_fail("out of memory");
    }
    x->r.detail.tags = x->tags;
    x->r.detail.ntags = (size_t)c->ntags;
    return EXIT_OK;
}

int weft__cmd_import(cli *c)
{
    imp x = { 0 };
    char *anchor = NULL, *desc = NULL, *base;
    int status, asking;

    if (c->name_glob && !*c->name_glob)
        return weft__cli_usage("import", "--name needs a NAME");
    if ((status = parse_tags(c, &x)) != EXIT_OK)
        goto out;
    status = EXIT_FAIL;
    asking = weft__cli_asks(c, W_OK) ||
             access(c->catalog_path, F_OK) != 0;
    if (asking && c->copy) {
        weft__cli_fail("import: --copy needs the catalog writable (root or "
                       "weftd's user): weftd does not read your files for "
                       "you; without --copy the trace refers to the archive "
                       "where it is");
        goto out;
    }
    if (weft__arc_open(&x.a, c->args[0], &anchor) < 0) {
        weft__cli_fail("import: %s", anchor ? anchor : "out of memory");
        goto out;
    }
    free(anchor);
    if (!(anchor = realpath(c->args[0], NULL))) {
        weft__cli_fail("import: %s: %s", c->args[0], strerror(errno));
        goto out;
    }
    if (x.a.dups) {
        weft__cli_fail("import: %s has %" PRIu64 " duplicate definitions "
                       "(the first: %s), as EZTrace writes them; otf2-print "
                       "-Werror and the otf2 Python reader refuse such an "
                       "archive and which definition counts is a guess, so "
                       "weft does not catalog it", anchor, x.a.dups,
                       x.a.dup_first);
        goto out;
    }
    base = strrchr(anchor, '/') + 1;
    if (strcmp(base, "traces.otf2") != 0) {
        weft__cli_fail("import: %s: weft finds an archive as DIRECTORY/"
                       "traces.otf2 (the name libotf2, Score-P and weftd "
                       "give it), not %s", anchor, base);
        goto out;
    }
    if (!x.a.have_clock) {
        weft__cli_fail("import: %s has no ClockProperties: its times have "
                       "no unit", anchor);
        goto out;
    }
    x.dir = strndup(anchor, (size_t)(base - 1 - anchor));
    if (!x.dir || members_of(&x) < 0) {
        weft__cli_fail("out of memory");
        goto out;
    }
    if (read_events(&x, anchor) != EXIT_OK)
        goto out;
    if (report_rows(&x) < 0 || summary_rows(&x) < 0) {
        weft__cli_fail("out of memory");
        goto out;
    }
    /* The name: --name, else the archive's description, else the name
     * of its directory. */
    if (c->name_glob)
        x.name = weft__cli_xstrdup(c->name_glob);
    else if (OTF2_Reader_GetDescription(x.a.reader, &desc) == OTF2_SUCCESS &&
             desc && *desc)
        x.name = weft__cli_xstrdup(desc);
    else
        x.name = weft__cli_xstrdup(*x.dir ? strrchr(x.dir, '/') + 1 : "/");
    x.r.row.name = x.name;
    x.r.row.path = x.dir;
    x.r.row.state = (char *)(x.probs.n ? WEFT_STATE_PARTIAL
                                       : WEFT_STATE_COMPLETE);
    x.r.row.error = x.probs.n ? x.probs.text.s : NULL;
    x.r.row.locations = x.a.nlocs;
    x.r.row.timer_resolution = x.a.resolution;
    x.r.row.bytes = weft__arc_bytes(x.dir);
    x.r.detail.locations = x.locs;
    x.r.detail.nlocations = x.a.nlocs;
    if (x.probs.n)
        fprintf(stderr, "weft import: %u problem%s: the trace is partial\n",
                x.probs.n, x.probs.n == 1 ? "" : "s");
    status = asking ? store_asking(&x, !c->node)
                    : store_direct(c, &x, anchor);
out:
    for (int i = 0; x.tags && i < c->ntags; i++)
        free(x.tags[i].key);
    imp_free(&x);
    free(desc);
    free(anchor);
    return status;
}
