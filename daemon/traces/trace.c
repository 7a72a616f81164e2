/* trace.c - traces being recorded, their members, and the hand-over of a
 * finished trace to a worker thread for conversion and cataloguing.
 *
 * Catalog writes run on libuv's thread pool, conversions on the
 * converter (worker.h): at most max_conversions at once, the others
 * waiting their turn in convq.h's queue (round robin by owner), so a
 * burst of finished traces takes neither libuv's pool nor all the CPUs;
 * the loop thread only queues them. A trace is one run of a program: members are grouped by (owner,
 * name, run), so two launches with the same name are two traces,
 * concurrent or not. A finished trace leaves d->traces when
 * its conversion is queued and its run is remembered in d->ended_runs: a
 * member of that run that comes back late (after the grace period) is
 * refused instead of starting a new, otherwise empty trace. Members
 * without a run (older clients) are grouped by name, and a new run with
 * that name starts a new trace once the last one has left. Journals are
 * deleted only after the archive is written and its catalog row
 * committed. A conversion that fails for a cause outside the journals
 * (space, permissions, the catalog) keeps the trace in d->retrying and is
 * queued again by the tick timer after a delay that doubles from
 * WEFT_RETRY_MIN_MS to WEFT_RETRY_MAX_MS.
 *
 * Catalog (schema 2; the rows are built by catrow.c): the first Hello
 * of a trace queues its row as recording with that member's host,
 * command, job id and tags, so a trace is found by tag and host while it
 * records; the conversion job stores, in one transaction, the figures,
 * locations, one member row per rank (missing for ranks that never came
 * or did not say goodbye), the union of the members' tags (the lowest
 * rank's value wins) and the region profile that conversion computed.
 */
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "catrow.h"
#include "clock.h"
#include "convert.h"
#include "convq.h"
#include "frame.h"
#include "fsutil.h"
#include "jcache.h"
#include "live.h"
#include "log.h"
#include "spool.h"
#include "retain.h"
#include "userlim.h"
#include "weft_errors.h"
#include "worker.h"

#define WEFT_MAX_TRACE_NAME 1024
/* A conversion that failed for a cause that may go away (a full disk, an
 * unwritable directory, libotf2, the catalog) is tried again after this
 * long, doubling up to the maximum (ms). */
#define WEFT_RETRY_MIN_MS 2000
#define WEFT_RETRY_MAX_MS 600000

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

static void member_free(weft_member *m)
{
    if (!m)
        return;
    weft_jcache_forget(m);
    if (m->journal)
        weft_journal_close(m->journal);
    weft_memberin_free(&m->in);
    free(m->locs);
    free(m->host);
    free(m->ended);
    free(m->command);
    free(m->job_id);
    weft_catrow_free_tags(m->tags, m->ntags);
    free(m);
}

static void trace_free(weft_trace *t)
{
    if (!t)
        return;
    weft_quota_live(&t->d->quota, t->uid, -(int64_t)t->charged);
    for (uint32_t i = 0; i < t->mcap; i++)
        member_free(t->mtab[i]);
    free(t->mtab);
    free(t->name);
    free(t->run);
    free(t->key);
    free(t->dir);
    free(t->made.key);
    free(t->made.dir);
    free(t);
}

/* ---- the members table (trace.h): linear probing on a mixed rank ---- */

static uint32_t rank_slot(const weft_trace *t, uint32_t rank)
{
    uint32_t h = rank;

    h ^= h >> 16; /* murmur3's finalizer: strided ranks spread too */
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & (t->mcap - 1);
}

/* The slot of member `rank`, or the free slot where it would go. */
static uint32_t find_slot(const weft_trace *t, uint32_t rank)
{
    uint32_t i = rank_slot(t, rank);

    while (t->mtab[i] && t->mtab[i]->rank != rank)
        i = (i + 1) & (t->mcap - 1);
    return i;
}

weft_member *weft_trace_member(const weft_trace *t, uint32_t rank)
{
    return t->mcap ? t->mtab[find_slot(t, rank)] : NULL;
}

/* Adds m (its rank not in t yet), growing the table to keep it at most
 * half full. 0 or WEFT_ENOMEM. */
static int members_put(weft_trace *t, weft_member *m)
{
    if ((uint64_t)(t->joined + 1) * 2 > t->mcap) {
        uint32_t cap = t->mcap ? t->mcap * 2 : 16, old = t->mcap;
        weft_member **v = calloc(cap, sizeof *v), **prev = t->mtab;
        if (!v)
            return WEFT_ENOMEM;
        t->mtab = v;
        t->mcap = cap;
        for (uint32_t i = 0; i < old; i++)
            if (prev[i])
                t->mtab[find_slot(t, prev[i]->rank)] = prev[i];
        free(prev);
    }
    t->mtab[find_slot(t, m->rank)] = m;
    return 0;
}

/* Removes member `rank` (it is in t): the members after it in its probe
 * run move back, so that every lookup still finds its member. */
static void members_del(weft_trace *t, uint32_t rank)
{
    uint32_t mask = t->mcap - 1, i = find_slot(t, rank), j = i;

    t->mtab[i] = NULL;
    for (;;) {
        uint32_t home;
        j = (j + 1) & mask;
        if (!t->mtab[j])
            return;
        home = rank_slot(t, t->mtab[j]->rank);
        /* It stays if its home lies cyclically in (i, j]. */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        t->mtab[i] = t->mtab[j];
        t->mtab[j] = NULL;
        i = j;
    }
}

static int member_rank_cmp(const void *a, const void *b)
{
    uint32_t x = (*(weft_member *const *)a)->rank,
             y = (*(weft_member *const *)b)->rank;

    return (x > y) - (x < y);
}

