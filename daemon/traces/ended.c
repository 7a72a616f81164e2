/* ended.c - the runs whose trace stopped recording (trace.h:
 * weft_ended_run), newest first in d->traces->ended_runs, at most
 * WEFT_ENDED_RUNS_MAX: a process of one that comes back late is refused
 * instead of starting a new, otherwise empty trace. Loaded from the
 * catalog at start (weft_trace_load_ended_runs). Loop thread.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "fail.h"
#include "log.h"
#include "trace.h"
#include "trace_internal.h"
#include "weft_errors.h"

static void ended_run_free(weft_ended_run *e)
{
    free(e->name);
    free(e->run);
    free(e->key);
    free(e);
}

/* See trace_internal.h (its END; nothing for a trace without a run). Out of memory: not remembered, a
 * late member then starts a new trace as before runs existed. */
void weft__ended_remember(weft_trace *t)
{
    weft_daemon *d = t->d;
    weft_ended_run *e, **pp;

    if (!t->run || !t->run[0] || !t->name)
        return;
    e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(t->name)) || !(e->run = strdup(t->run)) ||
        !(e->key = strdup(t->key))) {
        if (e)
            ended_run_free(e);
        return;
    }
    e->uid = t->uid;
    e->partial = t->goodbyes < t->size;
    e->next = d->traces->ended_runs;
    d->traces->ended_runs = e;
    if (++d->traces->nended_runs <= WEFT_ENDED_RUNS_MAX)
        return;
    for (pp = &d->traces->ended_runs; (*pp)->next; pp = &(*pp)->next)
        ;
    ended_run_free(*pp);
    *pp = NULL;
    d->traces->nended_runs--;
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
        x->d->traces->nended_runs >= WEFT_ENDED_RUNS_MAX)
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
    x->d->traces->nended_runs++;
    return 0;
}

int weft_trace_load_ended_runs(weft_daemon *d)
{
    weft_list_filter f = { 0 };
    weft_catalog *cat = NULL;
    load_ctx x = { d, &d->traces->ended_runs };
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
    else if (d->traces->nended_runs)
        weft_dlog(d, WEFT_LOG_DEBUG, "%" PRIu64 " runs of ended traces "
                  "remembered from the catalog", d->traces->nended_runs);
    free(msg);
    return rc;
}

const weft_ended_run *weft__ended_find(const weft_daemon *d, uint32_t uid,
                                       const char *name, const char *run)
{
    for (const weft_ended_run *e = d->traces->ended_runs; e; e = e->next)
        if (e->uid == uid && strcmp(e->run, run) == 0 &&
            strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* See trace_internal.h: refused for good (not transient: the client
 * stops tracing and says this). WEFT_EENDED when every member said
 * goodbye: this process was a member (its HelloAck came after its journal
 * held its Hello), so its own Goodbye and everything before it were
 * journaled, and a client that wrote its Goodbye may count as delivered
 * what it saw no Ack for (they were lost with the connection). */
int weft__ended_refuse(const weft_ended_run *e, uint32_t rank, char *err,
                       size_t errlen)
{
    if (e->partial)
        return weft__fail(err, errlen, WEFT_ECLOSED, "trace '%s' (run %s) has "
                    "already ended: weftd gave up waiting for its missing "
                    "processes and converted it as partial (%s); rank %u "
                    "cannot join it any more", e->name, e->run, e->key, rank);
    return weft__fail(err, errlen, WEFT_EENDED, "trace '%s' (run %s) has already "
                "ended: all its processes said goodbye (%s); rank %u cannot "
                "join it again", e->name, e->run, e->key, rank);
}

void weft__ended_free_all(weft_daemon *d)
{
    while (d->traces->ended_runs) {
        weft_ended_run *e = d->traces->ended_runs;
        d->traces->ended_runs = e->next;
        ended_run_free(e);
    }
    d->traces->nended_runs = 0;
}
