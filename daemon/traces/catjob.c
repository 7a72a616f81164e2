/* catjob.c - catalog work off the loop thread (see catjob.h). */
#include "catjob.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "weft_errors.h"
#include "worker.h"

typedef struct catjob {
    weft_work work;             /* first: the worker hands it back */
    weft_daemon *d;
    char *catalog;        /* a copy: a SIGHUP may change d's */
    weft_catjob_fn run;
    weft_catjob_done_fn done;
    void *arg;
    int rc;
    char err[512];
} catjob;

/* Catalog connections kept open between jobs. Opening one for each job
 * (twice for each short trace) cost 1.9 ms of CPU on the development
 * machine: SQLite reading the schema, the pragmas, the schema check, and
 * on its ext4 (no journal, where making a file is slow) the WAL and -shm
 * files, which the last connection deletes as it closes, made again
 * with a sync of the directory. Any thread takes one and gives it back;
 * one is used again only for the same path and while that path is
 * still the same file (weft reindex puts a new catalog in the old one's
 * place). */
#define IDLE_MAX 4

typedef struct idle_cat {
    weft_catalog *cat;
    char *path;
    dev_t dev;
    ino_t ino;
} idle_cat;

static struct {
    pthread_mutex_t mu;
    idle_cat idle[IDLE_MAX];
    unsigned n;
    int closed;                 /* weft_catjob_close_idle: keep none */
} pool = { .mu = PTHREAD_MUTEX_INITIALIZER };

static void idle_free(idle_cat *ic)
{
    weft_catalog_close(ic->cat);
    free(ic->path);
}

/* An open connection to path: a kept one (the file unchanged), or a new
 * one. 0, or the open's WEFT_E* code with err set. */
static int take(const char *path, idle_cat *out, char *err, size_t errlen)
{
    idle_cat stale[IDLE_MAX];
    unsigned nstale = 0;
    struct stat st;
    char *msg = NULL;
    int rc, found = 0;

    /* Connections to another path (a SIGHUP changed weftd's catalog)
     * are of no more use: closed. */
    pthread_mutex_lock(&pool.mu);
    for (unsigned i = pool.n; i-- > 0;) {
        if (strcmp(pool.idle[i].path, path) != 0)
            stale[nstale++] = pool.idle[i];
        else if (!found) {
            *out = pool.idle[i];
            found = 1;
        } else
            continue;
        pool.idle[i] = pool.idle[--pool.n];
    }
    pthread_mutex_unlock(&pool.mu);
    while (nstale > 0)
        idle_free(&stale[--nstale]);
    if (found) {
        if (stat(path, &st) == 0 && st.st_dev == out->dev &&
            st.st_ino == out->ino)
            return 0;
        idle_free(out);
    }
    memset(out, 0, sizeof *out);
    if (!(out->path = strdup(path))) {
        snprintf(err, errlen, "out of memory");
        return WEFT_ENOMEM;
    }
    rc = weft_catalog_open(path, 0, &out->cat, &msg);
    if (rc < 0) {
        snprintf(err, errlen, "%s", msg ? msg : "?");
        free(msg);
        free(out->path);
        return rc;
    }
    if (stat(path, &st) == 0) {
        out->dev = st.st_dev;
        out->ino = st.st_ino;
    }
    return 0;
}

/* Gives ic back after a job whose result was rc: kept when the job went
 * well and left no transaction open, closed otherwise. */
static void give_back(idle_cat *ic, int rc)
{
    int kept = 0;

    if (rc == 0 && ic->ino && !weft_catalog_in_transaction(ic->cat)) {
        pthread_mutex_lock(&pool.mu);
        if (!pool.closed && pool.n < IDLE_MAX) {
            pool.idle[pool.n++] = *ic;
            kept = 1;
        }
        pthread_mutex_unlock(&pool.mu);
    }
    if (!kept)
        idle_free(ic);
}

void weft_catjob_close_idle(void)
{
    pthread_mutex_lock(&pool.mu);
    pool.closed = 1;
    while (pool.n > 0)
        idle_free(&pool.idle[--pool.n]);
    pthread_mutex_unlock(&pool.mu);
}

int weft_catjob_with(const char *path, weft_catjob_fn fn, void *arg,
                     char *err, size_t errlen)
{
    idle_cat ic;
    int rc;

    err[0] = 0;
    rc = take(path, &ic, err, errlen);
    if (rc < 0)
        return rc;
    rc = fn(ic.cat, arg, err, errlen);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s", weft_catalog_errmsg(ic.cat));
    give_back(&ic, rc);
    return rc;
}

static void catjob_work(weft_work *w)
{
    catjob *j = (catjob *)w;

    j->rc = weft_catjob_with(j->catalog, j->run, j->arg, j->err,
                             sizeof j->err);
}

static void catjob_done(weft_work *w)
{
    catjob *j = (catjob *)w;

    j->d->jobs--;
    j->done(j->d, j->arg, j->rc, j->rc < 0 ? j->err : "");
    free(j->catalog);
    free(j);
}

int weft_catjob_queue(weft_daemon *d, weft_catjob_fn run,
                      weft_catjob_done_fn done, void *arg)
{
    catjob *j = calloc(1, sizeof *j);

    if (!j || !(j->catalog = strdup(d->cfg.catalog))) {
        free(j);
        return WEFT_ENOMEM;
    }
    j->d = d;
    j->run = run;
    j->done = done;
    j->arg = arg;
    if ((!d->catjob->cataloger &&
         weft_worker_start(d->loop, 1, WEFT_WORKER_TRANSIENT,
                           &d->catjob->cataloger) < 0) ||
        weft_worker_submit(d->catjob->cataloger, &j->work, catjob_work,
                           catjob_done) < 0) {
        free(j->catalog);
        free(j);
        return WEFT_EIO;
    }
    d->jobs++;
    return 0;
}