weft_member **weft_trace_members(const weft_trace *t)
{
    weft_member **v = malloc((t->joined ? t->joined : 1) * sizeof *v);
    uint32_t n = 0;

    if (!v)
        return NULL;
    for (uint32_t i = 0; i < t->mcap; i++)
        if (t->mtab[i])
            v[n++] = t->mtab[i];
    qsort(v, n, sizeof *v, member_rank_cmp);
    return v;
}

/* Hello.run, "" when absent (an older client). */
static const char *hello_run(const Weft__Hello *h)
{
    return h->run ? h->run : "";
}

static void ended_run_free(weft_ended_run *e)
{
    free(e->name);
    free(e->run);
    free(e->key);
    free(e);
}

/* Remembers the run of t, which stops recording now (once per trace;
 * nothing for a trace without a run). Out of memory: not remembered, a
 * late member then starts a new trace as before runs existed. */
static void remember_ended(weft_trace *t)
{
    weft_daemon *d = t->d;
    weft_ended_run *e, **pp;

    if (t->ended || !t->run || !t->run[0] || !t->name)
        return;
    t->ended = 1;
    e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(t->name)) || !(e->run = strdup(t->run)) ||
        !(e->key = strdup(t->key))) {
        if (e)
            ended_run_free(e);
        return;
    }
    e->uid = t->uid;
    e->partial = t->goodbyes < t->size;
    e->next = d->ended_runs;
    d->ended_runs = e;
    if (++d->nended_runs <= WEFT_ENDED_RUNS_MAX)
        return;
    for (pp = &d->ended_runs; (*pp)->next; pp = &(*pp)->next)
        ;
    ended_run_free(*pp);
    *pp = NULL;
    d->nended_runs--;
}

typedef struct load_ctx {
    weft_daemon *d;
    weft_ended_run **tail;    /* where the next (older) one goes */
} load_ctx;

static int load_ended(const weft_trace_row *row, void *arg)
{
    load_ctx *x = arg;
    weft_ended_run *e;

    if (!row->run || !row->run[0] ||
        x->d->nended_runs >= WEFT_ENDED_RUNS_MAX)
        return 0;
    if (strcmp(row->state, WEFT_STATE_COMPLETE) != 0 &&
        strcmp(row->state, WEFT_STATE_PARTIAL) != 0 &&
        strcmp(row->state, WEFT_STATE_FAILED) != 0)
        return 0; /* recording or converting: the spool has it */
    e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(row->name)) || !(e->run = strdup(row->run)) ||
        !(e->key = strdup(row->key))) {
        if (e)
            ended_run_free(e);
        return WEFT_ENOMEM;
    }
    e->uid = row->uid;
    e->partial = strcmp(row->state, WEFT_STATE_COMPLETE) != 0;
    *x->tail = e;
    x->tail = &e->next;
    x->d->nended_runs++;
    return 0;
}

int weft_trace_load_ended_runs(weft_daemon *d)
{
    weft_list_filter f = { 0 };
    weft_catalog *cat = NULL;
    load_ctx x = { d, &d->ended_runs };
    char *msg = NULL;
    int rc;

    while (*x.tail)
        x.tail = &(*x.tail)->next;
    rc = weft_catalog_open(d->cfg.catalog, 1, &cat, &msg);
    if (rc == 0) {
        f.sort = WEFT_SORT_CREATED;
        f.limit = WEFT_ENDED_RUNS_MAX;
        rc = weft_catalog_query(cat, &f, load_ended, &x);
        if (rc < 0)
            msg = strdup(weft_catalog_errmsg(cat));
        weft_catalog_close(cat);
    }
    if (rc < 0)
        weft_dlog(d, WEFT_LOG_WARNING, "cannot read the runs of ended traces "
                  "from the catalog (%s); processes of those runs that come "
                  "back start new traces", msg ? msg : weft_strerror(rc));
    else if (d->nended_runs)
        weft_dlog(d, WEFT_LOG_DEBUG, "%" PRIu64 " runs of ended traces "
                  "remembered from the catalog", d->nended_runs);
    free(msg);
    return rc;
}

