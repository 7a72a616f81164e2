/* jcache.c - the member journals holding a descriptor (see jcache.h). */
#include "jcache.h"

#include <stdlib.h>

#include "trace.h"

typedef struct weft_jcache {
    weft_member *head, *tail;  /* most recently used first */
    uint64_t n;
} weft_jcache;

/* Nothing of m is in flight on another thread, nor due to be. */
static int idle(const weft_member *m)
{
    return m->journal && m->pending == 0 && !m->in.sync_running &&
           m->in.waiting.n == 0;
}

/* Takes m off the list, which may become empty. */
static void detach(weft_jcache *jc, weft_member *m)
{
    if (m->jc_prev)
        m->jc_prev->jc_next = m->jc_next;
    else
        jc->head = m->jc_next;
    if (m->jc_next)
        m->jc_next->jc_prev = m->jc_prev;
    else
        jc->tail = m->jc_prev;
    m->jc_prev = m->jc_next = NULL;
    m->jc_open = 0;
    jc->n--;
}

/* Takes m off the list, which goes once empty (made again when needed:
 * nothing of it is left at exit). */
static void unlink_member(weft_jcache *jc, weft_member *m)
{
    detach(jc, m);
    if (jc->n == 0) {
        free(jc);
        m->trace->d->jcache = NULL;
    }
}

static void park(weft_jcache *jc, weft_member *m)
{
    weft_journal_park(m->journal);
    unlink_member(jc, m);
}

void weft_jcache_use(weft_member *m)
{
    weft_daemon *d = m->trace->d;
    weft_jcache *jc = d->jcache;

    if (!jc && !(jc = d->jcache = calloc(1, sizeof *jc)))
        return; /* nothing parks: as before this list existed */
    if (m->jc_open)
        detach(jc, m);
    m->jc_open = 1;
    m->jc_next = jc->head;
    if (jc->head)
        jc->head->jc_prev = m;
    else
        jc->tail = m;
    jc->head = m;
    jc->n++;
    /* jc stays: m is on it */
    for (weft_member *v = jc->tail; v && jc->n > d->cfg.max_open_journals;) {
        weft_member *prev = v->jc_prev;
        if (v != m && idle(v))
            park(jc, v);
        v = prev;
    }
}

void weft_jcache_idle(weft_member *m)
{
    weft_jcache *jc = m->trace->d->jcache;

    if (jc && m->jc_open && !m->conn && idle(m))
        park(jc, m);
}

void weft_jcache_forget(weft_member *m)
{
    if (m->jc_open) /* then m->trace is set, and the list exists */
        unlink_member(m->trace->d->jcache, m);
}

uint64_t weft_jcache_open(const weft_daemon *d)
{
    return d->jcache ? d->jcache->n : 0;
}
