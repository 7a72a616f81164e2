/* catjob.h - the one way the trace lifecycle works on the catalog off
 * the loop thread: take a connection to weftd's catalog (read-write; one
 * kept open since an earlier job, or a new one) on a worker thread, run
 * a function on it, give it back, and hand the result back to a
 * function on the loop thread. Jobs that need a thread of their own (conversion,
 * retention: worker.h) run the first half only, weft_catjob_with; the
 * others (a new trace's row, the live figures) queue both halves on a
 * worker of their own (d->catjob->cataloger: one job at a time, SQLite
 * writes one at a time anyway) with weft_catjob_queue.
 */
#ifndef WEFT_CATJOB_H
#define WEFT_CATJOB_H

#include <stddef.h>

#include "catalog.h"
#include "daemon.h"

struct weft_worker;

/* catjob.c's state (d->catjob; weft_traces_init). Loop thread. */
typedef struct weft_catjobs {
    struct weft_worker *cataloger; /* catalog rows of recording traces
                                     and live figures, while there are
                                     some (it sets this to NULL when it
                                     stops) */
} weft_catjobs;

/* Worker thread: the work on the open catalog. 0, or a WEFT_E* code
 * with err saying why (left "" for the catalog's own message). */
typedef int (*weft_catjob_fn)(weft_catalog *cat, void *arg, char *err,
                              size_t errlen);
/* Loop thread: the job is back with run's rc (or the open's) and err,
 * "" when rc is 0. */
typedef void (*weft_catjob_done_fn)(weft_daemon *d, void *arg, int rc,
                                    const char *err);

/* Any thread: runs fn(cat, arg, ...) on a connection to the catalog at
 * path: one a job before left open (while path is still that file), or
 * a new one; kept open for the next job when fn succeeded. 0, or the
 * WEFT_E* code of the open (err: the catalog's message) or of fn (err:
 * fn's message, else the catalog's). */
int weft_catjob_with(const char *path, weft_catjob_fn fn, void *arg,
                     char *err, size_t errlen);

/* Closes the connections kept open, and keeps none from now on (weftd
 * is ending). Any thread. */
void weft_catjob_close_idle(void);

/* Loop thread: runs weft_catjob_with(d's catalog, run, arg) on
 * d->catjob->cataloger (started when it is not running), then done(d,
 * arg, rc, err) on the loop thread; the job counts in d->jobs
 * meanwhile. 0, or WEFT_ENOMEM / WEFT_EIO when it could not be queued
 * (then done is not called: arg is still the caller's). */
int weft_catjob_queue(weft_daemon *d, weft_catjob_fn run,
                      weft_catjob_done_fn done, void *arg);

#endif