static const weft_ended_run *find_ended(const weft_daemon *d, uint32_t uid,
                                        const char *name, const char *run)
{
    for (const weft_ended_run *e = d->ended_runs; e; e = e->next)
        if (e->uid == uid && strcmp(e->run, run) == 0 &&
            strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* ---- catalog row of a new trace (worker thread) ---- */

typedef struct begin_job {
    uv_work_t req;
    weft_daemon *d;
    weft_trace_row row;
    weft_tag *tags;      /* owned copies */
    size_t ntags;
    char *catalog;
    int rc;
    char err[512];
} begin_job;

static void begin_work(uv_work_t *req)
{
    begin_job *j = req->data;
    weft_catalog *cat = NULL;
    char *msg = NULL;

    j->rc = weft_catalog_open(j->catalog, 0, &cat, &msg);
    if (j->rc == 0) {
        j->rc = weft_catalog_trace_begin(cat, &j->row);
        if (j->rc == 0 && j->ntags)
            j->rc = weft_catalog_trace_add_tags(cat, j->row.id, j->tags,
                                                j->ntags);
        if (j->rc < 0)
            snprintf(j->err, sizeof j->err, "%s", weft_catalog_errmsg(cat));
        weft_catalog_close(cat);
    } else {
        snprintf(j->err, sizeof j->err, "%s", msg ? msg : "?");
        free(msg);
    }
}

static void begin_done(uv_work_t *req, int status)
{
    begin_job *j = req->data;

    j->d->jobs--;
    if (j->rc < 0)
        weft_dlog_ctx(j->d, WEFT_LOG_ERROR, (&(const weft_log_ctx){
                          j->row.name, j->row.key, -1, NULL }),
                      "trace '%s': cannot record it in the catalog: %s",
                      j->row.name, j->err);
    weft_catalog_trace_free(&j->row);
    weft_catrow_free_tags(j->tags, j->ntags);
    free(j->catalog);
    free(j);
}

/* Records t in the catalog as recording, with what its members who
 * joined so far say (hosts, command, job id, tags), so that a recording
 * trace is found by tag and host. */
static void queue_begin(weft_trace *t)
{
    weft_daemon *d = t->d;
    begin_job *j = calloc(1, sizeof *j);

    if (!j)
        return;
    j->d = d;
    j->req.data = j;
    if (weft_catrow_recording(t, &j->row, &j->tags, &j->ntags) < 0 ||
        !(j->catalog = strdup(d->cfg.catalog)) ||
        uv_queue_work(d->loop, &j->req, begin_work, begin_done) != 0) {
        begin_done(&j->req, 0);
        d->jobs++; /* begin_done decremented it */
        return;
    }
    d->jobs++;
}

/* ---- conversion (worker thread) ---- */

/* A finished trace's conversion, on the converter (worker.h): at most
 * max_conversions run at once, the others wait in its queue. */
typedef struct convert_job {
    weft_work work;             /* first: the job is its work */
    weft_convq_item turn;       /* its place in d->convq (convq.h) */
    weft_trace *t;
    char *catalog;
    char *archive;
    const char *state;
    char reason[1024];          /* why partial, "" if complete */
    unsigned threads;           /* cfg.convert_threads when it started */
    uint64_t max_writers;       /* from cfg.convert_memory then */
    int sync;                   /* durability = fsync when it started */
    uint64_t retry_delay;       /* ms before the next attempt if this one
                                   fails for a cause a retry may get past */
    weft_convert_result res;
    int rc;
    char err[768];
    char share_err[384];        /* the owner cannot read the archive: why */
    int64_t finished;
} convert_job;

/* Removes the files of dir named as journals ("rank-*.wj", malformed
 * ones too, as weft_journal_name_parse tells them). */
static void remove_journals(const char *dir)
{
    DIR *dp = opendir(dir);
    struct dirent *de;
    uint32_t rank;

    if (!dp)
        return;
    while ((de = readdir(dp)) != NULL) {
        if (weft_journal_name_parse(de->d_name, &rank) != 0) {
            char *p = weft_path_join(dir, de->d_name);
            if (p)
                unlink(p);
            free(p);
        }
    }
    closedir(dp);
}

/* Failures that a retry may get past: their cause is outside the
 * journals (space, permissions, memory, the catalog, libotf2). */
static int retryable(int rc)
{
    return rc == WEFT_EIO || rc == WEFT_EOTF2 || rc == WEFT_ENOMEM ||
           rc == WEFT_EDB;
}

/* Worker thread: stores the trace's final rows in one transaction;
 * removes the journals once they are committed and the archive written. */
static void store_result(convert_job *j, weft_catalog *cat)
{
    weft_trace *t = j->t;
    weft_catrow_final f;
    int made = weft_catrow_final_make(t, &j->res, &f), rc = made;

    f.row.state = (char *)j->state;
    f.row.finished = j->finished;
    f.row.path = j->archive;
    f.row.error = j->rc < 0 ? j->res.error : j->reason[0] ? j->reason : NULL;
    /* weft wait goes on waiting through a failure weftd will retry (at
     * its next start if it is stopping now). */
    if (j->rc < 0 && retryable(j->rc))
        f.row.retry_at = j->finished +
                         (int64_t)((j->retry_delay + 999) / 1000);
    if (rc == 0)
        rc = weft_catalog_trace_finish_detail(cat, &f.row, &f.detail);
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "catalog: %s",
                 made < 0 ? "out of memory" : weft_catalog_errmsg(cat));
        if (j->rc == 0)
            j->rc = rc;
    } else if (j->rc == 0) {
        remove_journals(t->dir);
    } else {
        snprintf(j->err, sizeof j->err, "%s", j->res.error);
    }
    weft_catrow_final_free(&f);
}

static void convert_work(weft_work *w)
{
    convert_job *j = (convert_job *)w;
    weft_trace *t = j->t;
    weft_convert_input in = { t->dir, j->archive, t->name, t->size,
                              j->threads, j->sync, j->max_writers };
    weft_catalog *cat = NULL;
    char *msg = NULL;
    int rc;

    rc = weft_catalog_open(j->catalog, 0, &cat, &msg);
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "catalog: %s", msg ? msg : "?");
        free(msg);
        j->rc = rc;
        return;
    }
    weft_live_store_final(t, cat, (int64_t)time(NULL));
    weft_catalog_trace_set_state(cat, t->key, WEFT_STATE_CONVERTING);
    /* An archive left by an interrupted conversion is rebuilt from the
     * journals. */
    weft_rm_tree(j->archive);
    j->rc = weft_convert_trace(&in, &j->res);
    j->finished = (int64_t)time(NULL);
    if (j->rc < 0) {
        j->state = WEFT_STATE_FAILED;
        /* Converted again from the journals when retried. */
        weft_rm_tree(j->archive);
    } else {
        weft_catrow_partial_reason(t, &j->res, j->reason, sizeof j->reason);
        j->state = j->reason[0] ? WEFT_STATE_PARTIAL : WEFT_STATE_COMPLETE;
        /* Before the row says so: once it is complete, its owner reads
         * it (ask.h). */
        weft_share_tree(t->dir, t->uid, j->share_err, sizeof j->share_err);
    }
    store_result(j, cat);
    weft_catalog_close(cat);
}

