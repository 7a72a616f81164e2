/* catjob.c - catalog work off the loop thread (see catjob.h). */
#include "catjob.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int weft_catjob_with(const char *path, weft_catjob_fn fn, void *arg,
                     char *err, size_t errlen)
{
    weft_catalog *cat = NULL;
    char *msg = NULL;
    int rc;

    err[0] = 0;
    rc = weft_catalog_open(path, 0, &cat, &msg);
    if (rc < 0) {
        snprintf(err, errlen, "%s", msg ? msg : "?");
        free(msg);
        return rc;
    }
    rc = fn(cat, arg, err, errlen);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s", weft_catalog_errmsg(cat));
    weft_catalog_close(cat);
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
