/* jcache.c - the member journals holding a descriptor (see jcache.h). */
#include "jcache.h"

#include <stdlib.h>

#include "fifo.h"
#include "server.h"

/* The journals at most one use looks at to park (their list's tail). */
#define WEFT_JCACHE_VISITS 8

typedef struct weft_jcache {
    weft_memberin *head, *tail;  /* most recently used first */
    uint64_t n;
} weft_jcache;

/* Nothing of in's member is in flight on another thread, nor due to be. */
static int idle(const weft_memberin *in)
{
    return in->journal && in->pending == 0 && !in->sync_running &&
           in->waiting.n == 0;
}

/* Takes in off the list, which may become empty. */
static void detach(weft_jcache *jc, weft_memberin *in)
{
    WEFT_DLIST_UNLINK(jc->head, jc->tail, in, jc_prev, jc_next);
    in->jc_open = 0;
    jc->n--;
}

/* Takes in off the list, which goes once empty (made again when needed:
 * nothing of it is left at exit). */
static void unlink_member(weft_jcache *jc, weft_memberin *in)
{
    detach(jc, in);
    if (jc->n == 0) {
        free(jc);
        in->d->srv->jcache = NULL;
    }
}

static void park(weft_jcache *jc, weft_memberin *in)
{
    weft_journal_park(in->journal);
    unlink_member(jc, in);
}

void weft_jcache_use(weft_memberin *in)
{
    weft_daemon *d = in->d;
    weft_jcache *jc = d->srv->jcache;

    if (!jc && !(jc = d->srv->jcache = calloc(1, sizeof *jc)))
        return; /* nothing parks: as before this list existed */
    if (in->jc_open)
        detach(jc, in);
    in->jc_open = 1;
    WEFT_DLIST_PUSH_HEAD(jc->head, jc->tail, in, jc_prev, jc_next);
    jc->n++;
    /* jc stays: in is on it. A journal in use (its Hello still being
     * opened, entries on their way) is not parked: it goes to the front,
     * so that a list of thousands in use (a job's processes all joining
     * at once) is not walked whole at every use; the idle ones beyond
     * the limit are parked a few at a time (their members are all being
     * written, or they reach the tail soon). */
    for (unsigned seen = 0; jc->n > d->cfg.max_open_journals &&
                            jc->tail != in && seen < WEFT_JCACHE_VISITS;
         seen++) {
        weft_memberin *v = jc->tail;
        if (idle(v)) {
            park(jc, v);
        } else {
            WEFT_DLIST_UNLINK(jc->head, jc->tail, v, jc_prev, jc_next);
            WEFT_DLIST_PUSH_HEAD(jc->head, jc->tail, v, jc_prev, jc_next);
        }
    }
}

void weft_jcache_idle(weft_memberin *in)
{
    weft_jcache *jc = in->d->srv->jcache;

    if (jc && in->jc_open && !in->conn && idle(in))
        park(jc, in);
}

void weft_jcache_forget(weft_memberin *in)
{
    if (in->jc_open) /* then in->d is set, and the list exists */
        unlink_member(in->d->srv->jcache, in);
}

uint64_t weft_jcache_open(const weft_daemon *d)
{
    return d->srv->jcache ? d->srv->jcache->n : 0;
}