static void convert_done(weft_work *w)
{
    convert_job *j = (convert_job *)w;
    weft_trace *t = j->t;
    weft_daemon *d = t->d;
    weft_trace_conversions n = weft_trace_count_conversions(d);

    d->jobs--;
    d->converting--;
    if (n.peak > d->conversions_peak)
        d->conversions_peak = n.peak;
    if (j->rc < 0 && retryable(j->rc) && !d->stopping) {
        t->retry_delay = j->retry_delay;
        t->retry_at = uv_now(d->loop) + t->retry_delay;
        t->next = d->retrying;
        d->retrying = t;
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' (%s): conversion failed: "
                  "%s; journals kept, trying again in %" PRIu64 " s",
                  t->name, t->key, j->err, t->retry_delay / 1000);
        j->t = NULL;
    } else if (j->rc < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s' (%s): conversion failed: %s",
                  t->name, t->key, j->err);
    } else {
        weft_retain_charge(d, t->uid, j->res.bytes);
        if (j->share_err[0])
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': %s", t->name,
                      j->share_err);
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s' %s: %" PRIu64 " events, %zu "
                  "locations, archive %s/traces.otf2%s%s", t->name, j->state,
                  j->res.events, j->res.nlocations, j->archive,
                  j->reason[0] ? "; " : "", j->reason);
        if (j->res.passes > j->res.members)
            weft_tlog(t, WEFT_LOG_INFO, "trace '%s': convert_memory allows "
                      "%" PRIu64 " locations written at once: %" PRIu64
                      " passes over %u journals (at most %" PRIu64 " event "
                      "writers open)", t->name, j->max_writers,
                      j->res.passes, j->res.members, j->res.writers_peak);
        if (j->res.nesting_added || j->res.nesting_unmatched)
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': %" PRIu64 " Leave "
                      "and Enter events added and %" PRIu64 " Leaves of "
                      "regions not open left out so that every location "
                      "nests (regions still open where a thread ended, as "
                      "when a process exits while threads wait in a call, "
                      "or is killed; gaps; lost records)",
                      t->name, j->res.nesting_added,
                      j->res.nesting_unmatched);
    }
    weft_convert_result_free(&j->res);
    trace_free(j->t);
    free(j->catalog);
    free(j->archive);
    free(j);
    weft_convq_next(d);  /* its slot is free */
}

/* Queues j for a converter slot, in turn with other users' (convq.h).
 * 0 or a WEFT_E* code. */
static int queue_conversion(weft_daemon *d, convert_job *j)
{
    weft_trace_conversions n = weft_trace_count_conversions(d);

    if (n.running + n.queued >= d->cfg.max_conversions)
        weft_tlog(j->t, WEFT_LOG_DEBUG, "trace '%s': queued behind %u "
                  "conversions (max_conversions %" PRIu64 " at once)",
                  j->t->name, n.running + n.queued, d->cfg.max_conversions);
    j->turn.work = &j->work;
    j->turn.run = convert_work;
    j->turn.done = convert_done;
    return weft_convq_submit(d, &j->turn, j->t->uid);
}

static void unlink_trace(weft_trace *t)
{
    weft_trace **pp = &t->d->traces;

    while (*pp && *pp != t)
        pp = &(*pp)->next;
    if (*pp)
        *pp = t->next;
    t->next = NULL;
}

static void start_conversion(weft_trace *t)
{
    weft_daemon *d = t->d;
    convert_job *j;

    remember_ended(t);
    unlink_trace(t);
    for (uint32_t i = 0; i < t->mcap; i++) {
        weft_member *m = t->mtab[i];
        if (m && (m->in.sync_running || m->pending)) {
            /* weft_trace_synced or weft_trace_member_written resumes */
            t->convert_when_synced = 1;
            return;
        }
    }
    t->convert_when_synced = 0;
    j = calloc(1, sizeof *j);
    for (uint32_t i = 0; i < t->mcap; i++) {
        weft_member *m = t->mtab[i];
        if (m && m->journal) {
            weft_jcache_forget(m);
            weft_journal_close(m->journal);
            m->journal = NULL;
        }
    }
    if (!j || !(j->catalog = strdup(d->cfg.catalog)) ||
        !(j->archive = weft_path_join(t->dir, "archive"))) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': out of memory; journals "
                  "kept in %s", t->name, t->dir);
        if (j) {
            free(j->catalog);
            free(j);
        }
        trace_free(t);
        return;
    }
    j->t = t;
    j->threads = (unsigned)d->cfg.convert_threads;
    j->max_writers = weft_convert_writers(d->cfg.convert_memory);
    j->sync = d->cfg.durability == WEFT_DURABLE_FSYNC;
    j->retry_delay = t->retry_delay ? t->retry_delay * 2 : WEFT_RETRY_MIN_MS;
    if (j->retry_delay > WEFT_RETRY_MAX_MS)
        j->retry_delay = WEFT_RETRY_MAX_MS;
    if (t->goodbyes == t->size)
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s': all %u members done, "
                  "converting", t->name, t->size);
    if (queue_conversion(d, j) < 0) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': cannot start a thread to "
                  "convert it; journals kept in %s", t->name, t->dir);
        free(j->catalog);
        free(j->archive);
        free(j);
        trace_free(t);
        return;
    }
    d->jobs++;
    d->converting++;
}

/* ---- joining and leaving ----
 *
 * A Hello joins in three steps (trace.h): in memory on the loop thread;
 * the disk work (mkdir of a new trace's directory, the journal's open and
 * header) on the journal writer's open thread, one member after the
 * other, so a trace's directory exists before its members' journals are
 * opened in it; the result back on the loop thread. A new trace is in
 * d->traces from the first step on, so the run's other members join it
 * while its directory is being made.
 */

