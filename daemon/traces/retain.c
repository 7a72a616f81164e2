/* retain.c - retention and per-user bytes of the spool (see retain.h). */
#include "retain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "catjob.h"
#include "fsutil.h"
#include "log.h"
#include "quota.h"
#include "rekey.h"
#include "spool.h"
#include "weft_errors.h"
#include "worker.h"

/* At most this many traces removed by one job (the next goes on). */
#define WEFT_RETAIN_MAX_REMOVALS 1000

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
    weft_quota_sum *users;
    size_t nusers, capusers;
    uint64_t total;
    int rc;
    char err[512];
    /* The first job after start: trace directories an older weftd made
     * readable by others are made private to their owners (fix_modes). */
    int fix_modes;
    weft_catalog *cat;        /* the job's, while fix_mode runs */
    uint64_t fixed;           /* directories made private */
    uint64_t fix_failed;      /* ... that could not be */
    char fix_err[512];        /* the first failure */
    uint64_t rekeyed;         /* directories given a tagged key (rekey.h) */
    uint64_t rekey_failed;    /* ... that could not be */
    char rekey_err[512];      /* the first failure */
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
    weft_spool_trace_remove(dir);
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
        weft_quota_sum *p = realloc(j->users, cap * sizeof *p);
        if (!p)
            return;
        j->users = p;
        j->capusers = cap;
    }
    j->users[j->nusers].uid = uid;
    j->users[j->nusers++].bytes = bytes;
}

/* A key of an older weftd, ending in a serial others could guess, gets a
 * random tag (rekey.h). */
static void rekey_one(retain_job *j, const weft_trace_row *row)
{
    char err[512];
    int rc = weft_rekey_row(j->cat, j->spool, row, err, sizeof err);

    if (rc > 0)
        j->rekeyed++;
    else if (rc < 0 && j->rekey_failed++ == 0)
        snprintf(j->rekey_err, sizeof j->rekey_err, "%s", err);
}

/* weft_catalog_list: a finished trace's directory that others may read
 * (a weftd before per-user permissions made it 0755 or 0750) becomes
 * WEFT_TRACE_DIR_MODE with an ACL entry for its owner, as converted
 * traces are now (ask.h). Directories of another owner, and those of
 * traces recording or converting, are left alone. */
static int fix_mode(const weft_trace_row *row, void *arg)
{
    retain_job *j = arg;
    char *dir = NULL, err[512];
    struct stat st;

    if (strcmp(row->state, WEFT_STATE_RECORDING) == 0 ||
        strcmp(row->state, WEFT_STATE_CONVERTING) == 0 ||
        strchr(row->key, '/') || row->key[0] == '.' ||
        asprintf(&dir, "%s/traces/%s", j->spool, row->key) < 0)
        return 0;
    if (lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
        st.st_uid == geteuid() && weft_dir_open_to_others(dir, &st)) {
        /* The mode first: chmod sets the mask of an ACL, which
         * weft_share_tree then widens for the owner's entry. Without the
         * entry the old mode is back, so that the owner still reads. */
        err[0] = 0;
        if (chmod(dir, WEFT_TRACE_DIR_MODE) != 0)
            snprintf(err, sizeof err, "cannot make %s mode %o: %s", dir,
                     WEFT_TRACE_DIR_MODE, strerror(errno));
        else if (weft_share_tree(dir, row->uid, err, sizeof err) != 0)
            (void)chmod(dir, st.st_mode & 07777);
        if (!err[0])
            j->fixed++;
        else if (j->fix_failed++ == 0)
            snprintf(j->fix_err, sizeof j->fix_err, "%s", err);
    }
    free(dir);
    rekey_one(j, row);
    return 0;
}

/* Worker thread: the job's work on the open catalog; its failures
 * leave err to the catalog's message (catjob.h). */
