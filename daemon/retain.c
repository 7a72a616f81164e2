/* retain.c - retention and per-user bytes of the spool (see retain.h). */
#include "retain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "fsutil.h"
#include "log.h"
#include "weft_errors.h"
#include "worker.h"

/* At most this many traces removed by one job (the next goes on). */
#define WEFT_RETAIN_MAX_REMOVALS 1000

/* One user's bytes in the spool (d->user_bytes). */
typedef struct weft_user_bytes {
    uint32_t uid;
    uint64_t bytes;
} weft_user_bytes;

/* A trace the job removed, for the log. */
typedef struct removed {
    char *name, *key, *why;
    uint32_t uid;
} removed;

typedef struct retain_job {
    weft_work work;           /* first: the job is its work */
    weft_daemon *d;
    /* copies of the configuration (SIGHUP may change it meanwhile) */
    char *catalog, *spool;
    uint64_t retention_days, max_spool_bytes;
    int64_t now;
    /* results (worker thread) */
    removed *gone;
    size_t ngone, capgone;
    weft_user_bytes *users;
    size_t nusers, capusers;
    uint64_t total;
    int rc;
    char err[512];
} retain_job;

static void job_free(retain_job *j)
{
    for (size_t i = 0; i < j->ngone; i++) {
        free(j->gone[i].name);
        free(j->gone[i].key);
        free(j->gone[i].why);
    }
    free(j->gone);
    free(j->users);
    free(j->catalog);
    free(j->spool);
    free(j);
}

/* Removes row's directory (SPOOL/traces/KEY: keys never hold a '/') and
 * marks its catalog row removed, saying why. 0 or a WEFT_E* code. */
static int remove_trace(retain_job *j, weft_catalog *cat,
                        const weft_trace_row *row, const char *why)
{
    char *dir = NULL;
    removed *g;
    int rc;

    if (strchr(row->key, '/') || row->key[0] == '.' ||
        asprintf(&dir, "%s/traces/%s", j->spool, row->key) < 0)
        return WEFT_EINVAL;
    weft_rm_tree(dir);
    free(dir);
    rc = weft_catalog_trace_removed(cat, row->id, why);
    if (rc < 0)
        return rc;
    if (j->ngone == j->capgone) {
        size_t cap = j->capgone ? 2 * j->capgone : 8;
        removed *p = realloc(j->gone, cap * sizeof *p);
        if (!p)
            return 0; /* removed; only the log line is lost */
        j->gone = p;
        j->capgone = cap;
    }
    g = &j->gone[j->ngone++];
    g->name = strdup(row->name ? row->name : "");
    g->key = strdup(row->key);
    g->why = strdup(why);
    g->uid = row->uid;
    return 0;
}

static void add_user(uint32_t uid, uint64_t bytes, void *arg)
{
    retain_job *j = arg;

    if (j->nusers == j->capusers) {
        size_t cap = j->capusers ? 2 * j->capusers : 16;
        weft_user_bytes *p = realloc(j->users, cap * sizeof *p);
        if (!p)
            return;
        j->users = p;
        j->capusers = cap;
    }
    j->users[j->nusers].uid = uid;
    j->users[j->nusers++].bytes = bytes;
}

static void retain_work(weft_work *w)
{
    retain_job *j = (retain_job *)w;
    weft_catalog *cat = NULL;
    weft_trace_row row;
    char *msg = NULL, why[256];
    int rc;

    rc = weft_catalog_open(j->catalog, 0, &cat, &msg);
    if (rc < 0) {
        snprintf(j->err, sizeof j->err, "%s", msg ? msg : "?");
        free(msg);
        j->rc = rc;
        return;
    }
    if (j->retention_days > 0) {
        int64_t before = j->now - (int64_t)j->retention_days * 86400;
        snprintf(why, sizeof why, "removed: finished more than "
                 "retention_days (%" PRIu64 ") ago", j->retention_days);
        while (j->ngone < WEFT_RETAIN_MAX_REMOVALS &&
               (rc = weft_catalog_oldest_finished(cat, before, &row)) == 0) {
            rc = remove_trace(j, cat, &row, why);
            weft_catalog_trace_free(&row);
            if (rc < 0)
                break;
        }
        if (rc < 0 && rc != WEFT_ENOTFOUND)
            goto fail;
    }
    if ((rc = weft_catalog_spool_bytes(cat, &j->total, NULL, NULL)) < 0)
        goto fail;
    while (j->max_spool_bytes > 0 && j->total > j->max_spool_bytes &&
           j->ngone < WEFT_RETAIN_MAX_REMOVALS &&
           (rc = weft_catalog_oldest_finished(cat, 0, &row)) == 0) {
        snprintf(why, sizeof why, "removed: the spool held %" PRIu64
                 " bytes of traces, over max_spool_bytes (%" PRIu64 "); "
                 "oldest first", j->total, j->max_spool_bytes);
        rc = remove_trace(j, cat, &row, why);
        j->total -= row.bytes < j->total ? row.bytes : j->total;
        weft_catalog_trace_free(&row);
        if (rc < 0)
            goto fail;
    }
    if (rc < 0 && rc != WEFT_ENOTFOUND)
        goto fail;
    rc = weft_catalog_spool_bytes(cat, &j->total, add_user, j);
    if (rc < 0)
        goto fail;
    weft_catalog_close(cat);
    return;
fail:
    snprintf(j->err, sizeof j->err, "%s", weft_catalog_errmsg(cat));
    j->rc = rc;
    weft_catalog_close(cat);
}