static int check_hello(const weft_daemon *d, const Weft__Hello *h, char *err,
                       size_t errlen)
{
    size_t n = strlen(h->trace);

    if (n == 0)
        return fail(err, errlen, WEFT_EINVAL, "Hello: empty trace name");
    if (n > WEFT_MAX_TRACE_NAME)
        return fail(err, errlen, WEFT_EINVAL, "Hello: trace name of %zu "
                    "bytes exceeds %d", n, WEFT_MAX_TRACE_NAME);
    if (h->size == 0 || h->size > d->cfg.max_members)
        return fail(err, errlen, WEFT_ELIMIT, "Hello: trace size %u is not "
                    "between 1 and max_members (%" PRIu64 ")", h->size,
                    d->cfg.max_members);
    if (h->rank >= h->size)
        return fail(err, errlen, WEFT_EINVAL, "Hello: rank %u is not below "
                    "the trace size %u", h->rank, h->size);
    if (h->timer_resolution == 0)
        return fail(err, errlen, WEFT_EINVAL, "Hello: timer_resolution is 0");
    if (!weft_clock_name(h->clock, h->timer_resolution))
        return fail(err, errlen, WEFT_EINVAL, "Hello: clock '%.32s' is not "
                    "monotonic or tsc", h->clock);
    n = strlen(hello_run(h));
    if (n > WEFT_MAX_TRACE_NAME)
        return fail(err, errlen, WEFT_EINVAL, "Hello: run id of %zu bytes "
                    "exceeds %d", n, WEFT_MAX_TRACE_NAME);
    if ((n = strlen(h->hostname)) > WEFT_MAX_HOSTNAME)
        return fail(err, errlen, WEFT_EINVAL, "Hello: host name of %zu "
                    "bytes exceeds %d", n, WEFT_MAX_HOSTNAME);
    if ((n = strlen(h->command)) > WEFT_MAX_COMMAND)
        return fail(err, errlen, WEFT_EINVAL, "Hello: command line of %zu "
                    "bytes exceeds %d", n, WEFT_MAX_COMMAND);
    if ((n = strlen(h->job_id)) > WEFT_MAX_JOB_ID)
        return fail(err, errlen, WEFT_EINVAL, "Hello: job id of %zu bytes "
                    "exceeds %d", n, WEFT_MAX_JOB_ID);
    return 0;
}

/* A new trace of h's run, in memory only: its directory is made by its
 * first member's open job (weft_member_open), so that the loop thread
 * never waits for the disk; its key and dir are the ones that job tries
 * first. Linked into d->traces, so that the run's other members find it
 * meanwhile. NULL when out of memory. */
static weft_trace *trace_new(weft_daemon *d, const Weft__Hello *h,
                             uint32_t uid)
{
    weft_trace *t = calloc(1, sizeof *t);
    time_t now = time(NULL);
    char *traces = NULL;

    if (!t)
        return NULL;
    t->d = d;
    t->uid = uid;
    t->size = h->size;
    t->created = (int64_t)now;
    t->name = strdup(h->trace);
    t->run = strdup(hello_run(h));
    t->made.serial = weft_spool_key_random(); /* unguessable: spool.h */
    t->key = weft_spool_key_make(h->trace, now, t->made.serial);
    traces = weft_path_join(d->cfg.spool, "traces");
    if (!t->name || !t->run || !t->key || !traces ||
        !(t->dir = weft_path_join(traces, t->key))) {
        free(traces);
        trace_free(t);
        return NULL;
    }
    free(traces);
    t->next = d->traces;
    d->traces = t;
    return t;
}

/* Open thread: makes t's directory, SPOOL/traces/KEY, with the key
 * trace_new chose or, when an earlier run of weftd took it, the next
 * serial's; sets t->made. */
static void make_dir(weft_trace *t)
{
    weft_trace_made *md = &t->made;
    char *traces = strdup(t->dir), *key = NULL, *dir = NULL;

    if (!traces || !strrchr(traces, '/')) {
        md->rc = fail(md->err, sizeof md->err, WEFT_ENOMEM, "out of memory");
        goto out;
    }
    *strrchr(traces, '/') = 0;
    if (weft_mkdir_p(traces, 0755, WEFT_TRACES_DIR_MODE) != 0) {
        md->rc = fail(md->err, sizeof md->err, WEFT_EIO, "cannot create "
                      "trace directory under %s: %s", traces,
                      strerror(errno));
        goto out;
    }
    /* A directory of its own: keys of an earlier run may be taken. */
    for (int tries = 0;; tries++) {
        free(key);
        free(dir);
        dir = NULL;
        key = tries ? weft_spool_key_make(t->name, (time_t)t->created,
                               md->serial + (uint64_t)tries)
                    : strdup(t->key);
        if (!key || !(dir = weft_path_join(traces, key))) {
            md->rc = fail(md->err, sizeof md->err, WEFT_ENOMEM,
                          "out of memory");
            goto out;
        }
        if (mkdir(dir, WEFT_TRACE_DIR_MODE) == 0) {
            md->serial += (uint64_t)tries;
            break;
        }
        if (errno != EEXIST || tries == 1000) {
            md->rc = fail(md->err, sizeof md->err, WEFT_EIO, "cannot create "
                          "trace directory %s: %s", dir, strerror(errno));
            goto out;
        }
    }
    md->key = key;
    md->dir = dir;
    key = dir = NULL;
    md->rc = 1;
out:
    free(key);
    free(dir);
    free(traces);
}

/* Loop thread: the job that made t's directory is back. On a collision
 * t takes the key that was used instead. */