static int retain_run(weft_catalog *cat, void *arg, char *err, size_t errlen)
{
    retain_job *j = arg;
    weft_trace_row row;
    char why[256];
    int rc;

    (void)err;
    (void)errlen;
    j->cat = cat;
    if (j->fix_modes && (rc = weft_catalog_list(cat, fix_mode, j)) < 0)
        return rc;
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
            return rc;
    }
    if ((rc = weft_catalog_spool_bytes(cat, &j->total, NULL, NULL)) < 0)
        return rc;
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
            return rc;
    }
    if (rc < 0 && rc != WEFT_ENOTFOUND)
        return rc;
    rc = weft_catalog_spool_bytes(cat, &j->total, add_user, j);
    return rc < 0 ? rc : 0;
}

static void retain_work(weft_work *w)
{
    retain_job *j = (retain_job *)w;

    j->rc = weft_catjob_with(j->catalog, retain_run, j, j->err,
                             sizeof j->err);
}

static void retain_done(weft_work *w)
{
    retain_job *j = (retain_job *)w;
    weft_daemon *d = j->d;

    d->jobs--;
    d->retain->running = 0;
    for (size_t i = 0; i < j->ngone; i++)
        weft_dlog(d, WEFT_LOG_WARNING, "trace '%s' (%s) of uid %u %s",
                  j->gone[i].name ? j->gone[i].name : "?",
                  j->gone[i].key ? j->gone[i].key : "?", j->gone[i].uid,
                  j->gone[i].why ? j->gone[i].why : "removed");
    if (j->fixed)
        weft_dlog(d, WEFT_LOG_INFO, "%" PRIu64 " trace directories an "
                  "older weftd let others read are now their owners' alone "
                  "(mode %o and an ACL entry for the owner)", j->fixed,
                  WEFT_TRACE_DIR_MODE);
    if (j->fix_failed)
        weft_dlog(d, WEFT_LOG_WARNING, "%" PRIu64 " trace directories that "
                  "others may read could not be made private: %s",
                  j->fix_failed, j->fix_err);
    if (j->rekeyed)
        weft_dlog(d, WEFT_LOG_INFO, "%" PRIu64 " trace directories of an "
                  "older weftd, whose keys others could guess, have keys "
                  "ending in a random tag now (KEY-TAG; weft list shows "
                  "them)", j->rekeyed);
    if (j->rekey_failed)
        weft_dlog(d, WEFT_LOG_WARNING, "%" PRIu64 " trace directories of an "
                  "older weftd could not get a key others cannot guess: %s",
                  j->rekey_failed, j->rekey_err);
    weft_quota_count_end(&d->quota, j->users, j->nusers, j->rc == 0);
    if (j->rc < 0)
        weft_dlog(d, WEFT_LOG_ERROR, "retention: %s", j->err);
    else
        d->retain->spool_bytes = j->total;
    job_free(j);
}

void weft_retain_run(weft_daemon *d)
{
    retain_job *j;

    if (d->retain->running || d->stopping)
        return;
    d->retain->last = uv_now(d->loop);
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
    j->fix_modes = !d->retain->retainer; /* the first job */
    if ((!d->retain->retainer &&
         weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                           &d->retain->retainer) < 0) ||
        weft_worker_submit(d->retain->retainer, &j->work, retain_work,
                           retain_done) < 0) {
        job_free(j);
        return;
    }
    d->retain->running = 1;
    d->jobs++;
    weft_quota_count_begin(&d->quota);
}

void weft_retain_tick(weft_daemon *d)
{
    if (uv_now(d->loop) - d->retain->last >= WEFT_RETAIN_INTERVAL_S * 1000)
        weft_retain_run(d);
}

void weft_retain_charge(weft_daemon *d, uint32_t uid, uint64_t bytes)
{
    d->retain->spool_bytes += bytes;
    (void)weft_quota_stored(&d->quota, uid, bytes); /* or the next job */
}

int weft_retain_check_user(const weft_daemon *d, uint32_t uid, char *err,
                           size_t errlen)
{
    return weft_quota_check(&d->quota, uid, d->cfg.max_user_spool_bytes, 0,
                            err, errlen);
}