static void retain_done(weft_work *w)
{
    retain_job *j = (retain_job *)w;
    weft_daemon *d = j->d;

    d->jobs--;
    d->retain_running = 0;
    for (size_t i = 0; i < j->ngone; i++)
        weft_dlog(d, WEFT_LOG_WARNING, "trace '%s' (%s) of uid %u %s",
                  j->gone[i].name ? j->gone[i].name : "?",
                  j->gone[i].key ? j->gone[i].key : "?", j->gone[i].uid,
                  j->gone[i].why ? j->gone[i].why : "removed");
    if (j->rc < 0) {
        weft_dlog(d, WEFT_LOG_ERROR, "retention: %s", j->err);
    } else {
        free(d->user_bytes);
        d->user_bytes = j->users;
        d->nuser_bytes = j->nusers;
        j->users = NULL;
        d->spool_bytes = j->total;
    }
    job_free(j);
}

void weft_retain_run(weft_daemon *d)
{
    retain_job *j;

    if (d->retain_running || d->stopping)
        return;
    d->retain_last = uv_now(d->loop);
    if (!(j = calloc(1, sizeof *j)) || !(j->catalog = strdup(d->cfg.catalog)) ||
        !(j->spool = strdup(d->cfg.spool))) {
        if (j)
            job_free(j);
        return;
    }
    j->d = d;
    j->retention_days = d->cfg.retention_days;
    j->max_spool_bytes = d->cfg.max_spool_bytes;
    j->now = (int64_t)time(NULL);
    if ((!d->retainer &&
         weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                           &d->retainer) < 0) ||
        weft_worker_submit(d->retainer, &j->work, retain_work,
                           retain_done) < 0) {
        job_free(j);
        return;
    }
    d->retain_running = 1;
    d->jobs++;
}

void weft_retain_tick(weft_daemon *d)
{
    if (uv_now(d->loop) - d->retain_last >= WEFT_RETAIN_INTERVAL_S * 1000)
        weft_retain_run(d);
}

void weft_retain_charge(weft_daemon *d, uint32_t uid, uint64_t bytes)
{
    weft_user_bytes *p;

    d->spool_bytes += bytes;
    for (size_t i = 0; i < d->nuser_bytes; i++) {
        if (d->user_bytes[i].uid == uid) {
            d->user_bytes[i].bytes += bytes;
            return;
        }
    }
    p = realloc(d->user_bytes, (d->nuser_bytes + 1) * sizeof *p);
    if (!p)
        return; /* the next job counts it */
    d->user_bytes = p;
    p[d->nuser_bytes].uid = uid;
    p[d->nuser_bytes++].bytes = bytes;
}

int weft_retain_check_user(const weft_daemon *d, uint32_t uid, char *err,
                           size_t errlen)
{
    uint64_t max = d->cfg.max_user_spool_bytes;

    if (max == 0)
        return 0;
    for (size_t i = 0; i < d->nuser_bytes; i++) {
        if (d->user_bytes[i].uid != uid || d->user_bytes[i].bytes < max)
            continue;
        snprintf(err, errlen, "uid %u has %" PRIu64 " bytes of traces in "
                 "the spool: max_user_spool_bytes is %" PRIu64 " (weft rm "
                 "some of them)", uid, d->user_bytes[i].bytes, max);
        return WEFT_ELIMIT;
    }
    return 0;
}

void weft_retain_free(weft_daemon *d)
{
    free(d->user_bytes);
    d->user_bytes = NULL;
    d->nuser_bytes = 0;
}