static void adopt_dir(weft_trace *t)
{
    char *key, *dir;

    if (strcmp(t->dir, t->made.dir) != 0 &&
        (key = strdup(t->made.key)) != NULL &&
        (dir = strdup(t->made.dir)) != NULL) {
        free(t->key);
        free(t->dir);
        t->key = key;
        t->dir = dir;
    }
    weft_tlog(t, WEFT_LOG_INFO, "trace '%s': new, %u members, run %s, "
              "spool %s", t->name, t->size, t->run[0] ? t->run : "-",
              t->dir);
}

/* The member of h's rank of t, in memory (copies of what its Hello says
 * for the catalog): neither in t yet nor with a journal. 0 or
 * WEFT_ENOMEM. */
static int member_alloc(weft_trace *t, const Weft__Hello *h,
                        weft_member **out, char *err, size_t errlen)
{
    weft_member *m = calloc(1, sizeof *m);

    if (!m || !(m->host = strdup(h->hostname)) ||
        !(m->command = strdup(h->command)) ||
        !(m->job_id = strdup(h->job_id)) ||
        (h->n_tags && !(m->tags = calloc(h->n_tags, sizeof *m->tags)))) {
        member_free(m);
        return fail(err, errlen, WEFT_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < h->n_tags; i++) {
        m->tags[i].key = strdup(h->tags[i]->key);
        m->tags[i].value = strdup(h->tags[i]->value);
        m->ntags = i + 1;
        if (!m->tags[i].key || !m->tags[i].value) {
            member_free(m);
            return fail(err, errlen, WEFT_ENOMEM, "out of memory");
        }
    }
    m->protocol_version = h->protocol_version;
    m->start_time = h->clock_at_realtime;
    m->resolution = h->timer_resolution;
    m->trace = t;
    m->rank = h->rank;
    m->pid = h->pid;
    *out = m;
    return 0;
}

/* Opens m's journal, dir/rank-R.wj, for appending (an existing journal is
 * kept: a restart resumes it; restoring, a damaged one is kept as it
 * is, with no journal open). Any thread. */
static int open_journal(weft_member *m, const char *dir, int restoring,
                        char *err, size_t errlen)
{
    char name[32], *path;
    int rc;

    weft_journal_name(name, sizeof name, m->rank);
    path = weft_path_join(dir, name);
    rc = path ? weft_journal_open(path, &m->journal, NULL) : WEFT_ENOMEM;
    if (rc == WEFT_ECORRUPT && restoring) {
        /* Acknowledged data lies beyond the damage: keep the file as it
         * is for conversion to report, and let nobody append to it. */
        m->damaged = 1;
        rc = 0;
    }
    if (rc < 0)
        fail(err, errlen, rc, "cannot open journal %s: %s",
             path ? path : name, rc == WEFT_EIO ? strerror(errno)
                                                : weft_strerror(rc));
    free(path);
    return rc;
}

/* A process of run e, which has ended, says Hello again (rank): refused
 * for good (not transient: the client stops tracing and says this).
 * Returns WEFT_ECLOSED with err. */
static int refuse_ended(const weft_ended_run *e, uint32_t rank, char *err,
                        size_t errlen)
{
    if (e->partial)
        return fail(err, errlen, WEFT_ECLOSED, "trace '%s' (run %s) has "
                    "already ended: weftd gave up waiting for its missing "
                    "processes and converted it as partial (%s); rank %u "
                    "cannot join it any more", e->name, e->run, e->key, rank);
    return fail(err, errlen, WEFT_ECLOSED, "trace '%s' (run %s) has already "
                "ended: all its processes said goodbye (%s); rank %u cannot "
                "join it again", e->name, e->run, e->key, rank);
}

/* Member m of t says Hello again: 0 if it may resume where its journal
 * is, else the WEFT_E* code with err (connected already, finished, its
 * last batches still being written, its journal damaged). */
static int check_rejoin(const weft_trace *t, const weft_member *m, char *err,
                        size_t errlen)
{
    if (m->conn)
        return fail(err, errlen, WEFT_EEXIST, "rank %u of trace '%s' is "
                    "already connected (host %s, pid %u)", m->rank, t->name,
                    m->host, m->pid);
    if (m->said_goodbye)
        return fail(err, errlen, WEFT_EEXIST, "rank %u of trace '%s' has "
                    "already finished", m->rank, t->name);
    if (m->pending)  /* HelloAck must report what is journaled */
        return fail(err, errlen, WEFT_EEXIST, "rank %u of trace '%s': what "
                    "its previous connection sent is still being written to "
                    "the journal; try again", m->rank, t->name);
    if (m->damaged)
        return fail(err, errlen, WEFT_ECORRUPT, "the journal of rank %u of "
                    "trace '%s' is damaged; the trace cannot go on", m->rank,
                    t->name);
    return 0;
}

int weft_trace_join_begin(weft_daemon *d, const Weft__Hello *h, uint32_t uid,
                          weft_member **out, enum weft_limit *limit,
                          char *err, size_t errlen)
{
    const char *run = hello_run(h);
    const weft_ended_run *e;
    weft_trace *t;
    weft_member *m;
    int rc, created = 0;

    if (limit)
        *limit = WEFT_LIMIT_NONE;
    rc = check_hello(d, h, err, errlen);
    if (rc < 0) {
        if (rc == WEFT_ELIMIT && limit) /* the one limit it checks */
            *limit = WEFT_LIMIT_MAX_MEMBERS;
        return rc;
    }
    for (t = d->traces; t; t = t->next)
        if (t->uid == uid && t->run && strcmp(t->run, run) == 0 &&
            strcmp(t->name, h->trace) == 0)
            break;
    if (t && t->size != h->size)
        return fail(err, errlen, WEFT_EINVAL, "trace '%s' has %u members but "
                    "this process says %u", t->name, t->size, h->size);
    if (!t && run[0] && (e = find_ended(d, uid, h->trace, run)) != NULL)
        return refuse_ended(e, h->rank, err, errlen);
    if (!t) {
        uint64_t mine = 0;
        for (weft_trace *o = d->traces; o; o = o->next)
            mine += o->uid == uid;
        if (mine >= d->cfg.max_traces_per_user) {
            if (limit)
                *limit = WEFT_LIMIT_MAX_TRACES_PER_USER;
            return fail(err, errlen, WEFT_ELIMIT, "uid %u has %" PRIu64
                        " traces recording already: max_traces_per_user is "
                        "%" PRIu64, uid, mine, d->cfg.max_traces_per_user);
        }
        if ((rc = weft_retain_check_user(d, uid, err, errlen)) < 0) {
            if (limit)
                *limit = WEFT_LIMIT_MAX_USER_SPOOL_BYTES;
            return rc;
        }
        if ((rc = weft_diskres_check(&d->diskres, d->cfg.spool,
                                     d->cfg.min_free_spool_bytes,
                                     uv_now(d->loop),
                                     weft_quota_promised(&d->quota), 0,
                                     err, errlen)) < 0) {
            if (limit)
                *limit = WEFT_LIMIT_MIN_FREE_SPOOL_BYTES;
            return rc;
        }
        created = 1;
        if (!(t = trace_new(d, h, uid)))
            return fail(err, errlen, WEFT_ENOMEM, "out of memory");
    }
    m = weft_trace_member(t, h->rank);
    if (m) {
        if ((rc = check_rejoin(t, m, err, errlen)) < 0)
            return rc;
        /* The same member coming back: resume where the journal is. */
        t->connected++;
        t->idle_since = 0;
        *out = m;
        return 0;
    }
    if ((rc = weft_userlim_members(d, uid, err, errlen)) < 0) {
        if (limit)
            *limit = WEFT_LIMIT_MAX_MEMBERS_PER_USER;
        if (created) {
            unlink_trace(t);
            trace_free(t);
        }
        return rc;
    }
    rc = member_alloc(t, h, &m, err, errlen);
    if (rc == 0 && (rc = members_put(t, m)) < 0) {
        member_free(m);
        fail(err, errlen, rc, "out of memory");
    }
    if (rc < 0) {
        if (created) { /* nothing of it reached the disk */
            unlink_trace(t);
            trace_free(t);
        }
        return rc;
    }
    m->makes_dir = created;
    t->joined++;
    t->connected++;
    t->idle_since = 0;
    *out = m;
    return 1;
}

int weft_member_open(weft_member *m, char *err, size_t errlen)
{
    weft_trace *t = m->trace;

    if (m->makes_dir)
        make_dir(t);
    if (t->made.rc < 0)
        return fail(err, errlen, t->made.rc, "%s", t->made.err);
    /* A trace restored at start has its directory, and no made.dir. */
    return open_journal(m, t->made.dir ? t->made.dir : t->dir, 0, err,
                        errlen);
}

void weft_trace_join_end(weft_member *m, int rc, int connected)
{
    weft_trace *t = m->trace;
    int made = m->makes_dir && t->made.rc > 0;

    m->makes_dir = 0;
    if (made)
        adopt_dir(t);
    if (rc < 0) { /* the rank is not taken */
        members_del(t, m->rank);
        t->joined--;
        if (connected)
            t->connected--;
        member_free(m);
    }
    if (t->made.rc < 0) {
        /* Its directory could not be made: a later Hello starts the run
         * afresh; the members that joined meanwhile fail the same way. */
        unlink_trace(t);
        if (t->joined == 0)
            trace_free(t);
        return;
    }
    if (made)
        queue_begin(t); /* with this member's host, command and tags */
    if (rc < 0) {
        /* A trace this Hello just made has nobody connected: let the
         * grace period reclaim it rather than keep it recording. */
        if (t->connected == 0 && !t->idle_since)
            t->idle_since = uv_now(t->d->loop);
        weft_trace_synced(t); /* a conversion may wait for this job */
    }
}

int weft_trace_join(weft_daemon *d, const Weft__Hello *h, uint32_t uid,
                    weft_member **out, char *err, size_t errlen)
{
    weft_member *m = NULL;
    int rc = weft_trace_join_begin(d, h, uid, &m, NULL, err, errlen);

    if (rc == 1) {
        rc = weft_member_open(m, err, errlen);
        weft_trace_join_end(m, rc, 1);
    }
    if (rc < 0)
        return rc;
    *out = m;
    return 0;
}

/* ---- recovery (see recover.c) ---- */

weft_trace *weft_trace_restore(weft_daemon *d, const char *key,
                               const char *dir, int64_t created, char *err,
                               size_t errlen)
{
    weft_trace *t = calloc(1, sizeof *t);

    if (!t || !(t->key = strdup(key)) || !(t->dir = strdup(dir))) {
        trace_free(t);
        fail(err, errlen, WEFT_ENOMEM, "out of memory");
        return NULL;
    }
    t->d = d;
    t->created = created;
    t->next = d->traces;
    d->traces = t;
    return t;
}

int weft_trace_restore_member(weft_trace *t, const Weft__Hello *h,
                              weft_member **out, char *err, size_t errlen)
{
    weft_member *m = NULL;
    int rc = check_hello(t->d, h, err, errlen);

    if (rc < 0)
        return rc;
    if (!t->name) { /* the first journal names the trace */
        t->name = strdup(h->trace);
        t->run = strdup(hello_run(h));
        if (!t->name || !t->run)
            return fail(err, errlen, WEFT_ENOMEM, "out of memory");
        t->size = h->size;
        t->uid = h->uid;
    }
    if (strcmp(t->name, h->trace) != 0 || t->size != h->size ||
        strcmp(t->run, hello_run(h)) != 0)
        return fail(err, errlen, WEFT_ECORRUPT, "Hello of trace '%s' (run "
                    "'%s') with %u members in the directory of trace '%s' "
                    "(run '%s') with %u", h->trace, hello_run(h), h->size,
                    t->name, t->run, t->size);
    if (weft_trace_member(t, h->rank))
        return fail(err, errlen, WEFT_ECORRUPT, "a second journal for rank "
                    "%u", h->rank);
    rc = member_alloc(t, h, &m, err, errlen);
    if (rc == 0 && (rc = open_journal(m, t->dir, 1, err, errlen)) == 0 &&
        (rc = members_put(t, m)) < 0)
        fail(err, errlen, rc, "out of memory");
    if (rc == 0 && m->journal) /* no descriptor until it is written */
        weft_journal_park(m->journal);
    if (rc < 0) {
        member_free(m);
        return rc;
    }
    t->joined++;
    *out = m;
    return 0;
}

void weft_trace_abandon(weft_trace *t)
{
    unlink_trace(t);
    trace_free(t);
}

void weft_trace_restored(weft_trace *t)
{
    weft_daemon *d = t->d;
    unsigned damaged = 0;

    if (t->joined == 0) {
        /* Nothing readable: keep the files for inspection, forget it. */
        unlink_trace(t);
        trace_free(t);
        return;
    }
    for (uint32_t i = 0; i < t->mcap; i++) {
        if (t->mtab[i] && t->mtab[i]->said_goodbye)
            t->goodbyes++;
        if (t->mtab[i] && t->mtab[i]->damaged)
            damaged++;
    }
    queue_begin(t); /* in case weftd died before the row was written */
    if (damaged) {
        weft_tlog(t, WEFT_LOG_ERROR, "trace '%s': %u member journals are "
                  "damaged in the middle (not a torn tail); converting now, "
                  "the catalog will say where", t->name, damaged);
        start_conversion(t);
        return;
    }
    if (t->goodbyes == t->size) {
        start_conversion(t);
        return;
    }
    weft_tlog(t, WEFT_LOG_INFO, "trace '%s': %u of %u members done; waiting "
              "up to %" PRIu64 " s for the others to reconnect", t->name,
              t->goodbyes, t->size, d->cfg.grace_period);
    t->idle_since = uv_now(d->loop);
}

int weft_member_location(weft_member *m, uint32_t loc, char *err,
                         size_t errlen)
{
    uint64_t max = m->trace->d->cfg.max_locations;
    weft_loc_state *p;

    if (loc < m->nlocs)
        return 0;
    if (loc >= max)
        return fail(err, errlen, WEFT_ELIMIT, "thread %u exceeds "
                    "max_locations (%" PRIu64 ")", loc, max);
    p = realloc(m->locs, (size_t)(loc + 1) * sizeof *p);
    if (!p)
        return fail(err, errlen, WEFT_ENOMEM, "out of memory");
    memset(p + m->nlocs, 0, (loc + 1 - m->nlocs) * sizeof *p);
    m->locs = p;
    m->nlocs = loc + 1;
    return 0;
}

void weft_trace_member_left(weft_member *m)
{
    weft_trace *t = m->trace;

    t->connected--;
    if (m->said_goodbye && ++t->goodbyes == t->size) {
        start_conversion(t);
        return;
    }
    if (t->connected == 0)
        t->idle_since = uv_now(t->d->loop);
}

void weft_trace_member_written(weft_member *m)
{
    weft_trace_synced(m->trace);
}

void weft_trace_synced(weft_trace *t)
{
    if (t->convert_when_synced)
        start_conversion(t);
}

void weft_trace_check_idle(weft_daemon *d)
{
    uint64_t now = uv_now(d->loop);
    uint64_t grace = d->cfg.grace_period * 1000;
    weft_trace *t, *next, **pp = &d->retrying;

    weft_convq_next(d);  /* one the converter could not take before */
    while ((t = *pp) != NULL) {
        if (d->stopping || now < t->retry_at) {
            pp = &t->next;
            continue;
        }
        *pp = t->next;
        t->next = NULL;
        weft_tlog(t, WEFT_LOG_INFO, "trace '%s': converting again", t->name);
        start_conversion(t);
    }
    t = d->traces;
    for (; t; t = next) {
        next = t->next;
        if (t->idle_since && now - t->idle_since >= grace) {
            weft_tlog(t, WEFT_LOG_WARNING, "trace '%s': no process connected "
                      "for %" PRIu64 " s; %u of %u said goodbye, converting "
                      "what arrived", t->name, d->cfg.grace_period,
                      t->goodbyes, t->size);
            start_conversion(t);
        }
    }
}

/* Frees the traces still recording (at exit); their journals stay. */
void weft_trace_free_all(weft_daemon *d)
{
    while (d->traces) {
        weft_trace *t = d->traces;
        d->traces = t->next;
        trace_free(t);
    }
    while (d->ended_runs) {
        weft_ended_run *e = d->ended_runs;
        d->ended_runs = e->next;
        ended_run_free(e);
    }
    d->nended_runs = 0;
    while (d->retrying) {  /* the next start converts them */
        weft_trace *t = d->retrying;
        d->retrying = t->next;
        trace_free(t);
    }
    weft_convq_free(&d->convq); /* its per-user entries, all empty */
}
